"""`toolkit watch` as a real subprocess: rebuilds, live reload, draft pushes, clean stops."""

from __future__ import annotations

import json
import os
import queue
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import pytest

CONFIG = """
[site]
title = "Watched site"
url = "https://example.com/blog"

[forem]
rate_window = 1
"""


def wait_for(condition, timeout: float = 10.0, interval: float = 0.05):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(interval)
    raise AssertionError("condition not met in time")


class Watch:
    """A running `toolkit watch` with its output and a live-reload client."""

    def __init__(self, root: Path, *args: str, env: dict[str, str] | None = None):
        self.lines: list[str] = []
        self.events: queue.Queue = queue.Queue()
        self.process = subprocess.Popen(
            [sys.executable, "-m", "toolkit", "--config", str(root / "toolkit.toml"), "watch",
             "--port", "0", *args],
            cwd=root, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
            env={**os.environ, "COLUMNS": "200", **(env or {})},
        )
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        line = wait_for(lambda: next((x for x in self.lines if "Serving http" in x), None), 20)
        self.url = re.search(r"(http://\S+?)/?\s", line + " ").group(1)
        self._sse = threading.Thread(target=self._listen, daemon=True)
        self._sse.start()
        wait_for(lambda: self.events.qsize() >= 1)  # the initial "problems" event
        self.events.get()

    def _read(self) -> None:
        for line in self.process.stdout:
            self.lines.append(line.rstrip("\n"))

    def _listen(self) -> None:
        try:
            with httpx.stream("GET", f"{self.url}/__toolkit/events", timeout=None) as response:
                name = None
                for line in response.iter_lines():
                    if line.startswith("event: "):
                        name = line[7:]
                    elif line.startswith("data: ") and name:
                        self.events.put((name, json.loads(line[6:])))
                        name = None
        except httpx.HTTPError:
            pass

    def output(self) -> str:
        return "\n".join(self.lines)

    def reloads(self, settle: float = 0.6) -> list:
        """The reload events that arrive until none has come for `settle` seconds."""
        found = []
        while True:
            try:
                name, data = self.events.get(timeout=settle)
            except queue.Empty:
                return found
            if name == "reload":
                found.append(data)

    def get(self, path: str) -> httpx.Response:
        return httpx.get(f"{self.url}{path}")

    def stop(self) -> int:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
            self.process.wait(timeout=10)
        self._reader.join(5)
        self.process.stdout.close()
        return self.process.returncode


@pytest.fixture
def site(make_project):
    project = make_project(CONFIG)
    project.post("first", "First post", "The first words.\n", published=True, tags=["one"],
                 date="2024-01-01")
    project.post("second", "Second post", "More words.\n", published=True, tags=["two"],
                 date="2024-01-02")
    return project


@pytest.fixture
def watch(site):
    running: list[Watch] = []

    def start(*args: str, env: dict[str, str] | None = None) -> Watch:
        running.append(Watch(site.root, *args, env=env))
        return running[-1]

    yield start
    for process in running:
        process.stop()


def test_an_edit_rewrites_its_page_and_sends_one_reload(site, watch):
    w = watch("--no-push")
    assert "The first words." in w.get("/first/").text
    site.post("first", "First post", "Edited words.\n", published=True, tags=["one"],
              date="2024-01-01")
    assert len(w.reloads()) == 1
    assert "Edited words." in w.get("/first/").text
    page = (site.root / ".toolkit" / "preview" / "first" / "index.html").read_text()
    assert "Edited words." in page and "EventSource" not in page  # script served, never built
    assert "EventSource" in w.get("/first/").text


def test_a_bad_save_is_reported_and_the_next_good_one_recovers(site, watch):
    w = watch("--no-push")
    site.write("content/first.md", "---\ntitle: First post\ntags: [a, b, c, d, e]\n---\nBroken.\n")
    wait_for(lambda: "content/first.md:3: tags: 5 tags" in w.output())
    problems = wait_for(lambda: next((d for n, d in list(w.events.queue) if n == "problems" and d), None))
    assert any("content/first.md:3" in p for p in problems)
    assert w.process.poll() is None  # still watching
    site.post("first", "First post", "Fixed.\n", published=True, date="2024-01-01")
    wait_for(lambda: "fixed: content/first.md:3" in w.output())
    wait_for(lambda: "Fixed." in w.get("/first/").text)


def test_an_impossible_date_is_reported_and_the_next_good_save_rebuilds(site, watch):
    w = watch("--no-push")
    site.write("content/first.md",
               "---\ntitle: First post\npublished: true\ndate: 2024-02-30\n---\nBad date.\n")
    problem = ("content/first.md:4: front matter: 2024-02-30 is not a valid date "
               "(day is out of range for month)")
    wait_for(lambda: problem in w.output())
    assert "Traceback" not in w.output()
    assert w.process.poll() is None  # still watching
    assert "More words." in w.get("/second/").text
    site.post("first", "First post", "A good date again.\n", published=True, date="2024-01-01")
    wait_for(lambda: "A good date again." in w.get("/first/").text)
    wait_for(lambda: f"fixed: {problem}" in w.output())


