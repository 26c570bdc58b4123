"""One writer at a time: runs that write hold `.toolkit/run.lock`, and `toolkit.lock`
saves merge with what another run saved."""

from __future__ import annotations

import os
import re
import threading

import pytest

from tests.support.running_cli import start_toolkit
from tests.support.sync_helpers import lock_entries, my_articles, writes
from tests.support.waiting import until
from toolkit.clients.forem import CREATE_LIMIT
from toolkit.sync.ledger import Ledger, LedgerEntry
from toolkit.sync.runlock import read_holder, run_lock

# One window's worth of creates: the runs overlap because the first one's creates are
# held, not because it has many to pace (no run waits on the create limit).
POSTS = CREATE_LIMIT


def write_posts(site, count: int = POSTS) -> None:
    for i in range(count):
        site.post(f"post-{i:02}", f"Concurrent post {i}", f"Body of post {i}.\n", published=True)


def concurrent_titles(sandbox) -> list[str]:
    return [a["title"] for a in my_articles(sandbox) if a["title"].startswith("Concurrent post")]


@pytest.mark.e2e  # two processes race for the run lock
def test_two_publishes_at_once_create_each_article_once(site, env, sandbox):
    write_posts(site)
    # The first run's first creates are held until the other run says it waits for the
    # lock: the two surely overlap, however slow the machine is to start either.
    held = sandbox.fault("POST", "/api/articles", count=3, delay_ms=60_000, until_released=True)
    sandbox.reset_stats()
    runs = [start_toolkit(site, "publish", env=env) for _ in range(2)]
    run_lock_file = site.root / ".toolkit" / "run.lock"
    holder = until(lambda: run_lock_file.exists() and read_holder(run_lock_file))
    (waiting,) = [run for run in runs if run.pid != holder.pid]
    assert waiting.stderr is not None
    said: list[str] = []  # the waiting run's lines until it says it waits
    while not said or "another toolkit run holds" not in said[-1]:
        line = waiting.stderr.readline()
        assert line, "the second run ended without waiting for the lock"
        said.append(line)
    sandbox.release(held)
    outputs = []
    for run in runs:
        out, err = run.communicate(timeout=120)
        outputs.append((out, "".join(said) + err if run is waiting else err))
    for run, (out, err) in zip(runs, outputs, strict=True):
        assert run.returncode == 0, out + err
    assert writes(sandbox) == {"POST 201": POSTS}
    assert sorted(concurrent_titles(sandbox)) == sorted(
        f"Concurrent post {i}" for i in range(POSTS)
    )
    assert len(lock_entries(site)) == POSTS
    waited = [err for _, err in outputs if "another toolkit run holds .toolkit/run.lock" in err]
    assert len(waited) == 1, outputs  # one of them waited for the other


@pytest.mark.e2e  # the lock held by another process, named by its pid
def test_a_second_publish_gives_up_after_its_timeout_naming_the_holder(site, env, sandbox):
    write_posts(site)
    # The first run's creates are held until the second has given up: it holds the lock
    # all that time, however slow the machine.
    held = sandbox.fault("POST", "/api/articles", count=3, delay_ms=60_000, until_released=True)
    sandbox.reset_stats()
    first = start_toolkit(site, "publish", env=env)
    run_lock_file = site.root / ".toolkit" / "run.lock"
    until(lambda: run_lock_file.exists() and read_holder(run_lock_file) is not None)
    second = site.run("publish", env={**env, "TOOLKIT_LOCK_TIMEOUT": "0.5"})
    sandbox.release(held)
    out, err = first.communicate(timeout=120)
    assert first.returncode == 0, out + err
    assert second.exit_code == 1
    message = second.output.strip().splitlines()[-1]
    assert re.fullmatch(
        rf"Error: another toolkit run holds \.toolkit/run\.lock: publish, pid {first.pid}, "
        r"since \d\d:\d\d:\d\d; waited 0\.5 s",
        message,
    ), second.output
    assert writes(sandbox) == {"POST 201": POSTS}
    assert len(concurrent_titles(sandbox)) == POSTS
    assert len(lock_entries(site)) == POSTS
    assert read_holder(run_lock_file) is None  # released: the file names nobody


