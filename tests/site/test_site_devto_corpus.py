"""Posts written the way writers write them for dev.to, published through the sandbox, then
built: every heading level with a hand-made table of contents, `<a name>` anchors, TeX in
`{% katex %}` (block and inline), embeds whose URL holds `%`, link tags in the middle of a
line, and an undated series of three whose titles are out of alphabetical order.

The built site has no Liquid tag left as written outside code, no body heading without an
id, no in-page link that reaches nothing; its series and home page follow the dates of
publication the lock recorded; `toolkit build` says each kind of warning once.
"""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

from tests.support.site_helpers import EMBEDS, HEADINGS, MATHS, read

# Every test here starts a process or opens a socket (tests/support/plugin.py).
pytestmark = pytest.mark.e2e

CONFIG = """
[site]
title = "dev.to site"
url = "https://example.com/blog"
per_page = 20

[forem]
rate_window = 1
"""

# (file, title, date of publication): the files' names, the titles and the dates each
# in another order
SERIES = [
    ("c-first", "Zebra, part 1", "2024-01-10"),
    ("a-second", "Alpha, part 2", "2024-02-10"),
    ("b-third", "Middle, part 3", "2024-03-10"),
]


class Page(HTMLParser):
    """A post page: the ids and names it holds, its in-page links, the headings of its
    body, and the text of its body outside code."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.targets: set[str] = set()
        self.fragments: list[str] = []
        self.headings: list[tuple[str, str | None]] = []
        self.prose: list[str] = []
        self.maths = 0
        self.depth = 0  # inside <div class="content">
        self.code = 0

    def handle_starttag(self, tag, attrs):
        attr = dict(attrs)
        for name in ("id",) + (("name",) if tag == "a" else ()):
            if attr.get(name):
                self.targets.add(str(attr[name]))
        href = attr.get("href") or ""
        if href.startswith("#") and len(href) > 1:
            self.fragments.append(href[1:])
        if tag == "div" and "content" in (attr.get("class") or "").split():
            self.depth = 1
        elif self.depth and tag == "div":
            self.depth += 1
        if self.depth and re.fullmatch(r"h[1-6]", tag):
            self.headings.append((tag, attr.get("id")))
        if self.depth and tag in ("pre", "code"):
            self.code += 1
        if self.depth and tag == "math":
            self.maths += 1

    def handle_endtag(self, tag):
        if self.depth and tag == "div":
            self.depth -= 1
        if self.depth and tag in ("pre", "code"):
            self.code -= 1

    def handle_data(self, data):
        if self.depth and not self.code:
            self.prose.append(data)


def parse(path: Path) -> Page:
    page = Page()
    page.feed(path.read_text(encoding="utf-8"))
    return page


@pytest.fixture
def corpus(make_project, sandbox):
    sandbox.reset()
    project = make_project(CONFIG)
    env = {"FOREM_BASE_URL": sandbox.base_url, "FOREM_API_KEY": sandbox.demo_api_key}
    (project.content / "guide").mkdir()
    project.post("guide/headings", "Headings everywhere", HEADINGS, published=True)
    project.post("maths", "Maths on the page", MATHS, published=True)
    project.post("embeds", "Embeds and links", EMBEDS, published=True)
    for name in ("one", "two", "three"):  # the same key unknown to dev.to, in three posts
        project.post(f"notes/{name}", f"Note {name}", "Text.\n", published=True, mood="calm")
    # The series is published with dates, as dev.to had them, then kept without: the lock
    # holds the dates of publication.
    for name, title, date in SERIES:
        project.post(name, title, "A part.\n", published=True, series="Trilogy", date=date)
    result = project.run("publish", env=env)
    assert result.exit_code == 0, result.output
    for name, title, _ in SERIES:
        project.post(name, title, "A part.\n", published=True, series="Trilogy")
    return project, env


def test_a_dev_to_corpus_builds_as_dev_to_shows_it(corpus):
    project, env = corpus
    lock = json.loads((project.root / "toolkit.lock").read_text(encoding="utf-8"))
    assert lock["posts"]["content/a-second.md"]["published_at"].startswith("2024-02-10")

    result = project.run("build", env=env)
    assert result.exit_code == 0, result.output
    site = project.root / "site"
    pages = sorted(site.glob("*/index.html"))
    posts = {path.parent.name: parse(path) for path in pages if path.parent.name not in (
        "tags", "search", "page", "reading-list",
    )}  # fmt: skip
    assert len(posts) == 9
    for slug, page in posts.items():
        assert "{%" not in "".join(page.prose), slug  # no tag left as written, but in code
        assert all(anchor for _, anchor in page.headings), (slug, page.headings)
        missing = [f for f in page.fragments if f not in page.targets]
        assert missing == [], (slug, missing)

    headings = posts["headings"]
    assert [tag for tag, _ in headings.headings] == [
        "h1", "h2", "h3", "h4", "h5", "h6", "h2", "h2", "h2", "h2",
    ]  # fmt: skip
    assert [anchor for _, anchor in headings.headings] == [
        "intro",
        "a-reflector",
        "why-its-fast",
        "level-four",
        "deep-dive",
        "level-six",
        "setup-again",
        "setup-again-1",
        "comments-1",  # the theme's `comments` is never taken
        "the-end",
    ]
    assert {"figure1", "note"} <= headings.targets
    maths = posts["maths"]
    assert maths.maths == 3
    maths_page = read(site, "maths/index.html")
    assert '<pre class="tex-error" tabindex="0"><code>\\frac{a}{</code></pre>' in maths_page
    assert "<script" not in maths_page.split("<main", 1)[1].split("</main>", 1)[0]
    embeds = read(site, "embeds/index.html")
    assert 'href="https://stackblitz.com/edit/demo?embed=1&amp;file=src%2Fmain.ts"' in embeds
    assert 'href="https://example.com/page?a=1&amp;b=2#part"' in embeds
    assert '<p>Read</p>\n<div class="embed-card"><a href="https://dev.to/kazz/' in embeds

    # The series in the order of publication, whatever the titles and the files' names.
    part2 = read(site, "a-second/index.html")
    series = part2.split('class="series"', 1)[1].split("</aside>", 1)[0]
    assert [title for title in re.findall(r">((?:Zebra|Alpha|Middle)[^<]*)<", series)][:3] == [
        "Zebra, part 1",
        "Alpha, part 2",
        "Middle, part 3",
    ]
    assert 'rel="prev" href="../c-first/">← Zebra, part 1' in series
    assert 'rel="next" href="../b-third/">Middle, part 3 →' in series
    assert '<time datetime="2024-02-10' in part2
    home = read(site, "index.html")
    order = [
        home.index(f'href="./{slug}/"') for slug in ("maths", "b-third", "a-second", "c-first")
    ]
    assert order == sorted(order)

    # Each kind of warning once: the key unknown in three posts, the TeX error.
    lines = [line for line in result.output.splitlines() if "warning: " in line]
    assert any(line.startswith("warning: 3 posts: unknown front matter key") for line in lines), (
        lines
    )
    assert sum("TeX error" in line for line in lines) == 1, lines
    kinds = [line.split("warning: ", 1)[1].split(": ", 1)[-1] for line in lines]
    assert len(kinds) == len(set(kinds)), lines
    verbose = project.run("build", "-v", env=env)
    assert sum("unknown front matter key" in line for line in verbose.output.splitlines()) == 3


def test_check_notes_a_series_without_dates_once(make_project):
    project = make_project(CONFIG)
    for name, title, _ in SERIES:
        project.post(name, title, "A part.\n", published=True, series="Trilogy")
    result = project.run("check")
    notes = [line for line in result.output.splitlines() if "series" in line]
    assert len(notes) == 1, result.output
    assert notes[0].startswith("content/a-second.md:")
    assert "3 of its 3 parts have no date" in notes[0]
    assert project.run("build").exit_code == 0
    page = read(project.root / "site", "a-second/index.html")
    series = page.split('class="series"', 1)[1].split("</aside>", 1)[0]
    # by the files' names: a-second, b-third, c-first
    assert re.findall(r">((?:Zebra|Alpha|Middle)[^<]*)<", series)[:3] == [
        "Alpha, part 2",
        "Middle, part 3",
        "Zebra, part 1",
    ]


def test_a_date_the_lock_learns_reorders_an_incremental_build(corpus):
    project, env = corpus
    assert project.run("build", env=env).exit_code == 0
    site = project.root / "site"
    lock_path = project.root / "toolkit.lock"
    lock = json.loads(lock_path.read_text(encoding="utf-8"))
    lock["posts"]["content/c-first.md"]["published_at"] = "2024-04-10T00:00:00Z"
    lock_path.write_text(json.dumps(lock), encoding="utf-8")

    result = project.run("build", env=env)
    assert result.exit_code == 0, result.output
    part = read(site, "c-first/index.html")
    assert '<time datetime="2024-04-10' in part
    series = read(site, "a-second/index.html").split('class="series"', 1)[1]
    assert re.findall(r">((?:Zebra|Alpha|Middle)[^<]*)<", series)[:3] == [
        "Alpha, part 2",
        "Middle, part 3",
        "Zebra, part 1",
    ]
    home = read(site, "index.html")
    order = [home.index(f'href="./{slug}/"') for slug in ("c-first", "b-third", "a-second")]
    assert order == sorted(order)
