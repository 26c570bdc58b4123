"""After any interruption the next run converges: a publish killed mid-way, a create whose
answer never came, and the temporary files a crash leaves behind."""

from __future__ import annotations

import fcntl
import hashlib
import os
import signal
import stat

import pytest

from tests.support.running_cli import start_toolkit
from tests.support.sync_helpers import (
    PatientProxy,
    last_seq,
    lock_entries,
    my_articles,
    records_after,
    titles,
    writes,
)
from tests.support.waiting import until
from toolkit.clients.forem import CREATE_LIMIT

PUT = ("PUT", "/api/articles/{id}")


@pytest.fixture
def proxy(sandbox):
    """The sandbox behind a forwarder that lets a request the client gave up on still
    finish on the server (the sandbox alone drops it along with the connection)."""
    forwarder = PatientProxy(sandbox.base_url)
    yield forwarder
    forwarder.close()


def digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def bodies_by_title(sandbox, prefix: str) -> dict[str, str]:
    return {
        a["title"]: a["body_markdown"]
        for a in my_articles(sandbox)
        if a["title"].startswith(prefix)
    }


@pytest.mark.e2e  # a publish killed mid-way: a process sent SIGKILL
@pytest.mark.parametrize(
    ("interruption", "edit_after_the_kill"),
    [("still-running", False), ("still-running", True), ("answer-lost", False)],
)
def test_a_publish_killed_during_updates_converges(
    site, env, proxy, sandbox, interruption, edit_after_the_kill
):
    env = {**env, "FOREM_BASE_URL": proxy.base_url}
    count = CREATE_LIMIT  # the first publish does not wait on the create window
    for i in range(count):
        site.post(f"post-{i:02}", f"Killed post {i}", "Version one.\n", published=True)
    assert site.run("publish", env=env).exit_code == 0
    for i in range(count):
        site.post(f"post-{i:02}", f"Killed post {i}", "Version two.\n", published=True)

    seq = last_seq(sandbox)

    def puts() -> list[dict]:
        return records_after(sandbox, seq, *PUT)

    if interruption == "still-running":
        # One quick update, the others held, and a kill once the quick one is answered
        # and another has reached the server whole: the others are still running there,
        # and finish after the kill. What the proxy saw says so (a read of the sandbox's
        # record would wait until no request is in flight). The held ones go on only
        # when the faults are cleared, after the kill, however slow the machine.
        sandbox.fault(*PUT, count=1, delay_ms=50)
        sandbox.fault(*PUT, count=count - 1, delay_ms=60_000, until_released=True)
        run = start_toolkit(site, "publish", env=env)
        until(lambda: proxy.answered("PUT") >= 1 and proxy.awaiting("PUT") >= 1)
    else:
        # The server takes the first updates and their answers are lost: the client waits
        # before sending them again, and is killed right then.
        sandbox.fault(*PUT, count=3, drop_after_commit=True)
        run = start_toolkit(site, "publish", env=env)
        until(lambda: any(r["dropped"] for r in puts()))
    run.send_signal(signal.SIGKILL)
    run.communicate(timeout=10)

    sandbox.clear_faults()  # and so the end of every hold
    until(lambda: proxy.in_flight() == 0)  # what was sent has finished on the server
    remote = {a["id"]: a["body_markdown"] for a in my_articles(sandbox)}
    entries = lock_entries(site)
    unrecorded = sorted(
        key for key, e in entries.items() if digest(remote[e["article_id"]]) != e["remote_digest"]
    )
    assert unrecorded, "the kill left no update the lock did not record"

    expected = {f"Killed post {i}": "Version two.\n" for i in range(count)}
    if edit_after_the_kill:
        edited = unrecorded[0]
        number = int(edited.removeprefix("content/post-").removesuffix(".md"))
        site.post(f"post-{number:02}", f"Killed post {number}", "Version three.\n", published=True)
        expected[f"Killed post {number}"] = "Version three.\n"

    sandbox.reset_stats()
    result = site.run("publish", "-v", env=env)
    assert result.exit_code == 0, result.output
    assert "conflict" not in result.output
    if edit_after_the_kill:
        assert f"update    public {edited}" in result.output
    for title, body in bodies_by_title(sandbox, "Killed post").items():
        assert body.endswith(expected[title]), title
    assert "pending" not in (site.root / "toolkit.lock").read_text()

    sandbox.reset_stats()
    again = site.run("publish", env=env)
    assert again.exit_code == 0, again.output
    assert writes(sandbox) == {}


