"""The refusal rules of `markdown`'s fast path (`markdown_fast`): the checks that keep a
post whose parse markdown-it-pyrs is known to get otherwise than markdown-it-py, or to crash
on, off the fast path.

`refuse_source` reads the source alone, before it is parsed, and says why the post is left
to markdown-it-py (None: it is not); `web_url` checks a link's address as the writer meets
it. `Unsupported` is the reason a post is refused; `markdown_fast.FastMarkdown.render` raises
it, from these checks and from what its own walk of the tree does not know, and the post is
rendered by markdown-it-py instead.
"""

from __future__ import annotations

import re
import unicodedata

_NEW_HTML_TAG = re.compile(r"<(?:![a-z]|/?(?i:search)(?![\w-]))")
_LINE_START = re.compile(r"(?:[ \t]*(?:>|[-*+](?=[ \t])|\d{1,9}[.)](?=[ \t])))*[ \t]*")
# A footnote definition's label, as markdown-it-py's footnote rule reads it.
FOOTNOTE_DEF = re.compile(r"\[\^([^\]\s]+)\]:")
_BACKTICKS = re.compile(r"`+")
_DELIMITER_RUN = re.compile(r"[*_~]+")
# Text that starts a paragraph and nothing else, after at most three spaces.
_PLAIN_START = re.compile(
    r"""[ ]{0,3}(?:[^\W\d_]|\d+(?![\d.)])|[^\x00-\x7f]|[\[!()"'|&\\$%@/{};,.?:^]"""
    r"""|`(?!``)|[*_]+(?=[^\s*_])|~~(?=[^\s~])|<(?=[A-Za-z][A-Za-z0-9+.-]{1,31}:|[\w.+-]+@))"""
)
_HEADING = re.compile(r"[ ]{0,3}#{1,6}(?:[ \t]|$)")
_CELL_PIPE = re.compile(r"(?<!\\)\|")  # a pipe that parts table cells (not `\|`)
# Whether a line starts a quote, or may be a table's rule (`\n` first: found fast).
_ANY_QUOTE = re.compile(r"\n[ ]{0,3}>")
_ANY_RULE = re.compile(r"\n[ \t|:-]*-[ \t|:-]*(?=\n|$)")
_TABLE_RULE = re.compile(r"[ \t]*\|?[ \t]*:?-+:?[ \t]*(?:\|[ \t]*:?-+:?[ \t]*)*\|?[ \t]*")
# Where a quote's markers end, with the one space after the last that belongs to them.
_QUOTE_PREFIX = re.compile(r"(?:[ ]{0,3}>)+ ?")
_BRACKET = re.compile(r"\\.|[\[\]]|\n[ \t]*\n")  # an escape, a bracket, a blank line
# Markup whose backticks the code span rule never sees: an HTML tag or an autolink, a
# link's destination (and title).
_HIDING = re.compile(r"<|\]\(")
_TITLE = re.compile(r"""[ \t]*(?:"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*')[ \t]*\)""")
_FENCE_OPEN = re.compile(r"( *)(`{3,}(?=[^`]*$)|~{3,}).*")
_WEB_HOST = re.compile(r"(?:[Hh][Tt][Tt][Pp][Ss]?:)?//([^/?#]*)")  # a web address's host


# markdown-it-py's `maxNesting` (20) stops parsing deeper blocks and inlines, where the Rust
# parser goes on; well below it, the two agree. A tree this deep is left to the reference.
MAX_DEPTH = 12
# A line opening more than `MAX_DEPTH` quotes or list items (each marker's blanks taken
# whole: no backtracking between them).
_DEEP_LINE = re.compile(
    rf"^(?>[ \t]*(?:>|(?:[-*+]|[0-9]{{1,9}}[.)])(?=[ \t]))){{{MAX_DEPTH + 1}}}", re.MULTILINE
)


class Unsupported(Exception):
    """A post the fast path does not write as markdown-it-py does; the message says why."""


