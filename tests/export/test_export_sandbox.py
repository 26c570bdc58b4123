"""Interface C of the sandbox over real HTTP: the task life cycle, waits, the storage
routes, its own errors and limits, its control routes."""

from __future__ import annotations

import httpx
import pytest

from tests.support.waiting import until
from toolkit.tls import shared_context


def job_body(fmt: str = "zip", count: int = 1, **archive_fields) -> dict:
    uploads = {f"up-{n}": {"operation": "import/upload"} for n in range(count)}
    return {
        "tasks": {
            **uploads,
            "pack": {
                "operation": "archive",
                "input": list(uploads),
                "output_format": fmt,
                **archive_fields,
            },
            "out": {"operation": "export/url", "input": "pack"},
        }
    }


def by_name(job: dict) -> dict[str, dict]:
    return {task["name"]: task for task in job["tasks"]}


def uploaded_job(archive, client, fmt: str = "zip", **fields) -> dict:
    job = client.post("/v2/jobs", json=job_body(fmt, **fields)).json()["data"]
    assert archive.upload(client, by_name(job)["up-0"], "a/b.txt", b"bee").status_code == 201
    return job


def test_a_task_has_the_seed_fields_through_its_life(archive):
    with archive.client() as client:
        upload = client.post("/v2/import/upload", json={}).json()["data"]
        assert upload["status"] == "waiting" and set(upload["result"]["form"]) == {
            "url",
            "parameters",
        }
        assert archive.upload(client, upload, "notes.txt", b"some notes").status_code == 201
        created = client.post(
            "/v2/archive",
            json={
                "input": upload["id"],
                "output_format": "tar.bz2",
                "filename": "notes.tar.bz2",
                "engine": "archivetool",
                "timeout": 60,
            },
        )
        assert created.status_code == 201
        task = created.json()["data"]
        assert task["operation"] == "archive" and task["status"] == "processing"
        assert task["result"] is None and task["ended_at"] is None and task["message"] is None
        assert task["created_at"].endswith("+00:00") and task["started_at"].endswith("+00:00")
        assert task["payload"] == {
            "input": upload["id"],
            "output_format": "tar.bz2",
            "filename": "notes.tar.bz2",
            "engine": "archivetool",
            "timeout": 60,
        }
        assert task["depends_on_task_ids"] == [upload["id"]] and "depends_on_tasks" not in task
        assert (task["engine"], task["engine_version"]) == ("archivetool", "2.1")
        done = client.get(f"/v2/tasks/{task['id']}/wait").json()["data"]
        assert done["status"] == "finished" and done["ended_at"] and done["credits"] == 1
        assert done["result"]["files"] == [{"filename": "notes.tar.bz2"}]  # no size: as real
        assert client.get(f"/v2/tasks/{task['id']}").json()["data"] == done
    # The files live under the interface's folder, one folder per task.
    assert {entry["path"] for entry in archive.files()} == {upload["id"], task["id"]}


def test_a_job_waits_processes_and_finishes(archive):
    archive.fault("slow", seconds=30)
    with archive.client() as client:
        job = client.post("/v2/jobs", json=job_body()).json()["data"]
        assert job["status"] == "waiting"
        assert {t["status"] for t in job["tasks"]} == {"waiting"}
        assert archive.upload(client, by_name(job)["up-0"], "x.txt", b"x").status_code == 201
        shown = client.get(f"/v2/jobs/{job['id']}").json()["data"]
        assert shown["status"] == "processing"
        states = {name: task["status"] for name, task in by_name(shown).items()}
        assert states == {"up-0": "finished", "pack": "processing", "out": "waiting"}
        # Deleting the processing task stops its worker; what waited for it fails.
        pack = by_name(shown)["pack"]["id"]
        assert client.delete(f"/v2/tasks/{pack}").status_code == 204
        after = client.get(f"/v2/jobs/{job['id']}/wait").json()["data"]
        assert after["status"] == "error" and after["ended_at"]
        out = by_name(after)["out"]
        assert (out["status"], out["code"], out["message"]) == (
            "error",
            "INPUT_TASK_FAILED",
            "Input task has failed",
        )
        assert client.get(f"/v2/tasks/{pack}").status_code == 404
    assert archive.credits() == 1000  # given back
    until(lambda: archive.control("GET", "/files")["workers"] == 0)
    assert not [e for e in archive.files() if e["path"].startswith(pack)]


