"""Conflict markers that `toolkit pull --merge` leaves where two edits overlap.

A post that still holds them is refused by `toolkit check` (and so by `publish`), and
`toolkit pull` reports it as in conflict until the writer has kept one side or both.
Markers are the ones git writes (`<<<<<<< name`, `=======`, `>>>>>>> name`); only the
opening and closing ones are looked for (a line of `=` is also a Markdown heading
underline), and never inside fenced code, where a post about git may show them.
"""

from __future__ import annotations

from toolkit.content.images import code_mask

OURS_MARKER = "<<<<<<<"
SEPARATOR = "======="
THEIRS_MARKER = ">>>>>>>"


def _is_marker(line: str) -> bool:
    return line.startswith((OURS_MARKER + " ", THEIRS_MARKER + " ")) or line.rstrip() in (
        OURS_MARKER,
        THEIRS_MARKER,
    )


def marker_lines(text: str) -> list[int]:
    """1-based lines of `text` that are opening or closing conflict markers."""
    if OURS_MARKER not in text and THEIRS_MARKER not in text:
        return []
    lines = text.split("\n")
    return [
        number
        for number, (line, in_code) in enumerate(zip(lines, code_mask(text), strict=True), 1)
        if not in_code and _is_marker(line)
    ]


def conflict_lines(text: str) -> list[int]:
    """1-based lines where each conflict starts (its opening marker; a closing marker
    when the opening ones are gone): one per conflict, to report."""
    lines = text.split("\n")
    found = marker_lines(text)
    opening = [n for n in found if lines[n - 1].startswith(OURS_MARKER)]
    return opening or found
