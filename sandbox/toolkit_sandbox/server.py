"""Run the sandbox: uvicorn in a background thread, on loopback, on a free port.

    with SandboxServer() as sandbox:                 # in memory, seeded, port chosen
        httpx.get(sandbox.base_url + "/api/articles")
        sandbox.stats(), sandbox.reset(), sandbox.control("GET", "/forem/accounts")

It knows no interface in particular: what one interface's callers need (Forem's
accounts and keys) lives with that interface (`toolkit_sandbox.forem.accounts`).

The socket is bound before the thread starts, so `base_url` is known at once and a
busy port is reported as an error instead of a thread dying quietly. uvicorn's own
signal handling is switched off: the owner (a test session, the CLI) decides when
the server stops.
"""

from __future__ import annotations

import logging
import tempfile
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from starlette.routing import BaseRoute

from toolkit import USER_AGENT, tls
from toolkit.errors import SandboxError, ServeError
from toolkit.serving import BackgroundServer, is_loopback, url_host
from toolkit_sandbox.app import create_app, default_interfaces
from toolkit_sandbox.interface import Interface
from toolkit_sandbox.state import SandboxState
from toolkit_sandbox.store import Store, StoreError

if TYPE_CHECKING:
    import httpx

    from toolkit_sandbox.in_process import InProcessTransport

log = logging.getLogger("toolkit_sandbox")

PAGE = 1000  # request records asked for at a time (the control route allows 10,000)

__all__ = ["SandboxError", "SandboxServer", "is_loopback"]


