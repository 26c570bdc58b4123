"""The two markdown engines write the same bytes.

markdown-it-pyrs (the fast path, `toolkit.site.markdown_fast`) is held to markdown-it-py
(the reference) on every post the project has: the posts the tests write, the user guide,
the demo account's articles and the benchmark's generated posts, and on posts Hypothesis
writes. A post the fast path refuses is rendered by the reference, and `toolkit build
--verbose` says which and why; without markdown-it-pyrs everything is rendered by the
reference, silently.
"""

from __future__ import annotations

import ast
import functools
import os
import random
import re
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, event, example, given, settings
from hypothesis import strategies as st

from tests.support.site_helpers import EMBEDS, HEADINGS, MATHS, link_targets
from toolkit.content.post import load_post, post_from_bytes
from toolkit.content.problems import PostError
from toolkit.site import markdown_fast
from toolkit.site.markdown import Body, MarkdownRenderer
from toolkit.site.markdown_fast_refusals import Unsupported

REPOSITORY = Path(__file__).resolve().parents[2]
EXAMPLES = int(os.environ.get("TOOLKIT_FUZZ_EXAMPLES", "150"))

# markdown-it-pyrs is installed only where it publishes a wheel (pyproject.toml): elsewhere
# there is one engine, and nothing to hold it to.
needs_fast_path = pytest.mark.skipif(
    markdown_fast.RUST_PORT is None,
    reason="markdown-it-pyrs is not installed for this Python: no fast path to compare",
)