@pytest.mark.e2e  # a publish killed mid-way: a process sent SIGKILL
def test_an_older_body_committed_late_is_recognised_as_ours(site, env, proxy, sandbox):
    """A publish is killed while the server still holds its update (version two); the
    post is edited (version three) and published before that update lands, and then it
    lands over version three. The next run knows version two as a body it sent, not a
    website edit: it sends version three again, with no conflict."""
    env = {**env, "FOREM_BASE_URL": proxy.base_url}  # one server for every run (the lock's)
    site.post("late", "Late commit", "Version one.\n", published=True)
    assert site.run("publish", env=env).exit_code == 0
    site.post("late", "Late commit", "Version two.\n", published=True)
    seq = last_seq(sandbox)
    # Held until released (a minute at most): it lands after the rerun's, however long
    # the rerun takes on a loaded machine.
    held = sandbox.fault(*PUT, count=1, delay_ms=60_000, until_released=True)
    run = start_toolkit(site, "publish", env=env)
    # The server holds this run's update: the fault is used up. (The proxy having the
    # whole request is not enough: it may reach the server after the rerun's, which the
    # fault would then hold instead.)
    until(lambda: sandbox.control("GET", "/faults")["faults"] == [])
    run.send_signal(signal.SIGKILL)
    run.communicate(timeout=10)

    site.post("late", "Late commit", "Version three.\n", published=True)
    rerun = site.run("publish", env=env)
    assert rerun.exit_code == 0, rerun.output
    sandbox.release(held)
    until(lambda: proxy.in_flight() == 0)  # the held update has landed
    puts = records_after(sandbox, seq, *PUT)
    assert len(puts) == 2
    assert bodies_by_title(sandbox, "Late commit")["Late commit"].endswith("Version two.\n"), (
        "the held update did not land after the rerun's (the scenario did not happen)"
    )

    result = site.run("publish", "-v", env=env)
    assert result.exit_code == 0, result.output
    assert "edited on the website" not in result.output and "conflict" not in result.output
    assert bodies_by_title(sandbox, "Late commit")["Late commit"].endswith("Version three.\n")
    assert "unconfirmed" not in (site.root / "toolkit.lock").read_text()  # seen landed
    sandbox.reset_stats()
    again = site.run("publish", env=env)
    assert again.exit_code == 0, again.output
    assert writes(sandbox) == {}


def test_a_create_whose_answer_timed_out_is_not_sent_again(site, env, proxy, sandbox):
    env = {**env, "FOREM_BASE_URL": proxy.base_url}
    config = site.root / "toolkit.toml"
    assert config.read_text().endswith("rate_window = 1\n")  # the [forem] table
    config.write_text(config.read_text() + "timeout = 1\n")  # seconds
    site.post("slow", "A slow create", "Body.\n", published=True)
    # The server takes the create only after the client has given up waiting for it.
    held = sandbox.fault("POST", "/api/articles", delay_ms=60_000, until_released=True)
    sandbox.reset_stats()
    result = site.run("publish", env=env)
    assert result.exit_code == 1
    assert "the create may still be pending on the server" in result.output
    assert "the next publish checks before sending again" in result.output

    sandbox.release(held)
    until(lambda: proxy.in_flight() == 0)  # the first request, finishing on the server
    assert titles(sandbox).count("A slow create") == 1
    assert writes(sandbox) == {"POST 201": 1}

    sandbox.reset_stats()
    again = site.run("publish", env=env)
    assert again.exit_code == 0, again.output
    assert writes(sandbox) == {}
    (article,) = [a for a in my_articles(sandbox) if a["title"] == "A slow create"]
    assert lock_entries(site)["content/slow.md"]["article_id"] == article["id"]


def test_a_create_answered_with_a_5xx_is_checked_then_sent_again(site, env, sandbox):
    site.post("flaky", "A flaky create", "Body.\n", published=True)
    sandbox.fault("POST", "/api/articles", status=503)
    sandbox.reset_stats()
    result = site.run("publish", env=env)
    assert result.exit_code == 0, result.output
    assert writes(sandbox) == {"POST 503": 1, "POST 201": 1}
    assert titles(sandbox).count("A flaky create") == 1


def test_temporary_files_left_by_a_crash_are_removed(site, env, sandbox):
    site.post("a", "Tidy post", published=True)
    leftovers = [
        site.root / ".toolkit.lock.abc.tmp",
        site.root / ".toolkit" / ".cursor.json.x1y2.tmp",
        site.content / "_mirror" / ".readinglist.json.q7w8e9r0.tmp",
        site.content / "_mirror" / "comments" / ".a.json.k3k3k3k3.tmp",
        site.content / ".pulled.md.zz99zz99.tmp",
    ]
    kept = [
        site.root / ".notes.abc.tmp",  # not a temporary file of toolkit.lock
        site.content / ".draft-notes.tmp",  # no target name: not toolkit's
    ]
    for path in leftovers + kept:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("half a file")
    # A writer still at work holds its temporary file locked: it must survive.
    in_use = site.content / "_mirror" / ".readinglist.json.busy1234.tmp"
    with open(in_use, "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        result = site.run("publish", env=env)
        assert in_use.exists()
    assert result.exit_code == 0, result.output
    assert [p for p in leftovers if p.exists()] == []
    assert all(p.exists() for p in kept)


@pytest.mark.parametrize("mode", [0o644, 0o664])
def test_the_lock_file_keeps_its_mode(site, env, sandbox, mode):
    site.post("a", "Mode post A", published=True)
    assert site.run("publish", env=env).exit_code == 0
    lock = site.root / "toolkit.lock"
    os.chmod(lock, mode)
    before = lock.read_bytes()
    site.post("b", "Mode post B", published=True)
    assert site.run("publish", env=env).exit_code == 0
    assert lock.read_bytes() != before  # it was rewritten
    assert stat.S_IMODE(lock.stat().st_mode) == mode


@pytest.mark.parametrize("umask", [0o022, 0o002])
def test_a_new_lock_file_gets_the_umask_default(site, env, sandbox, umask):
    site.post("a", "Umask post", published=True)
    previous = os.umask(umask)
    try:
        assert site.run("publish", env=env).exit_code == 0
    finally:
        os.umask(previous)
    assert stat.S_IMODE((site.root / "toolkit.lock").stat().st_mode) == 0o666 & ~umask
