"""Mirrored comments and reading list on the site: shown, nested, sanitised, incremental."""

from __future__ import annotations

import json
import re

import pytest

from tests.support.site_helpers import changed, parse_page, read, snapshot

# Every test here starts a process or opens a socket (tests/support/plugin.py).
pytestmark = pytest.mark.e2e


def comment(id_code: str, body_html: str, name: str, children=(), username: str | None = None):
    return {
        "type_of": "comment",
        "id_code": id_code,
        "created_at": "2024-05-04T10:20:30Z",
        "body_html": body_html,
        "user": {
            "name": name,
            "username": username or name.lower(),
            "microblog_username": None,
            "codehost_username": None,
            "website_url": None,
            "user_id": 7,
        },
        "children": list(children),
    }


HOSTILE = (
    '<p onclick="steal()" style="position:fixed">Nice post!<script>alert(1)</script>'
    '<a href="javascript:alert(2)">click</a> <a href="https://example.org/x">a link</a>'
    '<img src="https://example.org/a.png" onerror="alert(3)">'
    '<iframe src="https://evil.example/"></iframe><style>body{display:none}</style></p>'
)


def write_comments(project, name: str = "news", thread=None) -> None:
    thread = (
        thread
        if thread is not None
        else [
            comment(
                "a1",
                HOSTILE,
                "Bob",
                [
                    comment(
                        "a2",
                        "<p>Thanks, Bob.</p>",
                        "Ada",
                        [
                            comment("a3", "<p>Deep <em>reply</em>.</p>", "Cy"),
                        ],
                    ),
                ],
            ),
            comment("b1", "<p>Second thread.</p>", "Dee"),
        ]
    )
    data = {
        "article": {
            "id": 1,
            "title": "News",
            "url": "https://dev.to/ada/news-1a2b",
            "comments_count": 4,
        },
        "comments": thread,
    }
    project.write(f"content/_mirror/comments/{name}.json", json.dumps(data, indent=2))


def test_comments_are_shown_nested_under_the_post(site_project):
    write_comments(site_project)
    result = site_project.run("build")
    assert result.exit_code == 0, result.output
    page = read(site_project.root / "site", "news/index.html")
    assert "<h2>4 comments</h2>" in page
    section = page[page.index('<section class="comments"') :]
    # a1 holds a2, which holds a3; b1 is a second thread at the top level.
    a1 = section.index('id="comment-a1"')
    a2 = section.index('id="comment-a2"')
    a3 = section.index('id="comment-a3"')
    b1 = section.index('id="comment-b1"')
    assert a1 < a2 < a3 < b1
    between = section[a1:b1]
    assert between.count('<ol class="thread">') == 2  # two levels of replies inside a1
    assert 'href="https://dev.to/bob" rel="nofollow ugc noopener">Bob</a>' in section
    assert '<time datetime="2024-05-04T10:20:30+00:00">May 4, 2024</time>' in section
    assert "Deep <em>reply</em>." in section
    assert 'href="https://dev.to/ada/news-1a2b#comments"' in section
    # Other posts have no comment section.
    assert 'class="comments"' not in read(site_project.root / "site", "notes/index.html")


def test_comment_html_is_sanitised(site_project):
    write_comments(site_project)
    site_project.run("build")
    page = read(site_project.root / "site", "news/index.html")
    section = page[page.index('<section class="comments"') : page.index("</section>")]
    for forbidden in (
        "<script",
        "alert(1)",
        "onclick",
        "onerror",
        "javascript:",
        "<iframe",
        "<style",
        "style=",
        "display:none",
        "steal()",
    ):
        assert forbidden not in section, forbidden
    assert "Nice post!" in section
    links = re.findall(r"<a [^>]*>", section)
    assert all(
        'rel="nofollow ugc noopener"' in link or 'rel="noopener"' in link for link in links
    ), links
    assert '<a href="https://example.org/x" rel="nofollow ugc noopener">a link</a>' in section
    assert '<img src="https://example.org/a.png">' in section


def test_relative_urls_in_comments_point_at_the_site_they_came_from(site_project):
    write_comments(
        site_project,
        thread=[comment("c1", '<p><a href="/bob">@bob</a> <img src="pic.png"></p>', "Ann")],
    )
    site_project.run("build")
    out = site_project.root / "site"
    page = read(out, "news/index.html")
    assert '<a href="https://dev.to/bob" rel="nofollow ugc noopener">@bob</a>' in page
    for _, url in parse_page(out / "news" / "index.html").urls:
        assert "pic.png" not in url or url.startswith("https://dev.to/")


def test_comments_file_named_after_the_post_file_works_too(site_project):
    write_comments(site_project, name="usage")  # content/guide/usage.md, slug usage
    site_project.run("build")
    assert "4 comments" in read(site_project.root / "site", "usage/index.html")


def test_a_changed_comments_file_rewrites_only_that_post(site_project):
    write_comments(site_project)
    out = site_project.root / "site"
    site_project.run("build")
    before = snapshot(out)
    write_comments(site_project, thread=[comment("z9", "<p>Only one now.</p>", "Eve")])
    site_project.run("build")
    assert changed(before, snapshot(out)) == {"news/index.html"}
    assert "1 comment<" in read(out, "news/index.html")
    before = snapshot(out)
    (site_project.content / "_mirror" / "comments" / "news.json").unlink()
    site_project.run("build")
    assert changed(before, snapshot(out)) == {"news/index.html"}
    assert 'class="comments"' not in read(out, "news/index.html")


