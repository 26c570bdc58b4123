"""An ASGI app served by uvicorn in a background thread (the sandbox, the watch preview).

The socket is bound before the thread starts, so the port is known at once and a busy
port is an error for the caller rather than a thread dying quietly. uvicorn's own signal
handling is off: the owner decides when the server stops.

uvicorn bounds only the idle time between two requests (`timeout_keep_alive`), and not
even that before the first request, so a client that sends half a request line and
then nothing, or trickles a byte at a time (slowloris), holds a connection for ever.
The HTTP protocol here adds the two deadlines Go's server calls ReadHeaderTimeout and
ReadTimeout: a request head must be complete within `head_timeout` seconds of the
connection being made or of the previous response, and its body within `body_timeout`
seconds of its head; otherwise the connection is closed.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import errno
import ipaddress
import logging
import socket
import threading
import time
from collections.abc import Coroutine, Iterator
from typing import Any, TypeVar

import uvicorn
from starlette.types import Message, Receive
from uvicorn.protocols.http.h11_impl import H11Protocol

from toolkit.errors import ServeError

log = logging.getLogger(__name__)

T = TypeVar("T")

START_TIMEOUT = 10.0
STOP_TIMEOUT = 5.0
HEAD_TIMEOUT = 10.0  # seconds to receive a request line and headers
BODY_TIMEOUT = 30.0  # seconds to receive a request body, from the end of its head
# The make target that runs a server of this name (`make serve PORT=8001`), for the hint
# of a port that is taken.
MAKE_TARGETS = {"site server": "serve", "preview server": "watch"}


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
    """uvicorn's server, stopped by its owner (`request_exit`), never by a signal, and
    without uvicorn's fixed pauses: its loop notices the request at once instead of at
    its next tenth-of-a-second tick, and its shutdown waits for the connections it closes
    only while some are left, instead of a tenth of a second every time."""

    loop: asyncio.AbstractEventLoop | None = None  # the loop serving, once it runs
    _wake: asyncio.Event | None = None

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield

    def request_exit(self, *, force: bool = False) -> None:
        """Stop serving (`force`: without waiting for the requests still running); safe
        from any thread, at any point of the server's life."""
        self.should_exit = True
        self.force_exit = self.force_exit or force
        loop, wake = self.loop, self._wake
        if loop is not None and wake is not None:
            with contextlib.suppress(RuntimeError):  # the loop has already closed
                loop.call_soon_threadsafe(wake.set)

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        self._wake = asyncio.Event()
        self.loop = asyncio.get_running_loop()
        await super().startup(sockets)

    async def main_loop(self) -> None:
        assert self._wake is not None  # made at startup
        counter = 0
        while not await self.on_tick(counter):  # uvicorn's tick: the Date header, limits
            counter = (counter + 1) % 864000
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), 0.1)

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        """uvicorn's shutdown: stop accepting, ask every connection to close (an idle one
        closes at once, a busy one after its response), give them `timeout_graceful_shutdown`
        seconds, then the lifespan's shutdown."""
        for server in self.servers:
            server.close()
        for sock in sockets or []:
            sock.close()
        for connection in list(self.server_state.connections):
            connection.shutdown()
        loop = asyncio.get_running_loop()
        settled = loop.time() + 0.1
        while self.server_state.connections and loop.time() < settled:
            await asyncio.sleep(0.005)
        try:
            await asyncio.wait_for(
                self._wait_tasks_to_complete(), timeout=self.config.timeout_graceful_shutdown
            )
        except TimeoutError:
            log.debug("cancelling %d request(s) still running", len(self.server_state.tasks))
            for task in self.server_state.tasks:
                task.cancel(msg="Task cancelled, timeout graceful shutdown exceeded")
        if not self.force_exit:
            await self.lifespan.shutdown()


