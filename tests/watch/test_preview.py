"""The preview server of `toolkit watch` against hostile paths: a 400 or a 404, never a
file outside the preview folder and never a 500. Served for real on loopback."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from toolkit.serving import BackgroundServer
from toolkit.tls import shared_context
from toolkit.watch.preview import Broadcaster, create_preview_app

SECRET = "top-secret-outside-the-preview"


@pytest.fixture(scope="module")
def preview(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[httpx.Client, Path]]:
    """One preview server for the module: the tests only read."""
    tmp_path = tmp_path_factory.mktemp("preview")
    (tmp_path / "secret.txt").write_text(SECRET)
    (tmp_path / "secret.html").write_text(f"<p>{SECRET}</p>")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "index.html").write_text(f"<p>{SECRET}</p>")
    out = tmp_path / "preview"
    (out / "posts").mkdir(parents=True)
    (out / "index.html").write_text("<html><body><p>home</p></body></html>")
    (out / "404.html").write_text("<html><body><p>no such page</p></body></html>")
    (out / "posts" / "index.html").write_text("<html><body><p>a post</p></body></html>")
    (out / "leak.txt").symlink_to(tmp_path / "secret.txt")
    (out / "leak.html").symlink_to(tmp_path / "secret.html")
    (out / "away").symlink_to(outside, target_is_directory=True)
    (out / "home.html").symlink_to(out / "index.html")  # inside: fine
    (out / "trap").mkdir()
    (out / "trap" / "index.html").symlink_to(tmp_path / "secret.html")
    (out / "loop.html").symlink_to(out / "loop.html")
    (out / "latin1.html").write_bytes(b"<p>caf\xe9</p>")
    os.mkfifo(out / "pipe.html")
    with (
        BackgroundServer(create_preview_app(out, Broadcaster()), name="preview") as server,
        httpx.Client(base_url=server.base_url, timeout=10, verify=shared_context()) as client,
    ):
        yield client, out


@pytest.mark.e2e
@pytest.mark.parametrize(
    "path",
    [
        "/%00",
        "/index.html%00",
        "/%00/../secret.txt",
        "/posts/%00index.html",
        "/" + "a" * 300,
        "/" + "a" * 300 + ".html",
        "/posts/" + "b" * 5000,
        "/" + "c/" * 3000,
        "/%2e%2e/secret.txt",
        "/%2E%2E/%2e%2e/etc/passwd",
        "/posts/%2e%2e/%2e%2e/secret.txt",
        "/..%2fsecret.txt",
        "/%2e%2e%2fsecret.html",
        "/..%5csecret.txt",
        "/%5c..%5csecret.txt",
        "/..\\secret.txt",
        "/posts\\..\\..\\secret.txt",
        "/%2e%2e/outside/",
        "/%ff%fe",
        "/leak.txt",
        "/leak.html",
        "/away/",
        "/away/index.html",
        "/trap/",
        "/trap",
        "/pipe.html",
        "/loop.html",
        "/%0a",
        "/%7f",
    ],
)
def test_hostile_paths_are_400_or_404(preview, path) -> None:
    client, _ = preview
    response = client.get(path)
    assert response.status_code in (400, 404), (path, response.status_code)
    assert SECRET not in response.text
    if response.status_code == 404:
        assert "no such page" in response.text  # the site's own 404 page


def test_pages_inside_still_work(preview) -> None:
    client, _ = preview
    assert "home" in client.get("/").text
    assert "a post" in client.get("/posts/").text
    assert "home" in client.get("/home.html").text  # a symlink that stays inside
    latin1 = client.get("/latin1.html")
    assert latin1.status_code == 200 and "caf" in latin1.text
    assert client.head("/posts/index.html").status_code == 200


@pytest.mark.e2e
def test_an_event_stream_opened_during_a_failed_build_says_so(tmp_path: Path) -> None:
    """A page loaded just before a build failed opens its stream after the failure's
    reload was sent: the stream's first events say the failure, so the page reloads."""
    out = tmp_path / "preview"
    out.mkdir()
    (out / "index.html").write_text("<html><body><p>home</p></body></html>")
    broadcaster = Broadcaster()
    broadcaster.fail(["templates/post.html:3: Expected an expression"])
    with (
        BackgroundServer(create_preview_app(out, broadcaster), name="preview") as server,
        httpx.Client(base_url=server.base_url, timeout=10, verify=shared_context()) as client,
        client.stream("GET", "/__toolkit/events") as stream,
    ):
        lines = stream.iter_lines()
        first = [next(lines) for _ in range(6)]
        assert first[:2] == ["event: problems", "data: []"]
        assert first[3:5] == [
            "event: failure",
            'data: ["templates/post.html:3: Expected an expression"]',
        ]
        broadcaster.close()
