"""Every command leaves its events in `.toolkit/events.jsonl`: a run from start to end, what
it did to each post, every request by route template, every pause, never a secret or a
body; the file is rotated by size without losing or splitting a line."""

from __future__ import annotations

import json
import secrets
import subprocess
import sys
import threading
from collections import Counter
from pathlib import Path

import pytest

from tests.support.runlog_helpers import event_lines, events
from toolkit.runlog.events import FIELDS, EventLog, EventWriter, Scrubber


def runs(found: list[dict]) -> dict[str, list[dict]]:
    """The events of each run, by run id, in order."""
    by_run: dict[str, list[dict]] = {}
    for event in found:
        by_run.setdefault(event["run_id"], []).append(event)
    return by_run


def run_of(root: Path, command: str) -> list[dict]:
    """The events of the last run of `command`."""
    found = [events for events in runs(events_of(root)).values() if events[0]["command"] == command]
    assert found, f"no run of {command}"
    return found[-1]


def events_of(root: Path) -> list[dict]:
    return events(root)


def test_every_command_records_its_run(site, forem_env, sandbox):
    site.post("hello", "Hello run log", published=True)
    # An unreadable date: the site cannot place the post either (a tag only the API
    # refuses would still be built).
    site.write("content/broken.md", "---\ntitle: Broken\npublished: true\ndate: not a date\n---\n")
    for args in (
        ["check"],
        ["build"],
        ["plan"],
        ["publish"],
        ["pull"],
        ["mirror"],
        ["config"],
        ["logs", "--local", "SELECT 1 AS one"],
    ):
        site.run(*args, env=forem_env)
    found = events_of(site.root)
    by_command = {events[0]["command"]: events for events in runs(found).values()}
    assert set(by_command) == {
        "check",
        "build",
        "plan",
        "publish",
        "pull",
        "mirror",
        "config",
        "logs",
    }
    for command, run in by_command.items():
        assert [e["seq"] for e in run] == list(range(len(run))), command
        assert run[0]["event"] == "run" and run[0]["action"] == "start"
        assert all(e["version"] == "0.1.0" and e["command"] == command for e in run)
        assert all(set(e) <= set(FIELDS) for e in run), command
        if command != "logs":  # the query's own run is still going when it reads the log
            end = run[-1]
            assert end["event"] == "run" and end["action"] == "end" and end["duration_ms"] >= 0
    # A broken post fails check, build and publish: they ran, and exited 1.
    assert {c: r[-1]["outcome"] for c, r in by_command.items() if c != "logs"} == {
        "check": "failed",
        "build": "failed",
        "plan": "failed",
        "publish": "failed",
        "pull": "ok",
        "mirror": "ok",
        "config": "ok",
    }
    problems = [e for e in by_command["check"] if e["event"] == "problem"]
    assert problems and problems[0]["post"] == "content/broken.md" and problems[0]["line"] == 4
    posts = {e["post"]: e for e in by_command["publish"] if e["event"] == "post"}
    assert posts["content/hello.md"]["action"] == "create"
    assert posts["content/hello.md"]["outcome"] == "ok" and posts["content/hello.md"]["article_id"]
    assert posts["content/broken.md"]["action"] == "error"
    summary = next(e for e in by_command["build"] if e["event"] == "build")
    assert summary["posts"] == 1 and summary["errors"] == 1 and summary["written"] > 0
    mirror = next(e for e in by_command["mirror"] if e["event"] == "mirror")
    assert mirror["requests"] > 0 and "items" in mirror


def test_pull_records_each_post_as_its_json_and_exit_code_say(site, forem_env, sandbox):
    """A post deleted here is not pulled back, on purpose: pull exits 0 and its JSON says
    ok, and so does the run log, post by post; a post changed on both sides is not ok in
    any of the three."""
    site.post("kept", "Kept here", published=True)
    site.post("deleted", "Deleted here", published=True)
    site.post("both", "Changed on both sides", "First text.\n", published=True)
    assert site.run("publish", env=forem_env).exit_code == 0
    (site.content / "deleted.md").unlink()
    pulled = site.run("pull", "--json", env=forem_env)
    assert pulled.exit_code == 0, pulled.output
    document = json.loads(pulled.stdout)
    assert document["ok"] is True
    assert {p["path"]: p["action"] for p in document["posts"]}["content/deleted.md"] == "gone"
    run = run_of(site.root, "pull")
    by_post = {e["post"]: e for e in run if e["event"] == "post"}
    assert by_post["content/deleted.md"]["action"] == "gone"
    assert by_post["content/deleted.md"]["outcome"] == "ok"
    assert by_post["content/kept.md"]["outcome"] == "ok"
    assert run[-1]["outcome"] == "ok"

    article = document["posts"][[p["path"] for p in document["posts"]].index("content/both.md")]
    sandbox.control(
        "POST",
        f"/forem/articles/{article['article_id']}/edit",
        {"body_markdown": "---\ntitle: Changed on both sides\npublished: true\n---\nWeb.\n"},
    )
    site.post("both", "Changed on both sides", "Local text.\n", published=True)
    differs = site.run("pull", "--json", env=forem_env)
    assert differs.exit_code == 1, differs.output
    assert json.loads(differs.stdout)["ok"] is False
    run = run_of(site.root, "pull")
    by_post = {e["post"]: e for e in run if e["event"] == "post"}
    assert by_post["content/both.md"]["action"] == "differs"
    assert by_post["content/both.md"]["outcome"] == "failed"
    assert run[-1]["outcome"] == "failed"


