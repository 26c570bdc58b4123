"""Every request of `toolkit export` goes through the shared API client: each attempt is in
the run log by its route template, as the sandbox names it, with no secret; a 429 on an
upload or on the wait is waited out there, told as a wait and a retry."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from tests.support.export_helpers import last_run
from tests.support.waiting import until
from toolkit.clients.ratelimit import HELD

ROUTES = {
    "/v2/jobs",
    "/v2/jobs/{id}",
    "/v2/jobs/{id}/wait",
    "/v2/tasks/{id}",
    "/v2/tasks/{id}/cancel",
    "/v2/storage/{id}",
    "/v2/storage/{id}/{index}/{filename}",
}


def requests_of(run: list[dict]) -> list[dict]:
    return [event for event in run if event["event"] == "request"]


def secrets_of(archive, job_id: str) -> list[str]:
    """The API key and the job's signatures: each task's own secret, which signs its
    upload form or its download URL."""
    with archive.sandbox.state.store.read() as db:
        tokens = [
            row[0]
            for row in db.execute("SELECT token FROM archive_tasks WHERE job_id = ?", (job_id,))
        ]
    return [archive.api_key, *tokens]


def test_every_request_of_an_export_is_in_the_run_log_as_the_sandbox_records_it(
    archive, exportable
):
    after = archive.last_seq()
    result = exportable.run("export", "--json", env=archive.env)
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    logged = requests_of(last_run(exportable.root))
    # The sandbox records a streamed answer once its last byte has gone: maybe just after
    # the client has read it.
    until(lambda: len(archive.served(after)) >= len(logged))
    served = archive.served(after)
    assert Counter((e["method"], e["route"], e["status"]) for e in logged) == Counter(
        (r["method"], r["route"], r["status"]) for r in served
    )
    assert {e["route"] for e in logged} == {
        "/v2/jobs",
        "/v2/storage/{id}",
        "/v2/jobs/{id}",
        "/v2/jobs/{id}/wait",
        "/v2/storage/{id}/{index}/{filename}",
    }
    assert len(logged) == report["requests"] == 7 + 3 + 1
    assert all(e["duration_ms"] > 0 and e["retries"] == 0 for e in logged)
    text = (exportable.root / ".toolkit" / "events.jsonl").read_text(encoding="utf-8")
    secrets = secrets_of(archive, report["job_id"])
    assert len(secrets) == 1 + 7 + 2
    assert not [secret for secret in secrets if secret in text]
    assert not [e for e in logged if report["job_id"] in json.dumps(e) or "?" in e["route"]]


def test_a_cancelled_export_logs_its_unanswered_wait_and_the_cancel_by_their_templates(
    archive, exportable
):
    exportable.write(
        "toolkit.toml",
        exportable.root.joinpath("toolkit.toml").read_text() + "\n[archive]\ndeadline = 0.5\n",
    )
    archive.fault("slow", seconds=60)
    result = exportable.run("export", env=archive.env)
    assert result.exit_code == 1
    logged = requests_of(last_run(exportable.root))
    assert {e["route"] for e in logged} <= ROUTES
    waits = [e for e in logged if e["route"] == "/v2/jobs/{id}/wait"]
    assert waits and all("status" not in e and e["message"] == "read timeout" for e in waits)
    assert [
        (e["method"], e["route"], e["status"])
        for e in logged
        if e["route"].startswith("/v2/tasks/")
    ] == [("POST", "/v2/tasks/{id}/cancel", 200), ("DELETE", "/v2/tasks/{id}", 204)]


@pytest.mark.parametrize(
    ("method", "route", "retried"),
    [
        ("POST", "/v2/storage/{id}", 201),
        ("GET", "/v2/jobs/{id}/wait", 200),
    ],
)
def test_a_429_is_waited_out_through_the_shared_client(archive, exportable, method, route, retried):
    archive.sandbox.fault(method, route, status=429, retry_after=1)
    after = archive.last_seq()
    result = exportable.run("export", "--json", env=archive.env)
    assert result.exit_code == 0, result.output
    assert (exportable.root / "site.zip").is_file()
    run = last_run(exportable.root)
    logged = [
        (e["status"], e["retries"])
        for e in requests_of(run)
        if e["method"] == method and e["route"] == route
    ]
    assert (429, 0) in logged and (retried, 1) in logged
    assert Counter(status for status, _ in logged) == Counter(
        r["status"] for r in archive.served(after) if r["route"] == route
    )
    (wait,) = [e for e in run if e["event"] == "wait"]
    assert wait["reason"].endswith(HELD) and wait["wait_ms"] == pytest.approx(1000, abs=50)
    report = json.loads(result.stdout)
    assert [w["reason"] for w in report["waits"]] == [wait["reason"]]
    assert report["requests"] == 7 + 3 + 1 + 1


def test_an_upload_is_sent_again_from_its_start_only_when_that_is_safe(
    archive, exportable, tmp_path
):
    # A 503: the file did not arrive; it goes again, whole, and the archive is complete.
    archive.sandbox.fault("POST", "/v2/storage/{id}", status=503)
    result = exportable.run("export", env=archive.env)
    assert result.exit_code == 0, result.output
    uploads = [
        (e["status"], e["retries"])
        for e in requests_of(last_run(exportable.root))
        if e["route"] == "/v2/storage/{id}"
    ]
    assert sorted(uploads) == [(201, 0)] * 6 + [(201, 1), (503, 0)]
    # No answer after the file may have arrived: not sent again (the task would refuse it).
    archive.sandbox.fault("POST", "/v2/storage/{id}", drop_after_commit=True)
    result = exportable.run("export", env=archive.env)
    assert result.exit_code == 1
    (line,) = [line for line in result.output.splitlines() if line.startswith("Error:")]
    assert line.startswith("Error: upload of ") and "remote protocol error" in line
    failed = [
        e
        for e in requests_of(last_run(exportable.root))
        if e["route"] == "/v2/storage/{id}" and "status" not in e
    ]
    assert [(e["retries"], e["message"]) for e in failed] == [(0, "remote protocol error")]
