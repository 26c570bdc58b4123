"""A `multipart/form-data` body parsed as it arrives (RFC 7578), for the upload form.

Each part's headers are read whole (at most `MAX_HEADERS` bytes), its data handed on in
pieces as they come, so a file part of any size passes through a bounded buffer: at
most the chunk just received plus the length of the delimiter. Finding the delimiter
is `bytes.find`, so a small upload costs a few microseconds to parse.
"""

from __future__ import annotations

import re
from typing import Protocol

MAX_HEADERS = 8192  # bytes of one part's header block
MAX_PARTS = 16
MAX_PREAMBLE = 1024

_PARAM = re.compile(r';\s*([A-Za-z0-9_.*-]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^\s;"]+))')
_ESCAPE = re.compile(r"\\(.)")


class FormError(Exception):
    """The body is not the multipart form it says it is."""


class PartHandler(Protocol):
    def start(self, headers: dict[str, str]) -> None: ...
    def data(self, chunk: bytes) -> None: ...
    def end(self) -> None: ...


def boundary_of(content_type: str) -> bytes | None:
    """The boundary of a `multipart/form-data` Content-Type, or None."""
    kind, params = header_value(content_type)
    boundary = params.get("boundary", "")
    if kind != "multipart/form-data" or not 0 < len(boundary) <= 70 or not boundary.isascii():
        return None
    return boundary.encode("ascii")


def header_value(value: str) -> tuple[str, dict[str, str]]:
    """`form-data; name="file"; filename="a.txt"` -> ("form-data", {"name": ..., ...});
    quoted values lose their quotes and backslash escapes."""
    kind, _, rest = value.partition(";")
    params = {}
    for match in _PARAM.finditer(";" + rest):
        quoted = match.group(2)
        params[match.group(1).lower()] = (_ESCAPE.sub(r"\1", quoted) if quoted is not None
                                          else match.group(3))
    return kind.strip().lower(), params


class FormParser:
    """Feed it the body's chunks; it calls the handler's `start(headers)`, `data(...)`
    and `end()` for each part. `close()` checks that the closing delimiter came."""

    def __init__(self, boundary: bytes, handler: PartHandler):
        self._delimiter = b"\r\n--" + boundary
        # The first delimiter has no CRLF before it: pretend it had.
        self._buffer = bytearray(b"\r\n")
        self._handler = handler
        self._state = "preamble"
        self._parts = 0

    def feed(self, chunk: bytes) -> None:
        self._buffer += chunk
        while self._step():
            pass

    def close(self) -> None:
        if self._state != "done":
            raise FormError("the body ends before its closing delimiter")

    def _step(self) -> bool:
        """Advance by one state while the buffer allows; False: wait for more bytes."""
        buffer, delimiter = self._buffer, self._delimiter
        if self._state == "preamble":
            found = buffer.find(delimiter)
            if found < 0:
                if len(buffer) > MAX_PREAMBLE:
                    raise FormError("no delimiter at the start of the body")
                return False
            del buffer[:found + len(delimiter)]
            self._state = "delimited"
            return True
        if self._state == "delimited":
            if len(buffer) < 2:
                return False
            if buffer[:2] == b"--":
                self._state = "done"
                buffer.clear()
                return False
            if buffer[:2] != b"\r\n":
                raise FormError("a delimiter is not followed by a line break")
            del buffer[:2]
            self._state = "headers"
            return True
        if self._state == "headers":
            found = buffer.find(b"\r\n\r\n")
            if found < 0:
                if len(buffer) > MAX_HEADERS:
                    raise FormError("a part's headers are too long")
                return False
            self._parts += 1
            if self._parts > MAX_PARTS:
                raise FormError(f"more than {MAX_PARTS} parts")
            headers = _headers(bytes(buffer[:found]))
            del buffer[:found + 4]
            self._handler.start(headers)
            self._state = "data"
            return True
        if self._state == "data":
            found = buffer.find(delimiter)
            if found < 0:
                keep = len(delimiter) - 1  # the delimiter may be cut across two chunks
                if len(buffer) > keep:
                    self._handler.data(bytes(buffer[:-keep]))
                    del buffer[:-keep]
                return False
            if found:
                self._handler.data(bytes(buffer[:found]))
            del buffer[:found + len(delimiter)]
            self._handler.end()
            self._state = "delimited"
            return True
        buffer.clear()  # "done": the epilogue is ignored
        return False


def _headers(block: bytes) -> dict[str, str]:
    try:
        text = block.decode("utf-8")
    except UnicodeDecodeError:
        raise FormError("a part's headers are not UTF-8") from None
    headers = {}
    for line in text.split("\r\n"):
        name, colon, value = line.partition(":")
        if not colon or not name.strip():
            raise FormError("a malformed part header")
        headers[name.strip().lower()] = value.strip()
    return headers