def test_requests_are_recorded_by_route_template_as_the_sandbox_names_them(
    site, forem_env, sandbox
):
    site.post("one", "Template one", published=True)
    site.post("two", "Template two", published=True)
    assert site.run("publish", env=forem_env).exit_code == 0
    site.post("one", "Template one", body="Changed.\n", published=True)
    sandbox.reset_stats()
    after = sandbox.requests()[-1]["seq"] if sandbox.requests() else 0
    assert site.run("publish", env=forem_env).exit_code == 0
    assert site.run("mirror", env=forem_env).exit_code == 0
    requests = [
        e
        for run in (run_of(site.root, "publish"), run_of(site.root, "mirror"))
        for e in run
        if e["event"] == "request"
    ]
    served = [r for r in sandbox.requests(after) if r["interface"] == "forem"]
    assert Counter((e["method"], e["route"], e["status"]) for e in requests) == Counter(
        (r["method"], r["route"], r["status"]) for r in served
    )
    assert ("PUT", "/api/articles/{id}", 200) in {
        (e["method"], e["route"], e["status"]) for e in requests
    }
    assert all(
        "?" not in e["route"] and not any(ch.isdigit() for ch in e["route"]) for e in requests
    )
    assert all(e["duration_ms"] > 0 and e["retries"] == 0 for e in requests)


def test_rate_limit_waits_and_retries_are_recorded(site, forem_env, sandbox):
    site.post("one", "Waiting post", published=True)
    sandbox.fault("POST", "/api/articles", status=429, retry_after=1)
    assert site.run("publish", env=forem_env).exit_code == 0
    run = run_of(site.root, "publish")
    creates = [
        (e["status"], e["retries"])
        for e in run
        if e["event"] == "request" and e["route"] == "/api/articles"
    ]
    assert creates == [(429, 0), (201, 1)]
    (wait,) = [e for e in run if e["event"] == "wait"]
    assert wait["wait_ms"] == pytest.approx(1000, abs=50) and "Retry-After" in wait["reason"]


def test_an_error_ends_the_run_with_its_message(site, sandbox):
    site.post("one", "No key", published=True)
    result = site.run("publish", env={"FOREM_BASE_URL": sandbox.base_url})
    assert result.exit_code == 1
    run = run_of(site.root, "publish")
    (error,) = [e for e in run if e["event"] == "error"]
    assert error["error"] == "ConfigError" and "FOREM_API_KEY is not set" in error["message"]
    assert run[-1]["outcome"] == "error"


@pytest.mark.e2e
def test_a_watch_session_is_one_run(site):
    from toolkit.commands.watch import watch
    from toolkit.config import load_config

    class Quiet:
        def built(self, report, changed, seconds):
            pass

        def problems(self, new, fixed):
            pass

        def pushed(self, outcomes):
            pass

        def push_failed(self, message):
            pass

        def config_problem(self, message):
            pass

        def notice(self, message):
            pass

    site.post("one", "Watched post", published=True)
    session = watch(load_config(site.root / "toolkit.toml", env={}), Quiet(), port=0, push=False)
    session.start()
    session.stop()
    run = run_of(site.root, "watch")
    assert [e["event"] for e in run] == ["run", "build", "run"]
    assert run[-1]["outcome"] == "ok"


KNOWN_SECRETS = {
    name: "s3cr3t-" + secrets.token_hex(12)
    for name in ("CLOUDCONVERT_API_KEY", "LICENSE_API_TOKEN", "LOGS_PASSWORD")
}


