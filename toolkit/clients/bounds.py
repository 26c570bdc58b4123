"""Bounds on what a service can make a client wait for or read.

httpx's timeouts are per read, so a server that drips one byte at a time would hold a
request for ever: every client of `toolkit.clients` reaches the network only through a
`DeadlineTransport` (`network_client` makes the client), httpcore's connection pool over
a network backend whose connections end every connect, read and write by the deadline of
the request being sent (`attempt_deadline`, set by `ApiClient.send`); the pool's
`network_backend` is a public argument, so the bound is installed when the transport is
made, or the transport is not made. `deadline` puts one overall deadline on every request
made inside it (retries and pauses included). `json_depth_over` tells, without parsing,
whether a JSON answer nests deeper than a bound.
"""

from __future__ import annotations

import contextlib
import contextvars
import ipaddress
import re
import ssl
import time
import urllib.request
from collections.abc import Iterable, Iterator
from typing import Any

import httpcore
import httpx

# The monotonic time by which the request being sent must be answered (None: no limit).
# Sync httpx does every read and write of a request in the thread that sends it.
_ATTEMPT_ENDS: contextvars.ContextVar[float | None] = contextvars.ContextVar(
    "toolkit_attempt_ends", default=None
)
# An overall deadline a caller put on every request it makes (`deadline`).
_OVERALL_ENDS: contextvars.ContextVar[float | None] = contextvars.ContextVar(
    "toolkit_overall_ends", default=None
)


def overall_deadline() -> float | None:
    """The monotonic time by which a `deadline` around the caller ends (None: none)."""
    return _OVERALL_ENDS.get()


@contextlib.contextmanager
def attempt_deadline(ends: float) -> Iterator[None]:
    """Every read and write of the request sent inside ends by the monotonic time `ends`."""
    token = _ATTEMPT_ENDS.set(ends)
    try:
        yield
    finally:
        _ATTEMPT_ENDS.reset(token)


@contextlib.contextmanager
def deadline(seconds: float) -> Iterator[None]:
    """Every request sent inside ends, answered or not, at most `seconds` from now (and
    within any deadline around this one): retries and pauses included."""
    ends = time.monotonic() + seconds
    outer = _OVERALL_ENDS.get()
    token = _OVERALL_ENDS.set(ends if outer is None else min(outer, ends))
    try:
        yield
    finally:
        _OVERALL_ENDS.reset(token)


def _bounded(timeout: float | None, kind: type[Exception]) -> float | None:
    """A read's, write's or connect's `timeout`, cut to what is left of the deadline of
    the request being sent; `kind` (an httpcore timeout) raised when nothing is left."""
    ends = _ATTEMPT_ENDS.get()
    if ends is None:
        return timeout
    left = ends - time.monotonic()
    if left <= 0:
        raise kind("the request's deadline has passed")
    return left if timeout is None else min(timeout, left)


