"""The publishing API client of one post's account: in a team's repository
(`[writers]`), the key of the writer whose folder holds the post, never another's."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from toolkit.clients import forem_client
from toolkit.config import Config
from toolkit.content.accounts import account_of
from toolkit.errors import ConfigError

if TYPE_CHECKING:  # pragma: no cover
    from toolkit.clients.forem import ForemClient

TEAM_PULL = (
    "pull works on one account: in a team's repository ([writers]), pull a writer's "
    "articles in a project of their own (or publish, which binds each writer's posts "
    "with their key)"
)


def client_of(config: Config, path: str | Path, **kwargs: Any) -> ForemClient:
    """The client that sends the post at `path`: the project's key, or in a team's
    repository its writer's (a `ConfigError` naming the variable when it is not set)."""
    if config.writers is None:
        return forem_client(config, **kwargs)
    account = account_of(config, Path(path).absolute())
    if account.key is None:
        raise ConfigError(
            [f"{account.variable} is not set: the API key of {account.label}, whose post this is"]
        )
    return forem_client(config, key=account.key, key_source=account.source, **kwargs)


def refuse_team(config: Config, message: str) -> None:
    """Commands that work on one account only stop in a team's repository."""
    if config.writers is not None:
        raise ConfigError([message])