def test_no_secret_and_no_body_ever_reaches_the_run_log(site, forem_env, sandbox):
    marker = "BODY-MARKER-" + secrets.token_hex(6)
    site.post("a", "Secret keeper", body=f"{marker}\n", published=True)
    site.write("content/b.md", "---\ntitle: Broken\ntags: [x-y]\n---\n")
    password = "url-" + secrets.token_hex(8)
    env = {
        **forem_env,
        **KNOWN_SECRETS,
        "LOGS_USERNAME": "admin",
        # a base URL with credentials in it: shown redacted, and the wrong password (403)
        "LOGS_BASE_URL": sandbox.base_url.replace("http://", f"http://admin:{password}@"),
    }
    sandbox.fault("PUT", "/api/articles/{id}", status=422)
    for args in (
        ["publish"],
        ["plan"],
        ["check"],
        ["build"],
        ["pull"],
        ["mirror"],
        ["config"],
        ["logs", "SELECT 1"],
        ["logs", "--local", "SELECT 1"],
    ):
        site.run(*args, env=env)
    site.post("a", "Secret keeper", body=f"{marker} changed\n", published=True)
    site.run("publish", env=env)  # an update refused with a 422
    lines = b"\n".join(event_lines(site.root))
    assert b"Unprocessable" in lines or b"422" in lines  # the failures are in the log
    assert b'"event":"ship"' in lines  # so are the refused shipments
    for secret in [forem_env["FOREM_API_KEY"], *KNOWN_SECRETS.values(), password]:
        assert secret.encode() not in lines, secret
    assert marker.encode() not in lines
    for path in (site.root / ".toolkit").rglob("*"):
        if path.is_file():
            text = path.read_bytes()
            assert all(s.encode() not in text for s in [*KNOWN_SECRETS.values(), password])


def test_the_writer_keeps_secrets_and_long_texts_out():
    scrub = Scrubber(["a-long-secret-value", "short"])
    assert scrub("failed with a-long-secret-value inside") == "failed with *** inside"
    assert scrub("short words stay") == "short words stay"  # too short to look for
    assert scrub("GET https://user:pw@host/x") == "GET https://***@host/x"
    assert len(scrub("x" * 5000)) == 1000


def test_unknown_fields_are_a_programming_error(tmp_path):
    writer = EventWriter(EventLog(tmp_path), "r", "check", "0")
    with pytest.raises(ValueError, match="no field 'body'"):
        writer.emit("post", body="text")


# -- rotation ------------------------------------------------------------------------------


def test_the_log_is_rotated_by_size_keeping_a_few_generations(tmp_path):
    files = EventLog(tmp_path, max_bytes=2000, keep=2)
    writer = EventWriter(files, "run", "check", "0")
    for index in range(200):
        writer.emit("post", post=f"content/{index}.md", action="unchanged")
    names = sorted(p.name for p in tmp_path.glob("events*.jsonl"))
    assert names == ["events.1.jsonl", "events.2.jsonl", "events.jsonl"]
    kept = [json.loads(line) for path in files.files() for line in path.read_bytes().splitlines()]
    seqs = [event["seq"] for event in kept]
    assert seqs == list(range(seqs[0], 200))  # the newest events, in order, none missing
    assert all(path.stat().st_size < 2000 + 300 for path in files.files())


WRITER = """
import sys
from pathlib import Path
from toolkit.runlog.events import EventLog, EventWriter
files = EventLog(Path(sys.argv[1]), max_bytes=20_000, keep=50)
writer = EventWriter(files, sys.argv[2], "check", "0")
for index in range(int(sys.argv[3])):
    writer.emit("post", post="content/" + "x" * (index % 50) + ".md", action="unchanged")
"""


@pytest.mark.e2e
def test_processes_and_threads_writing_at_once_never_split_or_lose_a_line(tmp_path):
    folder = tmp_path / ".toolkit"
    processes = [
        subprocess.Popen([sys.executable, "-c", WRITER, str(folder), f"p{n}", "1500"])
        for n in range(3)
    ]
    files = EventLog(folder, max_bytes=20_000, keep=50)
    writer = EventWriter(files, "threads", "check", "0")
    threads = [
        threading.Thread(
            target=lambda: [
                writer.emit("wait", wait_ms=1.0)  # type: ignore[func-returns-value]
                for _ in range(500)
            ]
        )
        for _ in range(3)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for process in processes:
        assert process.wait(60) == 0
    assert len(files.files()) > 5  # it was rotated many times meanwhile
    found = [json.loads(line) for line in event_lines(tmp_path)]  # every line is whole JSON
    counts = Counter(event["run_id"] for event in found)
    assert counts == {"p0": 1500, "p1": 1500, "p2": 1500, "threads": 1500}
    for run_id in counts:
        assert sorted(e["seq"] for e in found if e["run_id"] == run_id) == list(
            range(counts[run_id])
        )


def test_a_run_log_that_cannot_be_written_does_not_fail_the_command(site):
    site.post("one", "Unwritable log", published=True)
    (site.root / ".toolkit" / "events.jsonl").mkdir(parents=True)  # every append fails
    result = site.run("check")
    assert result.exit_code == 0, result.output
    assert result.output.count("the run log cannot be written") == 1
