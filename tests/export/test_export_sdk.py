"""The official `cloudconvert` Python SDK against the sandbox, pointed at its URL and
nothing else changed: the endpoint, and the sync endpoint its waits use (the real
service's sync host is the sandbox's `/sync`)."""

from __future__ import annotations

import tarfile
import zipfile

import cloudconvert
import pytest


@pytest.fixture
def sdk(archive):
    cloudconvert.configure(api_key=archive.api_key, endpoint=archive.base_url,
                           sync_endpoint=archive.base_url + "/sync")
    yield cloudconvert
    cloudconvert.configure(api_key="", endpoint="http://127.0.0.1:9", sync_endpoint="")


def test_a_job_of_uploads_an_archive_and_an_export_runs(sdk, tmp_path, capsys):
    (tmp_path / "alpha.txt").write_text("alpha\n")
    (tmp_path / "beta.bin").write_bytes(bytes(range(256)))
    job = sdk.Job.create(payload={"tasks": {
        "upload-alpha": {"operation": "import/upload"},
        "upload-beta": {"operation": "import/upload"},
        "bundle": {"operation": "archive", "input": ["upload-alpha", "upload-beta"],
                   "output_format": "zip", "filename": "both.zip"},
        "export-it": {"operation": "export/url", "input": "bundle"},
    }, "tag": "sdk-test"})
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
            "alpha.txt": b"alpha\n", "beta.bin": bytes(range(256))}


def test_single_tasks_are_created_uploaded_waited_found_and_deleted(sdk, tmp_path):
    (tmp_path / "post.md").write_text("# A post\n")
    upload = sdk.Task.create(operation="import/upload")
    assert upload["status"] == "waiting" and upload["result"]["form"]["url"]
    assert sdk.Task.upload(file_name=str(tmp_path / "post.md"), task=upload)

    bundle = sdk.Task.create(operation="archive", payload={
        "input": [upload["id"]], "output_format": "tar.gz", "filename": "post.tar.gz"})
    assert bundle["status"] == "processing" and bundle["result"] is None
    assert bundle["payload"]["output_format"] == "tar.gz"
    bundle = sdk.Task.wait(id=bundle["id"])
    assert bundle["status"] == "finished" and bundle["ended_at"]

    export = sdk.Task.wait(id=sdk.Task.create(operation="export/url",
                                              payload={"input": bundle["id"]})["id"])
    assert export["status"] == "finished"
    remote = export["result"]["files"][0]
    saved = sdk.download(filename=str(tmp_path / remote["filename"]), url=remote["url"])
    with tarfile.open(saved) as archive:
        assert archive.extractfile("post.md").read() == b"# A post\n"

    assert sdk.Task.find(id=bundle["id"])["id"] == bundle["id"]
    assert sdk.Task.delete(id=bundle["id"]) is True
    assert sdk.Task.find(id=bundle["id"])["code"] == "NOT_FOUND"
    # The export of the deleted archive is still there; what waited for it would fail.
    assert sdk.Task.find(id=export["id"])["status"] == "finished"
