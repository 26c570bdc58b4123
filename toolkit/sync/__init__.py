"""Keeping posts and the publishing API in sync: the lock, identity, plans and the engine."""

from __future__ import annotations

from toolkit.clients.forem import ForemClient
from toolkit.config import Config
from toolkit.errors import ToolkitError

MISSING_KEY = (
    "FOREM_API_KEY is not set: put your API key (dev.to: Settings → Extensions → DEV API Keys) "
    "in the environment or in a .env file beside toolkit.toml; `make demo` runs everything "
    "offline against the built-in sandbox"
)


def forem_client(config: Config, **kwargs) -> ForemClient:
    """The publishing API client for this project; refuses to start without a key."""
    if config.forem.api_key is None:
        raise ToolkitError(MISSING_KEY)
    return ForemClient(
        config.forem.base_url, config.forem.api_key, rate_window=config.forem.rate_window,
        timeout=config.forem.timeout, **kwargs
    )