@pytest.fixture(scope="module")
def content(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return link_targets(tmp_path_factory.mktemp("engines") / "content")


@pytest.fixture(scope="module")
def renderer(content: Path) -> MarkdownRenderer:
    return MarkdownRenderer(content, "content/")


def fast_or_reason(renderer: MarkdownRenderer, body: str, path: Path) -> Body | str:
    """The fast path's rendering, or why it refused the post."""
    try:
        return renderer.render_fast(body, path)
    except Unsupported as exc:
        return str(exc)


def compare(renderer: MarkdownRenderer, posts: list[tuple[str, str, Path]]) -> dict[str, str]:
    """Render each (name, body, path) with both engines: every field of the fast path's
    `Body` (html, excerpt, links, toc) equals the reference's, and so does `render`'s.
    Returns the posts the fast path refused, with the reason."""
    refused, different = {}, []
    for name, body, path in posts:
        reference = renderer.render_reference(body, path)
        fast = fast_or_reason(renderer, body, path)
        if isinstance(fast, str):
            refused[name] = fast
        elif fast != reference:
            different.append(name)
        if renderer.render(body, path) != reference:
            different.append(name)
    assert not different, f"the engines differ on {different}"
    return refused


# -- the project's own posts ------------------------------------------------------------


def _literal(node: ast.AST) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def fixture_bodies() -> dict[str, str]:
    """Every post body written as a literal in the tests: `body=`/`body_markdown=`
    arguments, `Project.post`'s third argument, the text given to the renderer, and the
    files written with a front matter (`---` first). Keyed by body, naming the file."""
    found: dict[str, str] = {}
    for path in sorted((REPOSITORY / "tests").rglob("*.py")):
        where = str(path.relative_to(REPOSITORY))
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            candidates: list[ast.AST] = []
            if isinstance(node, ast.Call):
                func = node.func
                name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
                candidates += [
                    k.value for k in node.keywords if k.arg in ("body", "body_markdown", "markdown")
                ]
                if name == "post" and len(node.args) >= 3:
                    candidates.append(node.args[2])
                if name == "render" and len(node.args) == 2:
                    candidates.append(node.args[1])
            elif (text := _literal(node)) is not None and text.startswith("---\n"):
                candidates.append(node)
            for candidate in candidates:
                text = _literal(candidate)
                if text is None:
                    continue
                found.setdefault(text, where)
                if text.startswith("---\n"):  # a whole file: its body too
                    try:
                        body = post_from_bytes(Path("x.md"), "x.md", text.encode()).body
                    except PostError:
                        continue
                    found.setdefault(body, where)
    return found


@needs_fast_path
def test_every_post_of_the_tests_renders_the_same_with_both_engines(renderer, content):
    bodies = fixture_bodies()
    assert len(bodies) > 100  # the collection itself works
    posts = [
        (f"{where} #{i}", body, content / "guide" / "post.md")
        for i, (body, where) in enumerate(bodies.items())
    ]
    refused = compare(renderer, posts)
    # The fast path takes the tests' posts but the few written to be odd.
    assert len(refused) < len(posts) // 5, refused


@needs_fast_path
def test_the_user_guide_renders_the_same_with_both_engines():
    content = REPOSITORY / "content"
    renderer = MarkdownRenderer(content, "content/")
    pages = sorted(p for p in content.rglob("*.md") if "_mirror" not in p.parts)
    assert len(pages) >= 8
    posts = []
    for page in pages:
        key = "content/" + page.relative_to(content).as_posix()
        post = load_post(page, key)
        posts.append((key, post.body, post.path))
    refused = compare(renderer, posts)
    # The fast path takes most pages (one with a code span broken over two lines is left
    # to the reference).
    assert len(refused) < len(posts) / 2, refused


@needs_fast_path
def test_the_demo_articles_render_the_same_with_both_engines(renderer, content):
    from toolkit_sandbox.forem import seed, seed_data

    posts = []
    for article in seed_data.ARTICLES:
        text = seed._body(article, random.Random(article["id"]))
        path = content / f"demo-{article['id']}.md"
        posts.append(
            (str(article["id"]), post_from_bytes(path, path.name, text.encode()).body, path)
        )
    assert compare(renderer, posts) == {}


# 1,000 posts through both engines: the lines they run are measured by the tests of the
# suite's own posts above (`untraced`: tracing them would double this test's time).
@needs_fast_path
@pytest.mark.untraced
def test_the_bench_corpus_renders_the_same_with_both_engines(renderer, content):
    sys.path.insert(0, str(REPOSITORY))
    try:
        from bench import site_corpus as bench_site
    finally:
        sys.path.remove(str(REPOSITORY))
    rng = random.Random(bench_site.SEED)  # the generator's own sequence, post after post
    posts = [
        (f"post-{i:04d}", bench_site._body(rng, i), content / f"post-{i:04d}.md")
        for i in range(150)
    ]
    assert compare(renderer, posts) == {}


# -- generated posts ----------------------------------------------------------------------

WORDS = [
    "alpha",
    "beta",
    "Gamma",
    "snake_case",
    "ünïcode",
    "日本語",
    "2024",
    "x.y",
    "C++",
    "it's",
    '"quoted"',
    "50%",
    "a-b",
    "e.g.",
    "—",
    "(aside)",
    "over",
]
ODD_WORDS = [
    "&",
    "a < b",
    "x > y",
    "😀",
    "€",
    "2*3",
    "_",
    "*",
    "\u00a0",
    "\\",
    "<kbd>",
    "~",
    "`",
    "|",
    "#",
    "[",
    "]",
]
LINKS = [
    "other.md",
    "other.md#part-2",
    "/guide/other.md",
    "../files/report.pdf",
    "https://example.org/a?b=1&c=2",
    "#top",
    "nope.md",
    "img/a.png",
    "<with space.md>",
    "javascript:alert(1)",
    "other.md 'Title'",
]
IMAGES = [
    "img/a.png",
    "/guide/img/a.png",
    "https://x.org/c.png",
    "missing.png",
    'img/a.png "A title"',
]
RAW_INLINE = [
    "<b>bold</b>",
    "<kbd>Ctrl</kbd>",
    "<br>",
    '<span class="x">y</span>',
    "<!-- note -->",
    "<script>x</script>",
    '<a href="other.md">a</a>',
]
RAW_BLOCKS = [
    "<div>\nsome *text*\n</div>",
    "<details>\n<summary>More</summary>\n\nHidden.\n\n</details>",
    "<!-- a comment -->",
    '<img src="img/a.png" onerror="x()">',
    "<pre>\nkept\n</pre>",
]
CODE = [
    "x = 1",
    "a < b && c > d",
    "print('<p>hi</p>')",
    "`tick`",
    "  indented",
    "",
    "#!/bin/sh",
    "let s = `${a}`;",
]
LANGS = ["python", "js", "bash", "text", "nosuchlang", "", "python {.lines}", "Python"]
# dev.to's Liquid tags, rendered after either engine (`toolkit.site.liquid_render`): good ones,
# hostile ones, unknown ones, and details that open and close in places.
LIQUID = [
    "{% youtube dQw4w9WgXcQ %}",
    "{% github forem/forem %}",
    "{% embed https://x.org/a?b=1&c=2 %}",
    "{% codepen https://codepen.io/u/pen/abc %}",
    "{% katex %}",
    "{% endkatex %}",
    "{% katex inline %}a_1 * b_1{% endkatex %}",
    "{% katex %}\\frac{a}{b}{% endkatex %}",
    "{% katex %}x^{% endkatex %}",
    "{% embed https://stackblitz.com/edit/d?embed=1&file=src%2Fmain.ts %}",
    "{% embed 'https://x.org/a#b' %}",
    "\ue0000\ue001",
    '{% youtube "><b>x %}',
    "{% details A *summary* %}",
    "{% details Summary %}",
    "{% enddetails %}",
    "{% link javascript:alert(1) %}",
    "{% x 123 %}",
]


@functools.cache
def inline(plain: bool = False) -> st.SearchStrategy[str]:
    """A line of inline Markdown (`plain`: nothing that keeps a post off the fast path).
    Each strategy of this module is made once and drawn from again: Hypothesis works out
    a new strategy's properties (can it be empty, ...) through all it is made of, which,
    made anew at each draw, took most of these tests' time."""
    return _inline(_inline_parts(plain), plain)


@functools.cache
def _inline_parts(plain: bool) -> st.SearchStrategy[list[str]]:
    words = st.sampled_from(WORDS if plain else WORDS + ODD_WORDS)
    text = st.lists(words, min_size=1, max_size=4).map(" ".join)
    pieces = [
        text,
        text.map(lambda t: f"*{t}*"),
        text.map(lambda t: f"**{t}**"),
        text.map(lambda t: f"_{t}_"),
        text.map(lambda t: f"~~{t}~~"),
        text.map(lambda t: f"`{t}`"),
        st.tuples(text, st.sampled_from(LINKS)).map(lambda p: f"[{p[0]}]({p[1]})"),
        st.tuples(text, st.sampled_from(IMAGES)).map(lambda p: f"![{p[0]}]({p[1]})"),
        st.sampled_from(
            [
                "<https://example.org/x>",
                "<me@example.org>",
                "[^1]",
                "[^note]",
                "&amp;",
                "&copy;",
                "&#35;",
                "\\*",
                "\\[",
                "\\#",
            ]
        ),
    ]
    if not plain:
        pieces += [
            st.sampled_from(RAW_INLINE),
            st.just("  \n"),
            st.just("\\\n"),
            st.just("^[an inline note]"),
            st.just("[x][ref]"),
            text.map(lambda t: f"***{t}***"),
            text.map(lambda t: f"*{t}**"),
        ]
    return st.lists(st.one_of(pieces), min_size=1, max_size=6)


@st.composite
def _inline(draw: st.DrawFn, parts_of: st.SearchStrategy[list[str]], plain: bool) -> str:
    parts = draw(parts_of)
    joint = " " if plain else draw(st.sampled_from([" ", "", " "]))
    return joint.join(parts).strip() or "text"


@functools.cache
def block(plain: bool = False, depth: int = 0) -> st.SearchStrategy[str]:
    """A block of Markdown, `depth` containers deep (a list item's, a quote's)."""
    return _block(plain, depth)


@st.composite
def _block(draw: st.DrawFn, plain: bool, depth: int) -> str:
    line = inline(plain)
    kinds = (
        ["heading", "paragraph", "fence", "code", "table", "list", "quote", "hr", "footnote"]
        + ([] if plain else ["html", "setext", "reference"])
        + ["liquid"]
    )
    if plain and depth:
        kinds.remove("footnote")  # a definition is read at the start of a line only
        kinds.remove("table")  # and a table indented in a list, where it is not known
    kind = draw(st.sampled_from(kinds if depth < 2 else kinds[:5]))
    if kind == "heading":
        return "#" * draw(st.integers(1, 6)) + " " + draw(line)
    if kind == "setext":
        return draw(line) + "\n" + draw(st.sampled_from(["===", "---"]))
    if kind == "paragraph":
        return "\n".join(draw(st.lists(line, min_size=1, max_size=3)))
    if kind == "fence":
        code = "\n".join(draw(st.lists(st.sampled_from(CODE), min_size=1, max_size=4)))
        fence = draw(st.sampled_from(["```", "~~~"]))
        return f"{fence}{draw(st.sampled_from(LANGS))}\n{code}\n{fence}"
    if kind == "code":
        return "\n".join(
            "    " + c for c in draw(st.lists(st.sampled_from(CODE[:4]), min_size=1, max_size=3))
        )
    if kind == "table":
        columns = draw(st.integers(1, 3))
        aligns = draw(
            st.lists(
                st.sampled_from(["---", ":--", ":-:", "--:"]), min_size=columns, max_size=columns
            )
        )
        cells = inline(True).map(lambda t: t.replace("|", "/"))
        rows = draw(
            st.lists(st.lists(cells, min_size=columns, max_size=columns), min_size=1, max_size=3)
        )
        lines = ["| " + " | ".join(row) + " |" for row in rows]
        return "\n".join([lines[0], "|" + "|".join(aligns) + "|", *lines[1:]])
    if kind == "list":
        marker = draw(st.sampled_from(["-", "*", "1.", "3)"]))
        items = draw(st.lists(line, min_size=1, max_size=4))
        joint = draw(st.sampled_from(["\n", "\n\n"]))
        text = joint.join(f"{marker} {item}" for item in items)
        if draw(st.booleans()):
            nested = draw(block(plain, depth + 1))
            if plain:
                joint = "\n\n"  # a table or a fence indented right under a line: refused
            text += joint + "\n".join("   " + row if row else row for row in nested.split("\n"))
        return text
    if kind == "quote":
        inner = draw(block(plain, depth + 1))
        return "\n".join("> " + row if row else ">" for row in inner.split("\n"))
    if kind == "hr":
        return draw(st.sampled_from(["---", "***", "___"]))
    if kind == "footnote":
        return f"[^{draw(st.sampled_from(['1', 'note']))}]: {draw(line)}"
    if kind == "html":
        return draw(st.sampled_from(RAW_BLOCKS))
    if kind == "liquid":
        return "\n".join(draw(st.lists(st.sampled_from(LIQUID), min_size=1, max_size=3)))
    return "[ref]: /guide/other.md 'T'"


@functools.cache
def document(plain: bool = False) -> st.SearchStrategy[str]:
    return st.lists(block(plain), min_size=1, max_size=6).map(lambda b: "\n\n".join(b) + "\n")


@needs_fast_path
@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(body=document())
def test_any_post_renders_as_the_reference_does(renderer, content, body):
    path = content / "guide" / "post.md"
    reference = renderer.render_reference(body, path)
    fast = fast_or_reason(renderer, body, path)
    event("refused: " + fast if isinstance(fast, str) else "fast path")
    if not isinstance(fast, str):
        assert fast == reference
    assert renderer.render(body, path) == reference


def ordinary_footnotes(body: str) -> str:
    """`body` with its footnotes as writers write them: each defined once, referred to,
    and not referring to others."""
    lines, labels = [], []
    for line in body.split("\n"):
        definition = re.match(r"\[\^(\w+)\]:(.*)", line)
        if definition is None:
            lines.append(line)
        elif definition.group(1) not in labels:
            labels.append(definition.group(1))
            text = re.sub(r"\[\^\w+\]", "", definition.group(2)).strip() or "A note."
            lines.append(f"[^{definition.group(1)}]: {text}")
    if labels:
        lines.insert(0, "See " + " ".join(f"[^{label}]" for label in labels) + ".\n")
    return "\n".join(lines)


@needs_fast_path
@settings(max_examples=EXAMPLES // 2, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(body=document(plain=True))
# A fence in a nested list item: its closing line, deep and right after code, is the
# fence's own, not inline text.
@example(body="- [a](b.md)\n\n   - a\n\n      ```python\n      x = 1\n      ```\n")
# The same in a quote: its closing line is the fence's too.
@example(body="> - alpha\n>\n>    - alpha\n>\n>       ~~~python\n>       x = 1\n>       ~~~\n")
def test_an_ordinary_post_takes_the_fast_path(renderer, content, body):
    """Headings, emphasis, links, images, code, tables, lists, quotes and footnotes: the
    fast path takes them all, so the equality above is not won by refusing."""
    body = ordinary_footnotes(body)
    path = content / "guide" / "post.md"
    fast = fast_or_reason(renderer, body, path)
    assert not isinstance(fast, str), fast
    assert fast == renderer.render_reference(body, path)


@pytest.mark.parametrize(
    ("title", "slug"),
    [
        # Forem's rule (app/lib/redcarpet/render/html_rouge.rb, `slugify`): lower case,
        # emoji out, ends trimmed, punctuation out, each whitespace run one `-`.
        ("A - Reflector", "a-reflector"),
        ("Intro", "intro"),
        ("Step-by-step: the `init` command!", "stepbystep-the-init-command"),
        ("snake_case and $PATH + <T>", "snakecase-and-path-t"),
        ("🎉 Party 🎉 time", "party-time"),
        ("Café «Crème» — ½ price", "café-crème-½-price"),
        ("Trailing ?", "trailing-"),
        ("©️ and © and ❤", "and-©-and-❤"),
        ("???", "section"),
    ],
)
def test_heading_slugs_follow_dev_to(title, slug):
    assert markdown_fast.slugify(title) == slug


@needs_fast_path
@pytest.mark.parametrize("body", [HEADINGS, MATHS, EMBEDS], ids=["headings", "maths", "embeds"])
def test_both_engines_write_dev_to_posts_alike(renderer, content, body):
    """Anchors on every level, `<a name>`, TeX in {% katex %}, tags in a line: the fast
    path takes them, and writes what the reference writes."""
    path = content / "post.md"
    fast = fast_or_reason(renderer, body, path)
    if body is HEADINGS:  # raw HTML: the reference renders it (and is the same)
        assert isinstance(fast, str) or fast == renderer.render_reference(body, path)
    else:
        assert not isinstance(fast, str), fast
        assert fast == renderer.render_reference(body, path)
    assert renderer.render(body, path) == renderer.render_reference(body, path)


def test_a_duplicate_slug_is_numbered_and_a_theme_id_is_never_taken():
    slugs = markdown_fast.Slugs()
    assert [markdown_fast.unique_slug(s, slugs) for s in ("intro", "intro", "intro")] == [
        "intro",
        "intro-1",
        "intro-2",
    ]
    assert markdown_fast.unique_slug("content", slugs) == "content-1"
    assert markdown_fast.unique_slug("comment-12", slugs) == "comment-12-1"
    assert markdown_fast.unique_slug("comment-section", slugs) == "comment-section"


@needs_fast_path
def test_both_engines_anchor_every_heading_level_alike(renderer, content):
    body = "".join(f"{'#' * level} Level {level} - here\n\ntext\n\n" for level in range(1, 7))
    body += "Setext\ntitle\n======\n\n## Level 2 - here\n\n## `code` and *em* ![img](x.png)\n"
    path = content / "post.md"
    fast = fast_or_reason(renderer, body, path)
    assert not isinstance(fast, str), fast
    assert fast == renderer.render_reference(body, path)
    for level in range(1, 7):
        assert f'<h{level} id="level-{level}-here">' in fast.html
    assert '<h1 id="setext-title">' in fast.html
    assert 'id="level-2-here-1"' in fast.html
    assert '<h2 id="code-and-em">' in fast.html
    assert [entry["id"] for entry in fast.toc] == [
        "level-2-here",
        "level-3-here",
        "level-2-here-1",
        "code-and-em",
    ]


# -- what the fast path refuses ------------------------------------------------------------

REFUSED = {
    "inline footnote ^[...]": "A note.^[Inline one.]\n",
    "a footnote defined twice": "A[^a]\n\n[^a]: one\n\n[^a]: two\n",
    "a footnote definition not at the start of a line": "A[^a]\n\n [^a]:[^a]\n",
    "a footnote that does not start with text": "A[^a]\n\n[^a]: <t>\nx\n",
    "emphasis beside a Unicode symbol": "*😀*é\n",
    "a run of tildes": ":~~~~>~~\n",
    "an unclosed code span": "[`\n",
    "a table whose header starts like another block": "- a | b\n--|--\n",
    "a table right after a quote or a list": "- item\na | b\n--|--\n",
    "a table row that starts like another block": "a | b\n--|--\n1. x\n",
    "a quote followed by another block": "> a\n2. b\n",
    "a code or HTML block without a line break at the end": "```\ncode",
    "whitespace other than spaces at the ends of a paragraph": "\u3000text\n",
    "a table without a | in its header": ".\n-|\n",
    "a code span of spaces": "```   ```\n",
    "emphasis delimiters after emphasis": "(*.\na**.***.**\n",
    "text that may be raw HTML": "a <!x b\n",
    "raw HTML read differently by CommonMark 0.30 and 0.31": "a\n<source>\n",
    "an HTML block of CommonMark 0.31": "`\n<!d`\n",
    "an HTML block without its end": "- <?d>\n\n",
    "an autolink with escapes": "<http://x.com/a%41>\n",
    "a code fence's info string": "```py\\{ x\ncode\n```\n",
    "a footnote that is never referred to": "[^1]: [^note]\n\n[^note]: alpha\n",
    "a footnote that refers to another": "A[^1]\n\n[^1]: see [^2]\n\n[^2]: two\n",
    "a table whose rule has no |": "`|\n--\n",
    "a table cell ending in \\|": "x\\||y\n-|-\n",
    "a link right before (": "[r](-\n_[]\n\n[r]: /u\n",
    "a link to a host outside ASCII": "[a](https://\u00e4.com/x)\n",
    "brackets nested too deeply": "[" * 21 + "a" + "]" * 21 + "(x)\n",
    "a code span over lines of a quote": "> a ```\n  y```\n",
    "an HTML block in a quote, with tabs": ">\t<div>\n",
    "nested too deeply": "> " * 20 + "a\n",
}


@needs_fast_path
@pytest.mark.parametrize("reason", sorted(REFUSED))
def test_what_the_fast_path_refuses_is_rendered_by_the_reference(renderer, content, reason):
    path = content / "guide" / "post.md"
    body = REFUSED[reason]
    assert fast_or_reason(renderer, body, path) == reason
    assert renderer.render(body, path) == renderer.render_reference(body, path)


def test_a_failure_of_the_fast_path_leaves_the_post_to_the_reference(content, caplog):
    class Broken:
        def render(self, body, env):
            raise KeyError("meta")  # a tree of a new markdown-it-pyrs the walk does not know

    renderer = MarkdownRenderer(content, "content/")
    renderer.fast = Broken()  # type: ignore[assignment]  # a stand-in that only fails
    path = content / "guide" / "post.md"
    with caplog.at_level("WARNING", logger="toolkit"):
        body = renderer.render("# Title\n\nText.\n", path)
    assert body == renderer.render_reference("# Title\n\nText.\n", path)
    assert (
        "content/guide/post.md: rendered with markdown-it-py (the fast path failed: "
        "KeyError)" in caplog.text
    )


@needs_fast_path
@pytest.mark.e2e
def test_a_refused_post_is_said_in_verbose_output_and_built_all_the_same(make_project):
    # The full-content feed renders every post a second time: the post is said once.
    project = make_project(
        '[site]\ntitle = "Test site"\nurl = "https://example.com/blog"\nfeed_full_content = true\n'
    )
    project.post("inline", "Inline", "A note.^[Inline one.]\n", published=True)
    project.post("plain", "Plain", "Plain *text*.\n", published=True)
    quiet = project.run("build")
    assert quiet.exit_code == 0, quiet.output
    assert "markdown-it-py" not in quiet.output
    verbose = project.run("build", "--clean", "-v")
    assert verbose.exit_code == 0, verbose.output
    said = " ".join(verbose.output.split())  # the log handler wraps long lines
    assert (
        said.count("content/inline.md: rendered with markdown-it-py (inline footnote ^[...])") == 1
    )
    assert "plain.md" not in said
    page = (project.root / "site" / "inline" / "index.html").read_text(encoding="utf-8")
    assert '<li id="fn1" class="footnote-item"><p>Inline one.' in page


@pytest.mark.e2e
def test_without_markdown_it_pyrs_the_reference_renders_everything_silently(make_project):
    project = make_project()
    project.post("inline", "Inline", "A note.^[Inline one.]\n", published=True)
    project.post(
        "plain",
        "Plain",
        "## Plain\n\n*text* [other](inline.md)\n\n| a |\n|---|\n| b |\n\n```python\nx = 1\n```\n",
        published=True,
    )
    with_it = project.run("build", "--out", "with")
    assert with_it.exit_code == 0, with_it.output
    blocked = (
        "import sys; sys.modules['markdown_it_pyrs'] = None; "  # import fails
        "from toolkit.site.markdown_fast import parser; assert parser() is None; "
        "from toolkit.__main__ import run; run()"
    )
    without = subprocess.run(
        [sys.executable, "-c", blocked, "-v", "build", "--out", "without"],
        cwd=project.root,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert without.returncode == 0, without.stderr
    assert "markdown-it-py" not in without.stderr  # nothing to say: nothing was refused
    built = {
        p.relative_to(project.root / "with"): p.read_bytes()
        for p in (project.root / "with").rglob("*")
        if p.is_file()
    }
    assert built and built == {
        p.relative_to(project.root / "without"): p.read_bytes()
        for p in (project.root / "without").rglob("*")
        if p.is_file()
    }
