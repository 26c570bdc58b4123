"""`toolkit watch`: rebuilds, live reload, draft pushes, clean stops. The real CLI runs in
this process (tests/support/running_cli.py) and serves its preview on loopback; only the
test of Ctrl-C starts `python -m toolkit`."""

from __future__ import annotations

import json
import re
import shutil
import signal
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.support.running_cli import RunningCli, start_toolkit, until_news
from tests.support.xdist_groups import WAITING
from toolkit.tls import shared_context

# Every test here opens a socket (the preview, its live-reload stream); one starts a process.
pytestmark = [pytest.mark.e2e, WAITING]

CONFIG = """
[site]
title = "Watched site"
url = "https://example.com/blog"

[forem]
rate_window = 1
"""


class Watch:
    """A running `toolkit watch` (the real CLI, in this process: tests/support/running_cli.py),
    its output lines and the events of a live-reload client.

    Tests wait on what watch says, never on the clock: `until(condition)` checks the
    condition again each time a line or an event arrives. A rebuild that writes ends with
    a `reload` event, and a push that writes or fails with a line, so a condition on the
    pages, the output or the sandbox's records that is false after the last of them stays
    false until the next one."""

    def __init__(
        self,
        root: Path,
        *args: str,
        env: dict[str, str] | None = None,
        verbose: bool = False,
        started: str = "Serving http",
    ):
        self.events: list[tuple[str, object]] = []
        self._news = threading.Condition()
        self.cli = RunningCli(
            "--config",
            str(root / "toolkit.toml"),
            *(["--verbose"] if verbose else []),  # a rebuild that wrote nothing is said too
            "watch",
            "--port",
            "0",
            *args,
            cwd=root,
            env=env,
            news=self._news,
        )
        try:
            line = self.until(lambda: next((x for x in self.lines if started in x), None), 20)
            if started != "Serving http":  # no preview: nothing served
                return
            served = re.search(r"(http://\S+?)/?\s", line + " ")
            assert served is not None, line
            self.url = served.group(1)
            self._sse = threading.Thread(target=self._listen, daemon=True)
            self._sse.start()
            self.until(lambda: self.events)  # the initial "problems" event
            assert self.events[0][0] == "problems"
        except BaseException:
            self.cli.stop()
            raise

    @property
    def lines(self) -> list[str]:
        return self.cli.lines

    def _listen(self) -> None:
        try:
            with httpx.stream(
                "GET", f"{self.url}/__toolkit/events", timeout=None, verify=shared_context()
            ) as response:
                name = None
                for line in response.iter_lines():
                    if line.startswith("event: "):
                        name = line[7:]
                    elif line.startswith("data: ") and name:
                        with self._news:
                            self.events.append((name, json.loads(line[6:])))
                            self._news.notify_all()
                        name = None
        except httpx.HTTPError:
            pass

    def until(self, condition: Callable[[], Any], timeout: float = 10.0) -> Any:
        """The first truthy value of `condition()`, checked now and after each new line or
        event; fail when none comes within `timeout` seconds or watch has ended."""
        return until_news(
            self._news,
            self._state,
            condition,
            timeout,
            ended=lambda seen: None if seen[2] is None else "watch ended",
            said=lambda: f"output:\n{self.output()}\nevents: {self.events}",
        )

    def _state(self) -> tuple[int, int, int | None]:
        with self._news:
            return len(self.lines), len(self.events), self.cli.poll()

    def mark(self) -> tuple[int, int]:
        """Where the output and the events are now: the helpers taking it look after it."""
        with self._news:
            return len(self.lines), len(self.events)

    def lines_since(self, mark: tuple[int, int]) -> list[str]:
        return self.lines[mark[0] :]

    def events_since(self, mark: tuple[int, int], name: str) -> list:
        return [data for event, data in self.events[mark[1] :] if event == name]

    def reloaded(self, mark: tuple[int, int], path: str) -> list:
        """The `reload` events since `mark` whose rebuild was caused by `path`."""
        return [data for data in self.events_since(mark, "reload") if path in data["changed"]]

    def said(self, mark: tuple[int, int], text: str) -> list[str]:
        """The output lines since `mark` that contain `text`."""
        return [line for line in self.lines_since(mark) if text in line]

    def output(self) -> str:
        return self.cli.output()

    def get(self, path: str) -> httpx.Response:
        return httpx.get(f"{self.url}{path}", verify=shared_context())

    def stop(self) -> int:
        return self.cli.stop()