def refuse_source(body: str) -> str | None:
    """Why the source alone keeps a post off the fast path (None: it does not)."""
    if _DEEP_LINE.search(body) is not None:
        # More quotes and list items opened on one line than the writer takes
        # (`MAX_DEPTH`): the Rust parser recurses once for each, and 100,000 of them
        # overflowed its stack (a crash, not an exception).
        return "nested too deeply"
    if body.count("[") > 16 and any(
        part.count("[") > 16 and _bracket_depth(part) > 16 for part in body.split("\n\n")
    ):
        # markdown-it-py gives up on links nested deeper than its `maxNesting`.
        return "brackets nested too deeply"
    if "[ ]" in body or "[x]" in body or "[X]" in body:
        # A task list item (`- [ ] to do`): markdown-it-py's tasklists plugin writes its
        # checkbox, the Rust port has no such rule here.
        return "a task list"
    if "^[" in body:
        # Inline footnotes: markdown-it-pyrs numbers them its own way, and an unclosed one
        # crashes it.
        return "inline footnote ^[...]"
    labels = set()
    for match in FOOTNOTE_DEF.finditer(body):
        if match.start() and body[match.start() - 1] != "\n":
            # Indented, or in a quote or a list: the Rust port misreads where it starts.
            return "a footnote definition not at the start of a line"
        if match.group(1) in labels:
            return "a footnote defined twice"  # markdown-it-py keeps the last, Rust the first
        labels.add(match.group(1))
        if not _PLAIN_START.match(body, match.end()):
            # A footnote whose text starts with a block (code, HTML, a list...) or on the
            # next line: the Rust port reads it from another column.
            return "a footnote that does not start with text"
    if "<" in body and any(
        _LINE_START.fullmatch(body, body.rfind("\n", 0, tag.start()) + 1, tag.start())
        for tag in _NEW_HTML_TAG.finditer(body)
    ):
        # An HTML block only CommonMark 0.31 (markdown-it-py) starts there: it may end a
        # paragraph, or a code span, that the Rust port carries on.
        return "an HTML block of CommonMark 0.31"
    lines = body.split("\n")
    if ">" in body and _ANY_QUOTE.search("\n" + body) and _lazy_block(lines):
        # A line after a quote that starts another block (a list from 2., say) ends the
        # quote in markdown-it-py and carries on its paragraph in the Rust port.
        return "a quote followed by another block"
    if "|" in body and _ANY_RULE.search(body):  # a rule has a header line above it
        reason = _refuse_tables(lines)
        if reason is not None:
            return reason
    if not body.isascii() and _symbol_beside_delimiter(body):
        return "emphasis beside a Unicode symbol"
    if "~~~" in body and any(
        "~~~" in line and not _fence_line(lines, index) for index, line in enumerate(lines)
    ):
        # markdown-it-py splits a run of three or more tildes into strikethrough
        # delimiters its own way.
        return "a run of tildes"
    if "`" in body and "[" in body and _loose_backticks(lines):
        # A `[` before a backtick run that closes nowhere crashes the Rust parser
        # (markdown-it 0.6 `code_pair`): refused before it is parsed.
        return "an unclosed code span"
    return None


def _bracket_depth(body: str) -> int:
    """How deep `[`s nest in `body` (a paragraph's at most, its blank line ending it)."""
    deepest = depth = 0
    for match in _BRACKET.finditer(body):
        char = match.group()
        if char == "[":
            depth += 1
            deepest = max(deepest, depth)
        elif char == "]":
            depth = max(0, depth - 1)
        else:
            depth = 0
    return deepest


def _symbol_beside_delimiter(body: str) -> bool:
    """Whether an emphasis or strikethrough delimiter stands beside a Unicode symbol:
    CommonMark 0.31 (markdown-it-py) counts those as punctuation there, 0.30 (the Rust
    port) does not."""
    for match in _DELIMITER_RUN.finditer(body):
        start, end = match.start(), match.end()
        for char in (body[start - 1] if start else "", body[end : end + 1]):
            if char and not char.isascii() and unicodedata.category(char).startswith("S"):
                return True
    return False


def _refuse_tables(lines: list[str]) -> str | None:
    """Tables where markdown-it-py and the Rust port part ways: where one starts (the
    Rust port reads a table after the other blocks, and lets one interrupt a quote's lazy
    line), and where it ends (markdown-it-py ends it at a line that starts another block);
    a rule without `|`, and an escaped `|` right before a `|`, which they split otherwise."""
    for index, line in enumerate(lines):
        if index == 0 or "|" not in lines[index - 1] or not _TABLE_RULE.fullmatch(line):
            continue  # markdown-it-py wants a `|` in the header
        if "|" not in line:
            return "a table whose rule has no |"
        if not _PLAIN_START.match(lines[index - 1]):
            return "a table whose header starts like another block"
        for above in reversed(lines[: index - 1]):
            if not above.strip() or _HEADING.match(above):
                break
            if not _PLAIN_START.match(above):
                return "a table right after a quote or a list"
        rows = [lines[index - 1]]
        for row in lines[index + 1 :]:
            if not row.strip():
                break
            if not _PLAIN_START.match(row):
                return "a table row that starts like another block"
            rows.append(row)
        if any("\\||" in row for row in rows):
            return "a table cell ending in \\|"
    return None


def _lazy_block(lines: list[str]) -> bool:
    """Whether a line with fewer `>`s than a line before it (no blank line between)
    starts anything but text after them: the lazy line of a quote, or a block."""
    depth = 0  # the most `>`s of the lines before, since a blank line
    for line in lines:
        if not line.strip():
            depth = 0
            continue
        quote = _QUOTE_PREFIX.match(line)
        markers = quote.group().count(">") if quote is not None else 0
        rest = line[quote.end() :] if quote is not None else line
        if markers < depth and rest.strip() and not _PLAIN_START.match(rest):
            return True
        depth = max(depth, markers)
    return False


