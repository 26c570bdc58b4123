"""What the translation reads a body with: where code is (never read), a shortcode's
or tag's parameters, the tokens found, and the Markdown it writes."""

from __future__ import annotations

import re
from dataclasses import dataclass

from toolkit.content.images import code_mask

MAX_TOKEN = 4000  # characters of one shortcode, tag or component: longer is text
YOUTUBE_ID = re.compile(r"[A-Za-z0-9_-]{11}")
DIGITS = re.compile(r"[0-9]{1,20}")


def line_starts(text: str) -> list[int]:
    starts = [0]
    index = text.find("\n")
    while index >= 0:
        starts.append(index + 1)
        index = text.find("\n", index + 1)
    return starts


def last_at_most(values: list[int], value: int) -> int:
    """The index of the last of the sorted `values` at most `value` (0 when none is)."""
    low, high = 0, len(values) - 1
    while low < high:
        mid = (low + high + 1) // 2
        if values[mid] <= value:
            low = mid
        else:
            high = mid - 1
    return low


def masked_code(body: str) -> tuple[str, list[int]]:
    """`body` with fenced code blocks and code spans blanked (same length, line breaks
    kept), in one linear pass: where the generator's syntax is read; and the offsets where
    its blanked code starts (sorted): something read from the rest may not reach over code.
    (`liquid.prose` blanks the same, without the offsets.)"""
    lines = body.split("\n")
    mask = code_mask(body)
    out: list[str] = []
    starts: list[int] = []
    offset = 0
    for line, inside in zip(lines, mask, strict=True):
        if inside:
            if line:
                starts.append(offset)
            out.append(" " * len(line))
        else:
            spans = code_spans(line)
            starts.extend(offset + start for start, _ in spans)
            out.append(_blank(line, spans))
        offset += len(line) + 1
    return "\n".join(out), starts


def _blank(line: str, spans: list[tuple[int, int]]) -> str:
    if not spans:
        return line
    parts: list[str] = []
    cursor = 0
    for start, stop in spans:
        parts += [line[cursor:start], " " * (stop - start)]
        cursor = stop
    parts.append(line[cursor:])
    return "".join(parts)


def code_spans(line: str) -> list[tuple[int, int]]:
    """The code spans of `line` as (start, stop): a run of n backticks opens a span that
    the next run of exactly n closes. Linear: each run's length is looked up in an index
    of the runs that follow it."""
    if "`" not in line:
        return []
    runs: list[tuple[int, int]] = []  # (start, length) of each backtick run
    index = line.find("`")
    while index >= 0:
        end = index
        while end < len(line) and line[end] == "`":
            end += 1
        runs.append((index, end - index))
        index = line.find("`", end)
    # next_same[i]: the next run after i of the same length (built backwards).
    next_same: list[int | None] = [None] * len(runs)
    last: dict[int, int] = {}
    for i in range(len(runs) - 1, -1, -1):
        next_same[i] = last.get(runs[i][1])
        last[runs[i][1]] = i
    spans: list[tuple[int, int]] = []
    i = 0
    while i < len(runs):
        closer = next_same[i]
        if closer is None:
            i += 1
            continue
        spans.append((runs[i][0], runs[closer][0] + runs[closer][1]))
        i = closer + 1
    return spans


# -- parameters -------------------------------------------------------------------------


def parse_params(text: str) -> tuple[list[str], dict[str, str]]:
    """Hugo's (and a Liquid tag's) parameters: words, `"quoted"` and `` `raw` `` strings,
    `key=value` pairs. One pass."""
    positional: list[str] = []
    named: dict[str, str] = {}
    i, n = 0, len(text)
    while i < n:
        while i < n and text[i].isspace():
            i += 1
        if i >= n:
            break
        key = None
        start = i
        while i < n and not text[i].isspace() and text[i] not in "=\"'`":
            i += 1
        if i < n and text[i] == "=" and i > start:
            key = text[start:i]
            i += 1
        else:
            i = start
        value, i = _value(text, i)
        if key is None:
            positional.append(value)
        else:
            named[key.lower()] = value
    return positional, named


def _value(text: str, i: int) -> tuple[str, int]:
    n = len(text)
    if i < n and text[i] in "\"'`":
        quote = text[i]
        out: list[str] = []
        i += 1
        while i < n and text[i] != quote:
            if text[i] == "\\" and quote != "`" and i + 1 < n:
                i += 1
            out.append(text[i])
            i += 1
        return "".join(out), i + 1
    start = i
    while i < n and not text[i].isspace():
        i += 1
    return text[start:i], i


@dataclass(frozen=True)
class Token:
    kind: str  # open, close, self, literal, tag
    name: str
    start: int
    stop: int
    text: str  # the parameters
    opener: str
    closer: str


def code_span(text: str) -> str:
    """`text` as a code span, its backticks kept (the fence is one longer than any run)."""
    longest = run = 0
    for char in text:
        run = run + 1 if char == "`" else 0
        longest = max(longest, run)
    ticks = "`" * (longest + 1)
    return f"{ticks} {text} {ticks}"


def escape_label(text: str) -> str:
    return re.sub(r"([\[\]\\])", r"\\\1", " ".join(text.split()))


def link_target(url: str) -> str:
    if any(c.isspace() or c in "()<>" for c in url):
        return "<" + url.replace("<", "%3C").replace(">", "%3E") + ">"
    return url


def link_title(title: str) -> str:
    title = " ".join(title.split())
    return ' "' + title.replace('"', '\\"') + '"' if title else ""
