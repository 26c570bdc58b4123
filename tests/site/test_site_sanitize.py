"""Raw HTML in a post is cleaned on the built site unless `[site] allow_raw_html = true`;
what the Markdown renderer writes itself comes through the cleaning with its meaning."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

from tests.support.hostile import article

CONFIG = """
[site]
title = "Test site"
url = "https://example.com/blog"
"""
RAW_CONFIG = CONFIG + "allow_raw_html = true\n"

# Each of these runs script on the page when it survives; the words are unique to them.
ATTACKS = (
    "Before.\n\n"
    "<script>alert('from-script-block')</script>\n\n"
    'An image <img src="https://example.com/x.png" onerror="alert(\'from-onerror\')"> inline.\n\n'
    "<a href=\"javascript:alert('from-javascript-url')\">click</a>\n\n"
    "<p onmouseover=\"alert('from-handler')\">hover</p>\n\n"
    # A link placeholder of the renderer's own making, forged in raw HTML: filled in
    # later, its fallback link would come back as written.
    "<a href=\"\x1acontent/none.md\x1a\x1ajavascript:alert('from-forged-link')\x1a\">x</a>\n"
    "<a href=\"&#x1a;content/none.md&#x1a;&#x1a;javascript:alert('from-forged-entity')"
    '&#x1a;">y</a>\n\n'
    "After.\n"
)


def dangers(text: str) -> list[str]:
    """What of ATTACKS could still run in `text`."""
    found = [word for word in ("from-script-block", "onerror", "onmouseover") if word in text]
    found += re.findall(r"""(?:href|src)\s*=\s*["']?\s*javascript:[^"'>]*""", text, re.I)
    return found


# Everything the renderer writes itself, in a post that also holds (harmless) raw HTML.
RICH = (
    "Press <kbd>Ctrl</kbd> to start[^note], then read [the other post](other.md#part) "
    'and see ![a shot](img/shot.png "A shot").\n\n'
    "## A heading\n\n"
    "### A smaller one\n\n"
    "| left | centre | right |\n|:-----|:------:|------:|\n| 1 | ~~2~~ | 3 |\n\n"
    '```python\nprint("highlighted")\n```\n\n'
    "    plain <code> block\n\n"
    "3. three\n4. four\n\n"
    "> quoted *text* with **strong** and `code`\n\n"
    "Line  \nbreak, then a rule:\n\n---\n\n"
    "[^note]: The footnote.\n"
)
PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c489"
    "0000000d49444154789c6300010000000500010d0a2db40000000049454e44ae426082"
)


def body_of(page: Path) -> str:
    """The post's body as it sits in its page."""
    html = page.read_text(encoding="utf-8")
    article_html = html.split('<div class="content">\n', 1)[1].split("</article>", 1)[0]
    return article_html.rsplit("\n  </div>", 1)[0]


def site_text(folder: Path) -> str:
    return "\n".join(
        p.read_text(encoding="utf-8", errors="replace")
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    )


