"""What a reader gets on the built pages (seen in the HTML; tests/browser/ sees them in a
browser): a table of contents, previous/next links, reading time, card tags, code and
tables that take the focus, the search page and its index, the whole-post feed."""

from __future__ import annotations

import json
import re
import shutil
import xml.etree.ElementTree as ET

import pytest

from tests.support.site_helpers import changed, parse_page, read, snapshot

# Every test here starts a process or opens a socket (tests/support/plugin.py).
pytestmark = pytest.mark.e2e

ATOM = "{http://www.w3.org/2005/Atom}"
LONG = (
    "Intro.\n\n## First part\n\nText.\n\n### A detail\n\nMore.\n\n## Second `part`\n\n"
    "Text.\n\n#### Deep\n\nNot listed.\n"
)


def build(project, *args):
    result = project.run("build", *args)
    assert result.exit_code == 0, result.output
    return project.root / "site"


def test_a_post_with_three_headings_has_a_table_of_contents(project):
    project.post("long", "Long", published=True, date="2024-01-02", body=LONG)
    project.post(
        "short", "Short", published=True, date="2024-01-01", body="## One\n\nA.\n\n## Two\n\nB.\n"
    )
    out = build(project)
    long = read(out, "long/index.html")
    toc = long.split('<details class="toc"', 1)[1].split("</details>", 1)[0]
    assert re.findall(r'href="#([^"]+)">([^<]+)</a>', toc) == [
        ("first-part", "First part"),
        ("a-detail", "A detail"),
        ("second-part", "Second part"),
    ]
    assert toc.index("a-detail") > toc.index("<ol>", toc.index("first-part"))  # nested
    assert 'id="first-part"' in long and 'id="a-detail"' in long
    assert '<details class="toc"' not in read(out, "short/index.html")  # two headings


def test_posts_link_to_the_previous_and_next_post(project):
    for day, name in enumerate(("first", "second", "third"), start=1):
        project.post(name, name.title(), published=True, date=f"2024-01-0{day}")
    out = build(project)
    second = read(out, "second/index.html")
    nav = second.split('<nav class="post-nav"', 1)[1].split("</nav>", 1)[0]
    assert 'class="previous" href="../first/"' in nav and "First" in nav
    assert 'class="next" href="../third/"' in nav and "Third" in nav
    first = read(out, "first/index.html")
    assert 'class="previous"' not in first and 'class="next" href="../second/"' in first
    # A new post next to it rewrites the neighbour's page, not the others.
    before = snapshot(out)
    project.post("fourth", "Fourth", published=True, date="2024-01-04")
    build(project)
    written = changed(before, snapshot(out))
    assert "third/index.html" in written and "first/index.html" not in written
    assert 'href="../fourth/"' in read(out, "third/index.html")


def test_reading_time_and_card_tags_with_the_cover(project):
    (project.content / "cover.png").write_bytes(b"png")
    project.post(
        "covered",
        "Covered",
        published=True,
        date="2024-01-01",
        description="With a cover.",
        cover_image="cover.png",
        body="word " * 600,
    )
    out = build(project)
    page = parse_page(out / "covered" / "index.html")
    assert "3 min read" in read(out, "covered/index.html")
    assert "3 min read" in read(out, "index.html")
    image = "https://example.com/blog/cover.png"
    assert page.meta["og:image"] == [image] and page.meta["twitter:image"] == [image]
    assert page.meta["twitter:card"] == ["summary_large_image"]
    assert page.meta["twitter:title"] == ["Covered"]
    assert page.meta["twitter:description"] == ["With a cover."]


def test_code_blocks_and_tables_take_the_keyboard_focus(project):
    project.post(
        "code",
        "Code",
        published=True,
        date="2024-01-01",
        body="```python\nx = 1\n```\n\n    indented\n\n| a | b |\n|---|---|\n| 1 | 2 |\n",
    )
    html = read(build(project), "code/index.html")
    assert '<pre class="highlight" tabindex="0">' in html
    assert '<pre tabindex="0"><code>indented' in html
    assert '<div class="table-wrap" tabindex="0" role="region" aria-label="Table">' in html


def test_raw_html_cleaning_keeps_the_focusable_code_and_tables(project):
    """A post with raw HTML is cleaned with nh3: what the renderer writes survives it."""
    project.post(
        "raw",
        "Raw",
        published=True,
        date="2024-01-01",
        body="<b>raw</b>\n\n```\ncode\n```\n\n| a |\n|---|\n| 1 |\n",
    )
    html = read(build(project), "raw/index.html")
    assert '<pre tabindex="0"><code>code' in html
    assert '<div class="table-wrap" tabindex="0" role="region" aria-label="Table">' in html


