"""dev.to's Liquid tags on the site: static, private equivalents, nothing loaded from
elsewhere until the reader asks.

A tag (`toolkit/content/liquid.py` says which, and what their arguments must be) is
rendered where it stands in a paragraph of the rendered body: a link card
(`<div class="embed-card">`), a frame the theme's script offers to load on a click
(`<div class="embed-frame" data-frame=...>`: without the script, a link), or
`{% details summary %}` ... `{% enddetails %}` (on lines of their own) as `<details>`. The
rest of the paragraph stays a paragraph: a card in the middle of a line splits it there,
as a browser splits dev.to's. Code blocks and code spans are never paragraphs' lines, so
their tags stay text, as on dev.to.

`{% katex %}` is different: its TeX is taken from the source before Markdown reads it
(`extract_maths` leaves a marker in its place, which both engines pass through as text)
and its MathML put where the marker is once the body is rendered (`put_maths`).

This works on the HTML the markdown engines write, after them: both write the same bytes
(`markdown_fast`), so both give the same page by construction. Every value written comes
from `content.liquid.read_tag` (a well-formed id, or an http(s) URL of the tag's service)
and is escaped; the markup is within the sanitiser's allow-list (`sanitize.POST_*`), so
a post whose raw HTML is cleaned keeps its embeds as they are.
"""

from __future__ import annotations

import bisect
import html
import re
from dataclasses import dataclass

from toolkit.content.liquid import (
    TAG,
    Card,
    Closing,
    Frame,
    Invalid,
    Opening,
    Rendering,
    find_tags,
    read_tag,
)
from toolkit.content.liquid_maths import Maths, find_maths, mathml
from toolkit.site.anchors import FORMULA_MARK
from toolkit.site.markdown_fast import escape_html
from toolkit.site.sanitize import clean_mathml

_PARAGRAPH = re.compile(r"<p>(.*?)</p>\n", re.DOTALL)
# The block elements a paragraph may sit in: a `{% details %}` and its end must sit in
# the same one.
_CONTAINER = re.compile(
    r"<(/?)(?:ul|ol|li|blockquote|div|section|table|details|figure|dl|dd)"
    r"(?![\w-])[^>]*>",
    re.IGNORECASE,
)
_MARKUP = re.compile(r"<(/?)([A-Za-z][\w-]*)[^>]*?(/?)>")
_VOID = frozenset({"br", "img", "hr", "input", "wbr"})


@dataclass
class _Tag:
    rendering: Rendering
    written: str  # the line as the engine wrote it (shown when the tag is not rendered)
    depth: int = 0  # how many containers it sits in
    paired: bool = False  # an opening or closing with its other half


class _Markup:
    """The HTML of a paragraph, read once: whether text at an offset would sit inside an
    HTML tag or an inline element that is still open (`inside`)."""

    def __init__(self, text: str):
        self.text = text
        self.ends: list[int] = []  # where each tag ends
        self.depths: list[int] = []  # how many inline elements are open after it
        depth = 0
        for match in _MARKUP.finditer(text):
            closing, name, self_closing = match.groups()
            if name.lower() in _VOID or self_closing:
                continue
            depth += -1 if closing else 1
            self.ends.append(match.end())
            self.depths.append(depth)

    def inside(self, offset: int) -> bool:
        if self.text.rfind("<", 0, offset) > self.text.rfind(">", 0, offset):
            return True
        before = bisect.bisect_right(self.ends, offset)
        return before > 0 and self.depths[before - 1] != 0


def _tag_of(line: str) -> Rendering | None:
    if "<" in line or "{%" not in line:
        return None
    text = html.unescape(line).strip()
    match = TAG.fullmatch(text)
    if match is None:
        return None
    try:
        return read_tag(match.group(1), match.group(2) or "")
    except Invalid:
        return None


