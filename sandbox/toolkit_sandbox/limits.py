"""Limits every interface shares: how much body is read, how deep JSON may nest, which
integers the store can hold.

The application reads each request body itself, before an interface's handler runs
(app.py): a body over the interface's `max_body` is a 413 in that interface's error body
(checked against `Content-Length`, and counted while reading a chunked body), and a body
already read survives the client giving up while a delay fault holds the request. The
body is then replayed to the handler, so `await request.body()` works as usual.
"""

from __future__ import annotations

import json
import math
from typing import Any

from starlette.datastructures import Headers
from starlette.types import Receive, Scope

from toolkit_sandbox.interface import ErrorAnswer

# Rails parses JSON with the json gem's default `max_nesting` of 100: deeper is a 400.
MAX_DEPTH = 100
# What SQLite stores as an integer (a signed 64-bit number).
INT_MIN, INT_MAX = -(2**63), 2**63 - 1


class BodyTooLarge(Exception):
    """The request body is over the limit (answered 413)."""


class ClientGone(Exception):
    """The client closed the connection before its request body was complete."""


def fits64(value: Any) -> bool:
    """An integer SQLite can bind (bool excluded). Anything else matches no row."""
    return isinstance(value, int) and not isinstance(value, bool) and INT_MIN <= value <= INT_MAX


def query_int(raw: str | None) -> int | None:
    """A query-string integer of any size (ASCII digits, an optional sign), else None.
    Python refuses to parse more than 4300 digits; such a value reads as absent too."""
    raw = (raw or "").strip()
    digits = raw[1:] if raw[:1] in ("-", "+") else raw
    if not (digits.isascii() and digits.isdigit()) or len(digits) > 4300:
        return None
    return int(raw)


async def read_body(scope: Scope, receive: Receive, limit: int) -> bytes:
    """The whole request body, at most `limit` bytes."""
    length = Headers(scope=scope).get("content-length", "")
    if length.isascii() and length.isdigit() and int(length) > limit:
        raise BodyTooLarge
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            raise ClientGone
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            raise BodyTooLarge
        chunks.append(chunk)
        if not message.get("more_body", False):
            return b"".join(chunks)


def parse_json(raw: bytes, *, int64: bool = True) -> Any:
    """A request body as JSON; an empty body is `{}`. Malformed JSON, nesting deeper than
    `MAX_DEPTH`, NaN or an infinite number is a 400; with `int64`, an integer outside the
    signed 64-bit range is a 422 naming the field (the control API's safety net; an
    interface that stores only some fields checks those itself)."""
    if not raw.strip():
        return {}
    try:
        value = json.loads(raw, parse_constant=_no_constant)
    except (ValueError, UnicodeDecodeError, RecursionError):
        raise ErrorAnswer(400) from None
    _check_values(value, int64)
    return value


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _check_values(value: Any, int64: bool) -> None:
    """Walk a parsed body (without recursion): nesting within `MAX_DEPTH`, numbers finite,
    and with `int64` integers within SQLite's range."""
    stack: list[tuple[Any, str, int]] = [(value, "", 1)]
    while stack:
        item, where, depth = stack.pop()
        if isinstance(item, dict | list):
            if depth > MAX_DEPTH:
                raise ErrorAnswer(400)
            pairs = item.items() if isinstance(item, dict) else enumerate(item)
            for key, child in pairs:
                name = f"{where}.{key}" if isinstance(item, dict) else f"{where}[{key}]"
                stack.append((child, name.lstrip("."), depth + 1))
        elif isinstance(item, float) and not math.isfinite(item):
            raise ErrorAnswer(400)
        elif int64 and isinstance(item, int) and not INT_MIN <= item <= INT_MAX:
            raise ErrorAnswer(422, f"{where or 'the body'} is out of range")