def _loose_backticks(lines: list[str]) -> bool:
    """Whether a backtick run might stay unclosed in its inline content.

    An inline content (a paragraph, a heading, a table cell) holds whole stretches of
    lines between unescaped `|`s, so a run closed by the next run of its length within
    such a stretch is closed there too (code spans pair left to right). A run that markup
    may hide from the code span rule (in an HTML tag, an autolink, a link's destination)
    leaves the others in doubt. A fence's own lines are not inline content."""
    for index, line in enumerate(lines):
        if "`" not in line or ("```" in line and _fence_line(lines, index)):
            continue
        if "\\`" in line:
            return True  # an escaped backtick, or a backslash ending a code span
        for segment in _CELL_PIPE.split(line) if "|" in line else (line,):
            if "`" in segment and _unclosed(segment):
                return True
    return False


def _unclosed(segment: str) -> bool:
    if "``" not in segment:  # single backticks, pairing in turn
        parts = segment.split("`")
        if len(parts) % 2 == 0:
            return True
        if "<" not in segment and "](" not in segment:
            return False
        at = 0
        for index, part in enumerate(parts):
            if index % 2 == 0 and ("<" in part or "](" in part):  # outside code
                for markup in _HIDING.finditer(part):
                    if "`" in _held(segment, at + markup.start(), markup.group()):
                        return True
            at += len(part) + 1
        return False
    runs = list(_BACKTICKS.finditer(segment))
    spans: list[tuple[int, int]] = []  # the code spans, from opening to closing run
    while runs:
        opening = runs.pop(0)
        length = len(opening.group())
        closing = next((i for i, run in enumerate(runs) if len(run.group()) == length), None)
        if closing is None:
            return True
        spans.append((opening.start(), runs[closing].end()))
        del runs[: closing + 1]
    for markup in _HIDING.finditer(segment):
        at = markup.start()
        if any(start <= at < end for start, end in spans):
            continue  # code
        if "`" in _held(segment, at, markup.group()):
            return True
    return False


def _held(segment: str, at: int, markup: str) -> str:
    """What the markup at `at` may hold: up to its end, or the whole rest of the segment
    when that end is in doubt."""
    if markup == "<":
        end = segment.find(">", at)
        held = segment[at:] if end < 0 else segment[at:end]
        return segment[at:] if "'" in held or '"' in held else held
    depth, index = 0, at + 2  # a link's destination, and its title
    if segment.startswith("<", index):  # a destination in <...>
        index = segment.find(">", index) + 1
        if index == 0:
            return segment[at:]
    while index < len(segment):
        char = segment[index]
        if char == "\\":
            index += 1
        elif char == "(":
            depth += 1
        elif char == ")":
            if depth == 0:
                return segment[at:index]
            depth -= 1
        elif char in " \t":
            title = _TITLE.match(segment, index)
            return segment[at : title.end()] if title is not None else segment[at:]
        elif char in "\"'<":
            break
        index += 1
    return segment[at:]


def _fence_line(lines: list[str], index: int) -> bool:
    """Whether `lines[index]` is surely a fence's own line, never inline content: a
    fence line indented by at most three spaces (it opens a fence, or sits in a block
    that is not inline), or one right after a blank line (no paragraph goes on after a
    blank line). In a quote, the same holds of what follows its `>`s."""
    line, previous = lines[index], lines[index - 1] if index else ""
    quote = _QUOTE_PREFIX.match(line)
    if quote is not None:
        line = line[quote.end() :]
        previous = previous[quote.end() :] if previous.startswith(quote.group()) else ""
    opening = _FENCE_OPEN.fullmatch(line.expandtabs(4))
    if opening is None:
        return False
    if len(opening.group(1)) <= 3 or not previous.strip():
        return True
    if quote is not None:  # the lines above, inside the same quote
        lines = [_inside(line, quote.group()) for line in lines[: index + 1]]
    return _below_a_fence(lines, index, opening.group(1))


def _inside(line: str, prefix: str) -> str:
    """`line` without the quote's `prefix`; blank for a blank line of the quote, and a
    line that ends every container (`\0`) for one outside it."""
    if line.startswith(prefix):
        return line[len(prefix) :]
    return "" if line.rstrip() == prefix.rstrip() else "\0"


def _below_a_fence(lines: list[str], index: int, indent: str) -> bool:
    """Whether a fence line indented by `indent` (four spaces or more) has above it a fence
    line that is surely one, at the same indent, with only blank or deeper lines between.
    That opener sits in a container (a list item) whose content starts at most three
    spaces to its left, or opens indented code; the lines between keep the container
    open, so this line is a fence line in it too, or code."""
    for above in range(index - 1, -1, -1):
        line = lines[above].expandtabs(4)
        if not line.strip():
            continue
        if not line.startswith(indent):
            return False
        if line[len(indent)] in "`~":
            previous = lines[above - 1] if above else ""
            if not previous.strip() and _FENCE_OPEN.fullmatch(line) is not None:
                return True
    return False


def web_url(url: str) -> str:
    """`url` as both parsers write it: markdown-it-py writes a web address's host outside
    ASCII in punycode, the Rust port %-escaped."""
    if "%" in url:
        host = _WEB_HOST.match(url)
        if host is not None and "%" in host.group(1):
            raise Unsupported("a link to a host outside ASCII")
    return url
