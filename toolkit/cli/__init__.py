"""The command line: a thin click layer over `toolkit.commands`.

Each command parses its options, calls one function of `toolkit.commands` and renders
what it returns. Only this package prints, imports click or exits.

Commands live in their own modules and are imported only when run, so `toolkit build`
with nothing to do does not pay for importing the sandbox or the HTTP client.
"""

from __future__ import annotations

import gc
import importlib
import json

import click

from toolkit import __version__, signals
from toolkit.cli.context import JSON_MODE, CliContext, setup_logging
from toolkit.errors import ToolkitError
from toolkit.fsutil import describe_os_error

# name -> ("module:function", its summary); the order is the order of `toolkit --help`.
# The summary is the first sentence of the command's help, listed here so that `toolkit
# --help` imports no command (tests/test_docs.py checks that the two agree).
COMMANDS = {
    "init": (
        "toolkit.cli.init:init",
        "Start a project in FOLDER (default: here), or adopt the posts already there: "
        "toolkit.toml, .gitignore, .env.example, a Makefile and a CI workflow.",
    ),
    "new": (
        "toolkit.cli.new:new",
        "Write a new post: content/<slug>.md, a draft with valid front matter.",
    ),
    "check": (
        "toolkit.cli.check:check",
        "Validate posts offline: every problem the publishing API would refuse, and more.",
    ),
    "build": ("toolkit.cli.build:build", "Build the static site from the posts under content/."),
    "plan": (
        "toolkit.cli.publish:plan",
        "Show what `publish` would do to each post, and why; changes nothing.",
    ),
    "publish": (
        "toolkit.cli.publish:publish",
        "Sync posts to the publishing API: create new ones, update changed ones.",
    ),
    "pull": (
        "toolkit.cli.pull:pull",
        "Import the account's articles as local posts (onboarding, and taking website edits).",
    ),
    "diff": (
        "toolkit.cli.diff:diff",
        "Show a post against its article on the website, as a unified diff.",
    ),
    "unpublish": (
        "toolkit.cli.unpublish:unpublish",
        "Set a post's article unpublished on the website, on purpose (never a delete).",
    ),
    "forget": (
        "toolkit.cli.forget:forget",
        "Drop the toolkit.lock entry of a post whose file is gone; its article stays as it is.",
    ),
    "mirror": (
        "toolkit.cli.mirror:mirror",
        "Mirror comments and the reading list into content/_mirror/ for the site and git.",
    ),
    "watch": (
        "toolkit.cli.watch:watch",
        "Preview the site while you write: rebuild and live-reload on every save.",
    ),
    "license": (
        "toolkit.cli.license:license_command",
        "Ask the marketplace licensing service about this project's licence.",
    ),
    "mcp": (
        "toolkit.cli.mcp:mcp",
        "Serve the toolkit to AI assistants over the Model Context Protocol: list, read "
        "and check posts, plan a publish, push drafts, read mirrored comments, build the "
        "site.",
    ),
    "export": (
        "toolkit.cli.export:export",
        "Bundle the built site, or the posts with their files, into one archive made by "
        "the archive-task API (CloudConvert API v2, or the sandbox's), and verify it.",
    ),
    "serve": (
        "toolkit.cli.serve:serve",
        "Serve the built site on http://127.0.0.1 to look at it in a browser.",
    ),
    "sandbox": (
        "toolkit.cli.sandbox:sandbox",
        "Run the sandbox: a local emulator of every remote interface (publishing, "
        "archive tasks, licensing, log stream), with seeded demo accounts, on "
        "loopback.",
    ),
    "demo": (
        "toolkit.cli.demo:demo",
        "Run the whole pipeline offline against the built-in sandbox.",
    ),
    "config": (
        "toolkit.cli.config:config",
        "List every configuration key: its type, default, environment variable, what "
        "it does, and its value for this project (where it came from: the default, "
        "toolkit.toml or the environment).",
    ),
    "logs": (
        "toolkit.cli.logs:logs",
        "Ask the run log a question in SQL: what every toolkit run did, request by request.",
    ),
    "completion": (
        "toolkit.cli.completion:completion",
        "Print the shell completion script of toolkit for SHELL (bash, zsh or fish).",
    ),
}
# Commands that serve until Ctrl-C: they take SIGINT and SIGTERM as a request to stop
# (toolkit.signals); every other command gets Python's KeyboardInterrupt back.
SERVE_UNTIL_STOPPED = {"watch", "serve", "sandbox", "mcp"}
PYTHON_GC_THRESHOLDS = (700, 10, 10)  # CPython's defaults


