"""Fixtures of the export tests: interface C of the session's sandbox, and a project
with a small built site and content folder to export."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.export_helpers import EXPORT_CONFIG, Archive


@pytest.fixture
def archive(sandbox, request) -> Iterator[Archive]:
    """A freshly reset sandbox (tasks, files, credits, settings, faults) as interface C;
    its clients in-process, or over loopback HTTP for a test marked `socket`. (What
    toolkit runs goes over loopback HTTP either way.)"""
    sandbox.reset()
    service = Archive(sandbox, in_process=request.node.get_closest_marker("socket") is None)
    yield service
    service.close()


@pytest.fixture
def exportable(make_project):
    """A project with `site/` (pages, a binary image, a nested folder, a non-ASCII name,
    an empty file, a dot file) and `content/` (posts, an image, a hidden file)."""
    project = make_project(EXPORT_CONFIG)
    site = project.root / "site"
    files = {
        "index.html": b"<!doctype html><title>Export site</title><p>Hello</p>\n",
        "posts/hello/index.html": b"<!doctype html><p>Hello, world</p>\n" * 40,
        "posts/caf\u00e9/index.html": "<p>Caf\u00e9 cr\u00e8me</p>\n".encode(),
        "images/cover.png": bytes(range(256)) * 64,
        "feed.xml": b"<?xml version='1.0'?><feed/>\n",
        "empty.txt": b"",
        ".nojekyll": b"",
    }
    for name, data in files.items():
        path = site / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    project.post("hello", "Hello", "Hello, world.\n\n![cover](images/cover.png)\n", published=True)
    project.post("second", "Second", "More text.\n", published=False)
    (project.content / "images").mkdir()
    (project.content / "images" / "cover.png").write_bytes(bytes(range(256)) * 8)
    (project.content / ".DS_Store").write_bytes(b"\x00\x01junk")
    return project
