"""`toolkit init` in a blog kept with another generator: it knows the generator by its own
files and writes `[source]` (tests/support/blogs/ holds the blogs)."""

from __future__ import annotations

import datetime as dt
import json
import shutil
import tomllib
from pathlib import Path
from typing import cast

import pytest
from click.testing import CliRunner

from toolkit.cli import main
from toolkit.config.loading import load_config

BLOGS = Path(__file__).resolve().parents[1] / "support" / "blogs"

EXPECTED = {
    "hugo": (
        "content",
        {
            "url": "https://hugo.example.org",
            "static_dir": "static",
            "timezone": "Europe/Berlin",
            "id_key": "devtoId",
        },
    ),
    "jekyll": (
        "_posts",
        {
            "url": "https://jekyll.example.org/blog",
            "permalink": "/:year-:month-:day-:title/",
            "timezone": "America/New_York",
            "id_key": "devto_id",
        },
    ),
    "astro": (
        "src/content/articles",
        {
            "url": "https://astro.example.org",
            "static_dir": "public",
            "permalink": "/articles/:path",
            "trailing_slash": False,
            "id_key": "dev_to",
        },
    ),
    "eleventy": (
        "content/blog",
        {"url": "https://eleventy.example.org", "permalink": "/blog/:path/", "id_key": "devtoId"},
    ),
    "next": (
        "posts",
        {
            "url": "https://next.example.org",
            "static_dir": "public",
            "permalink": "/posts/:path",
            "date_format": "%m/%d/%Y",
            "id_key": "devto_id",
        },
    ),
}


@pytest.mark.parametrize("blog", sorted(EXPECTED))
def test_init_reads_the_generator_and_writes_source(blog, tmp_path):
    root = tmp_path / blog
    shutil.copytree(BLOGS / blog, root)
    result = CliRunner().invoke(main, ["init", str(root), "--no-workflow"])
    assert result.exit_code == 0, result.output
    content_dir, values = EXPECTED[blog]
    said = [line for line in result.output.splitlines() if line.startswith("read ")]
    assert len(said) == 1 and "written to toolkit.toml" in said[0]
    data = tomllib.loads((root / "toolkit.toml").read_text(encoding="utf-8"))
    assert data["site"]["content_dir"] == content_dir
    assert data["source"]["generator"] == blog
    for key, value in cast(dict[str, object], values).items():
        assert data["source"][key] == value, key
    assert dt.date.fromisoformat(data["source"]["adopted"])
    config = load_config(root / "toolkit.toml", env={})  # what it wrote is valid
    assert config.source.generator == blog
    assert not (root / "content" / "_welcome.md").exists()


def test_hugo_permalinks_of_the_posts_section_and_a_yaml_config(tmp_path):
    (tmp_path / "content" / "posts" / "hello").mkdir(parents=True)
    (tmp_path / "content" / "posts" / "hello" / "index.md").write_text(
        "---\ntitle: Hello\ndevto_id: 12\n---\nHi.\n", encoding="utf-8"
    )
    (tmp_path / "config.yaml").write_text(
        "baseURL: https://example.org/\npermalinks:\n  posts: /:year/:month/:filename/\n",
        encoding="utf-8",
    )
    result = CliRunner().invoke(main, ["init", str(tmp_path), "--no-workflow"])
    assert result.exit_code == 0, result.output
    data = tomllib.loads((tmp_path / "toolkit.toml").read_text(encoding="utf-8"))
    assert data["site"]["content_dir"] == "content/posts"
    assert data["source"]["permalink"] == "/:year/:month/:filename/"
    assert data["source"]["id_key"] == "devto_id"


def test_a_folder_of_devto_posts_gets_no_source(tmp_path):
    (tmp_path / "posts").mkdir()
    (tmp_path / "posts" / "a.md").write_text("---\ntitle: A\n---\nHi.\n", encoding="utf-8")
    result = CliRunner().invoke(main, ["init", str(tmp_path), "--no-workflow"])
    assert result.exit_code == 0, result.output
    assert "[source]" not in (tmp_path / "toolkit.toml").read_text(encoding="utf-8")
    assert not any(line.startswith("read ") for line in result.output.splitlines())


