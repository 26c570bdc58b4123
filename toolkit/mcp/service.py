"""The MCP server started from the project's configuration, and its clients: what
`toolkit mcp` (`toolkit.cli.mcp`) calls.

It lives in `toolkit.mcp`, not `toolkit.commands`: the server's tools call the commands,
so the commands never import the server (the layers, `[tool.importlinter]`).

- `stdio_server` returns the server of `toolkit mcp` (stdio) unstarted, as a
  `StdioSession`: the caller starts it and waits while it runs (until the client closes
  stdin). No OAuth there: the client started the process, whose environment holds the
  credentials, and the session holds the scopes it was started with.
- `http_server` returns the HTTP transport started (`RunningMcp`, to stop): Streamable
  HTTP at `/mcp` behind the server's own OAuth 2.1 authorization server. It refuses to
  start without an operator secret, or on an address other than loopback without TLS.
- `mcp_clients`, `add_client` and `revoke_client` manage the clients in `.toolkit/mcp.db`.

Every authorization decision and tool call is told to `listener` (`toolkit.mcp.events`);
the run log records them by passing its own. Nothing here imports the MCP SDK until a
function needs it.
"""

from __future__ import annotations

import datetime as dt
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from toolkit.config import Config
from toolkit.errors import AuthorizationError, ConfigError, ServeError
from toolkit.mcp import scopes as scope_names
from toolkit.mcp.events import McpListener, RunLogListener
from toolkit.mcp.store import DB_NAME, AuthStore, ClientRecord, new_secret
from toolkit.runlog.run import Run

if TYPE_CHECKING:  # pragma: no cover
    from toolkit.mcp.server import ToolkitMCP
    from toolkit.serving import BackgroundServer

__all__ = [
    "McpClient",
    "NewClient",
    "RunningMcp",
    "StdioSession",
    "add_client",
    "http_server",
    "mcp_clients",
    "revoke_client",
    "stdio_server",
]

Clock = Callable[[], float]


def _store(config: Config, clock: Clock = time.time) -> AuthStore:
    return AuthStore(config.state_dir / DB_NAME, clock)


def _listener(config: Config, listener: McpListener | None) -> tuple[McpListener, Run | None]:
    """The listener given, else the session's own run of the run log (one run from start
    to stop, as a watch session is) with a listener that records every event in it."""
    if listener is not None:
        return listener, None
    run = Run(config, "mcp").start()
    return RunLogListener(run), run


def _scopes(scopes: tuple[str, ...] | list[str]) -> tuple[str, ...]:
    bad = scope_names.unknown(list(scopes))
    if bad:
        raise ConfigError([f"unknown scope {bad[0]!r}: choose from {', '.join(scope_names.ALL)}"])
    return tuple(scope_names.parse(" ".join(scopes)))


# -- stdio ------------------------------------------------------------------------------------


class StdioSession:
    """The stdio server, to serve in the caller's thread until the client closes stdin or
    `stopping()` says so (Ctrl-C, SIGTERM: `toolkit.signals`)."""

    def __init__(self, server: ToolkitMCP, scopes: tuple[str, ...], run: Run | None = None):
        self.server = server
        self.scopes = scopes
        self.run = run  # the session's run of the run log, finished when serving ends

    def serve(self, stopping: Callable[[], bool] = lambda: False) -> None:
        import anyio

        from toolkit.mcp.stdio import serve_stdio

        error: BaseException | None = None
        try:
            anyio.run(serve_stdio, self.server, stopping)
        except BaseException as exc:
            error = exc
            raise
        finally:
            if self.run is not None:
                self.run.finish(error)


def stdio_server(
    config: Config,
    *,
    scopes: tuple[str, ...] | list[str] = scope_names.DEFAULT,
    listener: McpListener | None = None,
) -> StdioSession:
    """The server of `toolkit mcp` over stdio, holding `scopes` (default: all but publish)."""
    granted = _scopes(scopes)
    from toolkit.mcp.server import ToolkitMCP

    events, run = _listener(config, listener)
    server = ToolkitMCP(config, events, transport="stdio", local_scopes=granted)
    return StdioSession(server, granted, run)


# -- HTTP ------------------------------------------------------------------------------------


@dataclass
class RunningMcp:
    """A started HTTP transport; `stop()` ends it."""

    server: BackgroundServer
    issuer_url: str  # the authorization server (the origin clients use)
    store: AuthStore
    run: Run | None = None  # the session's run of the run log, finished at stop

    @property
    def url(self) -> str:
        """The MCP endpoint to give a client."""
        return self.issuer_url + "/mcp"

    @property
    def local_url(self) -> str:
        """Where it listens (the same as `url` unless [mcp] issuer_url says otherwise)."""
        return self.server.base_url + "/mcp"

    @property
    def running(self) -> bool:
        return self.server.running

    def stop(self) -> None:
        self.server.stop()
        self.store.close()
        if self.run is not None:
            self.run.finish()


