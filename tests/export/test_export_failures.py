"""Every failure of `toolkit export` is one line, exit 1, and no file at the output path;
the API key never shows."""

from __future__ import annotations

import json
import time

import pytest

from tests.support.waiting import until


def error_lines(result) -> list[str]:
    return [line for line in result.output.splitlines() if line.startswith("Error:")]


def nothing_written(project) -> bool:
    """No archive, and no temporary file of one, anywhere in the project's folder (the run
    log in .toolkit/ records the failure, and is all there is besides the project's own)."""
    state = project.root / ".toolkit"
    run_log = {p.name for p in state.iterdir()} <= {"events.jsonl", "events.lock"}
    return run_log and not [
        p
        for p in project.root.iterdir()
        if p.name not in ("site", "content", "toolkit.toml", ".toolkit")
    ]


def test_a_wrong_key_is_a_401_with_the_services_words(archive, exportable):
    env = {**archive.env, "CLOUDCONVERT_API_KEY": "cc-not-the-right-key-12345"}
    result = exportable.run("export", env=env)
    assert result.exit_code == 1
    assert error_lines(result) == [
        "Error: POST /v2/jobs: 401 Unauthenticated. (UNAUTHENTICATED); check CLOUDCONVERT_API_KEY"
    ]
    assert nothing_written(exportable)
    assert "cc-not-the-right-key-12345" not in result.output


def test_a_missing_key_is_said_before_anything_is_sent(archive, exportable):
    archive.sandbox.reset_stats()
    result = exportable.run("export", env={**archive.env, "CLOUDCONVERT_API_KEY": None})
    assert result.exit_code == 1
    assert error_lines(result)[0].startswith("Error: CLOUDCONVERT_API_KEY is not set")
    assert archive.sandbox.count(interface="archive") == 0
    assert nothing_written(exportable)


def test_no_credits_left_is_a_402(archive, exportable):
    archive.credits(0)
    result = exportable.run("export", env=archive.env)
    assert result.exit_code == 1
    assert error_lines(result) == [
        "Error: POST /v2/jobs: 402 Not enough credits: these tasks cost 1, 0 left. "
        "(CREDITS_EXCEEDED)"
    ]
    assert nothing_written(exportable)


def test_a_task_timeout_the_service_refuses_is_a_422(archive, exportable):
    exportable.write(
        "toolkit.toml",
        exportable.root.joinpath("toolkit.toml").read_text()
        + "\n[archive]\ntask_timeout = 99999999\n",
    )
    result = exportable.run("export", env=archive.env)
    assert result.exit_code == 1
    assert error_lines(result) == [
        "Error: POST /v2/jobs: 422 The given data was invalid. (INVALID_DATA): "
        "tasks.archive.timeout: The timeout must be an integer from 1 to 604800."
    ]
    assert nothing_written(exportable)
    assert archive.credits() == 1000


def test_a_task_error_gives_its_code_and_message(archive, exportable):
    archive.fault("error", code="ENGINE_CRASHED", message="The archive engine crashed.")
    result = exportable.run("export", "--format", "tar", env=archive.env)
    assert result.exit_code == 1
    assert error_lines(result) == [
        "Error: export: the archive task failed: The archive engine crashed. (ENGINE_CRASHED)"
    ]
    assert nothing_written(exportable)


def test_a_task_error_from_the_service_is_one_line_with_its_controls_escaped(archive, exportable):
    archive.fault("error", code="BAD\x1b[2J", message="Line one\nError: forged\x1b[31m")
    result = exportable.run("export", "--format", "tar", env=archive.env)
    assert result.exit_code == 1
    assert error_lines(result) == [
        "Error: export: the archive task failed: Line one\\nError: forged\\x1b[31m (BAD\\x1b[2J)"
    ]
    assert "\x1b" not in result.output
    assert nothing_written(exportable)


def test_a_truncated_download_is_detected(archive, exportable):
    archive.fault("truncate")
    result = exportable.run("export", env=archive.env)
    assert result.exit_code == 1
    # Without a Content-Length, and with no size in the export's result (the real API
    # sends none), only the archive itself tells it is cut.
    assert error_lines(result) == [
        "Error: export: the downloaded zip archive does not open: BadZipFile: File is not a "
        "zip file"
    ]
    assert nothing_written(exportable)