class Tree(HTMLParser):
    """An HTML fragment as its meaning: tags with their attributes, and text."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.events: list[tuple] = []

    def handle_starttag(self, tag, attrs):
        self.events.append(("start", tag, sorted(attrs)))

    def handle_startendtag(self, tag, attrs):  # `<br />` means `<br>`
        self.handle_starttag(tag, attrs)

    def handle_endtag(self, tag):
        self.events.append(("end", tag))

    def handle_data(self, data):
        if self.events and self.events[-1][0] == "text":
            self.events[-1] = ("text", self.events[-1][1] + data)
        else:
            self.events.append(("text", data))


def tree(fragment: str) -> list[tuple]:
    parser = Tree()
    parser.feed(fragment)
    parser.close()
    return parser.events


def build(project, *args: str):
    result = project.run("build", *args)
    assert result.exit_code == 0, result.output
    return project.root / "site"


@pytest.mark.e2e
def test_raw_html_that_runs_script_is_cleaned_from_the_site(make_project):
    project = make_project(CONFIG)
    project.post("attack", "Attack", ATTACKS, published=True, date="2024-01-01")

    site = build(project)

    assert dangers(site_text(site)) == []
    body = body_of(site / "attack" / "index.html")
    assert "<p>Before.</p>" in body and "<p>After.</p>" in body
    assert "<script" not in body and "onerror" not in body
    assert '<img src="https://example.com/x.png">' in body and "<p>hover</p>" in body


@pytest.mark.e2e
def test_allow_raw_html_keeps_it_as_written(make_project):
    project = make_project(RAW_CONFIG)
    project.post("attack", "Attack", ATTACKS, published=True, date="2024-01-01")

    body = body_of(build(project) / "attack" / "index.html")

    assert {"from-script-block", "onerror", "onmouseover"} <= set(dangers(body))
    assert "<script>alert('from-script-block')</script>" in body
    assert "onerror=\"alert('from-onerror')\"" in body
    assert "href=\"javascript:alert('from-javascript-url')\"" in body


@pytest.mark.e2e
def test_changing_allow_raw_html_rebuilds_the_posts(make_project):
    project = make_project(CONFIG)
    project.post("attack", "Attack", ATTACKS, published=True, date="2024-01-01")
    page = project.root / "site" / "attack" / "index.html"
    build(project)
    assert "from-script-block" not in page.read_text()

    (project.root / "toolkit.toml").write_text(RAW_CONFIG)
    build(project)
    assert "from-script-block" in page.read_text()

    (project.root / "toolkit.toml").write_text(CONFIG)
    build(project)
    assert "from-script-block" not in page.read_text()


def rich_project(make_project, config: str, name: str):
    project = make_project(config, name=name)
    (project.content / "img").mkdir()
    (project.content / "img" / "shot.png").write_bytes(PNG)
    project.post("rich", "Rich", RICH, published=True, date="2024-01-02")
    project.post(
        "other",
        "Other",
        "## Part\n\nThe other post.\n",
        published=True,
        date="2024-01-01",
        slug="elsewhere",
    )
    return project


@pytest.mark.e2e
def test_the_renderers_own_html_survives_the_cleaning(make_project):
    cleaned = body_of(build(rich_project(make_project, CONFIG, "cleaned")) / "rich/index.html")
    kept = body_of(build(rich_project(make_project, RAW_CONFIG, "kept")) / "rich/index.html")

    # The same tags, attributes and text: only the way nh3 writes them out differs.
    assert tree(cleaned) == tree(kept)
    for snippet in (
        '<h2 id="a-heading">A heading <a class="header-anchor" href="#a-heading" aria-label="Link to this section">#</a></h2>',
        '<h3 id="a-smaller-one">',
        '<sup class="footnote-ref"><a href="#fn1" id="fnref1">[1]</a></sup>',
        '<section class="footnotes">',
        '<ol class="footnotes-list">',
        '<li id="fn1" class="footnote-item">',
        '<a href="#fnref1" class="footnote-backref">',
        '<th style="text-align:left">left</th>',
        '<th style="text-align:center">centre</th>',
        '<td style="text-align:right">3</td>',
        "<s>2</s>",
        '<pre class="highlight" tabindex="0"><code class="language-python"><span class="nb">print</span>',
        '<pre tabindex="0"><code>plain &lt;code&gt; block',
        '<ol start="3">',
        '<a href="../elsewhere/#part">the other post</a>',
        '<img src="../img/shot.png" alt="a shot" title="A shot"',
        "<kbd>Ctrl</kbd>",
    ):
        assert snippet in cleaned, snippet
        assert snippet in kept, snippet


@pytest.mark.e2e
def test_a_post_without_raw_html_is_byte_for_byte_the_same(make_project):
    def project(config: str, name: str):
        made = rich_project(make_project, config, name)
        made.post(
            "rich",
            "Rich",
            RICH.replace("<kbd>Ctrl</kbd>", "Ctrl"),
            published=True,
            date="2024-01-02",
        )
        return made

    cleaned = build(project(CONFIG, "cleaned")) / "rich" / "index.html"
    kept = build(project(RAW_CONFIG, "kept")) / "rich" / "index.html"
    assert cleaned.read_bytes() == kept.read_bytes()
    assert b"<hr />" in cleaned.read_bytes()  # as markdown-it writes it: not re-serialised


def test_a_pulled_article_cannot_put_script_on_the_site(make_project, hostile):
    project = make_project(CONFIG)
    body = "---\ntitle: Pulled\npublished: true\n---\n" + ATTACKS
    hostile.articles = [article(5, "Pulled", "pulled-x1", body_markdown=body)]
    pulled = project.run("pull", env=hostile.env)
    assert pulled.exit_code == 0, pulled.output

    site = build(project)

    assert "<p>Before.</p>" in body_of(site / "pulled" / "index.html")
    assert dangers(site_text(site)) == []


def test_allow_raw_html_must_be_a_boolean(make_project):
    project = make_project(CONFIG + 'allow_raw_html = "yes"\n')
    result = project.run("build")
    assert result.exit_code == 1
    assert "site.allow_raw_html: must be true or false" in result.output


def test_a_writers_anchors_are_kept_and_the_themes_ids_are_not_taken():
    from toolkit.site.sanitize import clean_post_html

    html = (
        '<p><a name="figure1"></a><span id="note" title="A note">n</span>'
        '<a id="content" name="comments">x</a><a name="comment-3">y</a>'
        '<small id="s" onclick="x()">s</small></p><ol><li value="3">i</li></ol>'
    )
    assert clean_post_html(html) == (
        '<p><a name="figure1"></a><span id="note" title="A note">n</span>'
        '<a>x</a><a>y</a><small id="s">s</small></p><ol><li value="3">i</li></ol>'
    )
