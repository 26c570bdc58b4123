"""Posts written for another generator, read as dev.to needs them (`toolkit/content/sources`)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from toolkit.config.sections import SourceConfig
from toolkit.content.sources.dates import DateUnread, read_date, slashed_order
from toolkit.content.sources.permalink import page_url
from toolkit.content.sources.tags import normalise

NEW_YORK = "America/New_York"


@pytest.mark.parametrize(
    ("written", "expected"),
    [
        ("2021-02-01 10:22 -0500", "2021-02-01T10:22:00-05:00"),
        ("2021-01-24 00:00:00 +0000", "2021-01-24T00:00:00+00:00"),
        ("2020-03-04T10:00:00+01:00", "2020-03-04T10:00:00+01:00"),
        ("Jul 08 2022", "2022-07-08T00:00:00-04:00"),  # the site's time zone
        ("01/13/2020", "2020-01-13T00:00:00-05:00"),  # only one reading
        (dt.date(2019, 2, 11), "2019-02-11T00:00:00-05:00"),
    ],
)
def test_dates_in_the_generators_forms_with_their_offsets(written, expected):
    read = read_date(written, NEW_YORK)
    assert read is not None and read.isoformat() == expected


def test_a_month_day_date_that_reads_both_ways_needs_its_form_named():
    with pytest.raises(DateUnread, match="date_format"):
        read_date("09/02/2020")
    month_first = read_date("09/02/2020", date_format="%m/%d/%Y")
    day_first = read_date("09/02/2020", date_format="%d/%m/%Y")
    assert month_first is not None and month_first.date() == dt.date(2020, 9, 2)
    assert day_first is not None and day_first.date() == dt.date(2020, 2, 9)
    assert slashed_order(["09/02/2020", "01/13/2020"]) == "%m/%d/%Y"
    assert slashed_order(["09/02/2020"]) is None
    assert read_date("git Created") is None  # Eleventy's: no date written


def test_tags_normalised_mapped_and_cut_to_four():
    reading = normalise(
        ["GitHub Copilot", "Node.js", "machine-learning", "Developer Experience", "python"],
        {"GitHub Copilot": "copilot"},
    )
    assert reading.tags == ["copilot", "nodejs", "machinelearning", "developerexperience"]
    assert "left out python" in reading.changed[-1]
    assert normalise(["Astro", "astro"]).changed == []  # case alone is no change
    assert normalise(["日本語"]).unmapped == ["日本語"]


def source(**values) -> SourceConfig:
    unset = dict.fromkeys(
        (
            "url",
            "static_dir",
            "permalink",
            "timezone",
            "date_format",
            "id_key",
            "skip_key",
            "adopted",
        )
    )
    return SourceConfig(**{**unset, "trailing_slash": True, **values})


def test_a_jekyll_post_of_midnight_utc_is_served_the_day_before_in_new_york(tmp_path: Path):
    posts = tmp_path / "_posts"
    config = source(
        generator="jekyll",
        url="https://example.org/blog",
        permalink="/:year-:month-:day-:title/",
        timezone=NEW_YORK,
    )
    meta = {"date": dt.datetime(2021, 1, 24, 0, 0, tzinfo=dt.UTC)}
    path = posts / "2021-01-24-x.md"
    assert page_url(path, meta, config, posts) == "https://example.org/blog/2021-01-23-x/"
    # Without a date, the file's name gives it, at midnight in the site's time zone.
    assert page_url(path, {}, config, posts) == "https://example.org/blog/2021-01-24-x/"
    own = {"permalink": "/notes/:year/:title/"}
    assert page_url(path, own, config, posts) == "https://example.org/blog/notes/2021/x/"
    default = source(generator="jekyll", url="https://example.org", timezone=NEW_YORK)
    assert page_url(path, {"categories": "a b"}, default, posts) == (
        "https://example.org/a/b/2021/01/24/x.html"
    )


def test_hugo_bundles_astro_routes_and_eleventy_folders(tmp_path: Path):
    content = tmp_path / "content"
    hugo = source(generator="hugo", url="https://h.example")
    bundle = content / "2020" / "First-Steps" / "index.md"
    assert page_url(bundle, {}, hugo, content) == "https://h.example/2020/first-steps/"
    assert page_url(bundle, {"url": "/copilot/"}, hugo, content) == "https://h.example/copilot/"
    assert page_url(bundle, {"slug": "s"}, hugo, content) == "https://h.example/2020/s/"
    # Hugo's :title is the title, slugified; :filename the bundle's folder.
    dated = source(generator="hugo", url="https://h.example", permalink="/:year/:title/")
    meta = {"title": "Hello, World", "date": dt.date(2020, 5, 1)}
    assert page_url(bundle, meta, dated, content) == "https://h.example/2020/hello-world/"
    named = source(generator="hugo", url="https://h.example", permalink="/p/:filename/")
    assert page_url(bundle, meta, named, content) == "https://h.example/p/first-steps/"
    astro = source(
        generator="astro",
        url="https://a.example",
        permalink="/articles/:path",
        trailing_slash=False,
    )
    assert page_url(content / "Using MDX.mdx", {}, astro, content) == (
        "https://a.example/articles/using-mdx"
    )
    eleventy = source(generator="eleventy", url="https://e.example", permalink="/blog/:path/")
    assert page_url(content / "fourth" / "fourth.md", {}, eleventy, content) == (
        "https://e.example/blog/fourth/"
    )
    assert page_url(content / "x.md", {"permalink": "/elsewhere/"}, eleventy, content) == (
        "https://e.example/elsewhere/"
    )
    assert page_url(content / "x.md", {}, source(generator="hugo"), content) is None


HUGO = """
[site]
title = "Hugo"
content_dir = "content"

