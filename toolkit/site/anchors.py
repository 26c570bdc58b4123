"""Heading anchors as dev.to makes them, used by both Markdown engines (`markdown` and
`markdown_fast`): a heading's slug (`slugify`, emoji left out), numbered when taken on the
page (`unique_slug`), and the ids the theme's pages keep for themselves (`THEME_IDS`,
`is_theme_id`)."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping

# dev.to's heading slug (Forem's Markdown renderer): Ruby's `\s` and `[[:punct:]]`, the
# latter all of ASCII's punctuation and symbols and Unicode's punctuation (category P).
_RUBY_SPACE = re.compile(r"[ \t\n\v\f\r]+")
_RUBY_STRIP = " \t\n\v\f\r\0"
_ASCII_PUNCT = {ord(c): None for c in "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"}
# The ids of the theme's pages: a heading never takes one (it is numbered instead).
THEME_IDS = frozenset({"content", "comments", "search-query", "search-results", "search-status"})
_THEME_ID = re.compile(r"comment-[0-9]+")
# Where a `{% katex %}` formula stands while the engines read the body
# (`liquid_render.extract_maths`): a heading's slug leaves it out.
FORMULA_MARK = re.compile("\ue000([0-9]+)\ue001")


def _without_emoji(text: str) -> str:
    """`text` without its emoji (Unicode's recommended sequences, as Forem's `RGIEmoji`):
    a character that is one only when followed by U+FE0F stays without it."""
    import emoji

    qualified: object = emoji.STATUS["fully_qualified"]

    def kept(chars: str, data: Mapping[str, object]) -> str:
        return "" if data.get("status") == qualified else chars

    return emoji.replace_emoji(text, replace=kept)


def slugify(title: str) -> str:
    """A heading's anchor as dev.to makes it: lower case, emoji left out, the ends'
    whitespace trimmed, punctuation removed, each run of whitespace one `-` (`A - Reflector`
    is `a-reflector`), a formula left out. A title with nothing left is `section`."""
    text = title.lower()
    if "\ue000" in text:
        text = FORMULA_MARK.sub("", text)
    if text.isascii():
        text = text.strip(_RUBY_STRIP).translate(_ASCII_PUNCT)
    else:
        text = _without_emoji(text).strip(_RUBY_STRIP)
        text = "".join(
            char
            for char in text
            if not (
                ord(char) in _ASCII_PUNCT
                or (ord(char) > 127 and unicodedata.category(char)[0] == "P")
            )
        )
    return _RUBY_SPACE.sub("-", text) or "section"


def is_theme_id(name: str) -> bool:
    """Whether `name` is an id the theme's pages use themselves."""
    return name in THEME_IDS or _THEME_ID.fullmatch(name) is not None


class Slugs:
    """The anchors taken on a page so far, and for each slug the next number to try: a
    page of 10,000 headings of the same text numbers each in one step, instead of trying
    every number taken before it."""

    def __init__(self) -> None:
        self.taken: set[str] = set()
        self.next: dict[str, int] = {}  # below it, every `slug-N` is taken

    def __contains__(self, anchor: object) -> bool:
        return anchor in self.taken


def unique_slug(slug: str, slugs: Slugs) -> str:
    """`slug`, or the first of `slug-1`, `slug-2`... not taken on the page yet (nor an id of
    the theme's): dev.to gives two headings of the same text the same anchor, which leads
    to the first, as the unnumbered one does here."""
    unique = slug
    if unique in slugs.taken or is_theme_id(unique):
        i = slugs.next.get(slug, 1)
        while (unique := f"{slug}-{i}") in slugs.taken or is_theme_id(unique):
            i += 1
        slugs.next[slug] = i + 1
    slugs.taken.add(unique)
    return unique
