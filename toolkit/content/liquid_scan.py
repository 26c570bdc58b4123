"""What `toolkit check` warns about in a post's Liquid tags (`scan`): each tag the site
shows as written instead of rendering it (an unknown tag, a bad argument, TeX it cannot
render, an unclosed `{% katex %}` or `{% details %}`, a tag where the site renders none),
said once, with its line.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass

from toolkit.content.images import code_mask
from toolkit.content.liquid import (
    TAG,
    Closing,
    Invalid,
    Opening,
    code_spans,
    find_tags,
    read_tag,
)
from toolkit.content.liquid_maths import KATEX_NAMES, find_maths, mathml


@dataclass(frozen=True)
class Finding:
    line: int  # 1-based, in the text scanned
    message: str


_QUOTES = re.compile(r"[ ]{0,3}>[ ]?")
_HEADING_OR_ROW = re.compile(r"#{1,6}(?:[ \t]|$)|\|")
_ITEM = re.compile(r"(?:[-*+]|\d{1,9}[.)])(?:[ \t]+|$)")
# What Markdown makes markup of: a tag's argument holding it is not read as written.
_MARKUP = re.compile(r"[<`*\[\\]")


def _where(line: str) -> tuple[int, int, int, str]:
    """A line's quote depth, its indent (after the quote markers), the column its text
    starts at (after the list markers too) and that text."""
    depth = at = 0  # read by offset: a line of 100,000 markers is not copied each time
    while (quote := _QUOTES.match(line, at)) is not None:
        depth += 1
        at = quote.end()
    start = at
    while at < len(line) and line[at] == " ":
        at += 1
    indent = at - start
    while (item := _ITEM.match(line, at)) is not None and item.end() > at:
        at = item.end()
    return depth, indent, at - start, line[at:]


def scan(body: str) -> list[Finding]:
    """The tags of a post's body that the site shows as written instead of rendering them,
    each said once: an unknown tag, a bad argument, TeX it cannot render, a `{% katex %}`
    without its `{% endkatex %}`, a `{% details %}` that shares its line with other text or
    lacks its `{% enddetails %}` in the same block (or the other way round). Fenced code
    and code spans are left out; their tags are text."""
    if "{%" not in body:
        return []
    lines = body.split("\n")
    mask = code_mask(body)
    found: list[Finding] = []
    opened: list[tuple[int, int, int]] = []  # (line, quote depth, column) of open details
    maths = find_maths(body)
    starts = [0]  # the offset of each line
    for line in lines:
        starts.append(starts[-1] + len(line) + 1)

    def line_of(offset: int) -> int:
        return bisect.bisect_right(starts, offset)

    for formula in maths:
        try:
            mathml(formula.tex, formula.inline)
        except Invalid as exc:
            found.append(
                Finding(
                    line_of(formula.start),
                    f"Liquid tag {{% katex %}}: {exc}; the site shows its source",
                )
            )

    maths_starts = [formula.start for formula in maths]  # in order, none overlapping

    def in_maths(offset: int) -> bool:
        before = bisect.bisect_right(maths_starts, offset)
        return before > 0 and offset < maths[before - 1].end

    def unclosed(line_number: int) -> None:
        found.append(
            Finding(
                line_number,
                "Liquid tag {% details %}: not closed by "
                "{% enddetails %} in the same block; the site shows it as "
                "written",
            )
        )

    for index, line in enumerate(lines):
        if (index < len(mask) and mask[index]) or not line.strip():
            continue
        depth, indent, column, text = _where(line)
        while opened and (
            depth < opened[-1][1] or (depth == opened[-1][1] and indent < opened[-1][2])
        ):
            unclosed(opened.pop()[0])  # its block ended
        if "{%" not in line:
            continue
        text = code_spans(text).strip()
        for match in find_tags(TAG, code_spans(line)):
            if in_maths(starts[index] + match.start()):
                continue
            name, argument = match.group(1), match.group(2) or ""
            shown = f"{{% {name} %}}"
            if name in KATEX_NAMES:
                other = "{% endkatex %}" if name == "katex" else "{% katex %}"
                what = "not closed by" if name == "katex" else "closes no"
                found.append(
                    Finding(
                        index + 1,
                        f"Liquid tag {shown}: {what} {other}; the site shows it as written",
                    )
                )
                continue
            try:
                rendering = read_tag(name, argument)
                if _MARKUP.search(argument):
                    raise Invalid("an argument Markdown reads as markup")
            except Invalid as exc:
                found.append(
                    Finding(
                        index + 1,
                        f"Liquid tag {shown}: {exc}; the site shows "
                        "it as written (dev.to renders it)",
                    )
                )
                continue
            if _HEADING_OR_ROW.match(text):
                found.append(
                    Finding(
                        index + 1,
                        f"Liquid tag {shown}: in a heading or a table row; the site renders "
                        "a tag only in a paragraph",
                    )
                )
                continue
            if isinstance(rendering, (Opening, Closing)) and text != match.group():
                found.append(
                    Finding(
                        index + 1,
                        f"Liquid tag {shown}: shares its line with "
                        "other text; the site renders it only on a line of "
                        "its own",
                    )
                )
                continue
            if isinstance(rendering, Opening):
                opened.append((index + 1, depth, column))
            elif isinstance(rendering, Closing):
                if opened and opened[-1][1:] == (depth, column):
                    opened.pop()
                else:
                    found.append(
                        Finding(
                            index + 1,
                            f"Liquid tag {shown}: closes no "
                            "{% details %} of the same block; the site shows "
                            "it as written",
                        )
                    )
    for line_number, _, _ in opened:
        unclosed(line_number)
    return sorted(found, key=lambda f: f.line)