def test_init_json_says_what_it_read(tmp_path):
    root = tmp_path / "jekyll"
    shutil.copytree(BLOGS / "jekyll", root)
    result = CliRunner().invoke(main, ["init", str(root), "--no-workflow", "--json"])
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    assert document["source"]["generator"] == "jekyll"
    assert document["source"]["read_from"] == "_config.yml"
    assert document["source"]["source"]["timezone"] == "America/New_York"
    assert document["content_dir"] == "_posts"


def test_init_reads_no_generator_file_through_a_link_out_of_the_project(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "hugo.toml").write_text('baseURL = "https://secret.example/"\n', encoding="utf-8")
    root = tmp_path / "blog"
    (root / "content" / "posts").mkdir(parents=True)
    (root / "content" / "posts" / "a.md").write_text("---\ntitle: A\n---\nHi.\n", encoding="utf-8")
    (root / "hugo.toml").symlink_to(outside / "hugo.toml")
    result = CliRunner().invoke(main, ["init", str(root), "--no-workflow"])
    assert result.exit_code == 0, result.output
    assert "secret.example" not in (root / "toolkit.toml").read_text(encoding="utf-8")
    assert "secret.example" not in result.output


TITLES = {
    "hugo": "Notes from the workshop",
    "jekyll": "Field notes",
    "eleventy": "Eleventy notes",
    "astro": "My posts",  # its title is in its own code, not its config
    "next": "My posts",
}


@pytest.mark.parametrize("blog", sorted(TITLES))
def test_init_titles_the_site_as_the_generator_does(blog, tmp_path):
    root = tmp_path / blog
    shutil.copytree(BLOGS / blog, root)
    assert CliRunner().invoke(main, ["init", str(root), "--no-workflow"]).exit_code == 0
    data = tomllib.loads((root / "toolkit.toml").read_text(encoding="utf-8"))
    assert data["site"]["title"] == TITLES[blog]


def test_init_in_a_hugo_quick_start_blog(tmp_path):
    # `hugo new site`, `[permalinks]` for the posts section, `hugo new posts/x.md` (TOML).
    root = tmp_path / "blog"
    (root / "content" / "posts").mkdir(parents=True)
    (root / "config.toml").write_text(
        'baseURL = "https://example.com/"\ntitle = "My New Hugo Site"\n\n'
        '[permalinks]\n  posts = "/:year/:month/:slug/"\n',
        encoding="utf-8",
    )
    (root / "content" / "posts" / "my-first-post.md").write_text(
        "+++\ntitle = 'Hello There'\ndate = 2024-01-14T07:07:07+01:00\ndevtoId = 12\n+++\nText.\n",
        encoding="utf-8",
    )
    result = CliRunner().invoke(main, ["init", str(root), "--no-workflow"])
    assert result.exit_code == 0, result.output
    assert "content/posts/: 1 post\n" in result.output
    data = tomllib.loads((root / "toolkit.toml").read_text(encoding="utf-8"))
    assert data["site"] == {"title": "My New Hugo Site", "content_dir": "content/posts"}
    assert data["source"]["permalink"] == "/:year/:month/:slug/"
    assert data["source"]["id_key"] == "devtoId"
    check = CliRunner().invoke(
        main, ["--config", str(root / "toolkit.toml"), "check", "-v"], catch_exceptions=False
    )
    assert check.exit_code == 0, check.output
    assert "  canonical_url: 'https://example.com/2024/01/hello-there/'" in check.output
    assert "  slug: 'hello-there' <- the title (the permalink's :slug, as Hugo makes it)" in (
        check.output
    )
    assert "  article: '12' <- devtoId" in check.output