def test_a_task_timeout_ends_the_task_with_timeout(archive, exportable):
    exportable.write(
        "toolkit.toml",
        exportable.root.joinpath("toolkit.toml").read_text() + "\n[archive]\ntask_timeout = 1\n",
    )
    archive.fault("slow", seconds=60)
    started = time.monotonic()
    result = exportable.run("export", env=archive.env)
    assert result.exit_code == 1
    assert error_lines(result) == [
        "Error: export: the archive task failed: The task timed out after 1 seconds. (TIMEOUT)"
    ]
    assert time.monotonic() - started < 30  # ended by the timeout, not by the slow task
    assert nothing_written(exportable)
    # The worker ends, and the half-built archive is gone with it; the uploads are kept.
    until(lambda: archive.control("GET", "/files")["workers"] == 0)
    assert all(not entry["path"].endswith(".part") for entry in archive.files())


def test_the_client_deadline_gives_up_and_cancels_the_task(archive, exportable):
    exportable.write(
        "toolkit.toml",
        exportable.root.joinpath("toolkit.toml").read_text() + "\n[archive]\ndeadline = 0.5\n",
    )
    archive.fault("slow", seconds=60)
    archive.sandbox.reset_stats()
    result = exportable.run("export", env=archive.env)
    assert result.exit_code == 1
    assert error_lines(result) == [
        "Error: export: the archive was not ready within 0.5 s ([archive] deadline); the job "
        "was cancelled"
    ]
    assert nothing_written(exportable)
    assert archive.sandbox.count("DELETE", "/v2/tasks/{id}", 204) == 1


def test_a_429_is_waited_out(archive, exportable):
    archive.settings(rate_limit=1)
    archive.sandbox.reset_stats()
    result = exportable.run("export", "--json", env=archive.env)
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert archive.sandbox.count("GET", "/v2/jobs/{id}/wait", 429) >= 1
    assert report["waits"] and "429" in report["waits"][0]["reason"]
    assert (exportable.root / "site.zip").is_file()


@pytest.mark.parametrize("args", [(), ("--format", "rar")])
def test_the_key_appears_nowhere_in_output_or_logs(archive, exportable, args):
    result = exportable.run("-vv", "export", *args, env=archive.env)
    assert "HTTP Request" in result.output  # the debug log is on
    assert archive.api_key not in result.output
    config = exportable.run("config", env=archive.env)
    assert archive.api_key not in config.output


def test_an_upload_the_service_refuses_stops_the_export(archive, exportable):
    archive.sandbox.fault("POST", "/v2/storage/{id}", status=403)
    result = exportable.run("export", env=archive.env)
    assert result.exit_code == 1
    (line,) = error_lines(result)
    assert line.startswith("Error: upload of ") and line.endswith(
        "403 The signature is missing, wrong or expired. (FORBIDDEN)"
    )
    assert nothing_written(exportable)
    # The job's archive task was cancelled, so the service stops waiting for the files.
    with archive.client() as client:
        assert client.get("/v2/users/me").json()["data"]["credits"] == 1000


def test_an_output_inside_the_exported_folder_or_of_another_format_is_refused(archive, exportable):
    inside = exportable.run("export", "--output", "site/site.zip", env=archive.env)
    assert inside.exit_code == 1
    assert "cannot be written inside" in error_lines(inside)[0]
    other = exportable.run("export", "--format", "7z", "--output", "x.zip", env=archive.env)
    assert error_lines(other) == [
        "Error: export: x.zip is named for a zip archive, not 7z; use --format zip or another "
        "--output"
    ]
    assert nothing_written(exportable)


def test_a_missing_site_says_to_build_it(archive, make_project):
    project = make_project()
    result = project.run("export", env=archive.env)
    assert error_lines(result) == [
        "Error: export: site/ does not exist (run `toolkit build` first)"
    ]


def test_an_earlier_archive_stays_when_an_export_fails(archive, exportable):
    assert exportable.run("export", env=archive.env).exit_code == 0
    before = (exportable.root / "site.zip").read_bytes()
    archive.fault("truncate")
    assert exportable.run("export", env=archive.env).exit_code == 1
    assert (exportable.root / "site.zip").read_bytes() == before


def test_a_download_that_breaks_off_is_detected(archive, exportable):
    archive.sandbox.fault("GET", "/v2/storage/{id}/{index}/{filename}", drop_after_commit=True)
    result = exportable.run("export", env=archive.env)
    assert result.exit_code == 1
    (line,) = error_lines(result)
    assert line.startswith("Error: export: the download of http://127.0.0.1:")
    assert "broke off after 0 bytes" in line and "signature" not in line
    assert nothing_written(exportable)
