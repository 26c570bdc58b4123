"""The watch preview in Chromium: a broken post, template or toolkit.toml shows its error
in the page the writer is looking at, styled, and the page comes back by itself with the
next good save. The page is never reloaded by the test: the preview's own live reload
does it, and the test waits for what the page shows (Playwright's `expect` retries until
it shows it).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import pytest

CONFIG = """
[site]
title = "Watched site"
url = "https://example.com/blog"
"""
ERROR_RED = "rgb(155, 28, 28)"  # the error page's heading, in the light scheme


class Recorder:
    """A watch reporter that keeps what the session says."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self._lock = threading.Lock()

    def _say(self, line: str) -> None:
        with self._lock:
            self.lines.append(line)

    def built(self, report: Any, changed: list[str], seconds: float) -> None:
        self._say(f"built {changed}")

    def problems(self, new: list[str], fixed: list[str]) -> None:
        for line in new:
            self._say(line)

    def pushed(self, outcomes: list[Any]) -> None:
        pass

    def push_failed(self, message: str) -> None:
        self._say(message)

    def notice(self, message: str) -> None:
        self._say(message)

    def config_problem(self, message: str) -> None:
        self._say(message)


@pytest.fixture
def preview(make_project) -> Iterator[tuple[Any, str]]:
    from toolkit.config import load_config
    from toolkit.watch import WatchOptions, WatchSession

    project = make_project(CONFIG)
    project.post("first", "First post", "The first words.\n", published=True, date="2024-01-01")
    project.post("second", "Second post", "More words.\n", published=True, date="2024-01-02")
    session = WatchSession(
        load_config(project.root / "toolkit.toml"), WatchOptions(port=0), Recorder()
    )
    session.start()
    try:
        yield project, session.url
    finally:
        session.stop()


def test_errors_show_in_the_page_and_the_page_comes_back(preview, browser):
    from playwright.sync_api import expect

    project, url = preview
    context = browser.new_context(viewport={"width": 390, "height": 800})
    context.set_default_timeout(10_000)
    expect.set_options(timeout=10_000)
    try:
        page = context.new_page()
        # The 404 page takes its styles from the preview (its <base> is the path of the
        # site's root, /blog/, which the preview answers too), not from example.com.
        missing = page.goto(url + "no/such/page/")
        assert missing.status == 404
        assert page.evaluate("getComputedStyle(document.querySelector('main')).maxWidth") == "672px"
        page.goto(url + "first/")
        heading, error = page.locator("h1"), page.locator("#toolkit-error")
        expect(heading).to_have_text("First post")

        # A broken post: its page shows the error, styled.
        project.write("content/first.md", "---\ntitle: Part 1: Setup\npublished: true\n---\nX.\n")
        expect(error).to_contain_text("content/first.md:2: front matter: invalid YAML")
        expect(error).to_contain_text('title: "Part 1: Setup"')
        assert page.evaluate("getComputedStyle(document.querySelector('h1')).color") == ERROR_RED
        # Another page still shows, with the problem in a box that covers nothing.
        other = context.new_page()
        other.goto(url + "second/")
        box = other.locator("#toolkit-problems")
        expect(box).to_contain_text("content/first.md:2:")
        posts = other.locator(".site-header nav a", has_text="Posts")
        middle = posts.bounding_box()
        assert (
            other.evaluate(
                "([x, y]) => document.elementFromPoint(x, y).textContent",
                [middle["x"] + middle["width"] / 2, middle["y"] + middle["height"] / 2],
            )
            == "Posts"
        )
        # The fix brings the page back by itself.
        project.post("first", "First post", "Fixed words.\n", published=True, date="2024-01-01")
        expect(heading).to_have_text("First post")
        expect(page.locator(".content")).to_contain_text("Fixed words.")
        expect(box).to_have_count(0)

        # A broken template: every page shows what failed, until it is fixed.
        project.write(
            "templates/post.html",
            '{% extends "base.html" %}\n{% block content %}\n{% if %}\n{% endblock %}\n',
        )
        expect(error).to_contain_text("templates/post.html:3:")
        expect(other.locator("#toolkit-error")).to_contain_text("templates/post.html:3:")
        (project.root / "templates" / "post.html").unlink()
        expect(heading).to_have_text("First post")
        expect(other.locator("h1")).to_have_text("Second post")

        # Search works in the preview too: its index is made when the search page asks.
        page.goto(url + "search/?q=fixed")
        expect(page.locator("#search-results li a").first).to_have_text("First post")
        page.goto(url + "first/")

        # A toolkit.toml that does not load: the same.
        config = (project.root / "toolkit.toml").read_text()
        (project.root / "toolkit.toml").write_text(config + "\n[site\n")
        expect(error).to_contain_text("toolkit.toml: not valid TOML")
        (project.root / "toolkit.toml").write_text(config)
        expect(heading).to_have_text("First post")
    finally:
        context.close()
