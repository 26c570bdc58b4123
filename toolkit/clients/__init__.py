"""Clients of the remote interfaces, one module per interface on `base.ApiClient`, and
`Clients`, the wiring that builds them from a project's configuration.

`Clients` is the one place that turns `Config` into a client: base URL, credentials,
rate-limit window, timeout. A command makes it once, from its configuration and its run
(`Clients.of(config, run)`), and every client it then makes shares the same listeners: the
wait listener (`on_wait`), the `sleep` that pauses it and the request listener
(`on_request`, the run log's); they are never swapped afterwards. A team's writer's client
(`forem_of(account)`) holds the writer's key and names the writer to both listeners. The
clients are imported only when one is made, so importing this package costs nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Protocol, TypeAlias

from toolkit.errors import ConfigError

if TYPE_CHECKING:  # pragma: no cover
    import httpx

    from toolkit.clients.archive import ArchiveClient
    from toolkit.clients.base import RequestListener as RequestListenerOfClient
    from toolkit.clients.base import RequestReport, RetryPolicy, Sleep
    from toolkit.clients.base import WaitListener as WaitListenerOfClient
    from toolkit.clients.forem import ForemClient
    from toolkit.clients.logs import LogsClient
    from toolkit.config import Config, Secret

# What a client's `transport` is (a test's `httpx.MockTransport`, the in-process sandbox):
# the callers that only pass one through name it here, not the HTTP library.
Transport: TypeAlias = "httpx.BaseTransport"


class WriterWait(Protocol):
    """Told of each pause a client makes (`writer`: whose key the client holds, in a
    team's repository); the run log's `Run.wait`."""

    def __call__(self, seconds: float, reason: str, *, writer: str | None = None) -> None: ...


class WriterRequest(Protocol):
    """Told of each request a client makes (`writer` as for `WriterWait`); the run
    log's `Run.request`."""

    def __call__(self, report: RequestReport, *, writer: str | None = None) -> None: ...


class Listeners(Protocol):
    """What records a run's waits and requests (the run log's `Run`)."""

    def wait(self, seconds: float, reason: str, *, writer: str | None = None) -> None: ...

    def request(self, report: RequestReport, *, writer: str | None = None) -> None: ...


class KeyHolder(Protocol):
    """A team's account (`content.accounts.Account`): its writer and their key."""

    @property
    def writer(self) -> str | None: ...

    @property
    def key(self) -> Secret | None: ...

    @property
    def source(self) -> str: ...


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

MISSING_CLOUDCONVERT_KEY = (
    "CLOUDCONVERT_API_KEY is not set: put the archive-task API key in the environment or in a "
    ".env file beside toolkit.toml (the sandbox's is listed by GET /__sandbox/archive/accounts)"
)


@dataclass(frozen=True)
class Clients:
    """The clients of one command's run, all wired alike: the project's configuration, the
    listeners every client tells (`on_wait`, `on_request`), the `sleep` that pauses a
    client (a cancellable one, for a watch) and the `transport` (a test's, the in-process
    sandbox's). Made once by the command; `forem()`, `archive()` and `logs()` each make a
    new client, which the caller closes. The licence client is `toolkit.license.client
    .license_client(clients)` (this package does not know the licence's records)."""

    config: Config
    on_wait: WriterWait | None = None
    on_request: WriterRequest | None = None
    sleep: Sleep | None = None
    transport: Transport | None = None

    @classmethod
    def of(
        cls,
        config: Config,
        run: Listeners | None = None,
        *,
        on_wait: WriterWait | None = None,
        sleep: Sleep | None = None,
        transport: Transport | None = None,
    ) -> Clients:
        """The wiring of a command's run: its waits and requests recorded in `run` (the
        run log's `Run`), unless `on_wait` stands in for the waits (one that records them
        in the run itself, and tells someone else too)."""
        return cls(
            config,
            on_wait=on_wait if on_wait is not None else run.wait if run is not None else None,
            on_request=run.request if run is not None else None,
            sleep=sleep,
            transport=transport,
        )

    def wait_listener(self, writer: str | None = None) -> WaitListenerOfClient | None:
        """What a client is told to call on each pause: `on_wait`, naming `writer`."""
        return None if self.on_wait is None else partial(self.on_wait, writer=writer)

    def request_listener(self, writer: str | None = None) -> RequestListenerOfClient | None:
        """What a client is told to call on each request: `on_request`, naming `writer`."""
        return None if self.on_request is None else partial(self.on_request, writer=writer)

    def forem(self) -> ForemClient:
        """The publishing API client with the project's key (FOREM_API_KEY); refuses to
        start without it."""
        config = self.config
        if config.forem.api_key is None:
            raise ConfigError([MISSING_FOREM_KEY])
        origin = config.origins.get("forem.api_key", "FOREM_API_KEY")
        source = (
            "FOREM_API_KEY, read from .env"
            if origin.endswith(" in .env")
            else "FOREM_API_KEY, read from the environment"
        )
        return self._forem(config.forem.api_key, source, None)

    def forem_of(self, account: KeyHolder) -> ForemClient:
        """A team's writer's client: their key (in place of FOREM_API_KEY; each client has
        its own rate limiters, as the API's limits are per key), their waits and requests
        told with their name. The project's account (no writer) with the project's key."""
        if account.key is None:
            return self.forem()
        return self._forem(account.key, account.source, account.writer)

    def _forem(self, key: Secret, source: str, writer: str | None) -> ForemClient:
        from toolkit.clients.forem import ForemClient

        config = self.config
        return ForemClient(
            config.forem.base_url,
            key,
            rate_window=config.forem.rate_window,
            timeout=config.forem.timeout,
            on_wait=self.wait_listener(writer),
            sleep=self.sleep,
            transport=self.transport,
            on_request=self.request_listener(writer),
            key_source=source,
        )

    def logs(self, *, retry: RetryPolicy | None = None, timeout: float | None = None) -> LogsClient:
        """The log service's client (`[logs] base_url`, Basic auth from LOGS_USERNAME and
        LOGS_PASSWORD); refuses to start without them."""
        from toolkit.clients.logs import LogsClient

        config = self.config
        if config.logs.base_url is None:
            raise ConfigError([MISSING_LOGS_URL])
        if config.logs.username is None or config.logs.password is None:
            raise ConfigError([MISSING_LOGS_CREDENTIALS])
        return LogsClient(
            config.logs.base_url,
            config.logs.username,
            config.logs.password,
            on_request=self.request_listener(None),
            retry=retry,
            timeout=timeout,
            transport=self.transport,
        )

    def archive(self) -> ArchiveClient:
        """The archive-task API client for this project; refuses to start without a key."""
        from toolkit.clients.archive import ArchiveClient

        config = self.config
        if config.archive.api_key is None:
            raise ConfigError([MISSING_CLOUDCONVERT_KEY])
        return ArchiveClient(
            config.archive.base_url,
            config.archive.api_key,
            timeout=config.archive.timeout,
            on_wait=self.wait_listener(None),
            sleep=self.sleep,
            transport=self.transport,
            on_request=self.request_listener(None),
        )
