"""`toolkit completion SHELL`: the shell completion script, from click's own machinery."""

from __future__ import annotations

import click
from click.shell_completion import get_completion_class

SHELLS = ("bash", "zsh", "fish")
PROG_NAME = "toolkit"  # the console script the shell completes, however this one was started
COMPLETE_VAR = "_TOOLKIT_COMPLETE"  # what click's `main` of the console script listens to


@click.command()
@click.argument("shell", type=click.Choice(SHELLS))
@click.pass_context
def completion(ctx: click.Context, shell: str) -> None:
    """Print the shell completion script of toolkit for SHELL (bash, zsh or fish).

    The script completes commands, options and their choices as you type. Load it from
    your shell's start-up file, or write it where your shell looks for completions (see
    the examples). It calls `toolkit` itself to complete, so toolkit must be on PATH.

    \b
    Example:
      toolkit completion bash >> ~/.bashrc
      toolkit completion zsh > ~/.zfunc/_toolkit
      toolkit completion fish > ~/.config/fish/completions/toolkit.fish
    """

    found = get_completion_class(shell)
    if found is None:  # pragma: no cover - the choice holds click's own shells only
        raise click.BadParameter(f"no completion for {shell}", param_hint="SHELL")
    script = found(ctx.find_root().command, {}, PROG_NAME, COMPLETE_VAR).source()
    click.echo(script, nl=not script.endswith("\n"))
