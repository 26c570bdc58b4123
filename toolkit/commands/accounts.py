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
    from toolkit.content.accounts import Account
    from toolkit.runlog.run import Run


def account_client(config: Config, account: Account, run: Run, **kwargs: Any) -> ForemClient:
    """A team's writer's client: their key, and their requests and waits recorded in
    `run` under their name."""
    on_wait, on_request = run.listeners_of(account.writer)
    return forem_client(
        config,
        on_wait=on_wait,
        on_request=on_request,
        key=account.key,
        key_source=account.source,
        **kwargs,
    )


def client_of(config: Config, path: str | Path, run: Run) -> ForemClient:
    """The client that sends the post at `path`: the project's key, or in a team's
    repository its writer's (a `ConfigError` naming the variable when it is not set)."""
    if config.writers is None:
        return forem_client(config, on_wait=run.wait, on_request=run.request)
    account = account_of(config, Path(path).absolute())
    if account.key is None:
        raise ConfigError(
            [f"{account.variable} is not set: the API key of {account.label}, whose post this is"]
        )
    return account_client(config, account, run)
