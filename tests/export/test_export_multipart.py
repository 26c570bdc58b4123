"""The sandbox's streaming multipart parser: the same parts however the body is cut."""

from __future__ import annotations

import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st

from toolkit.sandbox.archive.multipart import FormError, FormParser, boundary_of, header_value


class Parts:
    def __init__(self) -> None:
        self.parts: list[tuple[dict[str, str], bytes]] = []

    def start(self, headers: dict[str, str]) -> None:
        self.parts.append((headers, b""))

    def data(self, chunk: bytes) -> None:
        headers, data = self.parts[-1]
        self.parts[-1] = (headers, data + chunk)

    def end(self) -> None:
        pass


def encoded(fields: dict[str, str], filename: str, content: bytes) -> tuple[bytes, bytes]:
    """A body as httpx encodes a form with a file, and its boundary."""
    request = httpx.Request("POST", "http://x/", data=fields,
                            files={"file": (filename, content, "application/octet-stream")})
    boundary = boundary_of(request.headers["content-type"])
    assert boundary is not None
    return request.read(), boundary


def parse(body: bytes, boundary: bytes, cuts: list[int]) -> list[tuple[dict[str, str], bytes]]:
    found = Parts()
    parser = FormParser(boundary, found)
    last = 0
    for cut in sorted(cuts) + [len(body)]:
        parser.feed(body[last:cut])
        last = max(last, cut)
    parser.close()
    return found.parts


@given(content=st.binary(max_size=300), cuts=st.lists(st.integers(0, 700), max_size=8))
def test_any_cut_of_the_body_gives_the_same_parts(content, cuts):
    body, boundary = encoded({"signature": "s1g", "expires": "12"}, "dir/f\u00e9.bin", content)
    parts = parse(body, boundary, [min(cut, len(body)) for cut in cuts])
    assert [(header_value(h["content-disposition"])[1], data) for h, data in parts] == [
        ({"name": "signature"}, b"s1g"), ({"name": "expires"}, b"12"),
        ({"name": "file", "filename": "dir/f\u00e9.bin"}, content)]


def test_a_delimiter_cut_in_two_is_still_found():
    body, boundary = encoded({}, "a.txt", b"\r\n--almost the boundary\r\n")
    for cut in range(len(body)):
        assert parse(body, boundary, [cut])[0][1] == b"\r\n--almost the boundary\r\n"


@pytest.mark.parametrize("body", [
    b"no delimiter at all" * 100,
    b"--B\r\nContent-Disposition: form-data; name=a\r\n\r\nvalue",  # no closing delimiter
    b"--B\r\nbroken header line\r\n\r\nx\r\n--B--\r\n",
    b"--Bjunk",
])
def test_a_malformed_body_is_refused(body):
    parser = FormParser(b"B", Parts())
    with pytest.raises(FormError):
        parser.feed(body)
        parser.close()


def test_headers_and_parts_are_bounded():
    parser = FormParser(b"B", Parts())
    with pytest.raises(FormError, match="too long"):
        parser.feed(b"--B\r\n" + b"X" * 9000)
    parts = b"".join(b"--B\r\nContent-Disposition: form-data; name=a\r\n\r\nv\r\n" for _ in range(17))
    with pytest.raises(FormError, match="more than 16 parts"):
        FormParser(b"B", Parts()).feed(parts)


def test_header_values():
    assert header_value('form-data; name="file"; filename="a \\"b\\".txt"') == (
        "form-data", {"name": "file", "filename": 'a "b".txt'})
    assert boundary_of("multipart/form-data; boundary=abc") == b"abc"
    assert boundary_of("application/json") is None
    assert boundary_of("multipart/form-data") is None
