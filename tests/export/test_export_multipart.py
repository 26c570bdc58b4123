"""The sandbox's streaming multipart parser: the same parts however the body is cut."""

from __future__ import annotations

import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st

from toolkit_sandbox.archive.multipart import FormError, FormParser, boundary_of, header_value


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
    request = httpx.Request(
        "POST",
        "http://x/",
        data=fields,
        files={"file": (filename, content, "application/octet-stream")},
    )
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
        ({"name": "signature"}, b"s1g"),
        ({"name": "expires"}, b"12"),
        ({"name": "file", "filename": "dir/f\u00e9.bin"}, content),
    ]


def test_a_delimiter_cut_in_two_is_still_found():
    body, boundary = encoded({}, "a.txt", b"\r\n--almost the boundary\r\n")
    for cut in range(len(body)):
        assert parse(body, boundary, [cut])[0][1] == b"\r\n--almost the boundary\r\n"


@pytest.mark.parametrize(
    "body",
    [
        b"no delimiter at all" * 100,
        b"--B\r\nContent-Disposition: form-data; name=a\r\n\r\nvalue",  # no closing delimiter
        b"--B\r\nbroken header line\r\n\r\nx\r\n--B--\r\n",
        b"--Bjunk",
    ],
)
def test_a_malformed_body_is_refused(body):
    parser = FormParser(b"B", Parts())
    with pytest.raises(FormError):
        parser.feed(body)
        parser.close()


def test_headers_and_parts_are_bounded():
    parser = FormParser(b"B", Parts())
    with pytest.raises(FormError, match="too long"):
        parser.feed(b"--B\r\n" + b"X" * 9000)
    parts = b"".join(
        b"--B\r\nContent-Disposition: form-data; name=a\r\n\r\nv\r\n" for _ in range(17)
    )
    with pytest.raises(FormError, match="more than 16 parts"):
        FormParser(b"B", Parts()).feed(parts)


def test_header_values():
    assert header_value('form-data; name="file"; filename="a \\"b\\".txt"') == (
        "form-data",
        {"name": "file", "filename": 'a "b".txt'},
    )
    assert boundary_of("multipart/form-data; boundary=abc") == b"abc"
    assert boundary_of("application/json") is None
    assert boundary_of("multipart/form-data") is None


def test_a_header_block_over_its_bound_is_refused_however_many_lines_it_has():
    line = b"X-Padding: " + b"p" * 1000 + b"\r\n"
    block = b"--B\r\n" + line * 9  # no line alone is long, the block is
    with pytest.raises(FormError, match="headers are too long"):
        FormParser(b"B", Parts()).feed(block)
    parts = parse(
        b"--B\r\n" + line * 7 + b"Content-Disposition: form-data; name=a\r\n\r\nv\r\n--B--\r\n",
        b"B",
        [],
    )
    assert parts[0][0]["x-padding"] == "p" * 1000 and parts[0][1] == b"v"


def _form(client: httpx.Client, task: dict, body: bytes) -> httpx.Response:
    return client.post(
        task["result"]["form"]["url"],
        content=body,
        headers={"Content-Type": "multipart/form-data; boundary=B"},
    )


def _field(name: str, value: bytes) -> bytes:
    return (
        b'--B\r\nContent-Disposition: form-data; name="'
        + name.encode()
        + b'"\r\n\r\n'
        + value
        + b"\r\n"
    )


def test_the_upload_form_bounds_its_parts_and_parameters(archive):
    with archive.client() as client:
        task = client.post("/v2/import/upload", json={}).json()["data"]
        signature = task["result"]["form"]["parameters"]["signature"].encode()
        file_part = (
            b'--B\r\nContent-Disposition: form-data; name="file"; filename="a.txt"'
            b"\r\n\r\nx\r\n--B--\r\n"
        )
        for body, says in [
            (
                _field("signature", signature) + _field("pad", b"v" * 4097) + file_part,
                "a form parameter is too long",
            ),
            (
                _field("signature", signature) + _field("pad", b"v") * 16 + file_part,
                "more than 16 parts",
            ),
            (
                _field("signature", signature)
                + b"--B\r\n"
                + b"X-Pad: "
                + b"p" * 9000
                + b"\r\n\r\n"
                + file_part,
                "a part's headers are too long",
            ),
            (_field("signature", signature) + file_part[:-5], "closing delimiter"),
            (
                b"p" * 1025 + b"\r\n" + _field("signature", signature) + file_part,
                "no delimiter at the start",
            ),
        ]:
            refused = _form(client, task, body)
            assert refused.status_code == 400, says
            assert refused.json()["code"] == "INVALID_UPLOAD" and says in refused.json()["message"]
        # A short preamble is ignored; 15 parameters and the file: 16 parts, within bounds.
        fits = (
            b"a preamble\r\n"
            + _field("signature", signature)
            + _field("pad", b"v" * 4096) * 14
            + file_part
        )
        assert _form(client, task, fits).status_code == 201
