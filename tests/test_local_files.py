"""Hostile local files: symlinks leading out of the project, impossible dates, YAML bombs,
FIFOs, huge files. Each bad file gets its `path:line: message`; the others carry on.

The inputs that used to hang run the CLI in a subprocess with a timeout, so that a hang
fails the test instead of the suite.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

SECRET = "sk-live-TOP-SECRET-0123456789"

GOOD = """---
title: {title}
published: true
date: 2024-01-0{day}
---
{body}
"""


def good_post(project, name: str, title: str, body: str = "Plain words.", day: int = 1) -> Path:
    return project.write(f"content/{name}.md", GOOD.format(title=title, body=body, day=day))


def site_bytes(project) -> bytes:
    """Every file under site/, concatenated: where a leak would show."""
    site = project.root / "site"
    return b"".join(p.read_bytes() for p in sorted(site.rglob("*")) if p.is_file())


def environ_marker() -> bytes:
    """The first entry of this process's /proc/self/environ, as a symlink would copy it."""
    data = Path("/proc/self/environ").read_bytes()
    return data.split(b"\0", 1)[0]


def run_cli(root: Path, *args: str, timeout: float = 60, env: dict | None = None):
    """`toolkit ARGS` in a subprocess that a hang cannot outlive."""
    return subprocess.run(
        [sys.executable, "-m", "toolkit", "--config", str(root / "toolkit.toml"), *args],
        cwd=root, capture_output=True, text=True, timeout=timeout,
        env={**os.environ, "COLUMNS": "200", **(env or {})},
    )


# -- 4. symlinks ----------------------------------------------------------------------


@pytest.fixture
def linked(project, tmp_path):
    """A project whose content/ and templates/ hold symlinks to secrets outside it."""
    outside = tmp_path / "outside"
    (outside / "folder").mkdir(parents=True)
    (outside / "secret.txt").write_text(SECRET)
    (outside / "folder" / "leak.txt").write_text(SECRET)
    (outside / "folder" / "leaked.md").write_text(
        GOOD.format(title="From a linked folder", body=SECRET, day=3))
    (outside / "post.md").write_text(GOOD.format(title="Linked post", body=SECRET, day=4))
    (outside / "post.html").write_text(SECRET + " {{ page.title }}")
    good_post(project, "first", "First post")
    good_post(project, "second", "Second post", day=2)
    project.write("drafts/shared.md", GOOD.format(title="Shared from inside", body="Inside.",
                                                  day=5))
    content = project.content
    (content / "env.txt").symlink_to("/proc/self/environ")
    (content / "secret.txt").symlink_to(outside / "secret.txt")
    (content / "linked").symlink_to(outside / "folder", target_is_directory=True)
    (content / "leaked.md").symlink_to(outside / "post.md")
    (content / "shared.md").symlink_to(project.root / "drafts" / "shared.md")
    (project.root / "templates" / "static").mkdir(parents=True)
    (project.root / "templates" / "static" / "leak.css").symlink_to(outside / "secret.txt")
    (project.root / "templates" / "post.html").symlink_to(outside / "post.html")
    return project


def test_build_follows_no_symlink_out_of_the_project(linked):
    result = linked.run("build")
    site = site_bytes(linked)
    assert SECRET.encode() not in site
    assert environ_marker() not in site
    assert not (linked.root / "site" / "env.txt").exists()
    for slug in ("first", "second", "shared"):  # a symlink inside the project is followed
        assert (linked.root / "site" / slug / "index.html").is_file()
    assert "Shared from inside" in (linked.root / "site" / "index.html").read_text()
    assert "Linked post" not in (linked.root / "site" / "index.html").read_text()
    assert result.exit_code == 0, result.output
    out = result.output
    for path in ("content/env.txt", "content/secret.txt", "content/leaked.md",
                 "templates/static/leak.css", "templates/post.html"):
        assert f"{path}:1: warning: symlink to a file outside the project, not followed" in out
    assert "content/linked:1: warning: symlink to a folder outside the project, not followed" in out


