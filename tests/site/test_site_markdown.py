"""The markdown renderer on its own: features, rewritten URLs, excerpts, word counts."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.site_helpers import link_targets
from toolkit.site.markdown import MarkdownRenderer, excerpt_of, resolve_links
from toolkit.site.render import count_words, reading_time


@pytest.fixture
def content(tmp_path: Path) -> Path:
    return link_targets(tmp_path / "content")


def render(content: Path, text: str):
    renderer = MarkdownRenderer(content, "content/")
    return renderer.render(text, content / "guide" / "post.md")


def test_gfm_features(content):
    html = render(content, "| a | b |\n|---|---|\n| ~~x~~ | y |\n\nText[^n].\n\n[^n]: Note.\n").html
    assert "<table>" in html and "<s>x</s>" in html
    assert '<sup class="footnote-ref"><a href="#fn1" id="fnref1">[1]</a></sup>' in html
    assert '<li id="fn1" class="footnote-item"><p>Note.' in html


def test_heading_anchors(content):
    html = render(content, "# Title\n\n## A section\n\n### Sub section\n").html
    assert '<h1 id="title">Title <a class="header-anchor" href="#title"' in html
    assert (
        '<h2 id="a-section">A section <a class="header-anchor" href="#a-section" aria-label="Link to this section">#</a></h2>'
        in html
    )
    assert '<h3 id="sub-section">' in html


def test_code_is_highlighted_with_css_classes(content):
    html = render(
        content, "```python\nx = 1  # one\n```\n\n```nosuchlang\na < b\n```\n\n```\nplain\n```\n"
    ).html
    assert (
        '<pre class="highlight" tabindex="0"><code class="language-python"><span class="n">x</span>'
        in html
    )
    assert '<span class="c1"># one</span>' in html
    assert '<pre tabindex="0"><code class="language-nosuchlang">a &lt; b\n</code></pre>' in html
    assert '<pre tabindex="0"><code>plain\n</code></pre>' in html


def test_relative_images_and_files_point_at_their_copies(content):
    body = render(
        content,
        "![a](img/a.png) ![b](/guide/img/a.png) ![c](https://x.org/c.png)"
        " [pdf](../files/report.pdf) [#](#top) ![gone](img/missing.png)\n",
    )
    assert '<img src="../guide/img/a.png" alt="a"' in body.html
    assert body.html.count('src="../guide/img/a.png"') == 2
    assert '<img src="https://x.org/c.png" alt="c"' in body.html
    assert '<a href="../files/report.pdf">pdf</a>' in body.html
    assert '<a href="#top">#</a>' in body.html
    # A missing file is an error of the post (`check`), so its page is not built anyway.
    assert 'src="../guide/img/missing.png"' in body.html


def test_links_to_posts_become_links_to_their_pages(content):
    body = render(
        content, "[other](other.md#part-2) and [again](/guide/other.md) and [missing](nope.md)\n"
    )
    # A link to a post that does not exist yet counts too: the page is redone when it comes.
    assert body.links == ["content/guide/nope.md", "content/guide/other.md"]
    html = resolve_links(body.html, {"content/guide/other.md": "the-other"})
    assert '<a href="../the-other/#part-2">other</a>' in html
    assert '<a href="../the-other/">again</a>' in html
    assert '<a href="nope.md">missing</a>' in html
    # A post that is not on the site (a draft, a post with errors) keeps the link as written.
    assert '<a href="other.md#part-2">other</a>' in resolve_links(body.html, {})


def test_excerpt_is_the_first_paragraph_as_text():
    assert (
        excerpt_of("<h2>T</h2><p>Hello <em>there</em> &amp; <a href='x'>you</a>.</p><p>No.</p>")
        == "Hello there & you."
    )
    long = "<p>" + "word " * 100 + "</p>"
    short = excerpt_of(long)
    assert short.endswith("…") and len(short) <= 201
    assert excerpt_of("<pre>code</pre>") == ""


def test_words_and_reading_time_as_the_api_counts_them():
    assert count_words("Hello, world! It's 2024 — ok_then.") == 6
    assert count_words("Café crème, déjà vu") == 4
    assert reading_time(0) == 1
    assert reading_time(275) == 1
    assert reading_time(276) == 2
