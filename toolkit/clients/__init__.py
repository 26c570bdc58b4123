"""Clients of the remote interfaces, one module per interface on `base.ApiClient`, and the
factories that build them from a project's configuration.

A factory is the one place that turns `Config` into a client: base URL, credentials,
rate-limit window, timeout. Whoever builds a client passes the wait listener (`on_wait`),
the `sleep` that pauses it and the request listener (`on_request`, the run log's); they
are never swapped afterwards. The clients are imported only when a factory runs, so
importing this package costs nothing.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, TypeAlias

from toolkit.errors import ConfigError

# httpx imports its own command line (`httpx._main`: click, rich's progress bars, tables
# and syntax, Pygments' lexers) whenever those packages are installed, as they are here:
# some 15 ms on every run that makes a request, which toolkit never uses. Marked absent,
# httpx keeps a stub `httpx.main` instead. (No effect once httpx is imported.)
if "httpx" not in sys.modules and "httpx._main" not in sys.modules:
    sys.modules["httpx._main"] = None  # type: ignore[assignment]

if TYPE_CHECKING:  # pragma: no cover
    import httpx

    from toolkit.clients.archive import ArchiveClient
    from toolkit.clients.base import RequestListener, RetryPolicy, Sleep, WaitListener
    from toolkit.clients.forem import ForemClient
    from toolkit.clients.logs import LogsClient
    from toolkit.config import Config, Secret

# What a factory's `transport` is (a test's `httpx.MockTransport`, the in-process sandbox):
# the callers that only pass one through name it here, not the HTTP library.
Transport: TypeAlias = "httpx.BaseTransport"

MISSING_FOREM_KEY = (
    "FOREM_API_KEY is not set: put your API key (dev.to: Settings → Extensions → DEV API Keys) "
    "in the environment or in a .env file beside toolkit.toml; `toolkit demo` runs everything "
    "offline against the built-in sandbox"
)
MISSING_LOGS_URL = (
    "no log service: set [logs] base_url in toolkit.toml or LOGS_BASE_URL in the environment "
    "(`toolkit logs --local` queries the local run log without one)"
)
MISSING_LOGS_CREDENTIALS = (
    "LOGS_USERNAME and LOGS_PASSWORD are not both set: put the log service's user and password "
    "in the environment or in a .env file beside toolkit.toml"
)


def forem_client(
    config: Config,
    *,
    on_wait: WaitListener | None = None,
    sleep: Sleep | None = None,
    transport: httpx.BaseTransport | None = None,
    on_request: RequestListener | None = None,
    key: Secret | None = None,
    key_source: str = "",
) -> ForemClient:
    """The publishing API client for this project; refuses to start without a key.
    `key` (read from `key_source`): in a team's repository, the key of a writer's
    account, in place of FOREM_API_KEY (each client has its own rate limiters, as the
    API's limits are per key)."""
    from toolkit.clients.forem import ForemClient

    if key is not None:
        source = key_source
    else:
        if config.forem.api_key is None:
            raise ConfigError([MISSING_FOREM_KEY])
        key = config.forem.api_key
        origin = config.origins.get("forem.api_key", "FOREM_API_KEY")
        source = (
            "FOREM_API_KEY, read from .env"
            if origin.endswith(" in .env")
            else "FOREM_API_KEY, read from the environment"
        )
    return ForemClient(
        config.forem.base_url,
        key,
        rate_window=config.forem.rate_window,
        timeout=config.forem.timeout,
        on_wait=on_wait,
        sleep=sleep,
        transport=transport,
        on_request=on_request,
        key_source=source,
    )


def logs_client(
    config: Config,
    *,
    on_request: RequestListener | None = None,
    retry: RetryPolicy | None = None,
    timeout: float | None = None,
    transport: httpx.BaseTransport | None = None,
) -> LogsClient:
    """The log service's client (`[logs] base_url`, Basic auth from LOGS_USERNAME and
    LOGS_PASSWORD); refuses to start without them."""
    from toolkit.clients.logs import LogsClient

    if config.logs.base_url is None:
        raise ConfigError([MISSING_LOGS_URL])
    if config.logs.username is None or config.logs.password is None:
        raise ConfigError([MISSING_LOGS_CREDENTIALS])
    return LogsClient(
        config.logs.base_url,
        config.logs.username,
        config.logs.password,
        on_request=on_request,
        retry=retry,
        timeout=timeout,
        transport=transport,
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
    on_request: RequestListener | None = None,
) -> ArchiveClient:
    """The archive-task API client for this project; refuses to start without a key."""
    from toolkit.clients.archive import ArchiveClient

    if config.archive.api_key is None:
        raise ConfigError([MISSING_CLOUDCONVERT_KEY])
    return ArchiveClient(
        config.archive.base_url,
        config.archive.api_key,
        timeout=config.archive.timeout,
        on_wait=on_wait,
        sleep=sleep,
        transport=transport,
        on_request=on_request,
    )