def render_tags(body_html: str) -> str:
    """`body_html` with the Liquid tags that stand on lines of their own rendered."""
    if "{%" not in body_html:
        return body_html
    # 1. the paragraphs holding tags, split into their lines of text and their tags
    pieces: list[str | list[str | _Tag]] = []  # HTML as it is, or a paragraph's parts
    at = 0
    for match in _PARAGRAPH.finditer(body_html):
        inner = match.group(1)
        if "{%" not in inner:
            continue
        markup = _Markup(inner)
        parts: list[str | _Tag] = []
        start = 0  # where the line starts in the paragraph
        for line in inner.split("\n"):
            rendering = _tag_of(line)
            if rendering is not None and not markup.inside(max(0, start - 1)):
                parts.append(_Tag(rendering, line))
            elif "{%" in line:
                parts.extend(_split(line, markup, start))
            else:
                parts.append(line)
            start += len(line) + 1
        if not any(isinstance(part, _Tag) for part in parts):
            continue
        pieces.append(body_html[at : match.start()])
        pieces.append(parts)
        at = match.end()
    if not pieces:
        return body_html
    pieces.append(body_html[at:])
    _pair(pieces)
    return "".join(piece if isinstance(piece, str) else _paragraph(piece) for piece in pieces)


def _split(line: str, markup: _Markup, start: int) -> list[str | _Tag]:
    """A paragraph's line (at `start` in `markup`) with cards and frames in the middle of
    its text: the text before each, the tag, the text after (a tag inside an inline
    element stays text)."""
    parts: list[str | _Tag] = []
    at = 0
    for match in find_tags(TAG, line):
        if "<" in match.group():
            continue
        try:
            rendering = read_tag(match.group(1), html.unescape(match.group(2) or ""))
        except Invalid:
            continue
        if isinstance(rendering, (Opening, Closing)) or markup.inside(start + match.start()):
            continue
        text = line[at : match.start()].strip()
        if text:
            parts.append(text)
        parts.append(_Tag(rendering, match.group()))
        at = match.end()
    rest = line[at:].lstrip()
    if rest or not parts:
        parts.append(rest if parts else line)
    return parts


def _pair(pieces: list[str | list[str | _Tag]]) -> None:
    """Pair each `{% details %}` with its `{% enddetails %}` in the same container (an
    opening whose container closes first stays text, as does a closing with no opening)."""
    depth = 0
    opened: list[_Tag] = []
    for piece in pieces:
        if isinstance(piece, str):
            for match in _CONTAINER.finditer(piece):
                depth += -1 if match.group(1) else 1
                while opened and opened[-1].depth > depth:
                    opened.pop()  # its container closed before its end
            continue
        for part in piece:
            if not isinstance(part, _Tag):
                continue
            part.depth = depth
            if isinstance(part.rendering, Opening):
                opened.append(part)
            elif isinstance(part.rendering, Closing):
                if opened and opened[-1].depth == depth:
                    opened.pop().paired = part.paired = True
            else:
                part.paired = True  # a card or a frame stands alone


def _paragraph(parts: list[str | _Tag]) -> str:
    out: list[str] = []
    text: list[str] = []

    def flush() -> None:
        if text:
            out.append("<p>" + "\n".join(text) + "</p>\n")
            text.clear()

    for part in parts:
        if isinstance(part, str):
            text.append(part)
        elif not part.paired:
            text.append(part.written)
        else:
            flush()
            out.append(render(part.rendering))
    flush()
    return "".join(out)


def render(rendering: Rendering) -> str:
    """The HTML of one tag."""
    if isinstance(rendering, Opening):
        return f"<details><summary>{escape_html(rendering.summary)}</summary>\n"
    if isinstance(rendering, Closing):
        return "</details>\n"
    link = (
        f'<a href="{escape_html(rendering.url)}">{escape_html(rendering.label)}</a> '
        f'<span class="embed-service">{escape_html(rendering.service)}</span>'
    )
    if isinstance(rendering, Frame):
        return (
            f'<div class="embed-frame" data-frame="{escape_html(rendering.frame)}">{link}</div>\n'
        )
    assert isinstance(rendering, Card)
    return f'<div class="embed-card">{link}</div>\n'


