"""Interface C as CloudConvert API v2 documents it (issue 22, points 12 to 17): task
names, lists with filters and pages, cancel, retry, webhooks, the task and user fields,
what an uploaded name keeps of its folders, and storage redirects."""

from __future__ import annotations

import hashlib
import hmac
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx
import pytest

from tests.support.waiting import until
from toolkit.tls import shared_context


def job_body(fmt: str = "zip", count: int = 1, **fields) -> dict:
    uploads = {f"up-{n}": {"operation": "import/upload"} for n in range(count)}
    return {
        "tasks": {
            **uploads,
            "pack": {"operation": "archive", "input": list(uploads), "output_format": fmt},
            "out": {"operation": "export/url", "input": "pack"},
        },
        **fields,
    }


def by_name(job: dict) -> dict[str, dict]:
    return {task["name"]: task for task in job["tasks"]}


def uploaded(archive, client, name: str = "a.txt", **fields) -> dict:
    job = client.post("/v2/jobs", json=job_body(**fields)).json()["data"]
    assert archive.upload(client, by_name(job)["up-0"], name, b"bee").status_code == 201
    return job


# --- 12: task names -----------------------------------------------------------------


@pytest.mark.parametrize("name", ["file 1", "a/b", "caf\u00e9", "x.y", "a:b"])
def test_a_task_name_holds_letters_digits_dash_and_underscore_only(archive, name):
    with archive.client() as client:
        answer = client.post("/v2/jobs", json={"tasks": {name: {"operation": "import/upload"}}})
        assert answer.status_code == 422
        assert list(answer.json()["errors"]) == ["tasks"]
        fine = client.post(
            "/v2/jobs", json={"tasks": {"Up_load-1": {"operation": "import/upload"}}}
        )
        assert fine.status_code == 201


# --- 14: lists, cancel, retry, webhooks ---------------------------------------------


def test_jobs_and_tasks_are_listed_with_filters_and_pages(archive):
    with archive.client() as client:
        ids = [
            client.post("/v2/jobs", json=job_body(tag=tag)).json()["data"]["id"]
            for tag in ("one", "two", "two")
        ]
        listed = client.get("/v2/jobs", params={"filter[tag]": "two", "per_page": 1}).json()
        assert [job["id"] for job in listed["data"]] == [ids[2]]  # newest first
        assert "tasks" not in listed["data"][0]
        assert listed["meta"]["per_page"] == 1 and listed["meta"]["current_page"] == 1
        assert listed["links"]["prev"] is None
        second = client.get(listed["links"]["next"].removeprefix(archive.base_url)).json()
        assert [job["id"] for job in second["data"]] == [ids[1]]
        assert second["links"]["next"] is None
        waiting = client.get(
            "/v2/jobs", params={"filter[status]": "waiting", "include": "tasks"}
        ).json()["data"]
        assert {job["id"] for job in waiting} == set(ids) and len(waiting[0]["tasks"]) == 3
        assert client.get("/v2/jobs", params={"filter[status]": "finished"}).json()["data"] == []
        tasks = client.get(
            "/v2/tasks", params={"filter[job_id]": ids[0], "filter[operation]": "archive"}
        ).json()
        assert [task["name"] for task in tasks["data"]] == ["pack"]
        assert client.get("/v2/tasks", params={"filter[nope]": "x"}).status_code == 422
        assert client.get("/v2/tasks", params={"per_page": 1000}).status_code == 422


def test_a_cancelled_task_ends_in_error_and_charges_nothing(archive):
    archive.fault("slow", seconds=60)
    with archive.client() as client:
        job = uploaded(archive, client)
        pack = by_name(job)["pack"]["id"]
        assert archive.credits() == 999  # reserved while it may still run
        cancelled = client.post(f"/v2/tasks/{pack}/cancel")
        assert cancelled.status_code == 200
        assert (cancelled.json()["data"]["status"], cancelled.json()["data"]["code"]) == (
            "error",
            "CANCELLED",
        )
        done = client.get(f"/v2/jobs/{job['id']}/wait").json()["data"]
        assert done["status"] == "error"
        assert by_name(done)["out"]["code"] == "INPUT_TASK_FAILED"
        assert client.post(f"/v2/tasks/{pack}/cancel").status_code == 409
    assert archive.credits() == 1000
    until(lambda: archive.control("GET", "/files")["workers"] == 0)