def test_check_and_plan_read_no_post_through_a_symlink_out_of_the_project(linked, sandbox):
    result = linked.run("check")
    assert result.exit_code == 0, result.output
    assert "content/leaked.md:1: warning: symlink to a file outside the project" in result.output
    assert "content/linked:1: warning: symlink to a folder outside the project" in result.output
    assert SECRET not in result.output
    named = linked.run("check", "content/leaked.md")
    assert "content/leaked.md:1: warning: symlink to a file outside the project" in named.output
    assert SECRET not in named.output and "Linked post" not in named.output
    env = {"FOREM_BASE_URL": sandbox.base_url, "FOREM_API_KEY": sandbox.demo_api_key}
    plan = linked.run("plan", "--json", env=env)
    assert "content/first.md" in plan.output, plan.output
    assert "Linked post" not in plan.output and "leaked.md" not in plan.output
    assert SECRET not in plan.output


def test_an_image_outside_the_content_folder_is_neither_copied_nor_read(project, tmp_path):
    (tmp_path / "outside.png").write_text(SECRET)
    good_post(project, "first", "First post")
    (project.content / "images").mkdir()
    (project.content / "images" / "logo.png").symlink_to(tmp_path / "outside.png")
    project.write("content/pic.md", "---\ntitle: Pictures\npublished: true\n---\n"
                  "![logo](images/logo.png)\n\n![passwd](../../../../../../etc/passwd)\n")
    result = project.run("build")
    assert SECRET.encode() not in site_bytes(project)
    assert result.exit_code == 1
    assert ("content/pic.md:5: image: images/logo.png is a symlink to a file outside the "
            "content folder, not followed") in result.output
    assert ("content/pic.md:7: image: ../../../../../../etc/passwd lies outside the content "
            "folder") in result.output
    assert "content/images/logo.png:1: warning: symlink to a file outside the project" in (
        result.output)
    assert (project.root / "site" / "first" / "index.html").is_file()
    assert SECRET.encode() not in site_bytes(project)
    assert b"root:" not in site_bytes(project)


# -- 7. hostile sizes, shapes and kinds of file -----------------------------------------


def checked(project, *args: str, timeout: float = 60) -> subprocess.CompletedProcess:
    result = run_cli(project.root, *args, timeout=timeout)
    assert "Traceback" not in result.stderr, result.stderr
    return result


def test_a_file_that_is_not_utf8_is_reported_and_skipped(project):
    good_post(project, "first", "First post")
    (project.content / "latin1.md").write_bytes(
        "---\ntitle: Café\n---\nNaïve.\n".encode("latin-1"))
    for command in ("check", "build"):
        result = project.run(command)
        assert result.exit_code == 1
        assert "content/latin1.md:2: not valid UTF-8 text" in result.output.splitlines()
    assert (project.root / "site" / "first" / "index.html").is_file()


def test_a_fifo_named_like_a_post_is_skipped_without_being_opened(project):
    good_post(project, "first", "First post")
    os.mkfifo(project.content / "pipe.md")
    (project.content / "zero.md").symlink_to("/dev/zero")
    for command in ("check", "build"):
        result = checked(project, command, timeout=30)
        assert result.returncode == 0, result.stdout + result.stderr
        assert ("content/pipe.md:1: warning: not a regular file (a FIFO), skipped"
                in result.stdout.splitlines())
        assert ("content/zero.md:1: warning: symlink to a file outside the project, not "
                "followed" in result.stdout.splitlines())
    named = checked(project, "check", "content/pipe.md", timeout=30)
    assert "content/pipe.md:1: warning: not a regular file (a FIFO), skipped" in named.stdout
    assert (project.root / "site" / "first" / "index.html").is_file()


def test_a_large_post_full_of_images_is_checked_in_linear_time(project):
    """Under the file cap but over the API's 800 KB: every image is still found, fast."""
    good_post(project, "first", "First post")
    (project.content / "images").mkdir()
    (project.content / "images" / "a.png").write_bytes(b"png")
    filler = "Words and more words to fill the body of this post.\n" * 100_000  # 5 MB, and 1.4 MB of images below
    images = "![a](images/a.png)\n" * 50_000 + "![" * 200_000
    project.write("content/large.md", f"---\ntitle: Large\npublished: true\n---\n{filler}{images}")
    for command in ("check", "build"):
        result = checked(project, command, timeout=60)
        assert result.returncode == 1
        assert ("content/large.md:1: body: 6396 KB; the API accepts at most 800 KB"
                in result.stdout.splitlines()), result.stdout
    assert (project.root / "site" / "first" / "index.html").is_file()