def http_server(
    config: Config,
    *,
    host: str | None = None,
    port: int | None = None,
    tls_cert: Path | None = None,
    tls_key: Path | None = None,
    clock: Clock = time.time,
    listener: McpListener | None = None,
    announce: Callable[[str], None] | None = None,
) -> RunningMcp:
    """Start the HTTP transport on `host:port` ([mcp] host and port by default; port 0:
    any free port), with TLS when a certificate and key are given (here or in [mcp]).
    `clock` is the time tokens expire by; `announce` shows a line in the server's
    terminal (default: a warning of the `toolkit.mcp` logger). Raises `ConfigError` or
    `ServeError`."""
    from toolkit.mcp.auth import ToolkitAuthProvider
    from toolkit.mcp.consent import secret_problem
    from toolkit.mcp.http import HttpSite, bind_problem, build_app, check_tls, issuer_for
    from toolkit.serving import BackgroundServer

    settings = config.mcp
    host = host if host is not None else settings.host
    port = port if port is not None else settings.port
    cert = tls_cert if tls_cert is not None else settings.tls_cert
    key = tls_key if tls_key is not None else settings.tls_key
    if (cert is None) != (key is None):
        raise ConfigError(
            [
                "TLS needs both a certificate and its key (--tls-cert and --tls-key, "
                "or [mcp] tls_cert and tls_key)"
            ]
        )
    problem = secret_problem(settings.operator_secret)
    if problem:
        raise ConfigError([problem])
    problem = bind_problem(host, cert is not None)
    if problem:
        raise ServeError(problem)
    if cert is not None and key is not None:
        check_tls(cert, key)
    assert settings.operator_secret is not None  # secret_problem said so
    events, run = _listener(config, listener)
    server = BackgroundServer(
        None,
        host,
        port,
        name="MCP server",
        lifespan=True,
        tls=(str(cert), str(key)) if cert and key else None,
    )
    store: AuthStore | None = None
    try:
        bound = server.bind()
        site = HttpSite(
            issuer_for(settings.issuer_url, host, bound, cert is not None),
            host,
            bound,
            settings.access_token_lifetime,
            settings.refresh_token_lifetime,
        )
        store = _store(config, clock)
        provider = ToolkitAuthProvider(store, site.policy(), events)
        server.app, _ = build_app(
            config, provider, site, settings.operator_secret, events, announce
        )
        server.start()
    except BaseException as exc:
        server.stop()
        if store is not None:
            store.close()
        if run is not None:
            run.finish(exc)
        raise
    return RunningMcp(server, site.issuer_url, store, run)


# -- clients ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class McpClient:
    client_id: str
    name: str
    origin: str  # "registered" (by the client itself) or "operator" (toolkit mcp add-client)
    redirect_uris: list[str]
    scopes: list[str]  # what it may ask for
    granted: list[str]  # what its live tokens hold
    live_grants: int  # authorizations with a token that still works
    created_at: str
    last_authorized_at: str | None
    revoked: bool


@dataclass(frozen=True)
class NewClient:
    client: McpClient
    client_secret: str  # shown once: only its hash is kept


def _when(seconds: float | None) -> str | None:
    if seconds is None:
        return None
    return dt.datetime.fromtimestamp(seconds, dt.UTC).isoformat(timespec="seconds")


def _client(record: ClientRecord) -> McpClient:
    return McpClient(
        client_id=record.client_id,
        name=record.name,
        origin=record.origin,
        redirect_uris=[str(u) for u in record.info.get("redirect_uris") or []],
        scopes=scope_names.parse(record.info.get("scope")),
        granted=list(record.scopes_granted),
        live_grants=record.active_grants,
        created_at=_when(record.created_at) or "",
        last_authorized_at=_when(record.last_grant_at),
        revoked=record.revoked_at is not None,
    )


def mcp_clients(config: Config, *, include_revoked: bool = False) -> list[McpClient]:
    """The clients of the HTTP transport, the oldest first."""
    if not (config.state_dir / "mcp.db").exists():
        return []
    store = _store(config)
    try:
        return [_client(r) for r in store.clients() if include_revoked or r.revoked_at is None]
    finally:
        store.close()


def revoke_client(config: Config, client_id: str) -> McpClient:
    """Revoke a client: its tokens stop working at once (a running server included) and it
    cannot be authorized again. Raises `AuthorizationError` for an unknown client."""
    store = _store(config)
    try:
        if not store.revoke_client(client_id):
            record = store.client(client_id, revoked=True)
            if record is None:
                raise AuthorizationError(
                    f"no MCP client {client_id!r} (toolkit mcp clients lists them)"
                )
            raise AuthorizationError(f"MCP client {client_id} was revoked already")
        record = store.client(client_id, revoked=True)
        assert record is not None
        return _client(record)
    finally:
        store.close()


def add_client(
    config: Config, name: str, scopes: tuple[str, ...] | list[str] = (scope_names.READ,)
) -> NewClient:
    """A confidential client for the client_credentials grant (a script, a CI job acting
    for itself, with no writer at a browser): its id and secret (shown once)."""
    granted = _scopes(scopes)
    if not granted:
        raise ConfigError(["a client needs at least one scope"])
    name = name.strip()
    if not name:
        raise ConfigError(["a client needs a name"])
    client_id = f"toolkit-{secrets.token_hex(8)}"
    secret = new_secret("tks")
    info = {
        "client_id": client_id,
        "client_name": name,
        "grant_types": ["client_credentials"],
        "token_endpoint_auth_method": "client_secret_basic",
        "redirect_uris": None,
        "response_types": [],
        "scope": " ".join(granted),
    }
    store = _store(config)
    try:
        store.add_client(client_id, info, secret, name=name, origin="operator")
        record = store.client(client_id)
        assert record is not None
        return NewClient(_client(record), secret)
    finally:
        store.close()
