"""dev.to's Liquid tags on the site: static, private equivalents, nothing loaded from
elsewhere until the reader asks.

A tag (`toolkit/content/liquid.py` says which, and what their arguments must be) is
rendered where it stands on a line of its own in a paragraph of the rendered body: a
link card (`<div class="embed-card">`), a frame the theme's script offers to load on a
click (`<div class="embed-frame" data-frame=...>`: without the script, a link), or
`{% details summary %}` ... `{% enddetails %}` as `<details>`. The rest of the paragraph
stays a paragraph. Code blocks and code spans are never paragraphs' lines, so their tags
stay text, as on dev.to.

This works on the HTML the markdown engines write, after them: both write the same bytes
(`markdown_fast`), so both give the same page by construction. Every value written comes
from `content.liquid.read_tag` (a well-formed id, or an http(s) URL of the tag's service)
and is escaped; the markup is within the sanitiser's allow-list (`sanitize.POST_*`), so
a post whose raw HTML is cleaned keeps its embeds as they are.
"""

from __future__ import annotations

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
    read_tag,
)
from toolkit.site.markdown_fast import escape_html

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


def _inside_markup(before: str) -> bool:
    """Whether text after `before` (the lines of a paragraph above a line) would sit inside
    an HTML tag or an inline element that is still open."""
    if before.rfind("<") > before.rfind(">"):
        return True
    depth = 0
    for match in _MARKUP.finditer(before):
        closing, name, self_closing = match.groups()
        if name.lower() in _VOID or self_closing:
            continue
        depth += -1 if closing else 1
    return depth != 0


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
        lines = inner.split("\n")
        parts: list[str | _Tag] = []
        for index, line in enumerate(lines):
            rendering = _tag_of(line)
            if rendering is not None and not _inside_markup("\n".join(lines[:index])):
                parts.append(_Tag(rendering, line))
            else:
                parts.append(line)
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
