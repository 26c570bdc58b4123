"""An ASGI app served by uvicorn in a background thread (the sandbox, the watch preview).

The socket is bound before the thread starts, so the port is known at once and a busy
port is an error for the caller rather than a thread dying quietly. uvicorn handles no
signal outside the main thread: the owner decides when the server stops (`stop`, through
uvicorn's `should_exit` and its graceful shutdown).

uvicorn bounds only the idle time between two requests (`timeout_keep_alive`), and not
even that before the first request, so a client that sends half a request line and
then nothing, or trickles a byte at a time (slowloris), holds a connection for ever.
Two deadlines are added, those Go's server calls ReadHeaderTimeout and ReadTimeout: a
request head must be complete within `head_timeout` seconds of the connection being
made or of the previous response (each connection's protocol is uvicorn's, behind a
timer of ours), and its body within `body_timeout` seconds of waiting for it (the
application's `receive`, bounded); otherwise the connection is closed.

A request finds its connection through a context variable the connection's protocol sets
while it reads (uvicorn starts each request's task there, so the task inherits it), never
through the client's address: that is the proxy's on a proxied request, and anyone can
name another client's in a header. No proxy header is trusted either (uvicorn's
`proxy_headers` is off): nothing served here takes a request's address or scheme from
what the request says about itself.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
import errno
import ipaddress
import logging
import socket
import threading
import time
from collections import Counter
from collections.abc import Coroutine
from typing import Any, TypeVar

import uvicorn
from starlette.types import Message, Receive, Scope, Send
from uvicorn.protocols.http.h11_impl import H11Protocol

from toolkit.errors import ServeError

log = logging.getLogger(__name__)

T = TypeVar("T")

START_TIMEOUT = 10.0
STOP_TIMEOUT = 5.0
HEAD_TIMEOUT = 10.0  # seconds to receive a request line and headers
BODY_TIMEOUT = 30.0  # seconds to receive a request body, from the end of its head
# Connections closed for a deadline are logged as one count per this many seconds, not one
# record each: a record costs milliseconds on a terminal, and thousands of them, written
# on the event loop, would hold the closing of the rest back (and everything else).
CLOSED_REPORT_EVERY = 1.0
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


class _QuietStop(logging.Filter):
    """Stopping cuts off the requests still running after `graceful_shutdown`; uvicorn
    logs that as an error, and each of them with the traceback of its cancellation. The
    owner asked for the stop, so those records are dropped (other errors pass)."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.exc_info and isinstance(record.exc_info[1], asyncio.CancelledError):
            return False
        return not str(record.msg).startswith("Cancel %s running task(s)")


_QUIET_STOP = _QuietStop()


class _Deadlines:
    """The read deadlines of one server's connections, kept in two places that share
    this: each connection (`_BoundedConnection`, around uvicorn's HTTP protocol) has a
    head deadline, and each request (`_BoundedApp`, around the application) a body
    budget. A request finds its connection in `_CONNECTION`, which the connection sets
    while uvicorn reads from it and starts the request's task."""

    def __init__(self, head_timeout: float, body_timeout: float):
        self.head_timeout = head_timeout
        self.body_timeout = body_timeout
        self.closed: Counter[str] = Counter()  # connections closed since the last report
        self._report: asyncio.TimerHandle | None = None

    def protocol(self, **options: Any) -> _BoundedConnection:
        """A connection's protocol (uvicorn calls it with its protocol's arguments)."""
        return _BoundedConnection(self, H11Protocol(**options))

    def closed_one(self, part: str) -> None:
        """Count a connection closed for the deadline of `part`; logged within
        `CLOSED_REPORT_EVERY` seconds, with the others closed meanwhile."""
        self.closed[part] += 1
        if self._report is None:
            loop = asyncio.get_running_loop()
            self._report = loop.call_later(CLOSED_REPORT_EVERY, self.report)

    def report(self) -> None:
        self._report = None
        for part, count in sorted(self.closed.items()):
            log.debug(
                "closed %d connection(s): request %s not received within %s s",
                count,
                part,
                self.head_timeout if part == "head" else self.body_timeout,
            )
        self.closed.clear()


# The connection whose bytes are being read: set by `_BoundedConnection` around uvicorn's
# reading, so a request's task (started there) carries its own connection.
_CONNECTION: contextvars.ContextVar[_BoundedConnection | None] = contextvars.ContextVar(
    "toolkit_serving_connection", default=None
)


