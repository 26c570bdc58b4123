"""A three-way merge of lines, as diff3 does it.

`regions(base, ours, theirs)` walks the three versions together: where both sides kept a
stretch of the base, it is kept; between two such stretches, a side that left the base as
it was takes the other side's change, two sides that made the same change agree, and two
different changes are a `Conflict`.

The stretches each side kept come from a line diff (`line_ops`): Myers' algorithm as
diff-match-patch implements it, each distinct line one character, with a deadline
(`DIFF_SECONDS` per diff) past which it settles for a coarser diff, so a body of many
repeated lines (blank ones, or a hostile remote's) never makes a merge slow; difflib's
`SequenceMatcher` is quadratic or worse on such bodies. The one well-kept merge library
(Breezy's `merge3`) is GPL-licensed, which a MIT-licensed tool cannot depend on; the merge
itself is its algorithm in a few lines.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

from diff_match_patch import diff_match_patch

from toolkit.content.conflicts import OURS_MARKER, SEPARATOR, THEIRS_MARKER


@dataclass(frozen=True)
class Taken:
    """Lines of the result: `side` says where they come from (base, ours, theirs, both)."""

    lines: list[str]
    side: str


@dataclass(frozen=True)
class Conflict:
    base: list[str]
    ours: list[str]
    theirs: list[str]


Region = Taken | Conflict


DIFF_SECONDS = 1.0


def line_ops(a: Sequence[str], b: Sequence[str]) -> list[tuple[str, int, int, int, int]]:
    """How `b` is made from `a`, line by line: (`equal` | `delete` | `insert`, a start,
    a end, b start, b end), in order."""
    codes: dict[str, str] = {}

    def encoded(lines: Sequence[str]) -> str:
        # Each distinct line becomes one character (past the surrogates, which some
        # string operations refuse).
        return "".join(
            codes.setdefault(line, chr(len(codes) + (1 if len(codes) < 0xD7FF else 0x801)))
            for line in lines
        )

    try:
        text_a, text_b = encoded(a), encoded(b)
    except ValueError:  # more distinct lines than characters: no line matched
        return [("delete", 0, len(a), 0, 0), ("insert", len(a), len(a), 0, len(b))]
    matcher = diff_match_patch()
    matcher.Diff_Timeout = DIFF_SECONDS
    ops = []
    at_a = at_b = 0
    for op, text in matcher.diff_main(text_a, text_b, False):
        size = len(text)
        if op == diff_match_patch.DIFF_EQUAL:
            ops.append(("equal", at_a, at_a + size, at_b, at_b + size))
            at_a, at_b = at_a + size, at_b + size
        elif op == diff_match_patch.DIFF_DELETE:
            ops.append(("delete", at_a, at_a + size, at_b, at_b))
            at_a += size
        else:
            ops.append(("insert", at_a, at_a, at_b, at_b + size))
            at_b += size
    return ops


def _matches(base: Sequence[str], other: Sequence[str]) -> list[tuple[int, int, int]]:
    return [(i1, j1, i2 - i1) for op, i1, i2, j1, _ in line_ops(base, other) if op == "equal"]


def _sync_points(
    base: Sequence[str], ours: Sequence[str], theirs: Sequence[str]
) -> list[tuple[int, int, int, int]]:
    """(base start, ours start, theirs start, length) of the stretches of the base that
    both sides kept, in order, then the end of all three."""
    points = []
    a_blocks, b_blocks = _matches(base, ours), _matches(base, theirs)
    ia = ib = 0
    while ia < len(a_blocks) and ib < len(b_blocks):
        a_base, a_at, a_len = a_blocks[ia]
        b_base, b_at, b_len = b_blocks[ib]
        start, end = max(a_base, b_base), min(a_base + a_len, b_base + b_len)
        if start < end:
            points.append((start, a_at + start - a_base, b_at + start - b_base, end - start))
        if a_base + a_len < b_base + b_len:
            ia += 1
        else:
            ib += 1
    points.append((len(base), len(ours), len(theirs), 0))
    return points


def regions(base: Sequence[str], ours: Sequence[str], theirs: Sequence[str]) -> Iterator[Region]:
    at_base = at_ours = at_theirs = 0
    for base_start, ours_start, theirs_start, length in _sync_points(base, ours, theirs):
        base_part = list(base[at_base:base_start])
        ours_part = list(ours[at_ours:ours_start])
        theirs_part = list(theirs[at_theirs:theirs_start])
        if base_part or ours_part or theirs_part:
            if ours_part == theirs_part:
                yield Taken(ours_part, "both")
            elif ours_part == base_part:
                yield Taken(theirs_part, "theirs")
            elif theirs_part == base_part:
                yield Taken(ours_part, "ours")
            else:
                yield Conflict(base_part, ours_part, theirs_part)
        if length:
            yield Taken(list(base[base_start : base_start + length]), "base")
        at_base, at_ours, at_theirs = (
            base_start + length,
            ours_start + length,
            theirs_start + length,
        )


def lines_of(text: str) -> list[str]:
    """The lines of `text`, each with its newline (`\\n` only: a line separator of
    Unicode inside a line is text, as Markdown reads it)."""
    parts = text.split("\n")
    lines = [part + "\n" for part in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
    return lines


def _ended(lines: list[str]) -> list[str]:
    """A side of a conflict ends with a newline, so the marker after it starts a line."""
    if lines and not lines[-1].endswith("\n"):
        return [*lines[:-1], lines[-1] + "\n"]
    return lines


def conflict_lines(
    ours: list[str], theirs: list[str], ours_name: str, theirs_name: str
) -> list[str]:
    return [
        f"{OURS_MARKER} {ours_name}\n",
        *_ended(ours),
        f"{SEPARATOR}\n",
        *_ended(theirs),
        f"{THEIRS_MARKER} {theirs_name}\n",
    ]


@dataclass
class Merged:
    text: str
    conflicts: int = 0


def merge_texts(
    base: str,
    ours: str,
    theirs: str,
    *,
    prefer_theirs: bool = False,
    names: tuple[str, str] = ("ours", "theirs"),
    from_theirs: Callable[[str], str] | None = None,
) -> Merged:
    """Merge `ours` and `theirs`, both made from `base`. Overlapping changes are written
    between conflict markers, or with `prefer_theirs` resolved to `theirs`; `from_theirs`
    (when given) rewrites each line taken from `theirs`."""
    out: list[str] = []
    conflicts = 0
    fix = from_theirs or (lambda line: line)
    for region in regions(lines_of(base), lines_of(ours), lines_of(theirs)):
        if isinstance(region, Taken):
            out.extend(map(fix, region.lines) if region.side == "theirs" else region.lines)
        elif prefer_theirs:
            out.extend(fix(line) for line in region.theirs)
        else:
            conflicts += 1
            out.extend(conflict_lines(region.ours, [fix(line) for line in region.theirs], *names))
    return Merged("".join(out), conflicts)
