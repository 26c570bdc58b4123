"""A `multipart/form-data` body parsed as it arrives (RFC 7578), for the upload form.

python-multipart's streaming parser finds the parts; this module keeps the sandbox's
own bounds on top of it (at most `MAX_PARTS` parts, `MAX_HEADERS` bytes of one part's
headers, UTF-8 headers, a preamble of at most `MAX_PREAMBLE` bytes, which
python-multipart does not skip) and hands each part on: its headers whole, its data in pieces
as they come, so a file part of any size passes through a bounded buffer.

`header_value` is the sandbox's own: python-multipart's `parse_options_header` reads
values as Latin-1 and cuts a `filename` that looks like a Windows path down to its
last segment, which would hide the backslash the upload form refuses (a 422).
"""

from __future__ import annotations

import re
import sys
from typing import Protocol

from python_multipart.exceptions import MultipartParseError
from python_multipart.multipart import MultipartParser

MAX_HEADERS = 8192  # bytes of one part's header block
MAX_PARTS = 16
MAX_PREAMBLE = 1024  # bytes before the first delimiter, ignored (RFC 2046 5.1.1)

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
        params[match.group(1).lower()] = (
            _ESCAPE.sub(r"\1", quoted) if quoted is not None else match.group(3)
        )
    return kind.strip().lower(), params


class FormParser:
    """Feed it the body's chunks; it calls the handler's `start(headers)`, `data(...)`
    and `end()` for each part. `close()` checks that the closing delimiter came."""

    def __init__(self, boundary: bytes, handler: PartHandler):
        self._handler = handler
        self._parts = 0
        self._done = False
        self._size = 0  # bytes of the current part's headers so far
        self._name = bytearray()
        self._value = bytearray()
        self._headers: dict[str, str] = {}
        self._delimiter = b"\r\n--" + boundary
        # Until the first delimiter: what came so far (the body's start counts as a CRLF).
        self._preamble: bytearray | None = bytearray(b"\r\n")
        # The header bounds are this module's (the whole block, not one line or a count).
        self._parser = MultipartParser(
            boundary,
            {
                "on_part_begin": self._part_begin,
                "on_header_field": self._header_field,
                "on_header_value": self._header_value,
                "on_header_end": self._header_end,
                "on_headers_finished": self._headers_finished,
                "on_part_data": self._part_data,
                "on_part_end": self._handler.end,
                "on_end": self._end,
            },
            max_header_count=sys.maxsize,
            max_header_size=sys.maxsize,
        )

    def feed(self, chunk: bytes) -> None:
        if self._preamble is not None:
            self._preamble += chunk
            found = self._preamble.find(self._delimiter)
            if (found if found >= 0 else len(self._preamble)) > MAX_PREAMBLE + 2:
                raise FormError("no delimiter at the start of the body")
            if found < 0:
                return
            chunk, self._preamble = bytes(self._preamble[found + 2 :]), None
        try:
            self._parser.write(chunk)
        except MultipartParseError as exc:
            raise FormError(str(exc)) from None

    def close(self) -> None:
        if not self._done:
            raise FormError("the body ends before its closing delimiter")

    def _part_begin(self) -> None:
        self._parts += 1
        if self._parts > MAX_PARTS:
            raise FormError(f"more than {MAX_PARTS} parts")
        self._size, self._headers = 0, {}

    def _count(self, size: int) -> None:
        self._size += size
        if self._size > MAX_HEADERS:
            raise FormError("a part's headers are too long")

    def _header_field(self, data: bytes, start: int, end: int) -> None:
        self._count(end - start)
        self._name += data[start:end]

    def _header_value(self, data: bytes, start: int, end: int) -> None:
        self._count(end - start)
        self._value += data[start:end]

    def _header_end(self) -> None:
        self._count(4)  # the colon, a space, the line break
        try:
            name, value = self._name.decode("utf-8"), self._value.decode("utf-8")
        except UnicodeDecodeError:
            raise FormError("a part's headers are not UTF-8") from None
        self._headers[name.strip().lower()] = value.strip()
        self._name, self._value = bytearray(), bytearray()

    def _headers_finished(self) -> None:
        self._handler.start(self._headers)

    def _part_data(self, data: bytes, start: int, end: int) -> None:
        self._handler.data(bytes(data[start:end]))

    def _end(self) -> None:
        self._done = True
