"""`toolkit mirror`: comments and the reading list into content/_mirror/."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from toolkit.cli.context import CliContext, common_options, json_option, pass_cli, print_json
from toolkit.cli.output import stderr, stdout
from toolkit.cli.progress import Spinner

if TYPE_CHECKING:  # pragma: no cover
    from toolkit.mirror import MirrorResult


@click.command()
@click.argument("what", type=click.Choice(["comments", "readinglist", "all"]), default="all")
@click.option(
    "--podcast", metavar="SLUG", help="Also mirror the comments of every episode of this podcast."
)
@click.option(
    "--full",
    is_flag=True,
    help="Fetch every comment thread, not only those whose comment count changed "
    "(picks up edited comments).",
)
@json_option
@common_options
@pass_cli
def mirror(cli: CliContext, what: str, podcast: str | None, full: bool, as_json: bool) -> None:
    """Mirror comments and the reading list into content/_mirror/ for the site and git.

    Comment threads of your published articles go to content/_mirror/comments/<slug>.json;
    only articles whose comment count changed since the last mirror are fetched again.
    The reading list (every page) goes to content/_mirror/readinglist.json. A file is
    rewritten only when its content changed. Prints each file created, updated or removed
    (--json: one JSON document with the counts and those files). Needs FOREM_API_KEY; in a
    team's repository ([writers]), each writer's with their own key into
    content/_mirror/<writer>/, and a writer without one is said (exit 1).

    \b
    Example:
      toolkit mirror
      toolkit mirror comments --podcast my-podcast
      toolkit mirror --json
    """
    from toolkit.commands.mirror import mirror as mirror_remote

    spinning = not cli.quiet and not as_json
    with Spinner("mirror: reading comments and the reading list", enabled=spinning):
        result = mirror_remote(
            cli.config,
            comments=what in ("comments", "all"),
            readinglist=what in ("readinglist", "all"),
            podcast=podcast,
            full=full,
        )
    if as_json:
        from toolkit.commands.results import to_json
        from toolkit.commands.results.mirror import MirrorJson

        print_json(to_json(MirrorJson.of(result)))
        _missing(result)
        return
    for path in result.changed:
        stdout.print(f"{result.change_of(path)} {path}", highlight=False, markup=False)
    if cli.quiet:
        _missing(result)
        return
    parts = []
    if result.comments is not None:
        c = result.comments
        parts.append(
            f"comments: {len(c.fetched)} thread(s) fetched, {len(c.written)} file(s) "
            f"written, {len(c.removed)} removed, {c.unchanged} unchanged"
        )
    if result.podcast is not None:
        parts.append(
            f"podcast {podcast}: {len(result.podcast.fetched)} episode(s), "
            f"{len(result.podcast.written)} file(s) written"
        )
    if result.readinglist_items is not None:
        parts.append(
            f"reading list: {result.readinglist_items} item(s), "
            f"{'written' if result.readinglist_written else 'unchanged'}"
        )
    stderr.print(
        "; ".join(parts) + f" ({result.requests} request(s))", highlight=False, markup=False
    )
    _missing(result)


def _missing(result: MirrorResult) -> None:
    """A team's writers without a key: one line each, and exit 1."""
    for missing in result.missing_keys:
        stderr.print(
            f"{missing.writer}: {missing.variable} is not set; not mirrored",
            markup=False,
            highlight=False,
        )
    if result.missing_keys:
        raise SystemExit(1)
