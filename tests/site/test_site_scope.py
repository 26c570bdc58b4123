"""Which posts are on the site: drafts, premium posts, posts with errors; and the command."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from tests.support.site_helpers import CONFIG, parse_page, read


@pytest.mark.e2e
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


@pytest.mark.e2e
def test_premium_posts_are_left_out(site_project):
    out = site_project.root / "site"
    site_project.run("build", "--drafts")
    assert not (out / "paid").exists()
    for page in out.rglob("*.*"):
        if page.suffix in (".html", ".xml"):
            assert "Premium post" not in page.read_text(encoding="utf-8"), page


@pytest.mark.e2e
def test_premium_flag_of_the_builder(site_project):
    from toolkit.config import load_config
    from toolkit.site import SiteBuilder

    config = load_config(site_project.root / "toolkit.toml")
    report = SiteBuilder(config, premium=True, out=site_project.root / "premium").build()
    assert "paid/index.html" in report.written


@pytest.mark.e2e
def test_posts_with_errors_are_reported_and_skipped_the_rest_is_built(site_project):
    site_project.post("bad", "Bad date", published=True, date="someday")
    site_project.write("content/broken.md", "---\ntitle: [unclosed\n---\nBody\n")
    site_project.post("dup", "News", published=True, body="Same title as another post.\n")
    result = site_project.run("build", "-v")  # every warning, not each kind once
    assert result.exit_code == 1
    lines = result.output.splitlines()
    assert any(line.startswith("content/bad.md:") and "'someday'" in line for line in lines)
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
    assert "Bad date" not in read(out, "index.html")

    # Fixed: built, and nothing reported any more.
    site_project.post("bad", "Bad date", published=True, date="2024-05-01")
    (site_project.content / "broken.md").unlink()
    (site_project.content / "dup.md").unlink()
    result = site_project.run("build")
    assert result.exit_code == 0, result.output
    assert (out / "bad" / "index.html").is_file() and (out / "news" / "index.html").is_file()


# Posts only the publishing API would refuse (it answers 422): the site builds them.
REFUSED = {
    "content/tagged.md": "tags: 5 tags; the API accepts at most 4",
    "content/long.md": "title: 140 characters; the API accepts at most 128",
    "content/ftp.md": "canonical_url: must be an absolute http(s) URL, not 'ftp://x'",
    "content/odd.md": "tags: '../up' must be letters and digits only (no hyphens or spaces)",
}


def write_refused_posts(project) -> None:
    project.post("tagged", "Five tags", published=True, tags=["a", "b", "c", "d", "e"])
    project.post("long", "L" * 140, published=True, body="A long title.\n")
    project.post("ftp", "Odd canonical", published=True, canonical_url="ftp://x")
    project.post("odd", "Odd tags", published=True, tags=["ok", "../up", "no-hyphens"])


@pytest.mark.e2e
def test_a_post_only_the_api_refuses_is_on_the_site(site_project):
    write_refused_posts(site_project)
    site_project.write("content/broken.md", "---\ntitle: [unclosed\n---\nBody\n")
    out = site_project.root / "site"

    for attempt in ("first", "nothing changed"):
        result = site_project.run("build")
        assert result.exit_code == 1, (attempt, result.output)  # broken.md alone
        lines = result.output.splitlines()
        for path, reason in REFUSED.items():
            # Said once, as a warning: `check`, `plan` and `publish` say the error.
            said = [line for line in lines if line.startswith(f"{path}:")]
            assert len(said) == 1, (attempt, said)
            assert f": warning: built, but the API would refuse it: {reason}" in said[0]
        assert "(no hyphens or spaces); and 1 more (toolkit check lists them)" in result.output
        assert "built 9 posts" in result.output
        assert any(line.startswith("content/broken.md:3: front matter") for line in lines)
        assert not (out / "broken").exists()
        home = "".join(
            page.read_text(encoding="utf-8") for page in [out / "index.html", *out.glob("page/*/*")]
        )
        assert "Five tags" in home and "Odd canonical" in home

    assert "L" * 140 in read(out, "long/index.html")
    for tag in ("a", "b", "c", "d", "e"):
        assert "Five tags" in read(out, f"tags/{tag}/index.html")
    # The site lists a post under the tags the API accepts, in folders of their own.
    assert "Odd tags" in read(out, "tags/ok/index.html")
    assert not (out / "tags" / "no-hyphens").exists() and not (out / "up").exists()
    # The page names itself as canonical, never an address the API refuses.
    assert parse_page(out / "ftp" / "index.html").canonical == "https://example.com/blog/ftp/"

    (site_project.content / "broken.md").unlink()
    result = site_project.run("build")
    assert result.exit_code == 0, result.output  # warnings do not fail the build

    site_project.post("tagged", "Five tags", published=True, tags=["a", "b", "c", "d"])
    result = site_project.run("build")
    assert "content/tagged.md" not in result.output
    assert "Five tags" in read(out, "tags/d/index.html")
    assert not (out / "tags" / "e").exists()


def test_a_post_only_the_api_refuses_is_still_refused_by_check_plan_and_publish(
    make_project, sandbox
):
    sandbox.reset()
    env = {"FOREM_BASE_URL": sandbox.base_url, "FOREM_API_KEY": sandbox.demo_api_key}
    project = make_project(CONFIG + "\n[forem]\nrate_window = 1\n")
    write_refused_posts(project)
    project.post("fine", "Fine post", published=True, tags=["ok"])

    check = project.run("check")
    assert check.exit_code == 1, check.output
    lines = check.output.splitlines()
    for path, reason in REFUSED.items():
        assert any(line.startswith(f"{path}:") and line.endswith(f": {reason}") for line in lines)
    plan = project.run("plan", env=env)
    assert plan.exit_code == 1, plan.output
    lines = plan.output.splitlines()
    for path, reason in REFUSED.items():
        assert any(path in line and reason in line for line in lines), (path, plan.output)
    publish = project.run("publish", env=env)
    assert publish.exit_code == 1, publish.output
    with sandbox.client() as client:
        sent = client.get("/api/articles/me/all", params={"per_page": 1000}).json()
    titles = {article["title"] for article in sent}
    assert "Fine post" in titles  # the others go on
    assert titles.isdisjoint({"Five tags", "L" * 140, "Odd canonical"}), titles


@pytest.mark.e2e
def test_warnings_do_not_fail_the_build(site_project):
    site_project.post("odd", "Odd key", published=True, colour="blue")
    result = site_project.run("build")
    assert result.exit_code == 0
    assert "content/odd.md:4: warning: colour: unknown front matter key" in result.output
    # Reported again by a build with nothing to do: the report is about the content.
    result = site_project.run("build")
    assert "warning: colour" in result.output


@pytest.mark.e2e
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


@pytest.mark.e2e
def test_reserved_slug_is_an_error(project):
    project.post("tags", "About tags", published=True)
    result = project.run("build")
    assert result.exit_code == 1
    assert (
        "content/tags.md:1: slug: 'tags' is taken by the site's own tags/ folder" in result.output
    )


@pytest.mark.e2e
def test_summary_line_and_quiet(site_project):
    result = site_project.run("build")
    assert result.exit_code == 0
    summary = result.output.strip().splitlines()[-1]
    assert summary.startswith("built 5 posts: ")
    assert "files written, 0 unchanged, 0 removed in" in summary and summary.endswith("→ site/")
    result = site_project.run("-q", "build")
    assert result.output == ""


@pytest.mark.e2e
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


@pytest.mark.e2e
def test_a_content_file_where_the_site_has_its_own_is_not_copied(site_project):
    site_project.write("content/index.html", "<p>mine</p>\n")
    site_project.write("content/static/style.css", "/* mine */\n")
    site_project.write(
        "content/refers.md",
        "---\ntitle: Refers\npublished: true\n---\n"
        "[home](index.html) and [style](/static/style.css)\n",
    )
    result = site_project.run("build")
    assert result.exit_code == 0
    assert (
        "warning: 2 files: not copied: the site makes its own … (toolkit check lists them)"
        in result.output
    )
    result = site_project.run("build", "-v")  # every warning
    assert result.exit_code == 0
    assert (
        "content/index.html:1: warning: not copied: the site makes its own index.html"
        in result.output
    )
    assert "content/static/style.css:1: warning: not copied" in result.output
    out = site_project.root / "site"
    assert "<p>mine</p>" not in read(out, "index.html")
    assert read(out, "static/style.css") != "/* mine */\n"


@pytest.mark.e2e
def test_problems_of_posts_not_on_this_site_are_not_this_builds(site_project):
    """A draft with an error does not fail a build without drafts (`toolkit check` and a
    build with --drafts report it); a file that cannot be read at all always does."""
    site_project.post("wip", "Half done", published=False, date="someday")
    result = site_project.run("build")
    assert result.exit_code == 0, result.output
    assert "wip.md" not in result.output
    result = site_project.run("build", "--drafts", "--out", "preview")
    assert result.exit_code == 1
    assert "content/wip.md:4: date: not a date: 'someday'" in result.output


@pytest.mark.e2e
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


@pytest.mark.e2e
def test_the_site_copies_what_posts_refer_to_and_not_the_rest_of_the_folder(make_project):
    project = make_project()
    project.write(
        "content/guide/setup.md",
        """
        ---
        title: Setup
        published: true
        cover_image: img/cover.png
        ---
        ![A shot](img/shot.png) and <img src="/shared/logo.svg" alt="">.
        Get [the slides](files/slides.pdf) or [the data][data].

        [data]: ../data.csv

        ```
        ![not a reference](img/in-code.png)
        ```
        """,
    )
    for name in (
        "guide/img/cover.png",
        "guide/img/shot.png",
        "shared/logo.svg",
        "guide/files/slides.pdf",
        "data.csv",
        "guide/img/in-code.png",
        "guide/img/unused.png",
        "examples/app/main.py",
        "examples/app/Makefile",
    ):
        path = project.content / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"file")
    project.write(
        "content/guide/draft.md",
        "---\ntitle: Draft\n---\n![secret](img/draft-only.png)\n",
    )
    (project.content / "guide" / "img" / "draft-only.png").write_bytes(b"file")
    result = project.run("build")
    assert result.exit_code == 0, result.output
    out = project.root / "site"
    copied = {
        path.relative_to(out).as_posix()
        for path in out.rglob("*")
        if path.is_file()
        and not path.relative_to(out).as_posix().startswith(("static/", "pagefind/"))
    }
    for name in (
        "guide/img/cover.png",
        "guide/img/shot.png",
        "shared/logo.svg",
        "guide/files/slides.pdf",
        "data.csv",
    ):
        assert name in copied, name
    for name in (
        "guide/img/in-code.png",
        "guide/img/unused.png",
        "examples/app/main.py",
        "examples/app/Makefile",
        "guide/img/draft-only.png",  # only a draft refers to it: not on this site
    ):
        assert name not in copied, name
    # A draft on the site (--drafts) brings its files along; a removed reference takes
    # its copy away again.
    assert project.run("build", "--drafts").exit_code == 0
    assert (out / "guide" / "img" / "draft-only.png").is_file()
    project.write("content/guide/draft.md", "---\ntitle: Draft\n---\nNo image any more.\n")
    assert project.run("build", "--drafts").exit_code == 0
    assert not (out / "guide" / "img" / "draft-only.png").exists()
