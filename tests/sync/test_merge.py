"""The three-way merge of lines under `pull --merge` (`toolkit/sync/merge.py`)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from toolkit.content.conflicts import marker_lines
from toolkit.sync.merge import merge_texts

BASE = "one\ntwo\nthree\nfour\nfive\n"


def test_edits_apart_are_both_kept():
    merged = merge_texts(BASE, BASE.replace("two", "TWO"), BASE.replace("five", "FIVE"))
    assert merged.conflicts == 0
    assert merged.text == "one\nTWO\nthree\nfour\nFIVE\n"


def test_the_same_edit_on_both_sides_is_no_conflict():
    edited = BASE.replace("three", "3")
    assert merge_texts(BASE, edited, edited).text == edited


def test_overlapping_edits_are_a_conflict_between_markers():
    merged = merge_texts(
        BASE, BASE.replace("two", "mine"), BASE.replace("two", "yours"), names=("a", "b")
    )
    assert merged.conflicts == 1
    assert merged.text == "one\n<<<<<<< a\nmine\n=======\nyours\n>>>>>>> b\nthree\nfour\nfive\n"
    assert marker_lines(merged.text) == [2, 6]


def test_overlapping_edits_resolved_to_theirs_when_asked():
    merged = merge_texts(
        BASE, BASE.replace("two", "mine"), BASE.replace("two", "yours"), prefer_theirs=True
    )
    assert (merged.text, merged.conflicts) == (BASE.replace("two", "yours"), 0)


def test_a_last_line_without_newline_still_leaves_markers_on_their_own_lines():
    merged = merge_texts("a\nb", "a\nc", "a\nd")
    assert merged.text == "a\n<<<<<<< ours\nc\n=======\nd\n>>>>>>> theirs\n"


def test_markers_inside_fenced_code_are_not_a_conflict():
    text = "```diff\n<<<<<<< HEAD\nx\n>>>>>>> other\n```\n"
    assert marker_lines(text) == []


lines = st.lists(st.sampled_from(["a\n", "b\n", "c\n", "\n", "d"]), max_size=12)


@given(lines, lines)
def test_a_side_that_changed_nothing_takes_the_other(base, other):
    base_text, other_text = "".join(base), "".join(other)
    assert merge_texts(base_text, base_text, other_text).text == other_text
    assert merge_texts(base_text, other_text, base_text).text == other_text


@given(lines, lines, lines)
def test_preferring_theirs_never_leaves_a_conflict(base, ours, theirs):
    merged = merge_texts("".join(base), "".join(ours), "".join(theirs), prefer_theirs=True)
    assert merged.conflicts == 0


def test_each_conflict_is_reported_once():
    from toolkit.content.conflicts import conflict_lines

    text = "a\n<<<<<<< x\nb\n=======\nc\n>>>>>>> y\nd\n<<<<<<< x\n=======\ne\n>>>>>>> y\n"
    assert conflict_lines(text) == [2, 8]
    assert conflict_lines("a\n>>>>>>> y\n") == [2]
    assert conflict_lines("a\n=======\n") == []
