"""Every OS error a command meets (a read-only folder, a full disk, a file where a folder
should be) is one `Error: <path>: <what> (<hint>)` line and exit 1, with nothing lost.

Folders are made read-only for real: tests run as root here, and permissions alone do not
stop root, so a read-only bind mount of the folder onto itself is used (permissions when
not root); a full disk is a small tmpfs filled up."""

from __future__ import annotations

import contextlib
import os
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.sync_helpers import SYNC_CONFIG, titles

ROOT = os.geteuid() == 0


def _mount(*args: str) -> None:
    subprocess.run(["mount", *args], check=True, capture_output=True)


def _can_mount() -> bool:
    if not ROOT:
        return False
    probe = Path(tempfile.mkdtemp())
    try:
        _mount("--bind", str(probe), str(probe))
    except (OSError, subprocess.CalledProcessError):
        return False
    else:
        subprocess.run(["umount", str(probe)], check=False, capture_output=True)
        return True
    finally:
        probe.rmdir()


MOUNT = _can_mount()
needs_mount = pytest.mark.skipif(not MOUNT, reason="needs root with mount (a full tmpfs)")


@contextlib.contextmanager
def read_only(folder: Path) -> Iterator[None]:
    """`folder` cannot be written, also by root, for the block."""
    folder.mkdir(parents=True, exist_ok=True)
    if MOUNT:
        _mount("--bind", str(folder), str(folder))
        try:
            _mount("-o", "remount,bind,ro", str(folder))
            yield
        finally:
            subprocess.run(["umount", "-l", str(folder)], check=True)
    elif not ROOT:
        mode = folder.stat().st_mode
        folder.chmod(0o555)
        try:
            yield
        finally:
            folder.chmod(mode)
    else:
        pytest.skip("root without mount: nothing makes a folder read-only for it")


@contextlib.contextmanager
def small_disk(folder: Path) -> Iterator[Path]:
    """A 2 MiB tmpfs at `folder` for the block."""
    folder.mkdir(parents=True)
    _mount("-t", "tmpfs", "-o", "size=2m", "tmpfs", str(folder))
    try:
        yield folder
    finally:
        subprocess.run(["umount", "-l", str(folder)], check=True)


def fill(disk: Path) -> None:
    """Write a file until the disk is full."""
    with open(disk / "filler", "wb") as filler:
        with contextlib.suppress(OSError):
            while True:
                filler.write(b"\0" * 65536)
                filler.flush()


def one_error(result, *words: str) -> str:
    """The run's one `Error:` line, which must hold each of `words`; no traceback."""
    assert result.exit_code == 1, result.output
    assert "Traceback" not in result.output
    errors = [line for line in result.output.splitlines() if line.startswith("Error:")]
    assert len(errors) == 1, result.output
    for word in words:
        assert word in errors[0], result.output
    return errors[0]


def snapshot(folder: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()
    }


@pytest.mark.e2e
def test_new_in_a_read_only_content_folder(site):
    site.post("first", "First")
    with read_only(site.content):
        result = site.run("new", "A second post")
        line = one_error(result, "content", "(")
    assert line.startswith("Error: content"), line
    assert [p.name for p in site.content.iterdir()] == ["first.md"]


@pytest.mark.e2e
def test_build_into_a_read_only_output_folder_keeps_the_last_site(site):
    site.post("hello", "Hello", published=True)
    assert site.run("build").exit_code == 0
    before = snapshot(site.root / "site")
    site.post("hello", "Hello again", published=True)
    with read_only(site.root / "site"):
        result = site.run("build")
        one_error(result, "site", "read-only" if MOUNT else "permission")
    assert snapshot(site.root / "site") == before


def test_build_with_an_output_folder_under_a_file(site):
    site.post("hello", "Hello", published=True)
    (site.root / "elsewhere").write_text("not a folder")
    result = site.run("build", "--out", "elsewhere/site")
    one_error(result, "elsewhere")
    assert (site.root / "elsewhere").read_text() == "not a folder"


@pytest.mark.e2e
def test_build_with_a_read_only_toolkit_folder(site):
    site.post("hello", "Hello", published=True)
    assert site.run("build").exit_code == 0
    site.post("hello", "Hello again", published=True)
    with read_only(site.root / ".toolkit"):
        result = site.run("build")
        one_error(result, ".toolkit/build/")
    assert site.run("build").exit_code == 0  # writable again: the next build catches up
    assert "Hello again" in (site.root / "site" / "hello" / "index.html").read_text()


@pytest.mark.e2e
@needs_mount
def test_build_on_a_full_disk(tmp_path, make_project):
    with small_disk(tmp_path / "disk") as disk:
        project = make_project(SYNC_CONFIG, name="disk/project")
        for number in range(5):
            project.post(f"post-{number}", f"Post {number}", "Words. " * 2000, published=True)
        fill(disk)
        result = project.run("build")
        one_error(result, "site/", "no space left on device", "disk is full")


def test_publish_with_a_read_only_toolkit_folder_writes_nothing(site, env, sandbox):
    site.post("fresh", "A post about read-only folders", published=False)
    (site.root / ".toolkit").mkdir()
    with read_only(site.root / ".toolkit"):
        result = site.run("publish", env=env)
        one_error(result, ".toolkit")
    assert "A post about read-only folders" not in titles(sandbox)


@needs_mount
def test_publish_on_a_full_disk_loses_nothing(tmp_path, make_project, env, sandbox):
    """The lock cannot be saved: the run says so in one line, and the next run, with
    space again, finds the article it made instead of making another."""
    with small_disk(tmp_path / "disk") as disk:
        project = make_project(SYNC_CONFIG, name="disk/project")
        project.post("fresh", "A post about full disks", published=False)
        assert project.run("check").exit_code == 0  # .toolkit/ is made while there is room
        fill(disk)
        result = project.run("publish", env=env)
        one_error(result, ".toolkit/", "no space left on device")
        (disk / "filler").unlink()
        again = project.run("publish", env=env)
        assert again.exit_code == 0, again.output
    assert titles(sandbox).count("A post about full disks") == 1


def test_pull_into_a_read_only_content_folder(site, env, sandbox):
    with read_only(site.content):
        result = site.run("pull", env=env)
        one_error(result, "content")
    assert list(site.content.iterdir()) == []


def test_mirror_into_a_read_only_mirror_folder(site, env, sandbox):
    with read_only(site.content / "_mirror"):
        result = site.run("mirror", env=env)
        one_error(result, "_mirror")
    assert list((site.content / "_mirror").iterdir()) == []