def test_a_failed_task_is_retried_as_a_new_task(archive):
    archive.fault("error")
    with archive.client() as client:
        job = uploaded(archive, client)
        failed = client.get(f"/v2/jobs/{job['id']}/wait").json()["data"]
        pack, out = by_name(failed)["pack"], by_name(failed)["out"]
        assert pack["code"] == "SANDBOX_FAULT"
        retried = client.post(f"/v2/tasks/{pack['id']}/retry")
        assert retried.status_code == 201
        again = retried.json()["data"]
        assert again["id"] != pack["id"] and again["retry_of_task_id"] == pack["id"]
        assert (again["name"], again["job_id"]) == ("pack", job["id"])
        assert client.get(f"/v2/tasks/{again['id']}/wait").json()["data"]["status"] == "finished"
        # The export that failed because of it, retried, takes the retry as its input.
        export = client.post(f"/v2/tasks/{out['id']}/retry").json()["data"]
        assert export["depends_on_task_ids"] == [again["id"]]
        done = client.get(f"/v2/jobs/{job['id']}/wait").json()["data"]
        assert done["status"] == "finished"
        shown = client.get(f"/v2/tasks/{pack['id']}", params={"include": "retries,job"})
        assert [task["id"] for task in shown.json()["data"]["retries"]] == [again["id"]]
        assert shown.json()["data"]["job"]["id"] == job["id"]
        assert client.post(f"/v2/tasks/{again['id']}/retry").status_code == 201
        waiting = client.post("/v2/import/upload", json={}).json()["data"]
        assert client.post(f"/v2/tasks/{waiting['id']}/retry").status_code == 409


class _Receiver(BaseHTTPRequestHandler):
    got: list[tuple[dict, bytes]] = []
    arrived = threading.Event()

    def do_POST(self) -> None:  # http.server's name
        body = self.rfile.read(int(self.headers["Content-Length"]))
        type(self).got.append((dict(self.headers), body))
        self.send_response(204)
        self.end_headers()
        type(self).arrived.set()

    def log_message(self, *args: object) -> None:
        pass


def test_a_jobs_webhook_is_told_when_it_ends_signed_with_the_secret(archive):
    _Receiver.got, _Receiver.arrived = [], threading.Event()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Receiver)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/hook?x=1"
        with archive.client() as client:
            job = uploaded(archive, client, webhook_url=url)
            assert client.get(f"/v2/jobs/{job['id']}/wait").json()["data"]["status"] == "finished"
            assert _Receiver.arrived.wait(10)
            refused = client.post("/v2/jobs", json=job_body(webhook_url="https://example.com/h"))
            assert refused.status_code == 422 and "webhook_url" in refused.json()["errors"]
    finally:
        server.shutdown()
        server.server_close()
    ((headers, body),) = _Receiver.got
    secret = archive.control("GET", "/webhooks")["signing_secret"]
    assert (
        headers["CloudConvert-Signature"]
        == hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
    )
    event = json.loads(body)
    assert event["event"] == "job.finished" and event["job"]["id"] == job["id"]
    # The official SDK's own check agrees.
    import cloudconvert

    assert cloudconvert.Webhook.verify(body.decode(), headers["CloudConvert-Signature"], secret)


# --- 15: fields ---------------------------------------------------------------------


