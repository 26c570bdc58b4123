"""A post's date without `date:`: the lock's publication time, else its first commit in git.

A real git repository is made for the commit times (git is a tool writers have: the test
skips only where it is not installed)."""

from __future__ import annotations

import json
import os
import shutil

import pytest

from tests.support.git import git
from toolkit.content import dates
from toolkit.errors import SyncError
from toolkit.sync.ledger import Ledger, LedgerEntry

needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


@pytest.mark.parametrize(
    "url", ["https://dev.to", "HTTPS://Dev.To/api/", "http://127.0.0.1:3000", "http://[::1]:8/x/"]
)
def test_the_lock_section_is_named_as_sync_names_it(url, tmp_path):
    # A lock that sync wrote for the server, however its URL is spelled in the config,
    # gives the site that server's publication dates.
    lock = tmp_path / "toolkit.lock"
    ledger = Ledger.load(lock, url)
    entry = LedgerEntry(1, None, "a", "b", published=True, published_at="2024-02-03T04:05:06Z")
    ledger.record("content/a.md", entry)
    ledger.save()
    assert dates.lock_dates(lock, url) == {"content/a.md": "2024-02-03T04:05:06+00:00"}
    assert dates.lock_dates(lock, "https://elsewhere.example") == {}


def test_the_lock_dates_are_read_tolerantly(tmp_path):
    lock = tmp_path / "toolkit.lock"
    assert dates.lock_dates(lock, "https://dev.to") == {}  # no lock
    lock.write_text("{not json", encoding="utf-8")
    assert dates.lock_dates(lock, "https://dev.to") == {}
    entry = {"article_id": 1, "url": None, "sent_digest": "a", "remote_digest": "b"}
    data = {
        "version": 2,
        "server": "http://127.0.0.1:9",
        "posts": {"content/sandbox.md": {**entry, "published": True, "published_at": "2024-01-01"}},
        "other_servers": {
            "https://dev.to": {
                "posts": {
                    "content/a.md": {
                        **entry,
                        "published": True,
                        "published_at": "2024-02-03T04:05:06Z",
                    },
                    "content/draft.md": {**entry, "published": False, "published_at": None},
                    "content/old.md": {**entry, "published": True},  # before it was recorded
                    "content/odd.md": {**entry, "published": True, "published_at": "soon"},
                }
            }
        },
    }
    lock.write_text(json.dumps(data), encoding="utf-8")
    assert dates.lock_dates(lock, "https://dev.to/") == {
        "content/a.md": "2024-02-03T04:05:06+00:00"
    }
    assert dates.lock_dates(lock, "http://127.0.0.1:9") == {
        "content/sandbox.md": "2024-01-01T00:00:00+00:00"
    }


@pytest.mark.e2e
@needs_git
def test_a_post_is_dated_by_the_commit_that_added_it(tmp_path):
    repo = tmp_path / "repo"
    project = repo / "blog"
    (project / "content" / "guide").mkdir(parents=True)
    git(repo, "init", "-q", "-b", "main")
    (project / "content" / "first.md").write_text("one\n", encoding="utf-8")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "first", when="2023-05-06T07:08:09+02:00")
    (project / "content" / "first.md").write_text("one, edited\n", encoding="utf-8")
    (project / "content" / "guide" / "second.md").write_text("two\n", encoding="utf-8")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "second", when="2024-01-02T03:04:05+00:00")
    (project / "content" / "new.md").write_text("not committed\n", encoding="utf-8")
    cache = tmp_path / "cache.json"

    found = dates.git_dates(project, project / "content", cache)
    assert found == {
        "content/first.md": "2023-05-06T07:08:09+02:00",  # its first commit, not its edit
        "content/guide/second.md": "2024-01-02T03:04:05+00:00",
    }
    assert json.loads(cache.read_text(encoding="utf-8"))["dates"] == found
    assert dates.git_head(project) == json.loads(cache.read_text(encoding="utf-8"))["head"]
    assert dates.git_dates(project, project / "content", cache) == found  # from the cache
    assert dates.git_dates(tmp_path / "elsewhere", tmp_path / "elsewhere" / "content") == {}

    lock = project / "toolkit.lock"
    entry = {"article_id": 1, "url": None, "sent_digest": "a", "remote_digest": "b"}
    posts = {
        "content/first.md": {**entry, "published": True, "published_at": "2022-01-01T00:00:00Z"}
    }
    lock.write_text(json.dumps({"version": 2, "server": "https://dev.to", "posts": posts}))
    assert dates.fallback_dates(
        ["content/first.md", "content/guide/second.md", "content/new.md"],
        root=project,
        content_dir=project / "content",
        lock_path=lock,
        base_url="https://dev.to",
    ) == {
        "content/first.md": "2022-01-01T00:00:00+00:00",  # the lock first
        "content/guide/second.md": "2024-01-02T03:04:05+00:00",
    }


@pytest.mark.e2e
@needs_git
def test_the_site_orders_an_undated_series_by_its_commits(make_project):
    project = make_project('[site]\ntitle = "T"\nurl = "https://example.com/"\n')
    git(project.root, "init", "-q", "-b", "main")
    for name, title, when in (
        ("b", "Zebra, part 1", "2024-01-01T00:00:00+00:00"),
        ("c", "Alpha, part 2", "2024-02-01T00:00:00+00:00"),
        ("a", "Middle, part 3", "2024-03-01T00:00:00+00:00"),
    ):
        project.post(name, title, published=True, series="Saga")
        git(project.root, "add", ".")
        git(project.root, "commit", "-q", "-m", title, when=when)
    check = project.run("check")
    assert "series" not in check.output  # every part has a date
    assert project.run("build").exit_code == 0
    page = (project.root / "site" / "c" / "index.html").read_text(encoding="utf-8")
    assert 'rel="prev" href="../b/">← Zebra, part 1' in page
    assert 'rel="next" href="../a/">Middle, part 3 →' in page
    assert '<time datetime="2024-02-01T00:00:00+00:00">' in page


@pytest.mark.parametrize("shape", ["nested", "fifo", "folder", "large"])
def test_a_lock_toolkit_cannot_read_is_one_line_and_no_dates(tmp_path, monkeypatch, shape):
    # toolkit.lock comes with the repository: whatever stands there is read bounded.
    path = tmp_path / "toolkit.lock"
    if shape == "nested":
        path.write_text("[" * 200_000 + "]" * 200_000)
    elif shape == "fifo":
        if not hasattr(os, "mkfifo"):
            pytest.skip("no FIFOs here")
        os.mkfifo(path)  # reading one would wait for a writer that never comes
    elif shape == "folder":
        path.mkdir()
    else:
        monkeypatch.setattr("toolkit.ledgerfile.MAX_LOCK_BYTES", 8)
        path.write_text(json.dumps({"version": 2, "posts": {}}))
    with pytest.raises(SyncError) as refused:
        Ledger.load(path, "https://dev.to")
    assert str(refused.value).startswith("toolkit.lock: ")
    assert "\n" not in str(refused.value)
    assert dates.lock_dates(path, "https://dev.to") == {}