# Where a formula stands in a body until it is rendered: both engines keep it as text.
_MARK_OPEN, _MARK_CLOSE = "\ue000", "\ue001"
_MARK = FORMULA_MARK
_MARK_PARAGRAPH = re.compile("<p>\ue000([0-9]+)\ue001</p>\n")
_MARKUP_OR_TEXT = re.compile(r"(<[^>]*>)")


@dataclass(frozen=True)
class Formula:
    """A `{% katex %}` taken out of a body: its source as written, its TeX and form."""

    source: str
    tex: str
    inline: bool


def extract_maths(body: str) -> tuple[str, list[Formula]]:
    """`body` with each `{% katex %}...{% endkatex %}` outside code replaced by a marker,
    and the formulas, in order (none when the body writes a marker's character itself)."""
    if "katex" not in body or _MARK_OPEN in body or _MARK_CLOSE in body:
        return body, []
    found: list[Maths] = find_maths(body)
    if not found:
        return body, []
    out: list[str] = []
    formulas: list[Formula] = []
    at = 0
    for index, maths in enumerate(found):
        out.append(body[at : maths.start])
        out.append(f"{_MARK_OPEN}{index}{_MARK_CLOSE}")
        formulas.append(Formula(body[maths.start : maths.end], maths.tex, maths.inline))
        at = maths.end
    out.append(body[at:])
    return "".join(out), formulas


def _formula_html(formula: Formula, alone: bool) -> str:
    """A formula's MathML (in a box of its own when it is a paragraph), or its TeX in an
    error box when it cannot be rendered (`toolkit check` says why)."""
    try:
        rendered = clean_mathml(mathml(formula.tex, formula.inline))
    except Invalid:
        tex = escape_html(formula.tex.strip())
        if alone:
            return f'<pre class="tex-error" tabindex="0"><code>{tex}</code></pre>\n'
        return f'<code class="tex-error">{tex}</code>'
    if alone and not formula.inline:
        return (
            '<div class="math-display" tabindex="0" role="region" aria-label="Formula">'
            f"{rendered}</div>\n"
        )
    if alone:
        return f"<p>{rendered}</p>\n"
    return rendered


def put_maths(body_html: str, formulas: list[Formula]) -> str:
    """The rendered body with its formulas where their markers are: a formula that is a
    paragraph of its own stands as a block; one in code, or in an attribute, is shown as
    written."""
    if not formulas or _MARK_OPEN not in body_html:
        return body_html

    def formula(match: re.Match[str]) -> Formula | None:
        index = int(match.group(1))
        return formulas[index] if index < len(formulas) else None

    def as_written(match: re.Match[str]) -> str:
        found = formula(match)
        return "" if found is None else escape_html(found.source)

    def alone(match: re.Match[str]) -> str:
        found = formula(match)
        return "" if found is None else _formula_html(found, True)

    def inline(match: re.Match[str]) -> str:
        found = formula(match)
        return "" if found is None else _formula_html(found, False)

    body_html = _MARK_PARAGRAPH.sub(alone, body_html)
    pieces = _MARKUP_OR_TEXT.split(body_html)
    code = 0  # how many <pre> or <code> the text is in
    for index, piece in enumerate(pieces):
        if index % 2:  # a tag
            name = piece[1:].split(None, 1)[0].rstrip(">").lower() if len(piece) > 2 else ""
            if name in ("pre", "code"):
                code += 1
            elif name in ("/pre", "/code"):
                code = max(0, code - 1)
            if _MARK_OPEN in piece:
                pieces[index] = _MARK.sub(as_written, piece)
        elif _MARK_OPEN in piece:
            pieces[index] = _MARK.sub(as_written if code else inline, piece)
    return "".join(pieces)


def without_marks(text: str, formulas: list[Formula]) -> str:
    """`text` (a heading's, for the table of contents) with its formulas' TeX."""
    if _MARK_OPEN not in text:
        return text
    return _MARK.sub(
        lambda m: formulas[int(m.group(1))].tex.strip() if int(m.group(1)) < len(formulas) else "",
        text,
    )