def last_seq(sandbox) -> int:
    """The sequence number of the last request the sandbox recorded."""
    answer = httpx.get(
        f"{sandbox.base_url}/__sandbox/requests", params={"limit": 1}, verify=shared_context()
    )
    return answer.raise_for_status().json()["last_seq"]


@pytest.fixture
def site(make_project):
    project = make_project(CONFIG)
    project.post(
        "first", "First post", "The first words.\n", published=True, tags=["one"], date="2024-01-01"
    )
    project.post(
        "second", "Second post", "More words.\n", published=True, tags=["two"], date="2024-01-02"
    )
    return project


@pytest.fixture
def watch(site):
    running: list[Watch] = []

    def start(*args: str, env: dict[str, str] | None = None, verbose: bool = False) -> Watch:
        running.append(Watch(site.root, *args, env=env, verbose=verbose))
        return running[-1]

    yield start
    for process in running:
        process.stop()


def test_an_edit_rewrites_its_page_and_sends_one_reload(site, watch):
    w = watch("--no-push")
    assert "The first words." in w.get("/first/").text
    mark = w.mark()
    site.post(
        "first", "First post", "Edited words.\n", published=True, tags=["one"], date="2024-01-01"
    )
    w.until(lambda: w.reloaded(mark, "content/first.md"))
    assert "Edited words." in w.get("/first/").text
    page = (site.root / ".toolkit" / "preview" / "first" / "index.html").read_text()
    assert "Edited words." in page and "EventSource" not in page  # script served, never built
    assert "EventSource" in w.get("/first/").text
    # One reload for the edit: the next reload is the one of a later edit of another post.
    site.post(
        "second", "Second post", "Other words.\n", published=True, tags=["two"], date="2024-01-02"
    )
    w.until(lambda: w.reloaded(mark, "content/second.md"))
    reloads = w.events_since(mark, "reload")
    assert len(reloads) == 2, reloads
    assert "content/first.md" in reloads[0]["changed"]
    assert "content/second.md" in reloads[1]["changed"]


def test_a_bad_save_is_reported_and_the_next_good_one_recovers(site, watch):
    w = watch("--no-push")
    mark = w.mark()
    site.write("content/first.md", "---\ntitle: First post\nslug: Not A Slug\n---\nBroken.\n")
    w.until(lambda: "content/first.md:3: slug: must be lower-case" in w.output())
    problems = w.until(lambda: next((d for d in w.events_since(mark, "problems") if d), None))
    assert any("content/first.md:3" in p for p in problems)
    assert w.cli.poll() is None  # still watching
    site.post("first", "First post", "Fixed.\n", published=True, date="2024-01-01")
    w.until(lambda: "fixed: content/first.md:3" in w.output())
    w.until(lambda: w.events_since(mark, "problems")[-1] == [])  # the box on the page goes
    assert "Fixed." in w.get("/first/").text


def test_a_broken_post_shows_its_error_on_its_page_and_the_fix_brings_it_back(site, watch):
    w = watch("--no-push")
    assert w.get("/first/").status_code == 200
    mark = w.mark()
    site.write("content/first.md", "---\ntitle: Part 1: Setup\npublished: true\n---\nBroken.\n")
    w.until(lambda: next((d for d in w.events_since(mark, "problems") if d), None))
    page = w.get("/first/")  # where the writer was looking: the page is left out
    assert page.status_code == 404 and 'id="toolkit-error"' in page.text
    assert "content/first.md:2: front matter: invalid YAML" in page.text
    assert "<style>" in page.text and "/__toolkit/events" in page.text  # styled, live
    assert "More words." in w.get("/second/").text  # the other pages stay
    mark = w.mark()
    site.post("first", "First post", "Fixed words.\n", published=True, date="2024-01-01")
    w.until(lambda: w.reloaded(mark, "content/first.md"))
    page = w.get("/first/")
    assert page.status_code == 200 and "Fixed words." in page.text


