"""Bounds on what a service can make a client wait for or read.

httpx's timeouts are per read, so a server that drips one byte at a time would hold a
request for ever: `bound_by_deadlines` makes a client's network connections end every
read and write by the deadline of the request being sent (`attempt_deadline`, set by
`ApiClient.send`), and `deadline` puts one overall deadline on every request made inside
it (retries and pauses included). `json_depth_over` tells, without parsing, whether a
JSON answer nests deeper than a bound. This hooks one private part of httpx (its
transport's connection pool and network backend), kept to `bound_by_deadlines`.
"""

from __future__ import annotations

import contextlib
import contextvars
import re
import time
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


def bound_by_deadlines(client: httpx.Client) -> None:
    """Make `client`'s network transports (its own and those of the proxies it mounted
    from the environment) end every request by its deadline. A transport that is not
    httpx's network one (a test's scripted transport) is left as it is."""
    transports = [getattr(client, "_transport", None), *getattr(client, "_mounts", {}).values()]
    for transport in transports:
        pool = getattr(transport, "_pool", None)
        backend = getattr(pool, "_network_backend", None)
        if (
            isinstance(pool, httpcore.ConnectionPool)
            and isinstance(backend, httpcore.NetworkBackend)
            and not isinstance(backend, _DeadlineBackend)
        ):
            pool._network_backend = _DeadlineBackend(backend)


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
