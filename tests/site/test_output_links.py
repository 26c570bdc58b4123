"""The output folder is toolkit's own: a folder of it committed as a symlink to elsewhere
is never written through, nor are files removed through one (issue 43: nothing under the
project is followed out of it)."""

from __future__ import annotations

import shutil

import pytest

# Every test here starts a process or opens a socket (tests/support/plugin.py).
pytestmark = pytest.mark.e2e


def test_a_build_never_writes_through_a_folder_of_the_site_linked_elsewhere(
    project, tmp_path_factory
):
    elsewhere = tmp_path_factory.mktemp("elsewhere")
    (elsewhere / "index.html").write_text("the writer's own page\n")
    project.write(
        "content/hello.md", "---\ntitle: Hello\npublished: true\ntags: [news]\n---\nText.\n"
    )
    project.write("content/img/a.png", "png")
    site = project.root / "site"
    site.mkdir()
    for name in ("hello", "tags", "static"):
        (site / name).symlink_to(elsewhere)
    first = project.run("build")
    assert first.exit_code == 0, first.output
    assert sorted(p.name for p in elsewhere.iterdir()) == ["index.html"]
    assert (elsewhere / "index.html").read_text() == "the writer's own page\n"
    assert (site / "hello" / "index.html").is_file() and not (site / "hello").is_symlink()
    assert not (site / "tags").is_symlink() and not (site / "static").is_symlink()

    # A folder swapped for a link after a build: the next build writes no page through
    # it, and removes nothing through it when the post is gone.
    shutil.rmtree(site / "hello")
    (site / "hello").symlink_to(elsewhere)
    (project.content / "hello.md").write_text(
        "---\ntitle: Hello\npublished: true\ntags: [news]\n---\nNew.\n"
    )
    assert project.run("build").exit_code == 0
    assert sorted(p.name for p in elsewhere.iterdir()) == ["index.html"]
    assert (elsewhere / "index.html").read_text() == "the writer's own page\n"
    shutil.rmtree(site / "hello")
    (site / "hello").symlink_to(elsewhere)
    (project.content / "hello.md").unlink()
    assert project.run("build").exit_code == 0
    assert (elsewhere / "index.html").read_text() == "the writer's own page\n"
