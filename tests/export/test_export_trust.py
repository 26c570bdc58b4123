"""`toolkit export` keeps only an archive whose every entry holds the bytes sent, leaves
no temporary file behind a killed run for long, and says an unwritable output folder
before anything goes up (issue 20, points 3, 7 and 8)."""

from __future__ import annotations

import fcntl
import os
import tarfile

import pytest


def error_lines(result) -> list[str]:
    return [line for line in result.output.splitlines() if line.startswith("Error:")]


def content_offset(path, name: str) -> int:
    """The offset, in an uncompressed tar, of the middle byte of entry `name`'s data."""
    with tarfile.open(path) as archive:
        member = archive.getmember(name)
        return member.offset_data + member.size // 2


@pytest.mark.parametrize("fmt", ["tar", "7z", "zip"])
def test_a_same_size_archive_with_one_byte_changed_never_replaces_a_good_one(
    archive, exportable, fmt
):
    output = exportable.root / f"site.{fmt}"
    assert exportable.run("export", "--format", fmt, env=archive.env).exit_code == 0
    good = output.read_bytes()
    offset = content_offset(output, "images/cover.png") if fmt == "tar" else None
    archive.fault("corrupt", **({"offset": offset} if offset is not None else {}))
    result = exportable.run("export", "--format", fmt, env=archive.env)
    assert result.exit_code == 1, result.output
    (line,) = error_lines(result)
    assert line.startswith("Error: export: the "), line
    if fmt == "tar":  # the same size, a valid tar: only the entry's bytes tell
        assert line == (
            "Error: export: the archive's files differ in content from the files "
            "sent: 'images/cover.png'"
        )
    assert output.read_bytes() == good
    assert not [p for p in exportable.root.iterdir() if p.name.endswith(".tmp")]


def test_a_killed_downloads_leftover_is_removed_by_the_next_export(archive, exportable):
    leftover = exportable.root / ".site.zip.dead1234.tmp"
    leftover.write_bytes(b"half an archive")
    other = exportable.root / ".notes.txt.dead1234.tmp"  # not the export's: left alone
    other.write_bytes(b"x")
    # A running export's file is locked by it: never taken for a leftover.
    running = exportable.root / ".site.zip.live5678.tmp"
    running.write_bytes(b"being written")
    with running.open("rb") as held:
        fcntl.flock(held.fileno(), fcntl.LOCK_EX)
        result = exportable.run("export", env=archive.env)
        assert result.exit_code == 0, result.output
        assert running.exists()
    assert not leftover.exists()
    assert other.exists()
    assert (exportable.root / "site.zip").is_file()


def refused_before_sending(result, archive, error: str) -> None:
    """The export failed with `error` as its one error line, before a request went up."""
    assert result.exit_code == 1
    assert error_lines(result) == [error]
    assert "Traceback" not in result.output
    assert archive.sandbox.count(interface="archive") == 0
    assert archive.credits() == 1000


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only folders")
def test_an_unwritable_output_folder_is_said_before_anything_is_sent(archive, exportable):
    locked = exportable.root / "out"
    locked.mkdir()
    locked.chmod(0o500)
    archive.sandbox.reset_stats()
    try:
        result = exportable.run("export", "--output", str(locked / "site.zip"), env=archive.env)
    finally:
        locked.chmod(0o700)
    refused_before_sending(
        result,
        archive,
        f"Error: {locked}: permission denied (the "
        "archive's folder must be writable; choose another --output)",
    )
    assert list(locked.iterdir()) == []


def test_an_output_folder_that_is_a_file_is_said_before_anything_is_sent(archive, exportable):
    blocker = exportable.root / "notes.txt"
    blocker.write_text("a file, not a folder")
    archive.sandbox.reset_stats()
    result = exportable.run(
        "export", "--output", str(blocker / "out" / "site.zip"), env=archive.env
    )
    refused_before_sending(
        result,
        archive,
        f"Error: {blocker / 'out'}: not a directory (the "
        "archive's folder must be writable; choose another --output)",
    )
