"""Interface C against CloudConvert's API v2 docs and SDKs: account webhooks
(`/v2/webhooks`, the Java SDK's `WebhooksResource`), the sync API's job creation
(`POST` on the sync host's `/v2/jobs`), `include=depends_on_tasks` (the PHP SDK's
task fixture), `inline` exports, an upload task's waiting message (the import docs'
example) and the upload form's field order ("file always needs to be the last post
parameter")."""

from __future__ import annotations

import hashlib
import hmac
import json
import queue
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from tests.support.waiting import until


def job_body(**fields) -> dict:
    return {
        "tasks": {
            "up": {"operation": "import/upload"},
            "pack": {"operation": "archive", "input": ["up"], "output_format": "zip"},
            "out": {"operation": "export/url", "input": "pack", **fields},
        }
    }


def by_name(job: dict) -> dict[str, dict]:
    return {task["name"]: task for task in job["tasks"]}


class _Receiver(BaseHTTPRequestHandler):
    got: queue.Queue[tuple[str, dict, bytes]] = queue.Queue()

    def do_POST(self) -> None:  # http.server's name
        body = self.rfile.read(int(self.headers["Content-Length"]))
        type(self).got.put((self.path, dict(self.headers), body))
        self.send_response(204)
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def receiver() -> Iterator[str]:
    """A loopback HTTP server that keeps what is posted to it; its base URL."""
    _Receiver.got = queue.Queue()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Receiver)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_account_webhooks_are_created_listed_told_and_deleted(archive, receiver):
    with archive.client() as client:
        created = client.post(
            "/v2/webhooks",
            json={"url": f"{receiver}/all", "events": ["job.created", "job.finished"]},
        )
        assert created.status_code == 201, created.text
        hook = created.json()["data"]
        assert set(hook) == {
            "id",
            "url",
            "events",
            "disabled",
            "failing",
            "signing_secret",
            "created_at",
            "updated_at",
            "links",
        }
        assert (hook["events"], hook["disabled"], hook["failing"]) == (
            ["job.created", "job.finished"],
            False,
            False,
        )
        failed_only = client.post(
            "/v2/webhooks", json={"url": f"{receiver}/failed", "events": ["job.failed"]}
        ).json()["data"]
        for path in ("/v2/webhooks", "/v2/users/me/webhooks"):
            listed = client.get(path).json()
            assert [item["id"] for item in listed["data"]] == [failed_only["id"], hook["id"]]
            assert listed["meta"]["current_page"] == 1
        filtered = client.get("/v2/users/me/webhooks", params={"filter[url]": f"{receiver}/all"})
        assert [item["id"] for item in filtered.json()["data"]] == [hook["id"]]
        for bad in (
            {"url": f"{receiver}/x", "events": ["job.exploded"]},
            {"url": f"{receiver}/x", "events": []},
            {"events": ["job.created"]},
            {"url": "https://example.com/hook", "events": ["job.created"]},
        ):
            refused = client.post("/v2/webhooks", json=bad)
            assert refused.status_code == 422, bad

        job = client.post("/v2/jobs", json=job_body()).json()["data"]
        assert archive.upload(client, by_name(job)["up"], "a.txt", b"a").status_code == 201
        assert client.get(f"/v2/jobs/{job['id']}/wait").json()["data"]["status"] == "finished"
        told = [_Receiver.got.get(timeout=10) for _ in range(2)]
        events = {}
        for path, headers, body in told:
            assert path == "/all"
            signature = hmac.new(hook["signing_secret"].encode(), body, hashlib.sha256)
            assert headers["CloudConvert-Signature"] == signature.hexdigest()
            event = json.loads(body)
            events[event["event"]] = event["job"]["id"]
        assert events == {"job.created": job["id"], "job.finished": job["id"]}

        assert client.delete(f"/v2/webhooks/{hook['id']}").status_code == 204
        assert client.delete(f"/v2/webhooks/{hook['id']}").status_code == 404
        assert [item["id"] for item in client.get("/v2/webhooks").json()["data"]] == [
            failed_only["id"]
        ]


def test_the_sync_api_creates_a_job_and_answers_it_finished(archive):
    answers: queue.Queue = queue.Queue()

    def create() -> None:
        with archive.client() as sync:
            answers.put(sync.post("/sync/v2/jobs", json=job_body()))

    holder = threading.Thread(target=create, daemon=True)
    holder.start()
    with archive.client() as client:
        # The job's upload task, found while the sync request holds: its file sent.
        waiting: list[dict] = []

        def listed() -> bool:
            found = client.get("/v2/tasks", params={"filter[operation]": "import/upload"}).json()[
                "data"
            ]
            waiting[:] = found
            return bool(found)

        until(listed, timeout=10)
        assert answers.empty()  # held: the job is not done
        assert archive.upload(client, waiting[0], "a.txt", b"a").status_code == 201
        holder.join(timeout=30)
        answer = answers.get(timeout=1)
        assert answer.status_code == 201, answer.text
        job = answer.json()["data"]
        assert job["status"] == "finished" and job["ended_at"]
        assert [task["status"] for task in job["tasks"]] == ["finished"] * 3
        assert by_name(job)["out"]["result"]["files"][0]["filename"] == "archive.zip"
        refused = client.post("/sync/v2/jobs", json={"tasks": {}})
        assert refused.status_code == 422