def test_a_broken_template_shows_on_every_page_until_it_is_fixed(site, watch):
    w = watch("--no-push")
    mark = w.mark()
    site.write(
        "templates/post.html",
        '{% extends "base.html" %}\n{% block content %}\n{% if %}\n{% endblock %}\n',
    )
    # The outcome of the whole save (a loaded machine may let the watch read the template
    # half written first, and rebuild with that).
    w.until(lambda: w.events_since(mark, "reload") and w.get("/first/").status_code == 500)
    for path in ("/first/", "/"):
        page = w.get(path)
        assert page.status_code == 500 and 'id="toolkit-error"' in page.text
        assert "templates/post.html:3:" in page.text
    assert "templates/post.html:3:" in w.output() and w.cli.poll() is None
    mark = w.mark()
    (site.root / "templates" / "post.html").unlink()
    w.until(lambda: w.events_since(mark, "reload"))
    page = w.get("/first/")
    assert page.status_code == 200 and "The first words." in page.text


def test_an_impossible_date_is_reported_and_the_next_good_save_rebuilds(site, watch):
    w = watch("--no-push")
    site.write(
        "content/first.md",
        "---\ntitle: First post\npublished: true\ndate: 2024-02-30\n---\nBad date.\n",
    )
    problem = (
        "content/first.md:4: front matter: 2024-02-30 is not a valid date "
        "(day is out of range for month)"
    )
    w.until(lambda: problem in w.output())
    assert "Traceback" not in w.output()
    assert w.cli.poll() is None  # still watching
    assert "More words." in w.get("/second/").text
    site.post("first", "First post", "A good date again.\n", published=True, date="2024-01-01")
    w.until(lambda: "A good date again." in w.get("/first/").text)
    w.until(lambda: f"fixed: {problem}" in w.output())


def test_template_edit_rerenders_the_pages_that_use_it(site, watch):
    from toolkit.site.theme_files import THEME_DIR

    original = (THEME_DIR / "post.html").read_text()
    w = watch("--no-push")
    index_before = w.get("/").text
    site.write(
        "templates/post.html", original.replace("</article>", "<p>TEMPLATE-MARK</p></article>", 1)
    )
    w.until(lambda: "TEMPLATE-MARK" in w.get("/first/").text)
    assert "TEMPLATE-MARK" in w.get("/second/").text
    assert w.get("/").text == index_before


def test_new_and_deleted_posts(site, watch):
    w = watch("--no-push")
    site.post("third", "A third post", "New.\n", published=True, date="2024-01-03")
    w.until(lambda: "A third post" in w.get("/").text)
    assert w.get("/third/").status_code == 200
    (site.content / "second.md").unlink()
    w.until(lambda: "Second post" not in w.get("/").text)
    assert w.get("/second/").status_code == 404


def test_a_content_folder_deleted_and_made_again_is_noticed_and_watched_again(site, watch):
    w = watch("--no-push", verbose=True)
    mark = w.mark()
    shutil.rmtree(site.content)
    w.until(lambda: w.said(mark, "content/ is gone"))
    mark = w.mark()
    site.post("again", "Back again", "New.\n", published=True, date="2024-01-05")
    w.until(lambda: "Back again" in w.get("/").text)
    w.until(lambda: w.said(mark, "content/ is back"))
    # "content/ is back" is said before the rebuild that follows it, so the edit below may
    # be built by that rebuild (its reload names only `content/`) and the edit's own rebuild
    # then writes nothing: `--verbose` has watch say that one too.
    mark = w.mark()  # later saves rebuild, as before the folder went away
    site.post("again", "Back again, edited", "Newer.\n", published=True, date="2024-01-05")
    w.until(lambda: w.said(mark, "content/again.md"))  # its rebuild, written or not
    assert "Back again, edited" in w.get("/again/").text


def test_drafts_are_shown_marked(site, watch):
    site.post("draft", "Work in progress", "Not yet.\n", published=False)
    w = watch("--no-push")
    page = w.get("/draft/")
    assert page.status_code == 200 and "Draft" in page.text