class _DeadlineStream(httpcore.NetworkStream):
    """A connection whose every read and write ends by the request's deadline."""

    def __init__(self, stream: httpcore.NetworkStream):
        self._stream = stream

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._stream.read(max_bytes, _bounded(timeout, httpcore.ReadTimeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._stream.write(buffer, _bounded(timeout, httpcore.WriteTimeout))

    def close(self) -> None:
        self._stream.close()

    def start_tls(
        self, ssl_context: Any, server_hostname: str | None = None, timeout: float | None = None
    ) -> httpcore.NetworkStream:
        return _DeadlineStream(
            self._stream.start_tls(
                ssl_context, server_hostname, _bounded(timeout, httpcore.ConnectTimeout)
            )
        )

    def get_extra_info(self, info: str) -> Any:
        return self._stream.get_extra_info(info)


class _DeadlineBackend(httpcore.NetworkBackend):
    """httpcore's network backend, its connections bounded by the request's deadline."""

    def __init__(self, backend: httpcore.NetworkBackend):
        self._backend = backend

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.NetworkStream:
        return _DeadlineStream(
            self._backend.connect_tcp(
                host,
                port,
                _bounded(timeout, httpcore.ConnectTimeout),
                local_address,
                socket_options,
            )
        )

    def connect_unix_socket(
        self, path: str, timeout: float | None = None, socket_options: Iterable[Any] | None = None
    ) -> httpcore.NetworkStream:
        return _DeadlineStream(
            self._backend.connect_unix_socket(
                path, _bounded(timeout, httpcore.ConnectTimeout), socket_options
            )
        )

    def sleep(self, seconds: float) -> None:
        self._backend.sleep(seconds)


# httpcore's failures as httpx names them (the most specific first), so that a request
# through `DeadlineTransport` fails as one through httpx's own transport does.
_FAILURES: tuple[tuple[type[Exception], type[Exception]], ...] = (
    (httpcore.ConnectTimeout, httpx.ConnectTimeout),
    (httpcore.ReadTimeout, httpx.ReadTimeout),
    (httpcore.WriteTimeout, httpx.WriteTimeout),
    (httpcore.PoolTimeout, httpx.PoolTimeout),
    (httpcore.TimeoutException, httpx.TimeoutException),
    (httpcore.ConnectError, httpx.ConnectError),
    (httpcore.ReadError, httpx.ReadError),
    (httpcore.WriteError, httpx.WriteError),
    (httpcore.NetworkError, httpx.NetworkError),
    (httpcore.ProxyError, httpx.ProxyError),
    (httpcore.UnsupportedProtocol, httpx.UnsupportedProtocol),
    (httpcore.LocalProtocolError, httpx.LocalProtocolError),
    (httpcore.RemoteProtocolError, httpx.RemoteProtocolError),
    (httpcore.ProtocolError, httpx.ProtocolError),
)


@contextlib.contextmanager
def _as_httpx_failures() -> Iterator[None]:
    try:
        yield
    except Exception as exc:
        for theirs, ours in _FAILURES:
            if isinstance(exc, theirs):
                raise ours(str(exc)) from exc
        raise


class _AnswerStream(httpx.SyncByteStream):
    """An answer's body as httpcore reads it, its failures named as httpx names them."""

    def __init__(self, stream: Iterable[bytes]):
        self._stream = stream

    def __iter__(self) -> Iterator[bytes]:
        with _as_httpx_failures():
            yield from self._stream

    def close(self) -> None:
        close = getattr(self._stream, "close", None)  # httpcore's streams have one
        if close is not None:
            close()


class DeadlineTransport(httpx.BaseTransport):
    """An httpx transport to the network whose every connect, read and write ends by the
    deadline of the request being sent (`attempt_deadline`): httpcore's connection pool,
    given a network backend that bounds each connection (`network_backend`, a public
    argument of the pool). `ssl_context` verifies TLS servers; `proxy` (a URL) sends every
    request through that proxy. Every client of `toolkit.clients` reaches the network
    through one of these (`network_client`), so no request can be sent without its
    deadline."""

    def __init__(self, ssl_context: ssl.SSLContext, *, proxy: str | None = None):
        self.ssl_context = ssl_context  # what a TLS server is verified with
        limits = httpx.Limits()  # httpx's defaults: 100 connections, 20 kept alive for 5 s
        self._pool = httpcore.ConnectionPool(
            ssl_context=ssl_context,
            proxy=None if proxy is None else _proxy(proxy, ssl_context),
            max_connections=limits.max_connections,
            max_keepalive_connections=limits.max_keepalive_connections,
            keepalive_expiry=limits.keepalive_expiry,
            network_backend=_DeadlineBackend(httpcore.SyncBackend()),
        )

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        assert isinstance(request.stream, httpx.SyncByteStream)  # a sync client's request
        sent = httpcore.Request(
            method=request.method,
            url=httpcore.URL(
                scheme=request.url.raw_scheme,
                host=request.url.raw_host,
                port=request.url.port,
                target=request.url.raw_path,
            ),
            headers=request.headers.raw,
            content=request.stream,
            extensions=request.extensions,
        )
        with _as_httpx_failures():
            answer = self._pool.handle_request(sent)
        assert isinstance(answer.stream, Iterable)  # a sync pool's answer
        return httpx.Response(
            status_code=answer.status,
            headers=answer.headers,
            stream=_AnswerStream(answer.stream),
            extensions=answer.extensions,
        )

    def close(self) -> None:
        self._pool.close()


def _proxy(url: str, ssl_context: ssl.SSLContext) -> httpcore.Proxy:
    """httpcore's proxy for `url` (`http://user:password@host:port`), its credentials
    taken out of the URL and sent as Proxy-Authorization."""
    parsed = httpx.URL(url if "://" in url else f"http://{url}")
    auth = (parsed.username, parsed.password) if parsed.username else None
    return httpcore.Proxy(
        url=str(parsed.copy_with(username=None, password=None)),
        auth=auth,
        ssl_context=ssl_context if parsed.scheme == "https" else None,
    )


def _environment_proxies(ssl_context: ssl.SSLContext) -> dict[str, httpx.BaseTransport | None]:
    """httpx's `mounts` for the proxies the environment names (HTTP_PROXY, HTTPS_PROXY,
    ALL_PROXY; NO_PROXY's hosts go direct), read as httpx reads them for its own
    transports: each a `DeadlineTransport` too."""
    found = urllib.request.getproxies()
    mounts: dict[str, httpx.BaseTransport | None] = {}
    for scheme in ("http", "https", "all"):
        if found.get(scheme):
            mounts[f"{scheme}://"] = DeadlineTransport(ssl_context, proxy=found[scheme])
    for host in (host.strip() for host in found.get("no", "").split(",")):
        if host == "*":
            return {}
        if not host:
            continue
        if "://" in host:
            mounts[host] = None
        elif ":" in host and not host.startswith("["):
            mounts[f"all://[{host}]"] = None  # an IPv6 address
        elif host.lower() == "localhost" or _is_ipv4(host.split("/")[0]):
            mounts[f"all://{host}"] = None
        else:
            mounts[f"all://*{host}"] = None
    return mounts


def _is_ipv4(host: str) -> bool:
    try:
        ipaddress.IPv4Address(host)
    except ValueError:
        return False
    return True


def network_client(
    ssl_context: ssl.SSLContext,
    transport: httpx.BaseTransport | None = None,
    **options: Any,
) -> httpx.Client:
    """An httpx client (`options`: httpx.Client's, but its transports) whose requests to
    the network all keep their deadline: its transport and those of the environment's
    proxies are `DeadlineTransport`s. `transport` replaces them with one that does not
    reach the network (a test's scripted answers, an application served in process); a
    transport of httpx's own network kind is refused, since its reads would not end by
    the deadline (fail closed)."""
    if isinstance(transport, httpx.HTTPTransport):
        raise TypeError(
            "an httpx network transport would not end requests by their deadline: "
            "use toolkit.clients.bounds.DeadlineTransport"
        )
    if transport is not None:
        return httpx.Client(transport=transport, **options)
    proxies = _environment_proxies(ssl_context)
    return httpx.Client(transport=DeadlineTransport(ssl_context), mounts=proxies, **options)


_JSON_START = re.compile(rb"[ \t\r\n]*[\[{]")
# A JSON string (skipped whole) or a bracket, in a JSON text.
_JSON_TOKEN = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"|[\[{\]}]')


def json_depth_over(data: bytes, limit: int) -> bool:
    """Whether `data`, if it is JSON (an object or an array), nests arrays and objects
    deeper than `limit`: found without parsing it, so a hostile answer never reaches a
    recursive parser (or any code that walks what it gives) too deep."""
    if not _JSON_START.match(data):
        return False
    depth = 0
    for match in _JSON_TOKEN.finditer(data):
        token = match.group()
        if token in (b"{", b"["):
            depth += 1
            if depth > limit:
                return True
        elif token in (b"}", b"]"):
            depth -= 1
    return False
