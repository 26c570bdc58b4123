"""A project whose posts another generator keeps: its site is that generator's unless
`[site] enabled = true`; then toolkit's site shows the bodies translated as dev.to gets
them."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

BLOG = Path(__file__).resolve().parents[1] / "support" / "blogs" / "hugo"
SOURCE = """
[site]
content_dir = "content"
{enabled}
[source]
generator = "hugo"
url = "https://hugo.example.org"
"""


def _hugo(make_project, enabled: str = ""):
    blog = make_project(SOURCE.format(enabled=enabled), name="hugo")
    shutil.rmtree(blog.root / "content")
    shutil.copytree(BLOG, blog.root, dirs_exist_ok=True)
    (blog.root / "toolkit.toml").write_text(SOURCE.format(enabled=enabled), encoding="utf-8")
    return blog


def test_build_serve_and_watch_leave_another_generators_site_to_it(make_project):
    blog = _hugo(make_project)
    for command in ("build", "serve", "watch"):
        result = blog.run(command)
        assert result.exit_code == 0, (command, result.output)
        assert result.output.strip().splitlines() == [
            "the site is hugo's ([site] enabled = false): toolkit builds nothing; set "
            "[site] enabled = true in toolkit.toml to build it with toolkit"
        ]
    assert not (blog.root / "site").exists()
    assert blog.run("-q", "build").output == ""


@pytest.mark.e2e
def test_an_enabled_site_shows_the_translated_bodies(make_project):
    blog = _hugo(make_project, "enabled = true")
    result = blog.run("build", "--drafts")
    assert result.exit_code == 0, result.output
    page = (blog.root / "site" / "first-steps" / "index.html").read_text(encoding="utf-8")
    prose, code = page.split("<pre", 1)
    assert "{{&lt;" not in prose and "{{<" not in prose
    assert "youtube-nocookie.com/embed/30a0WrfaS2A" in page
    assert "https://x.com/i/status/1233140530017644544" in page
    # The shortcode shown in a code block stays as written.
    assert "{{&lt; youtube 30a0WrfaS2A &gt;}}" in code
