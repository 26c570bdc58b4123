"""The command line: a thin click layer over `toolkit.commands`.

Each command parses its options, calls one function of `toolkit.commands` and renders
what it returns. Only this package prints, imports click or exits.

Commands live in their own modules and are imported only when run, so `toolkit build`
with nothing to do does not pay for importing the sandbox or the HTTP client.
"""

from __future__ import annotations

import importlib

import click

from toolkit import __version__, signals
from toolkit.cli.context import CliContext, setup_logging
from toolkit.errors import ToolkitError

# name -> "module:function"; the order is the order of `toolkit --help`.
COMMANDS = {
    "new": "toolkit.cli.new:new",
    "check": "toolkit.cli.check:check",
    "build": "toolkit.cli.build:build",
    "plan": "toolkit.cli.publish:plan",
    "publish": "toolkit.cli.publish:publish",
    "pull": "toolkit.cli.mirror:pull",
    "mirror": "toolkit.cli.mirror:mirror",
    "watch": "toolkit.cli.watch:watch",
    "license": "toolkit.cli.license:license_command",
    "mcp": "toolkit.cli.mcp:mcp",
    "export": "toolkit.cli.export:export",
    "serve": "toolkit.cli.serve:serve",
    "sandbox": "toolkit.cli.sandbox:sandbox",
    "demo": "toolkit.cli.demo:demo",
    "config": "toolkit.cli.config:config",
    "logs": "toolkit.cli.logs:logs",
}
# Commands that serve until Ctrl-C: they take SIGINT and SIGTERM as a request to stop
# (toolkit.signals); every other command gets Python's KeyboardInterrupt back.
SERVE_UNTIL_STOPPED = {"watch", "serve", "sandbox", "mcp"}


class LazyGroup(click.Group):
    """A group whose subcommands are imported on first use (click's documented pattern)."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        target = COMMANDS.get(cmd_name)
        if target is None:
            return None
        module, _, attr = target.partition(":")
        command: click.Command = getattr(importlib.import_module(module), attr)
        return command

    def invoke(self, ctx: click.Context) -> object:
        """Run the command; an expected failure of the core (`ToolkitError`) becomes
        `Error: <message>` on stderr (one line per problem) and exit code 1."""
        try:
            return super().invoke(ctx)
        except ToolkitError as exc:
            for line in exc.lines:
                click.echo(f"Error: {line}", err=True)
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
    setup_logging(verbose=verbose, quiet=quiet)
    ctx.obj = CliContext(config_path=config_path, verbose=verbose, quiet=quiet)
