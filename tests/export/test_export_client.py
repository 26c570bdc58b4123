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
    assert caught.value.message == ("the download of https://storage.example/v2/storage/t1/0/"
                                    "site.zip was redirected too many times")
