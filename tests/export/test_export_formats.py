"""`toolkit export` against the sandbox: each format round-trips, files + 3 requests (+ 1
to see that the service kept a name with folders)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.support.export_helpers import tree, unpack

FORMATS = ["zip", "tar", "tar.gz", "tar.bz2", "7z"]


@pytest.mark.parametrize("fmt", FORMATS)
def test_each_format_round_trips_the_site(archive, exportable, tmp_path, fmt):
    result = exportable.run("export", "--format", fmt, env=archive.env)
    assert result.exit_code == 0, result.output
    output = exportable.root / f"site.{fmt}"
    assert (
        f"site.{fmt}: {output.stat().st_size:,} bytes, 7 entries ({fmt}, verified)" in result.output
    )
    assert unpack(output, fmt, tmp_path / "unpacked") == tree(exportable.root / "site")
    # Nothing else was left beside it (the temporary file was renamed into place), but the
    # run log that recorded the export.
    assert sorted(p.name for p in exportable.root.iterdir()) == [
        ".toolkit",
        "content",
        "site",
        f"site.{fmt}",
        "toolkit.toml",
    ]
    events = (exportable.root / ".toolkit" / "events.jsonl").read_text()
    assert '"event":"export"' in events and f'"action":"{fmt}"' in events


def test_the_posts_export_leaves_hidden_files_out(archive, exportable, tmp_path):
    output = tmp_path / "out" / "posts.tar.gz"
    result = exportable.run(
        "export",
        "--source",
        "content",
        "--format",
        "tar.gz",
        "--output",
        str(output),
        env=archive.env,
    )
    assert result.exit_code == 0, result.output
    sent = tree(exportable.content)
    del sent[".DS_Store"]
    assert unpack(output, "tar.gz", tmp_path / "unpacked") == sent
    assert set(sent) == {"hello.md", "second.md", "images/cover.png"}


def test_requests_are_the_files_plus_three_and_one_look_at_a_kept_name(archive, exportable):
    archive.sandbox.reset_stats()
    result = exportable.run("export", "--json", env=archive.env)
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["entries"] == 7 and report["format"] == "zip" and report["listed"] is True
    assert report["requests"] == 7 + 3 + 1
    served = {
        (row["method"], row["route"], row["status"]): row["count"]
        for row in archive.sandbox.stats()
        if row["interface"] == "archive"
    }
    assert served == {
        ("POST", "/v2/jobs", 201): 1,
        ("POST", "/v2/storage/{id}", 201): 7,
        ("GET", "/v2/jobs/{id}", 200): 1,
        ("GET", "/v2/jobs/{id}/wait", 200): 1,
        ("GET", "/v2/storage/{id}/{index}/{filename}", 200): 1,
    }
    assert report["source_bytes"] == sum(
        len(data) for data in tree(exportable.root / "site").values()
    )


def test_a_rar_export_ends_in_the_documented_error(archive, exportable):
    result = exportable.run("export", "--format", "rar", env=archive.env)
    assert result.exit_code == 1
    (line,) = [line for line in result.output.splitlines() if line.startswith("Error:")]
    assert line == (
        "Error: export: the archive task failed: This sandbox cannot write RAR archives: only "
        "the proprietary rar tool does. Choose one of zip, 7z, tar, tar.gz, tar.bz2. "
        "(FORMAT_NOT_AVAILABLE)"
    )
    assert not (exportable.root / "site.rar").exists()
    assert archive.credits() == 1000  # a failed task costs nothing


@pytest.mark.e2e  # a process whose modules never held py7zr
def test_a_7z_export_without_py7zr_says_how_to_install_the_extra(archive, exportable):
    """py7zr is the optional `7z` extra: without it (its import made to fail in a fresh
    interpreter running the real CLI), a 7z export is refused before anything is sent."""
    archive.sandbox.reset_stats()
    blocked = (
        "import sys; sys.modules['py7zr'] = None; "  # import fails
        "from toolkit.__main__ import run; run()"
    )
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            blocked,
            "--config",
            str(exportable.root / "toolkit.toml"),
            "export",
            "--format",
            "7z",
        ],
        cwd=exportable.root,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env={**os.environ, **archive.env},
    )
    assert done.returncode == 1, done.stderr
    assert done.stderr.splitlines() == [
        "Error: export: a 7z archive is checked with py7zr, which is not installed (install "
        "toolkit with its 7z extra: pipx install --force "
        "'toolkit[7z] @ git+https://github.com/toolkit-docs/toolkit', or "
        "pip install -e '.[7z]' in a clone)"
    ]
    assert "Traceback" not in done.stdout + done.stderr
    assert not (exportable.root / "site.7z").exists()
    assert not [row for row in archive.sandbox.stats() if row["interface"] == "archive"]
    assert archive.credits() == 1000


def test_progress_is_told_phase_by_phase(archive, exportable):
    result = exportable.run("export", env=archive.env)
    assert result.exit_code == 0, result.output
    lines = result.stderr.splitlines()
    assert lines[:3] == [
        "uploading 7 files (0.0 MB)",
        "waiting for the archive",
        "downloading the archive",
    ]
    assert lines[3].startswith("exported site (0.0 MB) in ") and lines[3].endswith(
        " with 11 requests"
    )


def test_quiet_prints_the_archive_only(archive, exportable):
    result = exportable.run("export", "-q", env=archive.env)
    assert result.exit_code == 0, result.output
    assert result.stderr == ""
    assert result.stdout.startswith("site.zip: ")
