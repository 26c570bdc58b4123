"""The publishing API client of one post's account: in a team's repository
(`[writers]`), the key of the writer whose folder holds the post, never another's."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from toolkit.clients import Clients
from toolkit.content.accounts import account_of
from toolkit.errors import ConfigError

if TYPE_CHECKING:  # pragma: no cover
    from toolkit.clients.forem import ForemClient


def client_of(clients: Clients, path: str | Path) -> ForemClient:
    """The client that sends the post at `path`: the project's key, or in a team's
    repository its writer's (a `ConfigError` naming the variable when it is not set)."""
    config = clients.config
    if config.writers is None:
        return clients.forem()
    account = account_of(config, Path(path).absolute())
    if account.key is None:
        raise ConfigError(
            [f"{account.variable} is not set: the API key of {account.label}, whose post this is"]
        )
    return clients.forem_of(account)
