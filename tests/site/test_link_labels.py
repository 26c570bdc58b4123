"""markdown-it-py looks for a link's label from each `[` (a link, an image, a footnote
reference): where no `]` follows, toolkit's renderer does not look, and writes the same
HTML. Asserted on the work done (the label rules tried), not on time: `bench/scan.py` has
the figures."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt
from mdit_py_plugins.footnote import footnote_plugin

from toolkit.site.markdown import _LABEL_RULES, closed_labels_only

PIECES = ["![", "[^", "[a", "[", "]", "](u)", "[^1]", "^[", "x", " ", "\n", "\n\n", "`", "\\"]
PIECES += ["<b>", "*", "[^1]: note\n\n", "[a]: /u\n\n", "[x][a]", "](<]>)", '](u "]")']


def _parser(*, closed: bool) -> tuple[MarkdownIt, dict[str, int]]:
    md = MarkdownIt("commonmark")
    md.enable(["table", "strikethrough"])
    md.use(footnote_plugin)
    tried = dict.fromkeys(_LABEL_RULES, 0)
    for rule in md.inline.ruler.__rules__:
        if rule.name in tried:
            rule.fn = _counting(rule.fn, rule.name, tried)
    if closed:
        closed_labels_only(md)
    return md, tried


def _counting(fn, name, tried):
    def rule(state, silent):
        tried[name] += 1
        return fn(state, silent)

    return rule


@settings(max_examples=300)
@given(st.lists(st.sampled_from(PIECES), max_size=60).map("".join))
def test_the_html_is_markdown_it_pys_own(body):
    as_written, _ = _parser(closed=False)
    closed, _ = _parser(closed=True)
    assert closed.render(body, {}) == as_written.render(body, {})


# The subject is the time a hostile body takes; the lines it runs are measured by the
# test above (`untraced`: tracing would double its time).
@pytest.mark.untraced
def test_no_label_is_tried_where_no_bracket_closes_it():
    for unit in ("![", "[^", "[a", "[a "):
        md, tried = _parser(closed=True)
        html = md.render("A [link](u) first. " + unit * 20_000 + "\n", {})
        assert html.count("<a href") == 1 and html.count("[") == 20_000
        assert sum(tried.values()) <= 2  # the link's own `[` (as a link, as a footnote)
        md_before, before = _parser(closed=False)  # without: each `[` tried, again and again
        md_before.render(unit * 2_000, {})
        assert sum(before.values()) > 2_000