def test_a_broken_comments_file_is_reported_and_the_page_built_without_it(site_project):
    site_project.write("content/_mirror/comments/news.json", '{"comments": [\n  {"id_code": }\n]}')
    result = site_project.run("build")
    assert result.exit_code == 1
    assert "content/_mirror/comments/news.json:2: not valid JSON" in result.output
    out = site_project.root / "site"
    assert 'class="comments"' not in read(out, "news/index.html")
    result = site_project.run("build")  # still reported while it stays broken
    assert "news.json:2: not valid JSON" in result.output and result.exit_code == 1


READING_LIST = [
    {
        "type_of": "readinglist",
        "id": 1,
        "status": "valid",
        "created_at": "2024-01-01T00:00:00Z",
        "article": {
            "title": "Typing in Python",
            "url": "https://dev.to/x/typing-1",
            "path": "/x/typing-1",
            "description": "Types <b>help</b>.",
            "readable_publish_date": "Jan 1",
            "reading_time_minutes": 4,
            "tag_list": ["python", "types"],
            "tags": "python, types",
            "user": {"name": "Xu", "username": "x"},
        },
    },
    {
        "type_of": "readinglist",
        "id": 2,
        "status": "archived",
        "created_at": "2024-01-02T00:00:00Z",
        "article": {
            "title": "Shell tricks",
            "url": "javascript:alert(1)",
            "path": "/y/shell",
            "description": "",
            "readable_publish_date": "Feb 2",
            "reading_time_minutes": 2,
            "tag_list": "bash, shell",
            "user": {"name": "Yo", "username": "y"},
        },
    },
]


def test_reading_list_page_only_when_the_mirror_has_one(site_project):
    out = site_project.root / "site"
    site_project.run("build")
    assert not (out / "reading-list").exists()
    assert "Reading list" not in read(out, "index.html")

    site_project.write("content/_mirror/readinglist.json", json.dumps(READING_LIST))
    result = site_project.run("build")
    assert result.exit_code == 0, result.output
    page = read(out, "reading-list/index.html")
    assert '<a href="https://dev.to/x/typing-1" rel="noopener">Typing in Python</a>' in page
    assert "Types &lt;b&gt;help&lt;/b&gt;." in page
    assert "#python" in page and "#types" in page and "#bash" in page and "#shell" in page
    assert "javascript:" not in page and "Shell tricks" in page
    assert "archived" in page
    assert 'href="../reading-list/"' in read(out, "news/index.html")  # in the nav
    assert "https://example.com/blog/reading-list/" in read(out, "sitemap.xml")

    (site_project.content / "_mirror" / "readinglist.json").unlink()
    site_project.run("build")
    assert not (out / "reading-list").exists()
    assert "Reading list" not in read(out, "index.html")


def test_mirror_files_are_not_copied_into_the_site(site_project):
    write_comments(site_project)
    site_project.write("content/_mirror/readinglist.json", json.dumps(READING_LIST))
    site_project.run("build")
    site = site_project.root / "site"
    # The search index has JSON files of its own: Pagefind's entry and the list of parts.
    assert sorted(p.relative_to(site).as_posix() for p in site.rglob("*.json")) == [
        "pagefind/pagefind-entry.json",
        "pagefind/parts.json",
    ]


def test_a_teams_reading_list_page_has_a_section_per_writer(site_project):
    out = site_project.root / "site"
    site_project.write("content/_mirror/lin/readinglist.json", json.dumps(READING_LIST))
    site_project.write("content/_mirror/Bob/readinglist.json", json.dumps(READING_LIST[:1]))
    site_project.write("content/_mirror/jane-doe/readinglist.json", "[]")
    result = site_project.run("build")
    assert result.exit_code == 0, result.output
    page = read(out, "reading-list/index.html")
    sections = re.findall(r'<section id="([^"]+)">\s*<h2>([^<]+)</h2>', page)
    # The writers who saved something, in the order writers are listed everywhere.
    assert sections == [("writer-bob", "Bob"), ("writer-lin", "lin")]
    lin = page[page.index('<section id="writer-lin">') :]
    assert '<a href="https://dev.to/x/typing-1" rel="noopener">Typing in Python</a>' in lin
    assert "2 saved articles" in lin and "javascript:" not in lin
    assert "jane-doe" not in page and "Nothing saved yet." not in page
    assert 'href="#writer-lin"' in page
    assert 'href="../reading-list/"' in read(out, "news/index.html")  # in the nav

    # A writer's list changed: the page follows; all empty, it says so; all gone, it goes.
    site_project.write("content/_mirror/jane-doe/readinglist.json", json.dumps(READING_LIST[:1]))
    site_project.run("build")
    jane = read(out, "reading-list/index.html").split('<section id="writer-jane-doe">')[1]
    assert "1 saved article<" in jane.split("</section>")[0]
    for writer in ("lin", "jane-doe", "Bob"):
        site_project.write(f"content/_mirror/{writer}/readinglist.json", "[]")
    site_project.run("build")
    assert "Nothing saved yet." in read(out, "reading-list/index.html")
    for writer in ("lin", "jane-doe", "Bob"):
        (site_project.content / "_mirror" / writer / "readinglist.json").unlink()
    site_project.run("build")
    assert not (out / "reading-list").exists()