@pytest.mark.parametrize(
    "path",
    ["/v2/tasks/{id}/wait", "/sync/v2/tasks/{id}", "/v2/jobs/{job}/wait", "/sync/v2/jobs/{job}"],
)
def test_a_wait_never_answers_an_unfinished_task(archive, path):
    # Past the sandbox's cap on holding a request: a 504 to ask again, never the task as
    # it is (the real wait answers only a finished or failed one).
    archive.settings(wait_cap=0.3)
    archive.fault("slow", seconds=30)
    with archive.client() as client:
        job = uploaded_job(archive, client)
        pack = by_name(job)["pack"]["id"]
        answer = client.get(path.format(id=pack, job=job["id"]))
        assert answer.status_code == 504, answer.text
        assert answer.json()["code"] == "GATEWAY_TIMEOUT"
        assert "still running" in answer.json()["message"]
        # Cancelled meanwhile: the next wait answers the failed task at once.
        assert client.post(f"/v2/tasks/{pack}/cancel").status_code == 200
        done = client.get(path.format(id=pack, job=job["id"])).json()["data"]
        assert done["status"] == "error"


def test_a_sync_job_wait_answers_when_done(archive):
    with archive.client() as client:
        job = uploaded_job(archive, client, "7z")
        done = client.get(f"/sync/v2/jobs/{job['id']}").json()["data"]
        assert done["status"] == "finished"
        (remote,) = by_name(done)["out"]["result"]["files"]
        assert remote["filename"] == "archive.7z" and remote["url"].startswith(archive.base_url)
        assert set(remote) == {"filename", "url"}  # the real result has no size
        download = httpx.get(remote["url"], verify=shared_context())
        assert download.status_code == 200
        assert len(download.content) == int(download.headers["content-length"]) > 0
        # The download URL is the export task's secret: without its signature, a 404.
        assert httpx.get(remote["url"].split("?")[0], verify=shared_context()).status_code == 404


def test_a_timeout_ends_the_task_as_of_its_deadline(archive):
    archive.fault("slow", seconds=60)
    with archive.client() as client:
        job = uploaded_job(archive, client, timeout=1)
        done = client.get(f"/v2/jobs/{job['id']}/wait").json()["data"]
        pack = by_name(done)["pack"]
        assert (pack["status"], pack["code"]) == ("error", "TIMEOUT")
        assert pack["message"] == "The task timed out after 1 seconds."
        assert by_name(done)["out"]["code"] == "INPUT_TASK_FAILED"


def test_errors_are_the_services_body(archive):
    with archive.client(key=None) as anonymous:
        answer = anonymous.post("/v2/jobs", json=job_body())
        assert answer.status_code == 401
        assert answer.json() == {
            "message": "Unauthenticated.",
            "code": "UNAUTHENTICATED",
            "errors": {},
        }
    with archive.client() as client:
        cases = {
            "output_format": (job_body("cab"), "tasks.pack.output_format"),
            "unknown input": (
                {
                    "tasks": {
                        "pack": {"operation": "archive", "input": "nope", "output_format": "zip"}
                    }
                },
                "tasks.pack.input",
            ),
            "timeout": (job_body(timeout=0), "tasks.pack.timeout"),
            "operation": ({"tasks": {"x": {"operation": "convert"}}}, "tasks.x.operation"),
            "export input": (
                {
                    "tasks": {
                        "up": {"operation": "import/upload"},
                        "out": {"operation": "export/url", "input": "up"},
                        "pack": {"operation": "archive", "input": "out", "output_format": "zip"},
                    }
                },
                "tasks.pack.input",
            ),
            "cycle": (
                {
                    "tasks": {
                        "a": {"operation": "archive", "input": "b", "output_format": "zip"},
                        "b": {"operation": "archive", "input": "a", "output_format": "zip"},
                    }
                },
                "tasks.a.input",
            ),
        }
        for case, (body, field) in cases.items():
            answer = client.post("/v2/jobs", json=body)
            assert answer.status_code == 422, case
            assert answer.json()["code"] == "INVALID_DATA", case
            assert answer.json()["message"] == "The given data was invalid.", case
            assert list(answer.json()["errors"]) == [field], case
        assert client.post("/v2/jobs", content=b"{oops").json()["code"] == "BAD_REQUEST"
        missing = client.post("/v2/archive", json={"input": "nope", "output_format": "zip"})
        assert (
            missing.status_code == 422 and "does not exist" in missing.json()["errors"]["input"][0]
        )
        assert client.get("/v2/jobs/nope").json() == {
            "message": "Not found.",
            "code": "NOT_FOUND",
            "errors": {},
        }
        archive.fault("error")
        failed = uploaded_job(archive, client)
        pack = client.get(f"/v2/jobs/{failed['id']}/wait").json()["data"]["tasks"][1]
        assert pack["code"] == "SANDBOX_FAULT"
        again = client.post("/v2/archive", json={"input": pack["id"], "output_format": "zip"})
        assert again.status_code == 422 and "has failed" in again.json()["errors"]["input"][0]
        archive.credits(0)
        broke = client.post("/v2/jobs", json=job_body())
        assert broke.status_code == 402 and broke.json()["code"] == "CREDITS_EXCEEDED"
        # An upload task costs nothing.
        assert client.post("/v2/import/upload", json={}).status_code == 201