class _QuietStop(logging.Filter):
    """Stopping cuts off the requests still running after `graceful_shutdown`; uvicorn
    logs each as an error with the traceback of its cancellation. The owner asked for the
    stop, so those records are dropped (other errors pass)."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not (record.exc_info and isinstance(record.exc_info[1], asyncio.CancelledError))


_QUIET_STOP = _QuietStop()


class DeadlineH11Protocol(H11Protocol):
    """uvicorn's h11 protocol plus a deadline for each request's head and body.

    One timer at a time: armed for the head when the connection is made and when a
    response completes (the next request on a keep-alive connection), switched to the
    body's deadline when the head has been parsed (a new request cycle), disarmed when
    the body is complete. Received bytes never extend a deadline. While reading is paused
    because the application has not consumed the body yet, the delay is the server's,
    so the body's deadline starts again instead of closing.
    """

    head_timeout = HEAD_TIMEOUT
    body_timeout = BODY_TIMEOUT

    def connection_made(self, transport: Any) -> None:
        self._deadline: asyncio.TimerHandle | None = None
        self._phase: str | None = None
        self._cycle_seen: Any = None
        super().connection_made(transport)
        self._arm("head")

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def handle_events(self) -> None:
        super().handle_events()
        self._follow()

    def on_response_complete(self) -> None:
        if not self.transport.is_closing():
            self._arm("head")
        super().on_response_complete()  # may parse a pipelined request: handle_events

    def _follow(self) -> None:
        cycle = self.cycle
        if self._phase == "head" and cycle is not None and cycle is not self._cycle_seen:
            self._arm("body")
        if self._phase == "body" and not cycle.more_body:
            self._disarm()

    def _arm(self, phase: str) -> None:
        self._disarm()
        self._phase = phase
        self._cycle_seen = self.cycle
        seconds = self.head_timeout if phase == "head" else self.body_timeout
        self._deadline = self.loop.call_later(seconds, self._expired)

    def _disarm(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
        self._deadline = None
        self._phase = None

    def _expired(self) -> None:
        self._deadline = None
        if self.transport.is_closing():
            return
        cycle = self.cycle
        if self._phase == "body" and (self.flow.read_paused or cycle.waiting_for_100_continue):
            self._arm("body")  # the application has not asked for the body yet
            return
        log.debug(
            "closing a connection from %s: request %s not received within the timeout",
            self.client,
            self._phase,
        )
        self.transport.close()


def _protocol(head_timeout: float, body_timeout: float) -> type[DeadlineH11Protocol]:
    return type(
        "DeadlineH11Protocol",
        (DeadlineH11Protocol,),
        {"head_timeout": head_timeout, "body_timeout": body_timeout},
    )


class BackgroundServer:
    """`app` served on `host:port`. `lifespan` runs the app's lifespan (startup before the
    first request, shutdown when stopping); `tls` (certificate, key: PEM files) serves
    HTTPS. `bind()` may be called before `start()` to learn the port first (port 0)."""

    def __init__(
        self,
        app: Any,
        host: str = "127.0.0.1",
        port: int = 0,
        *,
        name: str = "server",
        graceful_shutdown: float = 1.0,
        head_timeout: float = HEAD_TIMEOUT,
        body_timeout: float = BODY_TIMEOUT,
        lifespan: bool = False,
        tls: tuple[str, str] | None = None,
    ):
        self.app = app
        self.host = host
        self.port = port
        self.name = name
        self.graceful_shutdown = graceful_shutdown
        self.head_timeout = head_timeout
        self.body_timeout = body_timeout
        self.lifespan = lifespan
        self.tls = tls
        self._sock: socket.socket | None = None
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None
        self._error: BaseException | None = None

    @property
    def base_url(self) -> str:
        return f"{'https' if self.tls else 'http'}://{url_host(self.host)}:{self.port}"

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def bind(self) -> int:
        """Listen on the socket now (once); the port, known even when 0 was asked for."""
        if self._sock is None:
            try:
                self._sock = self._bind()
            except OSError as exc:
                hint = ""
                if exc.errno == errno.EADDRINUSE and self.port:
                    hint = (
                        f" (another program has port {self.port}: choose another with "
                        f"--port {self.port + 1}"
                        + (
                            f"; with make: make {MAKE_TARGETS[self.name]} PORT={self.port + 1}"
                            if self.name in MAKE_TARGETS
                            else ""
                        )
                        + ")"
                    )
                raise ServeError(
                    f"cannot listen on {self.host}:{self.port}: {exc.strerror or exc}{hint}"
                ) from None
            self.port = self._sock.getsockname()[1]
        return self.port

    def start(self) -> BackgroundServer:
        if self._thread is not None:
            return self
        self.bind()
        config = uvicorn.Config(
            self.app,
            log_config=None,
            access_log=False,
            lifespan="on" if self.lifespan else "off",
            ws="none",
            http=_protocol(self.head_timeout, self.body_timeout),
            loop="asyncio",
            timeout_keep_alive=5,
            # uvicorn annotates it `int`, but hands it to asyncio.wait_for: seconds, any float.
            timeout_graceful_shutdown=self.graceful_shutdown,  # type: ignore[arg-type]
            ssl_certfile=self.tls[0] if self.tls else None,
            ssl_keyfile=self.tls[1] if self.tls else None,
        )
        uvicorn_log = logging.getLogger("uvicorn.error")
        if _QUIET_STOP not in uvicorn_log.filters:
            uvicorn_log.addFilter(_QUIET_STOP)
        self._server = _Server(config)
        self._thread = threading.Thread(target=self._run, name=self.name, daemon=True)
        self._thread.start()
        deadline = time.monotonic() + START_TIMEOUT
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                error = self._error
                self.stop()
                raise ServeError(f"the {self.name} did not start: {error or 'timed out'}")
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
        """Stop serving and wait for the thread; bounded, idempotent, and safe at any point
        of `start` (a thread not started yet is simply dropped). Open connections get
        `graceful_shutdown` seconds to finish their response, then are cut."""
        server, thread = self._server, self._thread
        self._server = self._thread = None
        if server is not None and thread is not None and thread.ident is not None:
            server.request_exit()
            thread.join(STOP_TIMEOUT)
            if thread.is_alive():
                server.request_exit(force=True)
                thread.join(STOP_TIMEOUT)
        if self._sock is not None:
            self._sock.close()
            self._sock = None

    @property
    def asgi_app(self) -> Any:
        """The application as the server calls it for each request (the app inside
        uvicorn's own middleware), once started."""
        if self._server is None:
            raise ServeError(f"the {self.name} is not running")
        return self._server.config.loaded_app

    def submit(self, coroutine: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
        """Run `coroutine` on the server's event loop, where it handles its requests (an
        in-process request: `toolkit.sandbox.in_process.InProcessTransport`)."""
        server = self._server
        if server is None or server.loop is None or not self.running:
            coroutine.close()
            raise ServeError(f"the {self.name} is not running")
        return asyncio.run_coroutine_threadsafe(coroutine, server.loop)

    def wait(self, timeout: float | None = None) -> None:
        """Block while the server runs (foreground commands)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while (thread := self._thread) is not None and thread.is_alive():
            if deadline is not None and time.monotonic() >= deadline:
                return
            thread.join(0.25)

    def __enter__(self) -> BackgroundServer:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()


def replay(body: bytes, receive: Receive) -> Receive:
    """A `receive` that hands out the body already read, then defers to the real one
    (which reports the disconnect when the client goes)."""
    given = False

    async def inner() -> Message:
        nonlocal given
        if not given:
            given = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return inner