[source]
generator = "hugo"
url = "https://hugo.example.org"
id_key = "devtoId"
"""


def test_check_verbose_says_which_key_each_field_came_from(make_project):
    project = make_project(HUGO)
    project.write(
        "content/notes/index.md",
        """
        ---
        title: Notes
        date: "2021-02-01 10:22 -0500"
        tags: [Node.js, machine-learning]
        images: [cover.png]
        devtoId: "0"
        ---
        Text.
        """,
    )
    result = project.run("check", "-v", "content/notes")
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert "content/notes/index.md: read as hugo" in lines
    assert "  date: '2021-02-01T10:22:00-05:00' <- date" in lines
    assert "  tags: 'nodejs, machinelearning' <- tags" in lines
    assert "  cover_image: 'https://hugo.example.org/notes/cover.png' <- images" in lines
    assert any(
        line.startswith("  canonical_url: 'https://hugo.example.org/notes/'") for line in lines
    )
    assert not any(line.startswith("  article:") for line in lines)  # "0" names none
    assert "Node.js -> nodejs; machine-learning -> machinelearning" in result.output


def test_a_tag_that_cannot_be_mapped_is_refused_at_its_line(make_project):
    project = make_project(HUGO)
    project.write("content/a.md", "---\ntitle: A\ntags: [ok, 日本語]\n---\nText.\n")
    result = project.run("check")
    assert result.exit_code == 1
    assert "content/a.md:3: tags: '日本語' cannot be made a dev.to tag" in result.output


def test_an_unreadable_date_is_an_error_naming_its_key(make_project):
    project = make_project(HUGO.replace('generator = "hugo"', 'generator = "next"'))
    project.write("content/a.md", "---\ntitle: A\ncreated: 09/02/2020\n---\nText.\n")
    result = project.run("check")
    assert result.exit_code == 1
    assert "content/a.md:3: created: 09/02/2020 could be month/day or day/month" in result.output


def test_a_hostile_date_is_shown_escaped(make_project):
    project = make_project(HUGO)
    project.write("content/a.md", '---\ntitle: A\ndate: "\\e[31mMay 2020\\u202e"\n---\nText.\n')
    result = project.run("check")
    assert result.exit_code == 1
    assert "\x1b" not in result.output and "\u202e" not in result.output
    assert "content/a.md:3: date: '\\x1b[31mMay 2020\\u202e' is not a date" in result.output


def test_an_eleventy_post_without_a_page_is_never_sent(make_project):
    project = make_project(HUGO.replace('generator = "hugo"', 'generator = "eleventy"'))
    project.write("content/a.md", "---\ntitle: A\npermalink: false\n---\nText.\n")
    result = project.run("check", "-v")
    assert "  never sent: permalink: false (Eleventy writes no page for it)" in result.output


def test_forem_tags_maps_the_writers_tags(make_project):
    project = make_project(HUGO + '\n[forem.tags]\n"GitHub Copilot" = "copilot"\n')
    project.write("content/a.md", "---\ntitle: A\ntags: [GitHub Copilot]\n---\nText.\n")
    result = project.run("check", "-v")
    assert "  tags: 'copilot' <- tags" in result.output
    assert "GitHub Copilot -> copilot" in result.output
    (project.root / "toolkit.toml").write_text(HUGO + '\n[forem.tags]\n"C#" = "c-sharp"\n')
    refused = project.run("check")
    assert refused.exit_code != 0
    assert (
        "toolkit.toml: forem.tags: 'C#': the tag sent must be letters and digits" in refused.output
    )


def test_a_draft_of_the_site_fails_no_check_for_what_dev_to_would_refuse(make_project):
    project = make_project(HUGO)
    project.write("content/a.md", "---\ntitle: A\ndraft: true\ntags: [日本語]\n---\nText.\n")
    project.write("content/b.md", "---\ntitle: B\ndate: 2999-01-01\ntags: [日本語]\n---\nText.\n")
    result = project.run("check")
    assert "content/a.md:4: warning: tags: '日本語' cannot be made a dev.to tag" in result.output
    assert "(never sent: draft: true (a draft on the writer's site))" in result.output
    # A post that waits for its date is sent then: its errors stay errors.
    assert "content/b.md:4: tags: '日本語' cannot be made a dev.to tag" in result.output
    assert result.exit_code == 1


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        ('adopted = "last week"', "toolkit.toml: source.adopted: must be an ISO 8601 date"),
        ('timezone = "Mars/Olympus"', "toolkit.toml: source.timezone: must be an IANA time zone"),
    ],
)
def test_an_adoption_or_time_zone_toolkit_cannot_read_is_refused(make_project, line, problem):
    # Read as no adoption, every old post would be sent: it fails closed instead.
    project = make_project(HUGO + line + "\n")
    result = project.run("check")
    assert result.exit_code != 0
    assert problem in result.output


def test_a_jekyll_markdown_file_is_a_post_not_a_misnamed_one(make_project):
    project = make_project(HUGO.replace('generator = "hugo"', 'generator = "jekyll"'))
    project.write("content/2024-01-02-welcome-to-jekyll.markdown", "---\nlayout: post\n---\nHi.\n")
    result = project.run("check", "-v")
    name = "content/2024-01-02-welcome-to-jekyll.markdown"
    assert f"{name}: read as jekyll" in result.output
    assert "  date: '2024-01-02T00:00:00+00:00' <- the file's name" in result.output
    # Jekyll titles a post without `title:` by its file's name.
    assert "  title: 'Welcome To Jekyll' <- the file's name (as Jekyll titles it)" in result.output
    assert ".markdown" not in result.output.replace(name, "")
    assert result.exit_code == 0, result.output


def test_checking_one_post_compares_the_others_as_publish_reads_them(make_project):
    # Eleventy reads no `url:`: two posts, two pages.
    project = make_project(HUGO.replace('generator = "hugo"', 'generator = "eleventy"'))
    project.write("content/a/index.md", "---\ntitle: A\nurl: /same/\n---\nText.\n")
    project.write("content/b/index.md", "---\ntitle: B\nurl: /same/\n---\nText.\n")
    assert project.run("check", "content/a/index.md").exit_code == 0
    # Hugo's `url:` makes both one page on the writer's site: one slug and canonical_url
    # on dev.to. Checking one of them finds it, the other read again (not remembered).
    (project.root / "toolkit.toml").write_text(HUGO, encoding="utf-8")
    assert project.run("check").exit_code == 1
    one = project.run("check", "content/a/index.md")
    assert one.exit_code == 1, one.output
    assert "content/b/index.md" in one.output


def test_a_post_that_waits_for_its_date_passes_check_and_problems_name_the_key_written(
    make_project,
):
    project = make_project(HUGO.replace('generator = "hugo"', 'generator = "astro"'))
    project.write(
        "content/later.md",
        "---\ntitle: Later\npubDate: 2999-01-01\nheroImage: 7\n---\nText.\n",
    )
    result = project.run("check", "-v")
    # Sent by the first publish after its date: the API never sees it in the future.
    assert "in the future" not in result.output
    assert "  not sent yet: dated 2999-01-01T00:00:00+00:00: waits until then" in result.output
    project.write("content/later.md", "---\ntitle: Later\npubDate: 2999-01-01\n---\nText.\n")
    assert project.run("check").exit_code == 0
    project.write(
        "content/bad.md",
        "---\ntitle: Bad\npubDate: 2020-01-01\ncanonicalURL: ftp://x.example\n---\nText.\n",
    )
    refused = project.run("check", "content/bad.md")
    assert refused.exit_code == 1
    assert (
        "content/bad.md:4: canonicalURL: must be an absolute http(s) URL, not 'ftp://x.example'"
    ) in refused.output, refused.output


def test_a_toml_front_matter_toolkit_cannot_read_is_one_line_each(make_project):
    project = make_project(HUGO)
    deep = "[" * 20000 + "]" * 20000
    project.write("content/deep.md", f'+++\ntitle = "Deep"\na = {deep}\n+++\nX.\n')
    project.write("content/open.md", '+++\ntitle = "No end"\n')
    project.write("content/fine.md", "+++\ntitle = 'Fine'\n+++\nX.\n")
    result = project.run("check")
    assert result.exit_code == 1
    assert "content/deep.md:3: front matter: invalid TOML: nested too deeply" in result.output
    assert "content/open.md:1: front matter: the opening +++ has no closing +++" in result.output
    assert "3 posts checked: 2 errors" in result.output


@pytest.mark.parametrize(
    ("generator", "meta", "expected"),
    [
        ("jekyll", {"slug": "../../admin"}, "https://example.org/blog/admin/"),
        ("jekyll", {"permalink": "/a/../../../b/./c/"}, "https://example.org/blog/b/c/"),
        ("jekyll", {"permalink": "/x/../:title/"}, "https://example.org/blog/x/"),
        ("jekyll", {"permalink": "/notes/./post.html"}, "https://example.org/blog/notes/post.html"),
        ("hugo", {"url": "/../../etc/"}, "https://example.org/blog/etc/"),
        ("hugo", {"slug": ".."}, "https://example.org/blog/"),
    ],
)
def test_dot_segments_of_the_front_matter_never_lead_above_the_site(
    tmp_path: Path, generator, meta, expected
):
    """A `slug:`/`url:`/`permalink:` with `..` names a page of the site, as the generators
    serve it (they clean the path): the address never climbs above `[source] url`."""
    posts = tmp_path / "_posts"
    config = source(generator=generator, url="https://example.org/blog", permalink="/:slug/")
    assert page_url(posts / "2021-01-24-x.md", meta, config, posts) == expected
