"""Every scanner of a writer's or the website's text works in time linear in it: Liquid
tags (`check` and `build`), `[content] exclude` patterns, heading anchors. Asserted on the
work done where it can be counted; the CLI tests' size is one a quadratic scan would not
finish within their timeout (a backstop, not a measure: `bench/scan.py` has the figures)."""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from toolkit.content.liquid import TAG, code_spans, find_tags
from toolkit.content.liquid_maths import KATEX_OPEN
from toolkit.site import markdown_fast
from toolkit.site.markdown import Body, MarkdownRenderer

PIECES = ["{%", "%}", "-%}", "{%-", " ", "\n", "katex", "endkatex", "inline", "x", "%", "{", "}"]


class _Counting:
    """A pattern that counts the characters each match is tried on (a match that fails
    does so in its name, which no two openings share: not counted here)."""

    def __init__(self, pattern: re.Pattern[str]):
        self.pattern = pattern
        self.read = self.tried = 0

    def fullmatch(self, text: str, pos: int, endpos: int) -> re.Match[str] | None:
        match = self.pattern.fullmatch(text, pos, endpos)
        self.read += 0 if match is None else endpos - pos
        self.tried += 1
        return match


@given(st.lists(st.sampled_from(PIECES), max_size=60).map("".join))
def test_find_tags_finds_what_finditer_finds(text):
    for pattern in (TAG, KATEX_OPEN):
        assert [m.span() for m in find_tags(pattern, text)] == [
            m.span() for m in pattern.finditer(text)
        ]


@pytest.mark.parametrize(
    "text",
    [
        "{% katex " * 20_000,
        "x {%" * 20_000,
        "{% katex " * 20_000 + "%}",  # one tag, closed at the very end
        ("{% katex\n" * 10_000) + "%}",
        "{%%}" * 20_000,
    ],
)
def test_each_character_is_tried_a_bounded_number_of_times(text):
    counting = _Counting(TAG)
    list(find_tags(counting, text))  # type: ignore[arg-type]
    assert counting.read <= len(text)
    assert counting.tried <= text.count("{%")


HOSTILE = [
    "{% katex " * 30_000,  # 270 KB on one line, no `%}` anywhere after
    "x {%" * 30_000,
    "> " * 30_000 + "{% youtube x %}",  # quote markers, read once
]


@pytest.mark.e2e
@pytest.mark.timeout(60)
@pytest.mark.parametrize("body", HOSTILE, ids=["katex", "openings", "quotes"])
def test_check_and_build_read_a_line_of_unclosed_openings_once(make_project, body):
    project = make_project()
    project.write("content/hostile.md", "---\ntitle: Hostile\npublished: true\n---\n")
    with (project.content / "hostile.md").open("a") as file:
        file.write(body + "\n\nAfter them {% youtube bad %} is read.\n")
    check = project.run("check")
    assert check.exit_code == 0, check.output
    assert "content/hostile.md:7: warning: Liquid tag {% youtube %}: needs a YouTube" in (
        check.output
    )
    build = project.run("build")
    assert build.exit_code == 0, build.output
    page = (project.root / "site" / "hostile" / "index.html").read_text()
    assert "After them {% youtube bad %} is read." in page


def engines(renderer: MarkdownRenderer) -> list[Callable[[str, Path], Body]]:
    """The renderer's engines: the reference, and the fast path where markdown-it-pyrs is
    installed (pyproject.toml installs it only where it publishes a wheel)."""
    fast = [renderer.render_fast] if markdown_fast.RUST_PORT is not None else []
    return [*fast, renderer.render_reference]


# The subject is the time 30,000 headings take; the lines they run are measured by the
# tests of a few headings (`untraced`: tracing them would double this test's time).
@pytest.mark.untraced
@pytest.mark.timeout(60)
def test_a_heading_number_is_found_in_one_step(tmp_path):
    """10,000 `## same` headings took 19 s: each tried every number taken before it (30,000
    would take minutes per engine)."""
    headings = 30_000
    body = "## Same\n\n" * headings + "## Same 1\n\n## Content\n"
    renderer = MarkdownRenderer(tmp_path, "content/")
    path = tmp_path / "post.md"
    for render in engines(renderer):
        html = render(body, path).html
        assert 'id="same"' in html and f'id="same-{headings - 1}"' in html
        assert 'id="same-1-1"' in html  # `same-1` was taken by a `## Same`
        assert 'id="content-1"' in html  # the theme's own id is never a heading's
        assert html.count("<h2 ") == headings + 2