def test_include_depends_on_tasks_gives_the_input_tasks(archive):
    with archive.client() as client:
        job = client.post("/v2/jobs", json=job_body()).json()["data"]
        tasks = by_name(job)
        plain = client.get(f"/v2/tasks/{tasks['pack']['id']}").json()["data"]
        assert plain["depends_on_task_ids"] == [tasks["up"]["id"]]
        assert "depends_on_tasks" not in plain
        shown = client.get(
            f"/v2/tasks/{tasks['pack']['id']}", params={"include": "depends_on_tasks"}
        ).json()["data"]
        (upload,) = shown["depends_on_tasks"]
        assert upload["id"] == tasks["up"]["id"] and upload["operation"] == "import/upload"
        listed = client.get("/v2/tasks", params={"include": "depends_on_tasks"}).json()["data"]
        assert {task["id"]: task["depends_on_tasks"] for task in listed}[tasks["up"]["id"]] == []


def test_a_waiting_upload_says_so(archive):
    with archive.client() as client:
        upload = client.post("/v2/import/upload", json={}).json()["data"]
        assert (upload["status"], upload["message"]) == ("waiting", "Waiting for upload")
        assert archive.upload(client, upload, "a.txt", b"a").status_code == 201
        done = client.get(f"/v2/tasks/{upload['id']}").json()["data"]
        assert (done["status"], done["message"]) == ("finished", None)


def test_an_inline_export_is_downloaded_inline(archive):
    with archive.client() as client:
        for inline, disposition in ((True, "inline"), (False, "attachment"), (None, "attachment")):
            fields = {} if inline is None else {"inline": inline}
            job = client.post("/v2/jobs", json=job_body(**fields)).json()["data"]
            assert archive.upload(client, by_name(job)["up"], "a.txt", b"a").status_code == 201
            done = client.get(f"/v2/jobs/{job['id']}/wait").json()["data"]
            (file,) = by_name(done)["out"]["result"]["files"]
            with archive.client(None) as anonymous:
                got = anonymous.get(file["url"])
            assert got.status_code == 200
            assert got.headers["Content-Disposition"].startswith(f"{disposition}; filename*=")
        refused = client.post("/v2/jobs", json=job_body(inline="yes"))
        assert refused.status_code == 422 and "tasks.out.inline" in refused.json()["errors"]


def test_a_file_sent_before_the_forms_parameters_is_refused(archive):
    with archive.client() as client:
        upload = client.post("/v2/import/upload", json={}).json()["data"]
        form = upload["result"]["form"]
        signature = form["parameters"]["signature"].encode()
        raw = (
            b'--B\r\nContent-Disposition: form-data; name="file"; filename="a.txt"\r\n\r\n'
            b'a\r\n--B\r\nContent-Disposition: form-data; name="signature"\r\n\r\n'
            + signature
            + b"\r\n--B--\r\n"
        )
        refused = client.post(
            form["url"], content=raw, headers={"Content-Type": "multipart/form-data; boundary=B"}
        )
        assert refused.status_code == 400
        assert refused.json()["code"] == "INVALID_ARGUMENT"
        assert refused.json()["message"] == (
            "Bucket POST must contain a field named 'signature'.  If it is specified, please "
            "check the order of the fields."
        )
        shown = client.get(f"/v2/tasks/{upload['id']}").json()["data"]
        assert shown["status"] == "waiting"  # nothing kept: the form can be sent again
        assert archive.upload(client, upload, "a.txt", b"a").status_code == 201


def test_an_upload_tasks_redirect_sends_the_browser_on(archive):
    """`redirect` on `import/upload` (import docs): a form parameter, and where the
    storage sends the browser once the file is in."""
    with archive.client() as client:
        target = "https://example.com/uploaded?x=1"
        upload = client.post("/v2/import/upload", json={"redirect": target}).json()["data"]
        assert upload["result"]["form"]["parameters"]["redirect"] == target
        sent = archive.upload(client, upload, "a.txt", b"a")
        assert (sent.status_code, sent.headers["location"]) == (303, target)
        assert client.get(f"/v2/tasks/{upload['id']}").json()["data"]["status"] == "finished"
        plain = client.post("/v2/import/upload", json={}).json()["data"]
        assert "redirect" not in plain["result"]["form"]["parameters"]
        refused = client.post("/v2/import/upload", json={"redirect": "javascript:alert(1)"})
        assert refused.status_code == 422 and "redirect" in refused.json()["errors"]
