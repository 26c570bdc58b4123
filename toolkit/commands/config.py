"""`config`: every configuration key, from its declaration, with this project's value."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from toolkit.config import Config, Secret
from toolkit.config.sections import declared_keys
from toolkit.config.templates import TEAM_PROJECT_KEY
from toolkit.config.writers import PROJECT_VARIABLE, writer_order, writer_variable
from toolkit.redact import redact_url
from toolkit.runlog.run import recorded


@dataclass(frozen=True)
class ConfigKey:
    name: str  # `section.key`
    kind: str  # what the value may be: "path", "http(s) URL", "seconds > 0", ...
    default: Any  # as written in toolkit.toml; None: unset (or see `default_from`)
    default_from: str | None  # the key whose value is the default, e.g. `site.url`
    env: str | None  # the environment variable that overrides it (a secret's only source)
    secret: bool
    help: str
    value: Any  # this project's value as shown: secrets "set"/"not set", URLs redacted
    origin: str  # "default", "toolkit.toml", an environment variable, or `default_from`


def shown(config: Config, value: Any, *, secret: bool) -> Any:
    """A value as it may be shown: a secret only as set or not, credentials out of URLs,
    paths relative to the project."""
    if secret:
        return "set" if isinstance(value, Secret) else "not set"
    if isinstance(value, Path):
        return config.relative(value)
    if isinstance(value, str):
        return redact_url(value)
    return value


def config_keys(config: Config) -> list[ConfigKey]:
    """Every key of every section, in declaration order. Without a toolkit.toml (the
    defaults shown before `toolkit init`), no run is recorded: nothing is written there."""
    if not config.path.is_file():
        return _keys(config)
    with recorded(config, "config"):
        return _keys(config)


def _keys(config: Config) -> list[ConfigKey]:
    keys = []
    for section, name, declared in declared_keys():
        dotted = f"{section}.{name}"
        value = getattr(getattr(config, section), name)
        keys.append(
            ConfigKey(
                name=dotted,
                kind=declared.rule.kind,
                default=declared.default,
                default_from=f"{section}.{declared.default_from}"
                if declared.default_from
                else None,
                env=declared.env,
                secret=declared.secret,
                help=TEAM_PROJECT_KEY
                if config.writers is not None and declared.env == PROJECT_VARIABLE
                else declared.help,
                value=shown(config, value, secret=declared.secret),
                origin=config.origins.get(dotted, "default"),
            )
        )
    return keys + _writer_keys(config)


def _writer_keys(config: Config) -> list[ConfigKey]:
    """A team's repository: one row per writer (listed in `[writers]`, or a folder of the
    posts folder), the variable of their key and whether it is set."""
    if config.writers is None:
        return []
    from toolkit.content.accounts import account_of, writer_folders

    writers = config.writers
    folders = sorted({*writers.variables, *writer_folders(config)}, key=writer_order)
    rows = []
    for folder in folders:
        account = account_of(config, config.site.content_dir / folder / "_")
        rows.append(
            ConfigKey(
                name=f"writers.{folder}",
                kind="environment variable",
                default=writer_variable(folder),
                default_from=None,
                env=account.variable,
                secret=True,
                help="The API key of the writer whose posts are in "
                f"{config.relative(config.site.content_dir / folder)}/.",
                value="set" if account.key is not None else "not set",
                origin=config.path.name if folder in writers.variables else "default",
            )
        )
    return rows
