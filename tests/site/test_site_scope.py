"""Which posts are on the site: drafts, premium posts, posts with errors; and the command."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from site_helpers import parse_page, read


def test_drafts_only_with_drafts_and_marked(site_project):
    out = site_project.root / "site"
    result = site_project.run("build")
    assert result.exit_code == 0, result.output
    assert not (out / "draft").exists()
    assert "Work in progress" not in read(out, "index.html")
    assert "Draft" not in read(out, "index.html")

    preview = site_project.root / "preview"
    result = site_project.run("build", "--drafts", "--out", str(preview))
    assert result.exit_code == 0, result.output
    draft = read(preview, "draft/index.html")
    assert '<span class="badge">Draft</span>' in draft
    assert parse_page(preview / "draft" / "index.html").meta["robots"] == ["noindex"]
    listing = read(preview, "index.html")
    assert "Work in progress" in listing and '<span class="badge">Draft</span>' in listing
    assert "Work in progress" in read(preview, "tags/python/index.html")
    feed = ET.parse(preview / "feed.xml").getroot()
    titles = [e.findtext("{http://www.w3.org/2005/Atom}title") for e in feed]
    assert "Work in progress" not in titles
    # The site built without drafts is untouched by the preview.
    assert not (out / "draft").exists()


def test_premium_posts_are_left_out(site_project):
    out = site_project.root / "site"
    site_project.run("build", "--drafts")
    assert not (out / "paid").exists()
    for page in out.rglob("*.*"):
        if page.suffix in (".html", ".xml"):
            assert "Premium post" not in page.read_text(encoding="utf-8"), page


def test_premium_flag_of_the_builder(site_project):
    from toolkit.config import load_config
    from toolkit.site import SiteBuilder

    config = load_config(site_project.root / "toolkit.toml")
    report = SiteBuilder(config, premium=True, out=site_project.root / "premium").build()
    assert "paid/index.html" in report.written


def test_posts_with_errors_are_reported_and_skipped_the_rest_is_built(site_project):
    site_project.post("bad", "Bad tags", published=True, tags=["no-hyphens", "ok"])
    site_project.write("content/broken.md", "---\ntitle: [unclosed\n---\nBody\n")
    site_project.post("dup", "News", published=True, body="Same title as another post.\n")
    result = site_project.run("build")
    assert result.exit_code == 1
    lines = result.output.splitlines()
    assert any(line.startswith("content/bad.md:") and "'no-hyphens'" in line for line in lines)
    assert any(
        line.startswith("content/broken.md:3: front matter: invalid YAML") for line in lines
    ), result.output
    assert any(
        line.startswith("content/dup.md:") and "also used by content/news.md" in line
        for line in lines
    )
    assert any(
        line.startswith("content/news.md:") and "also used by content/dup.md" in line
        for line in lines
    )
    assert "built 6 posts" in result.output
    out = site_project.root / "site"
    assert not (out / "bad").exists() and not (out / "broken").exists()
    # A title two posts share is a warning (dev.to allows it): both are on the site.
    assert (out / "dup" / "index.html").is_file() and (out / "news" / "index.html").is_file()
    assert (out / "intro" / "index.html").is_file()
    assert "Bad tags" not in read(out, "index.html")

    # Fixed: built, and nothing reported any more.
    site_project.post("bad", "Bad tags", published=True, tags=["ok"])
    (site_project.content / "broken.md").unlink()
    (site_project.content / "dup.md").unlink()
    result = site_project.run("build")
    assert result.exit_code == 0, result.output
    assert (out / "bad" / "index.html").is_file() and (out / "news" / "index.html").is_file()


def test_warnings_do_not_fail_the_build(site_project):
    site_project.post("odd", "Odd key", published=True, colour="blue")
    result = site_project.run("build")
    assert result.exit_code == 0
    assert "content/odd.md:4: warning: colour: unknown front matter key" in result.output
    # Reported again by a build with nothing to do: the report is about the content.
    result = site_project.run("build")
    assert "warning: colour" in result.output


def test_missing_image_is_an_error_until_the_image_exists(site_project):
    site_project.post("pic", "Picture", published=True, body="![x](pics/a.png)\n")
    result = site_project.run("build")
    assert result.exit_code == 1
    assert "content/pic.md:5: image: pics/a.png not found" in result.output
    (site_project.content / "pics").mkdir()
    (site_project.content / "pics" / "a.png").write_bytes(b"png")
    result = site_project.run("build")  # the post itself did not change
    assert result.exit_code == 0, result.output
    assert '<img src="../pics/a.png" alt="x"' in read(site_project.root / "site", "pic/index.html")


def test_reserved_slug_is_an_error(project):
    project.post("tags", "About tags", published=True)
    result = project.run("build")
    assert result.exit_code == 1
    assert (
        "content/tags.md:1: slug: 'tags' is taken by the site's own tags/ folder" in result.output
    )


def test_summary_line_and_quiet(site_project):
    result = site_project.run("build")
    assert result.exit_code == 0
    summary = result.output.strip().splitlines()[-1]
    assert summary.startswith("built 5 posts: ")
    assert "files written, 0 unchanged, 0 removed in" in summary and summary.endswith("→ site/")
    result = site_project.run("-q", "build")
    assert result.output == ""


def test_out_overrides_the_configured_output_dir(site_project):
    result = site_project.run("build", "--out", "elsewhere")
    assert result.exit_code == 0, result.output
    assert (site_project.root / "elsewhere" / "index.html").is_file()
    assert not (site_project.root / "site").exists()


def test_output_dir_must_not_be_inside_content(site_project):
    result = site_project.run("build", "--out", "content/site")
    assert result.exit_code == 1
    assert "must lie outside the content folder" in result.output


def test_help_has_an_example(site_project):
    result = site_project.run("build", "--help")
    assert "Example:" in result.output
    assert "toolkit build --drafts --out /tmp/preview" in result.output
    for option in ("--clean", "--drafts", "--out"):
        assert option in result.output


def test_template_error_is_one_line_with_file_and_line(site_project):
    site_project.write(
        "templates/post.html",
        '{% extends "base.html" %}\n'
        "{% block content %}{{ post.nonexistent.deeper }}{% endblock %}\n",
    )
    result = site_project.run("build")
    assert result.exit_code == 1
    assert "Traceback" not in result.output
    assert "templates/post.html:2:" in result.output


def test_a_content_file_where_the_site_has_its_own_is_not_copied(site_project):
    site_project.write("content/index.html", "<p>mine</p>\n")
    site_project.write("content/static/style.css", "/* mine */\n")
    result = site_project.run("build")
    assert result.exit_code == 0
    assert (
        "content/index.html:1: warning: not copied: the site makes its own index.html"
        in result.output
    )
    assert "content/static/style.css:1: warning: not copied" in result.output
    out = site_project.root / "site"
    assert "<p>mine</p>" not in read(out, "index.html")
    assert read(out, "static/style.css") != "/* mine */\n"


def test_problems_of_posts_not_on_this_site_are_not_this_builds(site_project):
    """A draft with an error does not fail a build without drafts (`toolkit check` and a
    build with --drafts report it); a file that cannot be read at all always does."""
    site_project.post("wip", "Half done", published=False, tags=["not-valid"])
    result = site_project.run("build")
    assert result.exit_code == 0, result.output
    assert "wip.md" not in result.output
    result = site_project.run("build", "--drafts", "--out", "preview")
    assert result.exit_code == 1
    assert "content/wip.md:4: tags: 'not-valid'" in result.output


def test_a_build_without_drafts_after_one_with_them_removes_the_drafts(site_project):
    out = site_project.root / "site"
    site_project.run("build", "--drafts")
    assert (out / "draft" / "index.html").is_file()
    assert "Work in progress" in read(out, "index.html")
    result = site_project.run("build")
    assert result.exit_code == 0
    assert not (out / "draft").exists()
    for page in out.rglob("*.html"):
        assert "Work in progress" not in page.read_text(encoding="utf-8"), page
    # and back
    site_project.run("build", "--drafts")
    assert (out / "draft" / "index.html").is_file()