class LazyGroup(click.Group):
    """A group whose subcommands are imported on first use (click's documented pattern)."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in COMMANDS:
            return None
        module, _, attr = COMMANDS[cmd_name][0].partition(":")
        command: click.Command = getattr(importlib.import_module(module), attr)
        return command

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        """A mistyped command gets "did you mean" with the closest one (usage error, 2)."""
        name = args[0] if args else ""
        if name and name not in COMMANDS and not name.startswith("-"):
            import difflib

            close = difflib.get_close_matches(name, COMMANDS, n=1)
            if close:
                ctx.fail(f"No such command '{name}'. Did you mean '{close[0]}'?")
        return super().resolve_command(ctx, args)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The list of commands in `toolkit --help`, from their summaries: importing every
        command to ask it its help would cost more than the rest of the answer."""
        limit = formatter.width - 6 - max(len(name) for name in COMMANDS)
        with formatter.section("Commands"):
            formatter.write_dl(
                [
                    (name, click.Command(name, help=summary).get_short_help_str(limit))
                    for name, (_, summary) in COMMANDS.items()
                ]
            )

    def invoke(self, ctx: click.Context) -> object:
        """Run the command; an expected failure of the core (`ToolkitError`) becomes
        `Error: <message>` on stderr (one line per problem) and exit code 1, and, when the
        command was given `--json`, `{"ok": false, "error", "errors"}` on stdout; any OS
        error (permission denied, disk full) is one line too: `Error: <path>: <what> (<hint>)`."""
        try:
            return super().invoke(ctx)
        except ToolkitError as exc:
            for line in exc.lines:
                click.echo(f"Error: {line}", err=True)
            if ctx.meta.get(JSON_MODE):  # `--json`: a JSON document on failure too
                click.echo(
                    json.dumps(
                        {
                            "ok": False,
                            "error": exc.lines[0] if exc.lines else "",
                            "errors": exc.lines,
                        },
                        ensure_ascii=False,
                    )
                )
            ctx.exit(1)
        except BrokenPipeError:
            raise  # the reader of the output went away: nothing to say to it
        except OSError as exc:  # permission denied, disk full, read-only, ...: one line
            click.echo(f"Error: {describe_os_error(exc)}", err=True)
            ctx.exit(1)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "--config",
    "config_path",
    type=click.Path(dir_okay=False),
    default=None,
    help="Configuration file (default: ./toolkit.toml).",
)
@click.option("-v", "--verbose", count=True, help="Say more (repeat for debug output).")
@click.option("-q", "--quiet", is_flag=True, help="Only errors.")
@click.version_option(__version__, prog_name="toolkit")
@click.pass_context
def main(ctx: click.Context, config_path: str | None, verbose: int, quiet: bool) -> None:
    """Keep front-matter Markdown posts in sync with a Forem-compatible publishing API
    (dev.to and friends) and build a static site from the same posts.

    \b
    Example:
      toolkit check              # validate every post under content/
      toolkit build              # build the site into site/
    """
    if ctx.invoked_subcommand not in SERVE_UNTIL_STOPPED:
        signals.hand_back()
    else:  # Python's own collection thresholds (the console script raises them)
        gc.set_threshold(*PYTHON_GC_THRESHOLDS)
    setup_logging(verbose=verbose, quiet=quiet)
    ctx.obj = CliContext(config_path=config_path, verbose=verbose, quiet=quiet)
