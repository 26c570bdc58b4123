"""dev.to's Liquid tags and GitHub's task lists on the site, `check`'s warnings about the
tags the site cannot render, and `pinned: true`.

Every tag renders the same with both markdown engines, survives the sanitiser as it is,
and takes only a well-formed id or an http(s) URL of its service; the published body
keeps the tags as written.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.support.site_helpers import link_targets, read
from toolkit.content import liquid, liquid_scan
from toolkit.site.markdown import MarkdownRenderer
from toolkit.site.sanitize import clean_post_html

REPOSITORY = Path(__file__).resolve().parents[2]

EVERY_TAG = """Intro.

{% embed https://example.com/a?b=1&c=2 %}

{% embed https://www.youtube.com/watch?v=dQw4w9WgXcQ %}

{% link https://dev.to/kazz/boost-your-productivity-using-markdown-1be %}

{% link kazz/boost-your-productivity %}

{% youtube dQw4w9WgXcQ %}

{% vimeo 193110695 %}

{% github forem/forem %}

{% github https://github.com/forem/forem/issues/12 %}

{% twitter 834439977220112384 %}

{% x https://x.com/someone/status/834439977220112384 %}

{% codepen https://codepen.io/twhite96/pen/XKqrJX %}

{% gist https://gist.github.com/CristinaSolana/1885435 %}

{% codesandbox ppxnl191zx %}

{% stackblitz ball-demo %}

{% jsfiddle https://jsfiddle.net/link2twenty/v2kx9jcd %}

{% user jess %}

{% tag git %}

{% spotify spotify:episode:5V4XZWqZQJvbddd31n56mf %}

{% replit @WigWog/PositiveFineOpensource %}

{% details Click & see %}
Hidden *text*.

- a list

{% enddetails %}
"""


@pytest.fixture
def renderer(tmp_path: Path) -> MarkdownRenderer:
    return MarkdownRenderer(link_targets(tmp_path / "content"), "content/")


def both(renderer: MarkdownRenderer, body: str) -> str:
    """The body as the renderer writes it, the same with both engines."""
    path = renderer.content_dir / "post.md"
    reference = renderer.render_reference(body, path)
    assert renderer.render(body, path) == reference
    if renderer.fast is not None:
        try:
            assert renderer.render_fast(body, path) == reference
        except Exception as exc:
            assert type(exc).__name__ == "Unsupported", exc
    return reference.html


def test_every_tag_renders_as_a_card_a_frame_or_details(renderer):
    html = both(renderer, EVERY_TAG)
    assert "{%" not in html
    assert html.count('<div class="embed-frame"') == 7
    assert html.count('<div class="embed-card"') == 12
    assert (
        '<div class="embed-frame" data-frame="https://www.youtube-nocookie.com/embed/'
        'dQw4w9WgXcQ"><a href="https://www.youtube.com/watch?v=dQw4w9WgXcQ">YouTube video '
        'dQw4w9WgXcQ</a> <span class="embed-service">YouTube</span></div>\n'
    ) in html
    assert (
        '<div class="embed-card"><a href="https://github.com/forem/forem">forem/forem</a> '
        '<span class="embed-service">GitHub</span></div>\n'
    ) in html
    assert 'href="https://example.com/a?b=1&amp;c=2"' in html
    assert 'href="https://x.com/i/status/834439977220112384"' in html
    assert 'href="https://dev.to/kazz/boost-your-productivity"' in html
    assert (
        "<details><summary>Click &amp; see</summary>\n<p>Hidden <em>text</em>.</p>\n"
        "<ul>\n<li>a list</li>\n</ul>\n</details>\n"
    ) in html
    # Nothing is loaded from a service by the page itself: no iframe, script or image.
    assert not re.search(r"<(iframe|script|img|embed|object)", html)
    # The sanitiser keeps all of it as it is (a post with raw HTML is cleaned).
    assert clean_post_html(html) == html
    with_raw = both(renderer, EVERY_TAG + "\n<span>raw</span>\n")
    assert with_raw == html + "<p><span>raw</span></p>\n"


def test_every_frame_loads_only_from_the_services_the_script_knows():
    script = (REPOSITORY / "templates" / "static" / "site.js").read_text(encoding="utf-8")
    known = re.search(r"const FRAMES = \[(.*?)\];", script, re.DOTALL)
    assert known is not None
    assert tuple(re.findall(r'"([^"]+)"', known.group(1))) == liquid.FRAME_PREFIXES
    for line in EVERY_TAG.splitlines():
        if (match := liquid.TAG.fullmatch(line)) is not None:
            found = liquid.read_tag(match.group(1), match.group(2) or "")
            if isinstance(found, liquid.Frame):
                assert found.frame.startswith(liquid.FRAME_PREFIXES)


@pytest.mark.parametrize(
    "line",
    [
        '{% youtube dQw4w9WgXcQ"><script>alert(1)</script> %}',
        "{% youtube javascript:alert(1) %}",
        "{% embed javascript:alert(1) %}",
        "{% embed data:text/html,<b>x</b> %}",
        "{% embed https://user:secret@example.com/ %}",
        '{% embed https://example.com/"onmouseover="x %}',
        "{% link //example.com/x %}",
        "{% github ../../etc %}",
        '{% github a/b/c"x %}',
        "{% codepen https://evil.example/codepen.io/u/pen/x %}",
        "{% codepen https://codepen.io.evil.example/u/pen/x %}",
        "{% jsfiddle https://jsfiddle.net/u/x?<script> %}",
        "{% gist https://gist.github.com/u/<b> %}",
        "{% twitter 12abc %}",
        "{% vimeo 1;DROP %}",
        "{% katex %}",
        "{% details %}",
    ],
)
def test_a_hostile_or_unknown_tag_is_shown_as_written(renderer, line):
    html = both(renderer, f"Before.\n\n{line}\n\nAfter.\n")
    assert "embed-card" not in html and "embed-frame" not in html and "<details" not in html
    assert "<script" not in html and 'href="javascript' not in html and "data-frame" not in html
    assert not re.search(r'href="[^"]*secret', html)
    assert html.startswith("<p>Before.</p>\n")


def test_tags_in_code_inline_or_across_blocks_stay_text(renderer):
    body = (
        "```\n{% youtube dQw4w9WgXcQ %}\n```\n\n`{% youtube dQw4w9WgXcQ %}`\n\n"
        "Text *in {% youtube dQw4w9WgXcQ %} emphasis*.\n\n"
        '[a](b "x\n{% youtube dQw4w9WgXcQ %}\ny")\n\n'
        "- a\n\n  {% details In one item %}\n\n- b\n\n  {% enddetails %}\n"
    )
    html = both(renderer, body)
    assert "embed-frame" not in html and "<details>" not in html
    assert html.count("{% youtube dQw4w9WgXcQ %}") == 4


def test_a_tag_beside_text_lines_splits_the_paragraph(renderer):
    html = both(renderer, "Above.\n{% github forem/forem %}\nBelow.\n")
    assert html == (
        '<p>Above.</p>\n<div class="embed-card"><a href="https://github.com/'
        'forem/forem">forem/forem</a> <span class="embed-service">GitHub</span>'
        "</div>\n<p>Below.</p>\n"
    )


def test_a_tag_in_the_middle_of_a_line_renders_there(renderer):
    html = both(
        renderer,
        "Read {% link https://dev.to/kazz/post-1be %} for more, and "
        "{% embed 'https://stackblitz.com/edit/demo?embed=1&file=src%2Fmain.ts#L3' %}.\n",
    )
    assert html == (
        "<p>Read</p>\n"
        '<div class="embed-card"><a href="https://dev.to/kazz/post-1be">'
        'https://dev.to/kazz/post-1be</a> <span class="embed-service">dev.to</span></div>\n'
        "<p>for more, and</p>\n"
        '<div class="embed-card"><a href="https://stackblitz.com/edit/demo?embed=1&amp;'
        'file=src%2Fmain.ts#L3">https://stackblitz.com/edit/demo?embed=1&amp;file=src%2Fmain.ts#L3'
        '</a> <span class="embed-service">stackblitz.com</span></div>\n'
        "<p>.</p>\n"
    )
    assert clean_post_html(html) == html


def test_katex_renders_as_mathml_block_and_inline(renderer):
    body = (
        "Energy {% katex inline %}E = mc^2{% endkatex %} and *a_1 * b_1*.\n\n"
        "{% katex %}\nc = \\pm\\sqrt{a_1^2 + b_1^2} * 2\n{% endkatex %}\n\n"
        "{% katex %}x^{% endkatex %}\n\n"
        "Bad {% katex inline %}\\nosuch{x}{% endkatex %} here.\n\n"
        "`{% katex %}x{% endkatex %}`\n\n"
        "    {% katex %}indented{% endkatex %}\n"
    )
    html = both(renderer, body)
    assert "<script" not in html and "http" not in html.replace(
        "http://www.w3.org/1998/Math/MathML", ""
    )
    assert html.startswith(
        '<p>Energy <math xmlns="http://www.w3.org/1998/Math/MathML" display="inline">'
        "<mrow><mi>E</mi><mo>&#x0003D;</mo><mi>m</mi><msup><mi>c</mi><mn>2</mn></msup>"
        "</mrow></math> and <em>a_1 * b_1</em>.</p>\n"
        '<div class="math-display" tabindex="0" role="region" aria-label="Formula">'
        '<math xmlns="http://www.w3.org/1998/Math/MathML" display="block">'
    )
    # the TeX is read from the source: Markdown took neither `_` nor `*` nor `\\`
    assert "<msubsup><mi>a</mi><mn>1</mn><mn>2</mn></msubsup>" in html
    assert '<pre class="tex-error" tabindex="0"><code>x^</code></pre>' in html
    assert '<p>Bad <code class="tex-error">\\nosuch{x}</code> here.</p>' in html
    assert "<p><code>{% katex %}x{% endkatex %}</code></p>" in html
    assert '<pre tabindex="0"><code>{% katex %}indented{% endkatex %}\n</code></pre>' in html


def test_katex_tex_cannot_put_html_links_or_styles_in_the_page(renderer):
    """TeX is the post's: `\\text` holding HTML, `\\href` and `\\style` (which latex2mathml
    writes as they are) leave nothing but MathML's own markup."""
    body = (
        "{% katex %}\\text{<script>alert(1)</script>} + \\text{<img src=x onerror=alert(1)>}"
        "{% endkatex %}\n\n"
        "A {% katex inline %}\\href{javascript:alert(1)}{x} + \\style{color:red}{y}"
        "{% endkatex %} b.\n"
    )
    html = both(renderer, body)
    assert "<script" not in html and "<img" not in html and "onerror" not in html
    assert "javascript:" not in html and "href" not in html and "style=" not in html
    assert '<div class="math-display"' in html
    assert "<mrow><mi>x</mi></mrow>" in html and "<mi>y</mi>" in html


def test_a_heading_with_a_formula_has_an_anchor_its_contents_entry_leads_to(renderer):
    body = "## {% katex inline %}x^2{% endkatex %} maths\n\n## {% katex inline %}y{% endkatex %}\n"
    path = renderer.content_dir / "post.md"
    html = both(renderer, body)
    toc = renderer.render_reference(body, path).toc
    assert [entry["id"] for entry in toc] == ["maths", "section"]
    assert '<h2 id="maths"><math' in html and 'href="#maths"' in html
    assert '<h2 id="section"><math' in html and 'href="#section"' in html
    assert "\ue000" not in html and "{%" not in html


def test_a_long_paragraph_of_tags_in_lines_renders_each_once(renderer):
    """The paragraph's markup is read once, not once per line (a paragraph of thousands
    of lines is rendered in one pass)."""
    lines = [f"See *{i}* {{% youtube dQw4w9WgXcQ %}} and <em>{i}</em>" for i in range(2000)]
    html = both(renderer, "\n".join(lines) + "\n")
    assert html.count('<div class="embed-frame"') == 2000
    assert "{%" not in html
    assert html.startswith('<p>See <em>0</em></p>\n<div class="embed-frame"')


def test_check_reads_a_body_of_many_formulas_and_unclosed_katex_tags_in_one_pass():
    """Each `{% katex %}` looks for its end once (after an opening without one, no later
    opening has one either), and a tag's place among the formulas is looked up, not
    searched for."""
    closed = "{% katex inline %}x{% endkatex %} and {% nosuch %}"
    body = "\n\n".join([closed] * 1500 + ["text {% katex %} y"] * 1500)
    found = liquid_scan.scan(body)
    assert [f.line for f in found] == [2 * i + 1 for i in range(3000)]
    assert all("{% nosuch %}: the site does not render" in f.message for f in found[:1500])
    assert all("{% katex %}: not closed by {% endkatex %}" in f.message for f in found[1500:])


def test_task_lists_render_as_checkboxes(renderer):
    html = both(renderer, "- [ ] to do\n- [x] done\n- plain\n")
    assert (
        '<ul class="contains-task-list">\n<li class="task-list-item"><label><input '
        'class="task-list-item-checkbox" disabled="disabled" type="checkbox"> to do</label>'
        "</li>\n"
    ) in html
    assert 'checked="checked" disabled="disabled" type="checkbox"> done</label>' in html
    assert clean_post_html(html) == html


def test_check_warns_where_a_tag_is_not_rendered(project):
    project.post(
        "tags",
        "Tags",
        published=True,
        body=(
            "{% youtube dQw4w9WgXcQ %}\n\n"  # body line 1: rendered
            "{% katex %}\n\n"  # 3: never closed
            "See {% details x %} here.\n\n"  # 5: beside text
            "{% vimeo abc %}\n\n"  # 7: a bad argument
            "```\n{% nosuch %}\n```\n\n"  # in code: text
            "{% details Open %}\n"  # 13: never closed
        ),
    )
    result = project.run("check", "content/tags.md")
    assert result.exit_code == 0, result.output
    lines = [line for line in result.output.splitlines() if "Liquid" in line]
    first = 5  # the body starts after four lines of front matter
    assert [line.split(": warning: ")[0] for line in lines] == [
        f"content/tags.md:{first + n}" for n in (2, 4, 6, 12)
    ]
    assert "{% katex %}: not closed by {% endkatex %}" in lines[0]
    assert "{% details %}: shares its line with other text" in lines[1]
    assert "{% vimeo %}: needs a Vimeo video number" in lines[2]
    assert "{% details %}: not closed" in lines[3]


def test_check_warns_once_per_katex_tag_with_its_line(project):
    project.post(
        "maths",
        "Maths",
        published=True,
        body=(
            "{% katex %}\nx^\n{% endkatex %}\n\n"  # body line 1: a TeX error
            "Fine {% katex inline %}a_1{% endkatex %} and "
            "{% katex inline %}\\frac{a}{{% endkatex %}.\n\n"  # 5: one error
            "{% katex %}\nE = mc^2\n{% endkatex %}\n\n"
            "{% endkatex %}\n\n"  # 11: closes nothing
            "## See {% github forem/forem %}\n\n"  # 13: in a heading
            "| {% github forem/forem %} |\n|---|\n"  # 15: in a table
        ),
    )
    result = project.run("check", "content/maths.md")
    assert result.exit_code == 0, result.output
    lines = [line for line in result.output.splitlines() if "Liquid" in line]
    first = 5
    assert [line.split(": warning: ")[0] for line in lines] == [
        f"content/maths.md:{first + n}" for n in (0, 4, 10, 12, 14)
    ]
    assert "{% katex %}: TeX error: missing super script or subscript" in lines[0]
    assert "{% katex %}: TeX error: no available tokens" in lines[1]
    assert "{% endkatex %}: closes no {% katex %}" in lines[2]
    assert "{% github %}: in a heading or a table row" in lines[3]
    assert "{% github %}: in a heading or a table row" in lines[4]


def test_the_published_body_keeps_the_tags_as_written(project):
    from toolkit.content.payload import build_payload
    from toolkit.content.post import load_post

    body = "{% youtube dQw4w9WgXcQ %}\n\n- [ ] a task\n"
    path = project.post("tags", "Tags", published=True, pinned=True, body=body)
    article = build_payload(load_post(path, "content/tags.md"), project.content).data["article"]
    assert article["body_markdown"].endswith(body)
    assert "pinned" not in article["body_markdown"] and "pinned" not in json.dumps(article)


@pytest.mark.e2e
def test_a_pinned_post_comes_first_on_the_home_page_only(site_project):
    site_project.post(
        "old",
        "An old post",
        date="2020-01-01",
        published=True,
        pinned=True,
        tags=["news"],
        body="Old, and pinned.\n",
    )
    result = site_project.run("build")
    assert result.exit_code == 0, result.output
    out = site_project.root / "site"
    home = read(out, "index.html")
    titles = re.findall(
        r'<h2>(?:<span class="badge">Pinned</span> )?<a href="[^"]+">([^<]+)</a>', home
    )
    assert (
        titles[0] == "An old post" and '<span class="badge">Pinned</span> <a href="./old/"' in home
    )
    tag = read(out, "tags/news/index.html")
    assert tag.index("News") < tag.index("An old post") and "Pinned" not in tag
    # Unpinned, it goes back to its place by date.
    site_project.post(
        "old",
        "An old post",
        date="2020-01-01",
        published=True,
        tags=["news"],
        body="Old, and pinned.\n",
    )
    assert site_project.run("build").exit_code == 0
    home = read(out, "index.html")
    titles = re.findall(r'<h2><a href="[^"]+">([^<]+)</a>', home)
    assert "Pinned" not in home and titles[0] == "News"


@pytest.mark.e2e
def test_the_pinned_parts_of_a_series_land_in_the_series_order(site_project):
    """Pinned parts of a series are listed together, part 1 first, where the newest of
    them stands among the pinned posts (newest first)."""
    # The project's posts: the series "Guide" (2024-01-01, -02), then "News" (2024-02-01).
    for name, title in (
        ("guide/intro", "Introduction"),
        ("guide/setup", "Setup"),
        ("news", "News"),
    ):
        text = (site_project.content / f"{name}.md").read_text(encoding="utf-8")
        (site_project.content / f"{name}.md").write_text(
            text.replace(f"title: {title}\n", f"title: {title}\npinned: true\n", 1),
            encoding="utf-8",
        )
    result = site_project.run("build")
    assert result.exit_code == 0, result.output
    out = site_project.root / "site"
    home = read(out, "index.html") + read(out, "page/2/index.html")  # two posts a page
    titles = re.findall(r'<span class="badge">Pinned</span> <a href="[^"]+">([^<]+)</a>', home)
    assert titles == ["News", "Introduction", "Setup"]