def test_home_page_has_one_h1_and_search_page_is_built(project):
    project.post("hello", "Hello", published=True, date="2024-01-01")
    out = build(project)
    assert read(out, "index.html").count("<h1") == 1
    search = read(out, "search/index.html")
    assert 'data-index="../pagefind/"' in search and "static/search.js" in search
    assert "search.js" not in read(out, "hello/index.html")  # loaded only when searching
    assert 'href="../search/"' in read(out, "hello/index.html")


def test_the_search_index_holds_the_posts_and_follows_them(project):
    project.post("hello", "Hello", published=True, date="2024-01-01", body="Quokka facts.\n")
    project.post("other", "Other", published=True, date="2024-01-02", body="Wombat facts.\n")
    out = build(project)
    entry = json.loads(read(out, "pagefind/pagefind-entry.json"))
    assert entry["languages"]["en"]["page_count"] == 2  # the posts, not the listings
    # A build with nothing to do leaves the index alone.
    before = snapshot(out, search=True)
    build(project)
    assert changed(before, snapshot(out, search=True)) == set()
    # A removed post leaves no file of the old index behind: the same files as a clean
    # build of what is left.
    (project.content / "other.md").unlink()
    build(project)
    result = project.run("build", "--clean", "--out", str(project.root / "fresh"))
    assert result.exit_code == 0, result.output

    def index(folder):
        return {
            p.relative_to(folder).as_posix(): p.read_bytes()
            for p in (folder / "pagefind").rglob("*")
            if p.is_file()
        }

    assert index(out) == index(project.root / "fresh")
    assert (
        json.loads(read(out, "pagefind/pagefind-entry.json"))["languages"]["en"]["page_count"] == 1
    )


def test_a_symlink_in_place_of_the_index_is_replaced_not_written_through(project, tmp_path):
    project.post("hello", "Hello", published=True, date="2024-01-01", body="Quokka facts.\n")
    out = build(project)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "mine.txt").write_text("mine", encoding="utf-8")
    shutil.rmtree(out / "pagefind")
    (out / "pagefind").symlink_to(elsewhere, target_is_directory=True)
    project.post("hello", "Hello", published=True, date="2024-01-01", body="Wombat facts.\n")
    build(project)
    assert [p.name for p in elsewhere.iterdir()] == ["mine.txt"]  # untouched
    assert not (out / "pagefind").is_symlink()
    assert (out / "pagefind" / "pagefind-entry.json").is_file()


def test_the_feed_holds_summaries_unless_asked_for_whole_posts(make_project):
    config = '[site]\ntitle = "T"\nurl = "https://example.com/blog"\n'
    project = make_project(config)
    (project.content / "img.png").write_bytes(b"png")
    project.post(
        "one",
        "One",
        published=True,
        date="2024-01-01",
        description="Summary one.",
        body="See [two](two.md#part) and ![pic](img.png).\n",
    )
    project.post("two", "Two", published=True, date="2024-01-02", body="## Part\n\nText.\n")
    out = build(project)
    entries = ET.parse(out / "feed.xml").getroot().findall(f"{ATOM}entry")
    assert [e.find(f"{ATOM}content") for e in entries] == [None, None]

    (project.root / "toolkit.toml").write_text(config + "feed_full_content = true\n")
    out = build(project)
    by_title = {
        e.findtext(f"{ATOM}title"): e
        for e in ET.parse(out / "feed.xml").getroot().findall(f"{ATOM}entry")
    }
    content = by_title["One"].find(f"{ATOM}content")
    assert content is not None and content.text is not None
    assert content.get("type") == "html"
    assert (
        content.get("{http://www.w3.org/XML/1998/namespace}base") == "https://example.com/blog/one/"
    )
    assert '<a href="https://example.com/blog/two/#part">two</a>' in content.text
    assert 'src="https://example.com/blog/img.png"' in content.text
    assert by_title["One"].findtext(f"{ATOM}summary") == "Summary one."
    # An edit of a post in the feed rewrites the feed.
    before = snapshot(out)
    project.post("two", "Two", published=True, date="2024-01-02", body="## Part\n\nNew.\n")
    build(project)
    assert "feed.xml" in changed(before, snapshot(out))
    assert "New." in ET.parse(out / "feed.xml").getroot().findtext(f"{ATOM}entry/{ATOM}content", "")


def test_search_can_be_turned_off(project):
    project.post("hello", "Hello", published=True, date="2024-01-01")
    out = build(project)
    assert (out / "pagefind" / "pagefind.js").is_file()
    (project.root / "toolkit.toml").write_text(
        (project.root / "toolkit.toml").read_text() + "search = false\n"
    )
    build(project)
    assert not (out / "pagefind").exists() and not (out / "search").exists()
    assert "search/" not in read(out, "hello/index.html")
