"""The archive client's storage requests through a scripted transport: a download that
the storage redirects to another origin is followed without the API key, and one that
redirects in a circle is a clear failure, not a traceback."""

from __future__ import annotations

import io

import httpx
import pytest

from toolkit.clients.archive import ArchiveClient
from toolkit.config import Secret
from toolkit.errors import BrokenDownload

API = "https://api.example"
SIGNED = "https://storage.example/v2/storage/t1/0/site.zip?signature=s1g"
MOVED = "https://cdn.example/files/site.zip?token=t"


def client_for(handle) -> ArchiveClient:
    return ArchiveClient(API, Secret("cc-the-key"), transport=httpx.MockTransport(handle))


def test_a_download_follows_a_redirect_to_another_origin_without_the_key():
    seen: list[httpx.Request] = []

    def handle(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        if request.url.host == "storage.example":
            return httpx.Response(302, headers={"Location": MOVED})
        return httpx.Response(200, content=b"PK archive bytes")

    sink = io.BytesIO()
    with client_for(handle) as client:
        received, declared = client.download(SIGNED, sink, lambda _count: None)
    assert (received, declared) == (16, 16) and sink.getvalue() == b"PK archive bytes"
    assert [str(request.url) for request in seen] == [SIGNED, MOVED]
    assert not [request for request in seen if "authorization" in request.headers]


def test_a_download_redirected_in_a_circle_is_one_clear_error():
    def handle(request: httpx.Request) -> httpx.Response:
        return httpx.Response(302, headers={"Location": SIGNED})

    with client_for(handle) as client, pytest.raises(BrokenDownload) as caught:
        client.download(SIGNED, io.BytesIO(), lambda _count: None)
    assert caught.value.message == (
        "the download of https://storage.example/v2/storage/t1/0/"
        "site.zip was redirected too many times"
    )


@pytest.mark.parametrize(("status", "followed"), [(307, True), (308, True), (302, False)])
def test_an_upload_follows_a_307_or_308_with_the_whole_form(tmp_path, status, followed):
    from toolkit.clients.archive import UploadForm
    from toolkit.errors import ApiError

    source = tmp_path / "a.txt"
    source.write_bytes(b"the file's bytes")
    seen: list[httpx.Request] = []

    def handle(request: httpx.Request) -> httpx.Response:
        request.read()
        seen.append(request)
        if request.url.host == "storage.example":
            return httpx.Response(status, headers={"Location": "https://other.example/up"})
        return httpx.Response(201)

    form = UploadForm("https://storage.example/v2/storage/t1", {"signature": "s1g"})
    counted: list[int] = []
    with client_for(handle) as client:
        if followed:
            client.upload(form, source, "a.txt", 16, counted.append)
        else:
            with pytest.raises(ApiError, match="a redirect that does not take the file"):
                client.upload(form, source, "a.txt", 16, counted.append)
    if followed:
        assert [request.url.host for request in seen] == ["storage.example", "other.example"]
        assert seen[0].content == seen[1].content and b"the file's bytes" in seen[1].content
        assert sum(counted) == 16  # the first attempt's bytes taken back
    assert not [request for request in seen if "authorization" in request.headers]