class SandboxServer:
    # `control()` goes over the socket, as any client's request; a subclass for tests may
    # hand it to the application without one (`InProcessTransport`).
    control_in_process = False

    def __init__(
        self,
        db_path: Path | None = None,
        rate_window: float = 30.0,
        seed: bool = True,
        host: str = "127.0.0.1",
        port: int = 0,
        *,
        allow_remote: bool = False,
        extra_routes: Sequence[BaseRoute] = (),
        interfaces: Sequence[Interface] | None = None,
        data_dir: Path | None = None,
    ):
        if not is_loopback(host) and not allow_remote:
            raise SandboxError(
                f"refusing to listen on {host}: the sandbox is for loopback only "
                "(pass allow_remote / --allow-remote to bind another address)"
            )
        if rate_window <= 0:
            raise SandboxError("the rate-limit window must be a positive number of seconds")
        self.db_path = Path(db_path) if db_path is not None else None
        self.rate_window = float(rate_window)
        self.seed = seed
        self.host = host
        self.port = port
        self.extra_routes = tuple(extra_routes)
        # The emulated interfaces, composed into one application (app.default_interfaces).
        self.interfaces = tuple(interfaces if interfaces is not None else default_interfaces())
        self.created = False  # True when this start created (and seeded) the database
        # Files of the interfaces (uploads, archives, log partitions): beside the database
        # (`sandbox.db` -> `sandbox.data/`), or a temporary folder removed at stop.
        self.data_dir = (
            Path(data_dir)
            if data_dir is not None
            else (self.db_path.with_suffix(".data") if self.db_path is not None else None)
        )
        self._temporary: tempfile.TemporaryDirectory[str] | None = None
        self.state: SandboxState | None = None
        self._store: Store | None = None
        self._server: BackgroundServer | None = None
        self._client: httpx.Client | None = None
        self._client_lock = threading.Lock()

    # --- life cycle -----------------------------------------------------------------

    def start(self) -> SandboxServer:
        if self._server is not None:
            return self
        try:
            self._store = Store(self.db_path, self.interfaces)
            self.created = self._store.open(seed=self.seed)
        except StoreError as exc:
            self._close_store()
            raise SandboxError(str(exc)) from None
        if self.data_dir is None:
            self._temporary = tempfile.TemporaryDirectory(prefix="toolkit-sandbox-")
        data_dir = Path(self._temporary.name) if self._temporary is not None else self.data_dir
        self.state = SandboxState(store=self._store, host=self.host, data_dir=data_dir)
        app = create_app(
            self._store,
            self.rate_window,
            state=self.state,
            extra_routes=self.extra_routes,
            interfaces=self.interfaces,
        )
        self._server = BackgroundServer(app, self.host, self.port, name="sandbox")
        try:
            self._server.start()
        except ServeError as exc:
            self._server = None
            self.stop()
            raise SandboxError(exc.message) from None
        self.port = self._server.port
        return self

    def stop(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None
        if self._server is not None:
            self._server.stop()
            self._server = None
        self._close_store()
        if self._temporary is not None:
            self._temporary.cleanup()
            self._temporary = None

    def _close_store(self) -> None:
        if self._store is not None:
            self._store.close()
            self._store = None

    def transport(self) -> InProcessTransport:
        """An httpx transport to this sandbox's application without a socket
        (`InProcessTransport`): for a client that tests what the sandbox answers."""
        from toolkit_sandbox.in_process import InProcessTransport

        if self._server is None:
            raise SandboxError("the sandbox is not running")
        return InProcessTransport(self._server)

    def wait(self, timeout: float | None = None) -> None:
        """Block while the server runs (the CLI's foreground mode)."""
        if self._server is not None:
            self._server.wait(timeout)

    @property
    def running(self) -> bool:
        return self._server is not None and self._server.running

    def __enter__(self) -> SandboxServer:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    # --- what a test or script needs ------------------------------------------------

    @property
    def base_url(self) -> str:
        """`http://127.0.0.1:<port>`: no trailing slash, no `/api`."""
        return f"http://{url_host(self.host)}:{self.port}"

    def stats(self) -> list[dict[str, Any]]:
        """`[{"interface", "method", "route", "status", "count"}]` since start or the last
        reset_stats()."""
        counts: list[dict[str, Any]] = self.control("GET", "/stats")["requests"]
        return counts

    def count(
        self,
        method: str | None = None,
        route: str | None = None,
        status: int | None = None,
        *,
        interface: str | None = None,
    ) -> int:
        """How many recorded requests match, e.g. `count(status=429) == 0`."""
        return sum(
            item["count"]
            for item in self.stats()
            if (method is None or item["method"] == method.upper())
            and (route is None or item["route"] == route)
            and (status is None or item["status"] == status)
            and (interface is None or item["interface"] == interface)
        )

    def requests(self, after: int = 0, *, page: int = PAGE) -> list[dict[str, Any]]:
        """Every request record kept after sequence number `after`, oldest first (the
        control route answers `page` at a time)."""
        records: list[dict[str, Any]] = []
        while True:
            found: list[dict[str, Any]] = self.control(
                "GET", f"/requests?after={int(after)}&limit={int(page)}"
            )["requests"]
            records.extend(found)
            if len(found) < page:
                return records
            after = found[-1]["seq"]

    def reset(self) -> None:
        self.control("POST", "/reset")

    def reset_stats(self) -> None:
        self.control("POST", "/stats/reset")

    def fault(
        self,
        method: str,
        route: str,
        count: int = 1,
        *,
        status: int | None = None,
        delay_ms: int | None = None,
        drop_after_commit: bool = False,
        retry_after: int | None = None,
        delay_response_ms: int | None = None,
        interface: str | None = None,
        until_released: bool = False,
    ) -> dict[str, Any]:
        """Inject a fault (faults.py): the next `count` requests matching `method` and
        `route` fail that way. With `until_released`, a `delay_ms` hold ends at `release`
        of the fault's id (or after `delay_ms`, whichever comes first)."""
        spec: dict[str, Any] = {"method": method, "route": route, "count": count}
        if interface is not None:
            spec["interface"] = interface
        if status is not None:
            spec["status"] = status
        if delay_ms is not None:
            spec["delay_ms"] = delay_ms
        if delay_response_ms is not None:
            spec["delay_response_ms"] = delay_response_ms
        if drop_after_commit:
            spec["drop_after_commit"] = True
        if retry_after is not None:
            spec["retry_after"] = retry_after
        if until_released:
            spec["until_released"] = True
        fault: dict[str, Any] = self.control("POST", "/faults", spec)
        return fault

    def release(self, fault: dict[str, Any]) -> None:
        """End the hold of a fault injected `until_released`."""
        self.control("POST", f"/faults/{fault['id']}/release")

    def clear_faults(self) -> None:
        self.control("DELETE", "/faults")

    def _control_client(self) -> httpx.Client:
        """The client of `control`, made on first use (`toolkit sandbox` never needs it)."""
        with self._client_lock:
            if self._client is None:
                import httpx

                self._client = httpx.Client(
                    base_url=self.base_url,
                    headers={"User-Agent": USER_AGENT},
                    timeout=30.0,
                    verify=tls.shared_context(),
                    transport=self.transport() if self.control_in_process else None,
                )
            return self._client

    def control(self, method: str, path: str, body: Any = None) -> Any:
        """A request to the control API, `path` under `/__sandbox` (an interface's own
        routes under `/<name>/...`): its JSON answer, or None for an empty one. A write
        sends `body` (default `{}`); an error status raises `httpx.HTTPStatusError`."""
        if self._server is None:
            raise SandboxError("the sandbox is not running")
        json = None if method in ("GET", "HEAD", "DELETE") else (body if body is not None else {})
        response = self._control_client().request(method, f"/__sandbox{path}", json=json)
        response.raise_for_status()
        return response.json() if response.content else None
