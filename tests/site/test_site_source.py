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
    page = (blog.root / "site" / "first-steps-with-copilot" / "index.html").read_text(
        encoding="utf-8"
    )
    prose, code = page.split("<pre", 1)
    assert "{{&lt;" not in prose and "{{<" not in prose
    assert "youtube-nocookie.com/embed/30a0WrfaS2A" in page
    assert "https://x.com/i/status/1233140530017644544" in page
    # The shortcode shown in a code block stays as written.
    assert "{{&lt; youtube 30a0WrfaS2A &gt;}}" in code


@pytest.mark.e2e
def test_an_enabled_site_reads_the_posts_as_publish_does(make_project):
    # Hugo writes no `published:`: its posts are public unless `draft: true`, and a post
    # kept off dev.to (`devtoSkip`) is still the writer's page.
    blog = _hugo(make_project, "enabled = true")
    result = blog.run("build")
    assert result.exit_code == 0, result.output
    site = blog.root / "site"
    assert (site / "first-steps-with-copilot" / "index.html").is_file()  # its `url:` slug
    assert (site / "reading-notes" / "index.html").is_file()
    assert not (site / "half-written").exists()
    assert "1 draft (drafts as hugo reads them) left out" in result.output
    assert "built 4 posts" in result.output
    # The tags are those sent to dev.to, and so are their problems.
    page = (site / "first-steps-with-copilot" / "index.html").read_text(encoding="utf-8")
    assert "githubcopilot" in page
    assert "index.md:5: warning: tags as dev.to takes them" in result.output
    # A changed [source] reads every post again.
    toml = (blog.root / "toolkit.toml").read_text(encoding="utf-8")
    (blog.root / "toolkit.toml").write_text(
        toml + '\n[forem.tags]\n"GitHub Copilot" = "copilot"\n', encoding="utf-8"
    )
    again = blog.run("build")
    assert again.exit_code == 0, again.output
    page = (site / "first-steps-with-copilot" / "index.html").read_text(encoding="utf-8")
    assert "githubcopilot" not in page and "copilot" in page, again.output


@pytest.mark.e2e
def test_an_image_outside_the_content_folder_is_said_missing_from_the_page(make_project):
    blog = _hugo(make_project, "enabled = true")
    (blog.root / "assets").mkdir()
    (blog.root / "assets" / "hero.png").write_bytes(b"\x89PNG")
    (blog.root / "content" / "hero.md").write_text(
        "---\ntitle: Hero\ndate: 2024-01-01\nimages: [../assets/hero.png]\n---\n"
        "![inline](../assets/hero.png)\n",
        encoding="utf-8",
    )
    result = blog.run("-v", "build")
    assert result.exit_code == 0, result.output
    for line, label in ((4, "images"), (6, "image")):
        assert (
            f"content/hero.md:{line}: warning: {label}: '../assets/hero.png' is outside the "
            "content folder: the site does not copy it, and its page shows none"
        ) in result.output, result.output


@pytest.mark.e2e
def test_an_enabled_site_builds_every_post_publish_sends(make_project):
    # Jekyll's posts are often `.markdown`, Astro's `.mdx`: posts of the site as of dev.to.
    blog = _hugo(make_project, "enabled = true")
    (blog.root / "content" / "kept.markdown").write_text(
        "---\ntitle: Kept\ndate: 2024-01-01\n---\nIn Markdown.\n", encoding="utf-8"
    )
    result = blog.run("build")
    assert result.exit_code == 0, result.output
    assert "built 5 posts" in result.output
    assert "In Markdown." in (blog.root / "site" / "kept" / "index.html").read_text("utf-8")


def test_watch_premium_without_toolkits_site_is_refused_in_one_line(make_project):
    blog = _hugo(make_project)
    result = blog.run("watch", "--premium", env={"FOREM_API_KEY": "k"})
    assert result.exit_code == 2
    assert "--premium previews toolkit's site; [site] enabled is false" in result.output
    assert "Traceback" not in result.output
