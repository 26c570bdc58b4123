"""Clients of the remote interfaces, one module per interface on `base.ApiClient`, and the
factories that build them from a project's configuration.

A factory is the one place that turns `Config` into a client: base URL, credentials,
rate-limit window, timeout. Whoever builds a client passes the wait listener (`on_wait`)
and the `sleep` that pauses it; they are never swapped afterwards. The clients are
imported only when a factory runs, so importing this package costs nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from toolkit.errors import ConfigError

if TYPE_CHECKING:  # pragma: no cover
    import httpx

    from toolkit.clients.archive import ArchiveClient
    from toolkit.clients.base import Sleep, WaitListener
    from toolkit.clients.forem import ForemClient
    from toolkit.config import Config

MISSING_FOREM_KEY = (
    "FOREM_API_KEY is not set: put your API key (dev.to: Settings → Extensions → DEV API Keys) "
    "in the environment or in a .env file beside toolkit.toml; `make demo` runs everything "
    "offline against the built-in sandbox"
)


def forem_client(
    config: Config,
    *,
    on_wait: WaitListener | None = None,
    sleep: Sleep | None = None,
    transport: httpx.BaseTransport | None = None,
) -> ForemClient:
    """The publishing API client for this project; refuses to start without a key."""
    from toolkit.clients.forem import ForemClient

    if config.forem.api_key is None:
        raise ConfigError([MISSING_FOREM_KEY])
    return ForemClient(
        config.forem.base_url, config.forem.api_key, rate_window=config.forem.rate_window,
        timeout=config.forem.timeout, on_wait=on_wait, sleep=sleep, transport=transport,
    )


MISSING_CLOUDCONVERT_KEY = (
    "CLOUDCONVERT_API_KEY is not set: put the archive-task API key in the environment or in a "
    ".env file beside toolkit.toml (the sandbox's is listed by GET /__sandbox/archive/accounts)"
)


def archive_client(
    config: Config,
    *,
    on_wait: WaitListener | None = None,
    sleep: Sleep | None = None,
    transport: httpx.BaseTransport | None = None,
) -> ArchiveClient:
    """The archive-task API client for this project; refuses to start without a key."""
    from toolkit.clients.archive import ArchiveClient

    if config.archive.api_key is None:
        raise ConfigError([MISSING_CLOUDCONVERT_KEY])
    return ArchiveClient(config.archive.base_url, config.archive.api_key,
                         timeout=config.archive.timeout, on_wait=on_wait, sleep=sleep,
                         transport=transport)