def test_heading_ids_are_numbered_across_every_heading_level(tmp_path):
    """`# Same` to `###### Same` share one count of ids; `#######` is text, not a heading."""
    body = "".join("#" * level + " Same\n\n" for level in range(1, 7)) + "####### Seven\n"
    renderer = MarkdownRenderer(tmp_path, "content/")
    path = tmp_path / "post.md"
    for render in engines(renderer):
        html = render(body, path).html
        assert re.findall(r'<h(\d) id="([^"]+)"', html) == [
            ("1", "same"),
            ("2", "same-1"),
            ("3", "same-2"),
            ("4", "same-3"),
            ("5", "same-4"),
            ("6", "same-5"),
        ]
        assert "####### Seven" in html and "<h7" not in html


@pytest.mark.timeout(60)
def test_an_exclude_pattern_is_matched_without_backtracking(make_project):
    pattern = "*a" * 25 + "b.md"
    project = make_project(f'[site]\ntitle = "T"\n\n[content]\nexclude = ["{pattern}"]\n')
    project.post("a" * 60, "Kept", "Body.\n")  # each `*` could take any run of `a`s
    project.post("a" * 30 + "b", "Left out", "Body.\n")
    project.post("other-" + "a" * 40, "Kept too", "Body.\n")
    check = project.run("check")
    assert check.exit_code == 0, check.output
    assert "2 posts checked" in check.output


@pytest.mark.e2e
@pytest.mark.parametrize("prefix", ["> ", "- ", "1. ", "> * "])
def test_a_line_of_a_hundred_thousand_containers_is_built_not_a_crash(make_project, prefix):
    """The Rust parser recursed once for each quote or list item a line opens: 100,000 of
    them overflowed its stack and the build died of a segmentation fault. Run in a
    process of its own, so that such a crash fails this test only."""
    project = make_project()
    body = prefix * (500_000 // len(prefix)) + "deep\n\nAfter it.\n"
    project.write("content/deep.md", "---\ntitle: Deep\npublished: true\n---\n" + body)
    build = subprocess.run(
        [sys.executable, "-m", "toolkit", "build"],
        cwd=project.root,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert build.returncode == 0, (build.returncode, build.stderr[-2000:])
    assert "<h1>Deep</h1>" in (project.root / "site" / "deep" / "index.html").read_text()


@pytest.mark.timeout(60)
def test_code_spans_of_a_line_of_falling_backtick_runs_are_read_once(make_project):
    """Each run of backticks looked for its closing run to the line's end, and tried
    again one backtick shorter: 720 KB of runs of falling lengths took minutes."""
    runs = "".join("`" * length + "x" for length in range(1000, 1, -1))
    line = "{% katex %}a{% endkatex %} " + runs + " `{% youtube bad %}` {% vimeo bad %}"
    project = make_project()
    project.write("content/ticks.md", "---\ntitle: Ticks\npublished: true\n---\n" + line + "\n")
    check = project.run("check")
    assert check.exit_code == 0, check.output
    warnings = [text for text in check.output.splitlines() if ": warning: " in text]
    assert warnings == [  # the tag in a code span is text
        "content/ticks.md:5: warning: Liquid tag {% vimeo %}: needs a Vimeo video number; "
        "the site shows it as written (dev.to renders it)"
    ]


@pytest.mark.parametrize(
    ("line", "blanked"),
    [
        ("a `b` c", "a     c"),
        ("``a` b`` c", "         c"),  # a shorter run inside is the span's text
        ("``a`", "``a`"),  # runs of different lengths close nothing
        ("`a``b`", "      "),
        ("x ```", "x ```"),
    ],
)
def test_code_spans_pair_runs_of_one_length(line, blanked):
    assert code_spans(line) == blanked