def test_quick_saves_make_one_rebuild_and_one_remote_update(site, watch, sandbox):
    sandbox.reset()
    env = {"FOREM_BASE_URL": sandbox.base_url, "FOREM_API_KEY": sandbox.demo_api_key}
    site.post("note", "Draft note", "Version 0.\n", published=False)
    site.post("other", "Other draft", "Other 0.\n", published=False)
    assert site.run("publish", env=env).exit_code == 0
    w = watch(env=env)
    sandbox.reset_stats()
    seq = last_seq(sandbox)
    mark = w.mark()
    # A writer saving five times in quick succession: the texts are made first and written
    # back to back, a burst of a few milliseconds as an editor's is, whatever the load.
    note = site.content / "note.md"
    saves = [
        f"---\ntitle: Draft note\npublished: false\n---\nVersion {version}.\n"
        for version in range(1, 6)
    ]
    for text in saves:
        note.write_text(text, encoding="utf-8")
    w.until(lambda: w.said(mark, "draft content/note.md"))
    # Saving another draft makes the next rebuild and push: a second rebuild or update of
    # the note would come before them.
    site.post("other", "Other draft", "Other 1.\n", published=False)
    w.until(lambda: w.said(mark, "draft content/other.md"))
    # The saves are one batch unless the writing itself was held up past the quiet time
    # (a busy machine can pause this process between two writes): then two, never more.
    reloads = w.events_since(mark, "reload")
    assert 2 <= len(reloads) <= 3, reloads
    assert all(r["changed"] == ["content/note.md"] for r in reloads[:-1]), reloads
    assert reloads[-1]["changed"] == ["content/other.md"], reloads
    rebuilds = w.said(mark, "rebuilt after")
    assert len(rebuilds) == len(reloads) and "content/note.md" in rebuilds[0], rebuilds
    assert len(w.said(mark, "draft content/note.md")) == 1
    assert sandbox.count("PUT", "/api/articles/{id}") == 2  # the note's and the other's
    assert sandbox.count("POST", "/api/articles") == 0
    article_id = json.loads((site.root / "toolkit.lock").read_text())["posts"]["content/note.md"][
        "article_id"
    ]
    note_puts = [
        r
        for r in sandbox.requests(after=seq)
        if r["method"] == "PUT" and r["path"] == f"/api/articles/{article_id}"
    ]
    assert len(note_puts) == 1
    mine = httpx.get(
        f"{sandbox.base_url}/api/articles/me/unpublished",
        headers={"api-key": sandbox.demo_api_key},
        verify=shared_context(),
    ).json()
    (article,) = [a for a in mine if a["id"] == article_id]
    assert "Version 5." in article["body_markdown"]


def test_watch_never_publishes(site, watch, sandbox):
    sandbox.reset()
    env = {"FOREM_BASE_URL": sandbox.base_url, "FOREM_API_KEY": sandbox.demo_api_key}
    w = watch(env=env)
    sandbox.reset_stats()
    site.post("fresh", "Fresh and public", "Hello.\n", published=True)
    w.until(lambda: "will be published by `toolkit publish`" in w.output())
    assert sandbox.count("POST", "/api/articles") == 0 and sandbox.count("PUT") == 0


def test_sigint_stops_cleanly(site):
    """The process, sent Ctrl-C once it serves, ends with exit code 0. How soon it stops
    is a speed figure (bench); here, that it stops, cleanly."""
    process = start_toolkit(site, "watch", "--port", "0", "--no-push", merged=True)
    try:
        assert process.stdout is not None
        said = ""
        for line in process.stdout:
            said += line
            if "Serving http" in line:
                break
        assert "Serving http" in said, said
        process.send_signal(signal.SIGINT)
        rest, _ = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert process.returncode == 0, said + rest
    assert "Traceback" not in said + rest


def test_a_config_change_is_reloaded_or_explained(site, watch):
    w = watch("--no-push")
    config = (site.root / "toolkit.toml").read_text()
    (site.root / "toolkit.toml").write_text(
        config.replace('title = "Watched site"', 'title = "Renamed site"')
    )
    w.until(lambda: "Renamed site" in w.get("/").text)
    mark = w.mark()
    (site.root / "toolkit.toml").write_text(config + "\n[site\n")
    # Each wait is for the outcome of the whole save: a loaded machine may let the watch
    # read the file half written first (empty: valid, the default settings) and rebuild
    # with that, which sends a reload of its own.
    w.until(lambda: "not valid TOML" in w.output())
    assert "toolkit.toml not reloaded" in w.output()
    # The browser shows it too, in place of the pages, until the next good save.
    w.until(lambda: w.events_since(mark, "reload") and "not valid TOML" in w.get("/").text)
    page = w.get("/")
    assert page.status_code == 500 and 'id="toolkit-error"' in page.text
    assert "not valid TOML" in page.text and w.cli.poll() is None
    mark = w.mark()
    (site.root / "toolkit.toml").write_text(
        config.replace('title = "Watched site"', 'title = "Renamed site"')
    )

    def renamed() -> bool:
        page = w.get("/")
        return page.status_code == 200 and "Renamed site" in page.text

    w.until(lambda: w.events_since(mark, "reload") and renamed())


