"""`toolkit config`: list every configuration key with its value for this project."""

from __future__ import annotations

import json

import click

from toolkit.cli.context import CliContext, common_options, json_option, pass_cli, print_json
from toolkit.commands.config import config_keys
from toolkit.commands.results import to_json
from toolkit.config.templates import commented_toml


def _toml(value: object) -> str:
    """A default as it would be written in toolkit.toml."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    return str(value)


@click.command()
@click.option(
    "--all",
    "reference",
    is_flag=True,
    help="Print every key as a commented toolkit.toml (defaults, what each does), to copy from.",
)
@json_option
@common_options
@pass_cli
def config(cli: CliContext, reference: bool, as_json: bool) -> None:
    """List every configuration key: its type, default, environment variable, what it does,
    and its value for this project (where it came from: the default, toolkit.toml or the
    environment). Secrets only show whether they are set; credentials in URLs are hidden.
    With --all, the full reference instead: every key as a commented toolkit.toml line.

    \b
    Example:
      toolkit config
      toolkit config --json
      toolkit config --all        # the reference of every setting, to copy from
    """
    if reference:
        if as_json:
            raise click.UsageError("--all and --json exclude each other")
        click.echo(commented_toml(), nl=False)
        return

    configuration = cli.config_or_defaults()
    if not configuration.path.is_file() and not cli.quiet:
        click.echo(f"no {configuration.path.name} found; these are the defaults", err=True)
    keys = config_keys(configuration)
    if as_json:
        print_json(to_json(keys))
        return
    for key in keys:
        if key.secret:
            click.echo(f"{key.name}: {key.value}  (secret: {key.env} in the environment or .env)")
        else:
            value = "(unset)" if key.value is None else _toml(key.value)
            click.echo(f"{key.name} = {value}  (from {key.origin})")
        facts = [key.kind]
        if key.default_from:
            facts.append(f"default: {key.default_from}")
        elif key.default is not None:
            facts.append(f"default: {_toml(key.default)}")
        if key.env and not key.secret:
            facts.append(f"env: {key.env}")
        click.echo(f"    {key.help} [{'; '.join(facts)}]")
