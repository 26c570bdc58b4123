"""An ASGI app served by uvicorn in a background thread (the sandbox, the watch preview).

The socket is bound before the thread starts, so the port is known at once and a busy
port is an error for the caller rather than a thread dying quietly. uvicorn's own signal
handling is off: the owner decides when the server stops.
"""

from __future__ import annotations

import contextlib
import ipaddress
import logging
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import uvicorn

from toolkit.errors import ToolkitError

log = logging.getLogger(__name__)

START_TIMEOUT = 10.0
STOP_TIMEOUT = 5.0


class ServerError(ToolkitError):
    """A server could not start (a busy port, a bad address)."""


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def url_host(host: str) -> str:
    """The host as it goes in a URL: a wildcard address becomes loopback, IPv6 bracketed."""
    host = {"0.0.0.0": "127.0.0.1", "::": "::1"}.get(host, host)
    return f"[{host}]" if ":" in host and not host.startswith("[") else host


class _Server(uvicorn.Server):
    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


class BackgroundServer:
    def __init__(self, app: Any, host: str = "127.0.0.1", port: int = 0, *, name: str = "server",
                 graceful_shutdown: float = 1.0):
        self.app = app
        self.host = host
        self.port = port
        self.name = name
        self.graceful_shutdown = graceful_shutdown
        self._sock: socket.socket | None = None
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None
        self._error: BaseException | None = None

    @property
    def base_url(self) -> str:
        return f"http://{url_host(self.host)}:{self.port}"

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def start(self) -> BackgroundServer:
        if self._thread is not None:
            return self
        try:
            self._sock = self._bind()
        except OSError as exc:
            raise ServerError(f"cannot listen on {self.host}:{self.port}: {exc.strerror or exc}") from None
        self.port = self._sock.getsockname()[1]
        config = uvicorn.Config(
            self.app, log_config=None, access_log=False, lifespan="off", http="h11", ws="none",
            loop="asyncio", timeout_keep_alive=5,
            timeout_graceful_shutdown=self.graceful_shutdown,
        )
        self._server = _Server(config)
        self._thread = threading.Thread(target=self._run, name=self.name, daemon=True)
        self._thread.start()
        deadline = time.monotonic() + START_TIMEOUT
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                error = self._error
                self.stop()
                raise ServerError(f"the {self.name} did not start: {error or 'timed out'}")
            time.sleep(0.005)
        return self

    def _bind(self) -> socket.socket:
        family = socket.AF_INET6 if ":" in self.host else socket.AF_INET
        # IPPROTO_TCP explicitly: asyncio turns Nagle off (TCP_NODELAY) only on sockets that
        # say so, and without it every keep-alive response waits ~40 ms for a delayed ACK.
        sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind((self.host.strip("[]"), self.port))
            sock.listen(128)
            sock.setblocking(False)
        except OSError:
            sock.close()
            raise
        return sock

    def _run(self) -> None:
        assert self._server is not None and self._sock is not None
        try:
            self._server.run(sockets=[self._sock])
        except BaseException as exc:  # start() reports it; a thread must not die silently
            self._error = exc
            log.exception("the %s stopped with an error", self.name)

    def stop(self) -> None:
        if self._server is not None and self._thread is not None:
            self._server.should_exit = True
            self._thread.join(STOP_TIMEOUT)
            if self._thread.is_alive():
                self._server.force_exit = True
                self._thread.join(STOP_TIMEOUT)
        self._thread = None
        self._server = None
        if self._sock is not None:
            self._sock.close()
            self._sock = None

    def wait(self, timeout: float | None = None) -> None:
        """Block while the server runs (foreground commands)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while self.running:
            if deadline is not None and time.monotonic() >= deadline:
                return
            self._thread.join(0.25)

    def __enter__(self) -> BackgroundServer:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()