def test_pull_waits_for_the_run_lock(site, env, sandbox):
    with run_lock(site.root / ".toolkit", "publish"):
        result = site.run("pull", env={**env, "TOOLKIT_LOCK_TIMEOUT": "0.2"})
    assert result.exit_code == 1
    assert (
        f"another toolkit run holds .toolkit/run.lock: publish, pid {os.getpid()}" in result.output
    )
    assert not (site.root / "toolkit.lock").exists()
    assert not any(site.content.glob("*.md"))
    assert site.run("pull", env=env).exit_code == 0  # and once it is free, pull works
    assert any(site.content.glob("*.md"))


def test_dry_run_and_plan_take_no_lock(site, env, sandbox):
    site.post("a", "Planned post", published=True)
    with run_lock(site.root / ".toolkit", "publish"):
        for args in (["plan"], ["publish", "--dry-run"]):
            result = site.run(*args, env={**env, "TOOLKIT_LOCK_TIMEOUT": "0"})
            assert result.exit_code == 0, result.output


def entry(article_id: int, digest: str = "d") -> LedgerEntry:
    return LedgerEntry(article_id=article_id, url=None, sent_digest=digest, remote_digest=digest)


def test_lock_saves_merge_with_what_another_run_saved(tmp_path):
    path = tmp_path / "toolkit.lock"
    (tmp_path / "content").mkdir()
    (tmp_path / "content" / "a.md").write_text("a")
    base = Ledger(path)
    base.record("content/a.md", entry(1))
    base.record("content/old.md", entry(3))  # a post whose file is gone since
    first, second = Ledger.load(path, ""), Ledger.load(path, "")

    first.record("content/b.md", entry(2))
    # The second run finds article 3 under a new path (dropping the old one) and
    # updates a.md.
    second.record("content/new.md", entry(3, "moved"))
    second.record("content/a.md", entry(1, "second"))
    first.save()  # saving again must not bring back what the second run removed

    on_disk = Ledger.load(path, "").entries
    assert on_disk == {
        "content/a.md": entry(1, "second"),
        "content/b.md": entry(2),
        "content/new.md": entry(3, "moved"),
    }
    assert first.entries == on_disk  # a save also shows the run what others saved


def test_pending_digests_are_kept_and_absent_when_unset(tmp_path):
    path = tmp_path / "toolkit.lock"
    lock = Ledger(path)
    lock.record("content/a.md", entry(1))
    assert "pending" not in path.read_text()  # no diff noise for entries without them
    sending = LedgerEntry(1, None, "d", "d", pending_digest="p", pending_body_digest="b")
    lock.record("content/a.md", sending)
    assert Ledger.load(path, "").get("content/a.md") == sending


class GatedLedger(Ledger):
    """A lock whose first save waits for the test to let it finish, and that counts saves."""

    def __init__(self, path):
        super().__init__(path)
        self.saves = 0
        self.first_save = threading.Event()
        self.gate = threading.Event()

    def save(self) -> None:
        self.saves += 1
        if self.saves == 1:
            self.first_save.set()
            self.gate.wait(10)
        super().save()


def test_saves_during_writes_are_batched_and_the_last_is_waited_for(tmp_path):
    """What the README says: each write asks for a save, a background thread saves, the
    records that come while it saves go into its next save, and the run waits for it."""
    path = tmp_path / "toolkit.lock"
    lock = GatedLedger(path)
    with lock.background_saves():
        lock.record("content/a.md", entry(1))
        lock.first_save.wait(10)  # the saver is writing: the next records wait for it
        for number in range(2, 6):
            lock.record(f"content/{number}.md", entry(number))
        assert not path.exists()
        lock.gate.set()
    assert lock.saves in (2, 3)  # not one per record (the third: asked for when leaving)
    assert sorted(Ledger.load(path, "").entries) == [f"content/{n}.md" for n in (2, 3, 4, 5, "a")]