def test_template_edit_rerenders_the_pages_that_use_it(site, watch):
    from toolkit.site.theme_files import THEME_DIR

    original = (THEME_DIR / "post.html").read_text()
    w = watch("--no-push")
    index_before = w.get("/").text
    site.write("templates/post.html", original.replace("</article>", "<p>TEMPLATE-MARK</p></article>", 1))
    wait_for(lambda: "TEMPLATE-MARK" in w.get("/first/").text)
    assert "TEMPLATE-MARK" in w.get("/second/").text
    assert w.get("/").text == index_before


def test_new_and_deleted_posts(site, watch):
    w = watch("--no-push")
    site.post("third", "A third post", "New.\n", published=True, date="2024-01-03")
    wait_for(lambda: "A third post" in w.get("/").text)
    assert w.get("/third/").status_code == 200
    (site.content / "second.md").unlink()
    wait_for(lambda: "Second post" not in w.get("/").text)
    assert w.get("/second/").status_code == 404


def test_drafts_are_shown_marked(site, watch):
    site.post("draft", "Work in progress", "Not yet.\n", published=False)
    w = watch("--no-push")
    page = w.get("/draft/")
    assert page.status_code == 200 and "Draft" in page.text


def test_quick_saves_make_one_rebuild_and_one_remote_update(site, watch, sandbox):
    sandbox.reset()
    env = {"FOREM_BASE_URL": sandbox.base_url, "FOREM_API_KEY": sandbox.demo_api_key}
    site.post("note", "Draft note", "Version 0.\n", published=False)
    assert site.run("publish", env=env).exit_code == 0
    w = watch(env=env)
    sandbox.reset_stats()
    for version in range(1, 6):
        site.post("note", "Draft note", f"Version {version}.\n", published=False)
        time.sleep(0.03)
    assert len(w.reloads(settle=1.5)) == 1
    wait_for(lambda: sandbox.count("PUT", "/api/articles/{id}") >= 1)
    time.sleep(1.0)  # room for a second update, which must not come
    assert sandbox.count("PUT", "/api/articles/{id}") == 1
    assert sandbox.count("POST", "/api/articles") == 0
    article_id = json.loads((site.root / "toolkit.lock").read_text())["posts"]["content/note.md"]["article_id"]
    mine = httpx.get(f"{sandbox.base_url}/api/articles/me/unpublished",
                     headers={"api-key": sandbox.demo_api_key}).json()
    (article,) = [a for a in mine if a["id"] == article_id]
    assert "Version 5." in article["body_markdown"]
    assert len([line for line in w.lines if line.startswith("rebuilt after")]) == 1


def test_watch_never_publishes(site, watch, sandbox):
    sandbox.reset()
    env = {"FOREM_BASE_URL": sandbox.base_url, "FOREM_API_KEY": sandbox.demo_api_key}
    w = watch(env=env)
    sandbox.reset_stats()
    site.post("fresh", "Fresh and public", "Hello.\n", published=True)
    wait_for(lambda: "will be published by `toolkit publish`" in w.output())
    assert sandbox.count("POST", "/api/articles") == 0 and sandbox.count("PUT") == 0


def test_sigint_stops_cleanly_within_two_seconds(site, watch):
    w = watch("--no-push")
    w.process.send_signal(signal.SIGINT)
    assert w.process.wait(timeout=2) == 0
    assert w.stop() == 0


def test_a_config_change_is_reloaded_or_explained(site, watch):
    w = watch("--no-push")
    config = (site.root / "toolkit.toml").read_text()
    (site.root / "toolkit.toml").write_text(config.replace('title = "Watched site"', 'title = "Renamed site"'))
    wait_for(lambda: "Renamed site" in w.get("/").text)
    (site.root / "toolkit.toml").write_text(config + "\n[site\n")
    wait_for(lambda: "toolkit.toml not reloaded" in w.output())
    assert "not valid TOML" in w.output()
    assert w.process.poll() is None and "Renamed site" in w.get("/").text


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
    wait_for(lambda: "push failed content/note.md" in w.output())
    assert sandbox.count("PUT", "/api/articles/{id}", 422) == 1
    # Saving another post pushes the failed one again, with its latest text.
    site.post("other", "Other draft", "Other 1.\n", published=False)
    wait_for(lambda: sandbox.count("PUT", "/api/articles/{id}", 200) == 2)
    mine = httpx.get(f"{sandbox.base_url}/api/articles/me/unpublished",
                     headers={"api-key": sandbox.demo_api_key}).json()
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
        wait_for(lambda: "another toolkit run holds .toolkit/run.lock: publish" in w.output())
        assert "push failed" in w.output() and "retried with the next save" in w.output()
        assert sandbox.count("PUT") == 0
    site.post("note", "Draft note", "Version 2.\n", published=False)
    wait_for(lambda: sandbox.count("PUT", "/api/articles/{id}", 200) == 1)
    mine = httpx.get(f"{sandbox.base_url}/api/articles/me/unpublished",
                     headers={"api-key": sandbox.demo_api_key}).json()
    assert any("Version 2." in a["body_markdown"] for a in mine if a["title"] == "Draft note")