def test_the_fields_are_the_real_apis(archive):
    with archive.client() as client:
        for version in ("2016", "2.1", "3.0.1"):
            task = client.post(
                "/v2/jobs",
                json={
                    "tasks": {
                        "up": {"operation": "import/upload"},
                        "pack": {
                            "operation": "archive",
                            "input": "up",
                            "output_format": "zip",
                            "engine": "archivetool",
                            "engine_version": version,
                        },
                    }
                },
            )
            assert task.status_code == 201, task.text
            assert by_name(task.json()["data"])["pack"]["engine_version"] == version
        for bad in ("latest", "v2", 2):
            refused = client.post(
                "/v2/archive", json={"input": "x", "output_format": "zip", "engine_version": bad}
            )
            assert "engine_version" in refused.json()["errors"], bad
        job = uploaded(archive, client)
        done = client.get(f"/v2/jobs/{job['id']}/wait").json()["data"]
        for task in done["tasks"]:
            assert task["percent"] == 100 and task["host_name"] == "sandbox"
            assert task["retry_of_task_id"] is None and "storage" in task
            assert all(set(file) <= {"filename", "url"} for file in task["result"]["files"])
        me = client.get("/v2/users/me").json()["data"]
        assert set(me) == {"id", "username", "email", "created_at", "credits", "links"}
        assert me["email"] == "demo@example.com"


# --- 16: a / in an uploaded name ----------------------------------------------------


def test_an_uploaded_name_keeps_its_folders_or_not_as_set(archive):
    with archive.client() as client:
        kept = client.get(f"/v2/jobs/{uploaded(archive, client, 'a/b.txt')['id']}/wait")
        assert by_name(kept.json()["data"])["up-0"]["result"]["files"] == [{"filename": "a/b.txt"}]
        archive.settings(upload_names="basename")
        cut = client.get(f"/v2/jobs/{uploaded(archive, client, 'a/b.txt')['id']}/wait")
        assert by_name(cut.json()["data"])["up-0"]["result"]["files"] == [{"filename": "b.txt"}]


def test_export_refuses_a_service_that_drops_folders_before_the_archive_runs(archive, exportable):
    archive.settings(upload_names="basename")
    archive.sandbox.reset_stats()
    result = exportable.run("export", env=archive.env)
    assert result.exit_code == 1
    lines = [line for line in result.output.splitlines() if line.startswith("Error:")]
    assert lines == [
        "Error: export: the archive service kept images/cover.png as cover.png: it does not "
        "keep the folders of uploaded names, so the archive would lose its layout; nothing "
        "was archived (the archive task was cancelled)"
    ]
    assert not (exportable.root / "site.zip").exists()
    assert archive.credits() == 1000
    assert archive.sandbox.count("POST", "/v2/storage/{id}", 201) == 1  # the one looked at
    # A folder without subfolders exports whichever way.
    import shutil

    for folder in ("images", "posts"):
        shutil.rmtree(exportable.root / "site" / folder)
    result = exportable.run("export", env=archive.env)
    assert result.exit_code == 0, result.output


# --- 17: storage redirects ----------------------------------------------------------


def test_uploads_and_the_download_follow_the_storages_redirects_to_another_origin(
    archive, exportable
):
    archive.settings(storage_redirect=True)
    archive.sandbox.reset_stats()
    result = exportable.run("export", env=archive.env)
    assert result.exit_code == 0, result.output
    assert (exportable.root / "site.zip").is_file()
    # Each upload form answered 307: the whole form went again to the other origin.
    assert archive.sandbox.count("POST", "/v2/storage/{id}", 307) == 7
    assert archive.sandbox.count("POST", "/v2/storage/{id}", 201) == 7
    # The signed URL answered 302, and the file came from the other origin; a request
    # there carrying the key would have been refused (a signed URL takes no other).
    assert archive.sandbox.count("GET", "/v2/storage/{id}/{index}/{filename}", 302) == 1
    assert archive.sandbox.count("GET", "/v2/storage/{id}/{index}/{filename}", 200) == 1
    assert archive.sandbox.count("GET", "/v2/storage/{id}/{index}/{filename}", 400) == 0


def test_a_signed_download_with_a_key_is_refused(archive):
    with archive.client() as client:
        job = uploaded(archive, client)
        done = client.get(f"/v2/jobs/{job['id']}/wait").json()["data"]
        url = by_name(done)["out"]["result"]["files"][0]["url"]
        assert httpx.get(url, verify=shared_context()).status_code == 200
        assert client.get(url).status_code == 400  # the client sends its Authorization
