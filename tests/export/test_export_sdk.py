"""The official `cloudconvert` Python SDK against the sandbox, pointed at its URL and
nothing else changed: the endpoint, and the sync endpoint its waits use (the real
service's sync host is the sandbox's `/sync`). Its lists return the list, its cancel
really cancels."""

from __future__ import annotations

import tarfile
import zipfile

import cloudconvert
import pytest


@pytest.fixture
def sdk(archive):
    cloudconvert.configure(
        api_key=archive.api_key, endpoint=archive.base_url, sync_endpoint=archive.base_url + "/sync"
    )
    yield cloudconvert
    cloudconvert.configure(api_key="", endpoint="http://127.0.0.1:9", sync_endpoint="")


def test_a_job_of_uploads_an_archive_and_an_export_runs(sdk, tmp_path, capsys):
    (tmp_path / "alpha.txt").write_text("alpha\n")
    (tmp_path / "beta.bin").write_bytes(bytes(range(256)))
    job = sdk.Job.create(
        payload={
            "tasks": {
                "upload-alpha": {"operation": "import/upload"},
                "upload-beta": {"operation": "import/upload"},
                "bundle": {
                    "operation": "archive",
                    "input": ["upload-alpha", "upload-beta"],
                    "output_format": "zip",
                    "filename": "both.zip",
                },
                "export-it": {"operation": "export/url", "input": "bundle"},
            },
            "tag": "sdk-test",
        }
    )
    assert job["status"] == "waiting" and job["tag"] == "sdk-test"
    uploads = {task["name"]: task for task in job["tasks"] if task["operation"] == "import/upload"}
    assert sdk.Task.upload(file_name=str(tmp_path / "alpha.txt"), task=uploads["upload-alpha"])
    assert sdk.Task.upload(file_name=str(tmp_path / "beta.bin"), task=uploads["upload-beta"])

    job = sdk.Job.wait(id=job["id"])
    assert job["status"] == "finished"
    tasks = {task["name"]: task for task in job["tasks"]}
    assert tasks["bundle"]["result"]["files"][0]["filename"] == "both.zip"
    exported = tasks["export-it"]["result"]["files"][0]
    saved = sdk.download(filename=str(tmp_path / exported["filename"]), url=exported["url"])
    assert "Downloaded file" in capsys.readouterr().out
    with zipfile.ZipFile(saved) as bundle:
        assert {name: bundle.read(name) for name in bundle.namelist()} == {
            "alpha.txt": b"alpha\n",
            "beta.bin": bytes(range(256)),
        }


def test_single_tasks_are_created_uploaded_waited_found_and_deleted(sdk, tmp_path):
    (tmp_path / "post.md").write_text("# A post\n")
    upload = sdk.Task.create(operation="import/upload")
    assert upload["status"] == "waiting" and upload["result"]["form"]["url"]
    assert sdk.Task.upload(file_name=str(tmp_path / "post.md"), task=upload)

    bundle = sdk.Task.create(
        operation="archive",
        payload={"input": [upload["id"]], "output_format": "tar.gz", "filename": "post.tar.gz"},
    )
    assert bundle["status"] == "processing" and bundle["result"] is None
    assert bundle["payload"]["output_format"] == "tar.gz"
    bundle = sdk.Task.wait(id=bundle["id"])
    assert bundle["status"] == "finished" and bundle["ended_at"]

    export = sdk.Task.wait(
        id=sdk.Task.create(operation="export/url", payload={"input": bundle["id"]})["id"]
    )
    assert export["status"] == "finished"
    remote = export["result"]["files"][0]
    saved = sdk.download(filename=str(tmp_path / remote["filename"]), url=remote["url"])
    with tarfile.open(saved) as archive:
        member = archive.extractfile("post.md")
        assert member is not None and member.read() == b"# A post\n"

    assert sdk.Task.find(id=bundle["id"])["id"] == bundle["id"]
    assert sdk.Task.delete(id=bundle["id"]) is True
    assert sdk.Task.find(id=bundle["id"])["code"] == "NOT_FOUND"
    # The export of the deleted archive is still there; what waited for it would fail.
    assert sdk.Task.find(id=export["id"])["status"] == "finished"


def test_lists_cancel_and_retry_do_what_they_say(sdk, archive, tmp_path):
    archive.fault("slow", seconds=60)
    (tmp_path / "a.txt").write_text("a\n")
    job = sdk.Job.create(
        payload={
            "tasks": {
                "up": {"operation": "import/upload"},
                "pack": {"operation": "archive", "input": "up", "output_format": "zip"},
            },
            "tag": "sdk-lists",
        }
    )
    tasks = {task["name"]: task for task in job["tasks"]}
    assert sdk.Task.upload(file_name=str(tmp_path / "a.txt"), task=tasks["up"])

    listed = sdk.Task.all({"filter[job_id]": job["id"]})
    assert isinstance(listed, list)
    assert {task["name"] for task in listed} == {"up", "pack"}
    assert [found["id"] for found in sdk.Job.all({"filter[tag]": "sdk-lists"})] == [job["id"]]

    # Task.cancel() really cancels: the processing task ends in error, and waiting on it
    # answers at once with that.
    assert sdk.Task.cancel(tasks["pack"]["id"]) is True
    cancelled = sdk.Task.wait(id=tasks["pack"]["id"])
    assert (cancelled["status"], cancelled["code"]) == ("error", "CANCELLED")
    assert sdk.Job.wait(id=job["id"])["status"] == "error"

    archive.fault("slow", seconds=60)
    again = sdk.Task.retry(tasks["pack"]["id"])
    assert again["retry_of_task_id"] == tasks["pack"]["id"]
    assert sdk.Task.cancel(again["id"]) is True
    assert sdk.Task.find(id=again["id"])["code"] == "CANCELLED"