class _BoundedConnection(asyncio.Protocol):
    """uvicorn's h11 protocol for one connection, behind a deadline for each request's
    head: armed when the connection is made and when the application has answered a
    request (the next one on a keep-alive connection), disarmed when a request reaches
    the application (its head is complete). Received bytes never extend it; when it
    passes, the connection is closed."""

    def __init__(self, deadlines: _Deadlines, inner: H11Protocol):
        self.deadlines = deadlines
        self.inner = inner
        self.transport: asyncio.BaseTransport | None = None
        self._timer: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport
        self.inner.connection_made(transport)  # type: ignore[arg-type]
        self.head_expected()

    def data_received(self, data: bytes) -> None:
        # uvicorn starts a request's task while it reads its head: the task's context is a
        # copy of this one, with this connection in it (a pipelined request is started
        # from the task of the one before, on the same connection).
        token = _CONNECTION.set(self)
        try:
            self.inner.data_received(data)
        finally:
            _CONNECTION.reset(token)

    def eof_received(self) -> None:
        self.inner.eof_received()

    def connection_lost(self, exc: Exception | None) -> None:
        self.request_started()
        self.inner.connection_lost(exc)

    def pause_writing(self) -> None:
        self.inner.pause_writing()

    def resume_writing(self) -> None:
        self.inner.resume_writing()

    def head_expected(self) -> None:
        """Arm the head's deadline (a new connection, or a request answered)."""
        self.request_started()
        if self.transport is not None and not self.transport.is_closing():
            loop = asyncio.get_running_loop()
            self._timer = loop.call_later(self.deadlines.head_timeout, self.expired, "head")

    def request_started(self) -> None:
        """Disarm it (a request's head is complete)."""
        if self._timer is not None:
            self._timer.cancel()
        self._timer = None

    def expired(self, part: str) -> None:
        """Close the connection (the deadline of `part` passed); logged later, counted."""
        self._timer = None
        if self.transport is not None and not self.transport.is_closing():
            self.transport.close()
            self.deadlines.closed_one(part)


class _BoundedApp:
    """The application, each of its HTTP requests given `body_timeout` seconds in all to
    receive its body: only the time the application spends waiting for the body counts
    (a delay while it has not asked for the body is the server's). When they are used
    up, the connection is closed and the application hears that the client went away."""

    def __init__(self, app: Any, deadlines: _Deadlines):
        self.app = app
        self.deadlines = deadlines

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        connection = _CONNECTION.get() if scope["type"] == "http" else None
        if connection is None or connection.deadlines is not self.deadlines:
            # Not an HTTP request over a connection of this server (an in-process one).
            await self.app(scope, receive, send)
            return
        connection.request_started()
        left = self.deadlines.body_timeout
        complete = False

        async def bounded() -> Message:
            nonlocal left, complete
            if complete:
                return await receive()
            loop = asyncio.get_running_loop()
            began = loop.time()
            try:
                async with asyncio.timeout(max(left, 0.0)):
                    message = await receive()
            except TimeoutError:
                connection.expired("body")
                return {"type": "http.disconnect"}
            left -= loop.time() - began
            complete = message["type"] != "http.request" or not message.get("more_body")
            return message

        try:
            await self.app(scope, bounded, send)
        finally:
            connection.head_expected()


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
        self._server: uvicorn.Server | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
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
        deadlines = _Deadlines(self.head_timeout, self.body_timeout)
        config = uvicorn.Config(
            _BoundedApp(self.app, deadlines),
            log_config=None,
            access_log=False,
            lifespan="on" if self.lifespan else "off",
            ws="none",
            proxy_headers=False,
            http=deadlines.protocol,  # type: ignore[arg-type]
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
        self._server = uvicorn.Server(config)
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
        loop = asyncio.new_event_loop()
        self._loop = loop
        try:
            loop.run_until_complete(self._server.serve(sockets=[self._sock]))
        except BaseException as exc:  # start() reports it; a thread must not die silently
            self._error = exc
            log.exception("the %s stopped with an error", self.name)
        finally:
            self._loop = None
            # What is still pending (a connection cut by the stop, a coroutine submitted
            # late) is cancelled and awaited, as asyncio.run does, so no task is left
            # for the collector to destroy (and log) later.
            pending = asyncio.all_tasks(loop)
            for task in pending:
                task.cancel()
            if pending:
                loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
            loop.run_until_complete(loop.shutdown_asyncgens())
            loop.close()

    def stop(self) -> None:
        """Stop serving and wait for the thread; bounded, idempotent, and safe at any point
        of `start` (a thread not started yet is simply dropped). Open connections get
        `graceful_shutdown` seconds to finish their response, then are cut."""
        server, thread = self._server, self._thread
        self._server = self._thread = None
        if server is not None and thread is not None and thread.ident is not None:
            server.should_exit = True  # uvicorn's graceful shutdown, at its next tick
            thread.join(STOP_TIMEOUT)
            if thread.is_alive():
                server.force_exit = True  # without waiting for the requests left
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
        in-process request: `toolkit_sandbox.in_process.InProcessTransport`)."""
        loop = self._loop
        if self._server is None or loop is None or not self.running:
            coroutine.close()
            raise ServeError(f"the {self.name} is not running")
        return asyncio.run_coroutine_threadsafe(coroutine, loop)

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