def test_a_failed_push_is_reported_and_retried_with_the_next_save(site, watch, sandbox):
    sandbox.reset()
    env = {"FOREM_BASE_URL": sandbox.base_url, "FOREM_API_KEY": sandbox.demo_api_key}
    site.post("note", "Draft note", "Version 0.\n", published=False)
    site.post("other", "Other draft", "Other 0.\n", published=False)
    assert site.run("publish", env=env).exit_code == 0
    w = watch(env=env)
    sandbox.fault("PUT", "/api/articles/{id}", status=422)
    sandbox.reset_stats()
    site.post("note", "Draft note", "Version 1.\n", published=False)
    w.until(lambda: "push failed content/note.md" in w.output())
    assert sandbox.count("PUT", "/api/articles/{id}", 422) == 1
    # Saving another post pushes the failed one again, with its latest text.
    mark = w.mark()
    site.post("other", "Other draft", "Other 1.\n", published=False)
    w.until(
        lambda: w.said(mark, "draft content/note.md") and w.said(mark, "draft content/other.md")
    )
    assert sandbox.count("PUT", "/api/articles/{id}", 200) == 2
    mine = httpx.get(
        f"{sandbox.base_url}/api/articles/me/unpublished",
        headers={"api-key": sandbox.demo_api_key},
        verify=shared_context(),
    ).json()
    bodies = {a["title"]: a["body_markdown"] for a in mine}
    assert "Version 1." in bodies["Draft note"] and "Other 1." in bodies["Other draft"]


def test_a_push_waits_for_another_run_and_says_so_when_it_gives_up(site, watch, sandbox):
    from toolkit.sync.runlock import run_lock

    sandbox.reset()
    env = {"FOREM_BASE_URL": sandbox.base_url, "FOREM_API_KEY": sandbox.demo_api_key}
    site.post("note", "Draft note", "Version 0.\n", published=False)
    assert site.run("publish", env=env).exit_code == 0
    w = watch(env={**env, "TOOLKIT_LOCK_TIMEOUT": "0.5"})
    sandbox.reset_stats()
    with run_lock(site.root / ".toolkit", "publish"):  # a publish is running
        site.post("note", "Draft note", "Version 1.\n", published=False)
        w.until(lambda: "another toolkit run holds .toolkit/run.lock: publish" in w.output())
        assert "push failed" in w.output() and "retried with the next save" in w.output()
        assert sandbox.count("PUT") == 0
    mark = w.mark()
    site.post("note", "Draft note", "Version 2.\n", published=False)
    w.until(lambda: w.said(mark, "draft content/note.md"))
    assert sandbox.count("PUT", "/api/articles/{id}", 200) == 1
    mine = httpx.get(
        f"{sandbox.base_url}/api/articles/me/unpublished",
        headers={"api-key": sandbox.demo_api_key},
        verify=shared_context(),
    ).json()
    assert any("Version 2." in a["body_markdown"] for a in mine if a["title"] == "Draft note")


def test_a_generators_blog_without_a_site_still_pushes_its_drafts(make_project, sandbox):
    hugo = CONFIG.replace("[forem]", '[source]\ngenerator = "hugo"\n\n[forem]')
    project = make_project(hugo)
    sandbox.reset()
    env = {"FOREM_BASE_URL": sandbox.base_url, "FOREM_API_KEY": sandbox.demo_api_key}
    w = Watch(project.root, env=env, started="Watching content/ and toolkit.toml")
    try:
        assert "the site is hugo's ([site] enabled = false)" in w.output()
        assert "Serving" not in w.output()
        note = project.content / "note.markdown"  # a post of the generator's as much as .md
        note.write_text("---\ntitle: Note\npublished: false\n---\nVersion 1.\n")
        w.until(lambda: "draft content/note.markdown: created article" in w.output())
        note.write_text("---\ntitle: Note\npublished: false\n---\nVersion 2.\n")
        w.until(lambda: "draft content/note.markdown: updated article" in w.output())
        mine = httpx.get(
            f"{sandbox.base_url}/api/articles/me/unpublished",
            headers={"api-key": sandbox.demo_api_key},
            verify=shared_context(),
        ).json()
        (article,) = [a for a in mine if a["title"] == "Note"]
        assert "Version 2." in article["body_markdown"]
        assert not (project.root / ".toolkit" / "preview").exists()
    finally:
        assert w.stop() == 0