def test_rate_limits_are_counted_per_window_with_their_headers(archive):
    archive.settings(rate_limit=2)
    with archive.client() as client:
        first = client.post("/v2/import/upload", json={})
        assert first.headers["X-RateLimit-Limit"] == "2"
        assert first.headers["X-RateLimit-Remaining"] == "1"
        assert client.get("/v2/users/me").headers["X-RateLimit-Remaining"] == "0"
        refused = client.get("/v2/users/me")
        assert refused.status_code == 429 and refused.json()["code"] == "TOO_MANY_REQUESTS"
        assert (
            refused.headers["Retry-After"] == "1"
            and refused.headers["X-RateLimit-Remaining"] == "0"
        )
        # Uploads go to the storage, which is not rate-limited.
        assert archive.upload(client, first.json()["data"], "a.txt", b"a").status_code == 201


@pytest.mark.socket  # uploads larger than any other body, read as they arrive
def test_uploads_are_checked_and_streamed(archive):
    with archive.client() as client:
        job = client.post("/v2/jobs", json=job_body(count=6)).json()["data"]
        tasks = [by_name(job)[f"up-{n}"] for n in range(6)]
        for name in ("../up.txt", "/etc/passwd", "a/../b", "a\\b", "a//b", "./a"):
            refused = archive.upload(client, tasks[0], name, b"x")
            assert refused.status_code == 422, name
        form = tasks[0]["result"]["form"]
        raw = (
            b'--B\r\nContent-Disposition: form-data; name="signature"\r\n\r\n'
            + form["parameters"]["signature"].encode()
            + b"\r\n--B\r\nContent-Disposition: "
            b'form-data; name="file"; filename="tab\there"\r\n\r\nx\r\n--B--\r\n'
        )
        control_char = client.post(
            form["url"], content=raw, headers={"Content-Type": "multipart/form-data; boundary=B"}
        )
        assert control_char.status_code == 422
        assert (
            archive.upload(client, tasks[0], "ok.txt", b"x", signature="forged").status_code == 403
        )
        assert client.post(tasks[0]["result"]["form"]["url"], content=b"plain").status_code == 400
        # Larger than the 4 MiB any other request body may be: read as it arrives.
        big = bytes(range(256)) * (24 * 1024)
        assert archive.upload(client, tasks[0], "big.bin", big).status_code == 201
        assert archive.upload(client, tasks[0], "again.bin", b"x").status_code == 409
        # A delay fault on the streamed route holds it, then the upload lands.
        archive.sandbox.fault("POST", "/v2/storage/{id}", delay_ms=50)
        assert archive.upload(client, tasks[1], "d\u00e9j\u00e0/vu.txt", b"v").status_code == 201
        for n in range(2, 6):
            assert archive.upload(client, tasks[n], f"f{n}.txt", b"").status_code == 201
        done = client.get(f"/v2/jobs/{job['id']}/wait").json()["data"]
        assert done["status"] == "finished"
        files = by_name(done)["up-1"]["result"]["files"]
        assert files == [{"filename": "d\u00e9j\u00e0/vu.txt"}]
    kept = {entry["path"]: entry["size"] for entry in archive.files()}
    assert kept[tasks[0]["id"]] == len(big)


def test_two_files_of_one_name_fail_the_archive(archive):
    with archive.client() as client:
        job = client.post("/v2/jobs", json=job_body(count=2)).json()["data"]
        for n in range(2):
            archive.upload(client, by_name(job)[f"up-{n}"], "same.txt", b"x")
        done = client.get(f"/v2/jobs/{job['id']}/wait").json()["data"]
        assert by_name(done)["pack"]["code"] == "DUPLICATE_FILENAMES"


def test_a_reset_removes_tasks_files_and_stops_workers(archive):
    archive.fault("slow", seconds=30)
    with archive.client() as client:
        job = uploaded_job(archive, client)
        assert archive.control("GET", "/files")["workers"] == 1
        archive.sandbox.reset()
        assert client.get(f"/v2/jobs/{job['id']}").status_code == 404
    assert archive.files() == []
    until(lambda: archive.control("GET", "/files")["workers"] == 0)
    assert archive.control("GET", "/settings")["wait_cap"] == 3600.0


def test_the_interface_and_its_control_routes_are_listed(archive):
    index = httpx.get(f"{archive.base_url}/__sandbox", verify=shared_context()).json()
    assert index["interfaces"]["archive"] == {
        "prefixes": ["/v2", "/sync/v2"],
        "excludes": [],
        "control": "/__sandbox/archive",
    }
    assert "POST /__sandbox/archive/task-faults" in index["endpoints"]
    assert archive.control("GET", "/accounts") == [
        {"username": "demo", "api_key": archive.api_key, "credits": 1000}
    ]
    for bad in ({"kind": "boom"}, {"kind": "slow"}, {"kind": "error", "count": 0}):
        assert (
            httpx.post(
                f"{archive.base_url}/__sandbox/archive/task-faults",
                json=bad,
                verify=shared_context(),
            ).status_code
            == 422
        )
