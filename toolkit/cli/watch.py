from __future__ import annotations

from typing import TYPE_CHECKING

import click
from rich.markup import escape

from toolkit.cli.context import CliContext, common_options, lock_timeout_option, pass_cli
from toolkit.cli.output import stderr
from toolkit.signals import stop_signals

if TYPE_CHECKING:  # pragma: no cover
    from toolkit.site import BuildReport
    from toolkit.sync.engine import Outcome


class ConsoleWatchReporter:
    """One line per rebuild, per problem and per pushed draft."""

    def __init__(self, quiet: bool, verbose: int):
        self.quiet = quiet
        self.verbose = verbose

    def say(self, text: str) -> None:
        if not self.quiet:
            stderr.print(text, highlight=False)

    def built(self, report: BuildReport, changed: list[str], seconds: float) -> None:
        if not changed:
            self.say(
                f"built {report.posts} posts: {len(report.written)} file(s) written "
                f"in {seconds:.2f} s"
            )
        elif report.written or report.removed or self.verbose:
            what = escape(", ".join(changed[:3]))
            what += f" and {len(changed) - 3} more" if len(changed) > 3 else ""
            self.say(
                f"rebuilt after {what}: {len(report.written)} written, "
                f"{len(report.removed)} removed in {seconds * 1000:.0f} ms"
            )

    def problems(self, new: list[str], fixed: list[str]) -> None:
        for line in new:
            click.echo(line, err=True)  # path:line: message, even with -q
        for line in fixed:
            self.say(f"[green]fixed:[/] {escape(line)}")

    def pushed(self, outcomes: list[Outcome]) -> None:
        for outcome in outcomes:
            if outcome.action.value == "unchanged" and outcome.ok:
                continue
            mark = "[green]draft[/]" if outcome.ok else "[red]push failed[/]"
            self.say(f"{mark} {escape(outcome.key)}: {escape(outcome.message)}")

    def push_failed(self, message: str) -> None:
        stderr.print(
            f"[red]push failed[/] ({escape(message)}); it is retried with the next save",
            highlight=False,
        )

    def config_problem(self, message: str) -> None:
        stderr.print(f"[red]{escape(message)}[/]", highlight=False)

    def notice(self, message: str) -> None:
        stderr.print(f"[yellow]{escape(message)}[/]", highlight=False)  # even with -q


@click.command()
@click.option(
    "--host", default="127.0.0.1", show_default=True, help="Address of the preview server."
)
@click.option(
    "--port",
    default=8000,
    show_default=True,
    type=click.IntRange(0, 65535),
    help="Port of the preview server (0: any free port).",
)
@click.option(
    "--push/--no-push",
    default=True,
    show_default=True,
    help="Update the remote draft of each saved post (needs FOREM_API_KEY).",
)
@click.option(
    "--drafts/--no-drafts",
    default=True,
    show_default=True,
    help="Show drafts in the preview, marked as such.",
)
@click.option(
    "--premium",
    is_flag=True,
    help="Preview the premium site (premium posts, templates/premium/), asking the "
    "licensing service first and again at most once a minute.",
)
@lock_timeout_option(5.0, "a draft push")
@common_options
@pass_cli
def watch(
    cli: CliContext,
    host: str,
    port: int,
    push: bool,
    drafts: bool,
    lock_timeout: float,
    premium: bool,
) -> None:
    """Preview the site while you write: rebuild and live-reload on every save.

    Builds into .toolkit/preview/ (your site/ stays as `toolkit build` makes it), serves
    it on localhost with live reload, and watches content/, templates/ and toolkit.toml.
    A save with a mistake prints `path:line: message` and shows it in the browser: a
    broken post in place of its page (and in a box on the others), a broken template or
    toolkit.toml in place of every page; the next good save brings the pages back. Unless --no-push, the remote draft of each saved post follows,
    several quick saves making one update; watch never publishes. A push waits up to
    --lock-timeout seconds while another toolkit run (a publish, a pull) holds
    .toolkit/run.lock; if it is still held, the push says so and is tried again with the
    next save. Ctrl-C stops it.

    With --premium it previews the premium site instead, in .toolkit/preview-premium/:
    it starts only when the licensing service confirms an active licence (as
    `toolkit build --premium` does), and asks again at most once a minute while it runs;
    a refusal is shown like a bad save and the preview waits for the licence.

    When [source] names another generator (Hugo, Jekyll...), the site is that generator's
    unless [site] enabled = true: watch builds and serves nothing, and only keeps the
    remote drafts of the saved posts (`published: false`) up to date; with --no-push or
    no FOREM_API_KEY, it says so in one line and exits 0.

    \b
    Example:
      toolkit watch                 # then open http://127.0.0.1:8000
      toolkit watch --no-push --port 8001
      toolkit watch --premium
    """
    from toolkit.commands.watch import watch as watch_session
    from toolkit.site.enabled import left_to_generator, site_enabled

    config = cli.config
    site = site_enabled(config)
    if not site and (not push or config.forem.api_key is None):
        if not cli.quiet:
            click.echo(left_to_generator(config), err=True)
        return
    if premium and not site:
        raise click.UsageError("--premium previews toolkit's site; [site] enabled is false")
    reporter = ConsoleWatchReporter(cli.quiet, cli.verbose)
    session = watch_session(
        config,
        reporter,
        host=host,
        port=port,
        push=push,
        drafts=drafts,
        lock_timeout=lock_timeout,
        premium=premium,
        site=site,
    )
    for notice in session.notices:
        reporter.say(f"[yellow]{escape(notice)}[/]")
    # Ctrl-C and SIGTERM are recorded, never raised mid-way (toolkit.signals): one that
    # comes while starting stops the session as soon as it has started.
    with stop_signals() as stop:
        if not stop.requested:
            session.start()
            try:
                if site:
                    watched = (
                        f"{config.relative(config.site.content_dir)}/, "
                        f"{config.relative(config.site.templates_dir)}/ and "
                        f"{config.path.name}"
                    )
                    reporter.say(
                        f"[bold]Serving {escape(session.url)}[/] — watching "
                        f"{escape(watched)} (Ctrl-C to stop)"
                    )
                else:
                    watched = f"{config.relative(config.site.content_dir)}/ and {config.path.name}"
                    reporter.say(escape(left_to_generator(config)))
                    reporter.say(
                        f"[bold]Watching {escape(watched)}[/]: the remote draft of each saved "
                        "post follows, no preview (Ctrl-C to stop)"
                    )
                stop.wait()
            finally:
                session.stop()
        reporter.say("stopped")
