"""The small rules the real API applies to text and time (reference/NOTES.md, part A).

Slugs, `id_code`s, reading time, the default description, readable dates and the
Markdown rendering of bodies all live here, so the seed and the write endpoints give
the same shapes.
"""

from __future__ import annotations

import datetime as dt
import html
import math
import random
import re
import unicodedata
from functools import lru_cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from markdown_it import MarkdownIt

UTC = dt.UTC

# --- time ---------------------------------------------------------------------------

STORED_FORMAT = "%Y-%m-%dT%H:%M:%S.%fZ"
_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")


def now() -> dt.datetime:
    return dt.datetime.now(UTC)


def stored(moment: dt.datetime) -> str:
    """A time as the database keeps it: fixed width, microseconds, sortable as text."""
    return moment.astimezone(UTC).strftime(STORED_FORMAT)


def parse_stored(value: str) -> dt.datetime:
    return dt.datetime.fromisoformat(value)  # C-fast; the stored form ends in "Z" (UTC)


def iso(value: str | None) -> str | None:
    """Stored time -> the API's RFC 3339 form with seconds (`2019-08-01T15:47:54Z`)."""
    if value is None:
        return None
    return value[:19] + "Z"


def readable_date(value: str | None, today: dt.date | None = None) -> str | None:
    """`strftime("%b %e")` ("Aug  1"), plus `'%y` when the year is not this year."""
    if value is None:
        return None
    month, day = _MONTHS[int(value[5:7]) - 1], int(value[8:10])
    text = f"{month} {day:>2}"
    year = (today or now().date()).year
    return text if int(value[:4]) == year else f"{text} '{value[2:4]}"


def listing_time(value: str) -> str:
    """A listing's `created_at` in list responses: `2021-04-07 08:29:42 UTC`."""
    return f"{value[:10]} {value[11:19]} UTC"


def joined_at(value: str) -> str:
    """A user's `joined_at`: `Mon D, YYYY` (the seed's form)."""
    moment = parse_stored(value)
    return f"{moment:%b} {moment.day}, {moment.year}"


# --- identifiers ------------------------------------------------------------------

_DIGITS26 = "0123456789abcdefghijklmnop"  # Ruby's Integer#to_s(26)


def base26(number: int) -> str:
    if number == 0:
        return "0"
    digits = []
    while number:
        number, rest = divmod(number, 26)
        digits.append(_DIGITS26[rest])
    return "".join(reversed(digits))


def from_base26(code: str) -> int | None:
    if not code or len(code) > 12 or any(ch not in _DIGITS26 for ch in code):
        return None
    return int(code, 26)


def parameterize(text: str) -> str:
    """Rails' `downcase.parameterize.tr('_', '')`: ASCII words joined by `-`."""
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    slug = re.sub(r"[^a-z0-9\-_]+", "-", ascii_text.lower())
    slug = re.sub(r"-{2,}", "-", slug).strip("-")
    return slug.replace("_", "")


def slug_for(title: str, rng: random.Random) -> str:
    """`title-parameterized-<random base-26 suffix>`, as Forem's `title_to_slug`."""
    return f"{parameterize(title)}-{base26(rng.randrange(100_000))}"


def temp_slug_for(title: str, rng: random.Random) -> str:
    """A draft's slug carries `-temp-slug-N` until the article is first published."""
    return f"{slug_for(title, rng)}-temp-slug-{rng.randrange(10_000_000)}"


# --- bodies -------------------------------------------------------------------------


@lru_cache(maxsize=1)
def _markdown() -> MarkdownIt:
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark", {"html": True}).enable(["table", "strikethrough"])


def render_markdown(text: str) -> str:
    """Markdown -> HTML, cleaned like the real service cleans a post (no scripts,
    no event handlers, no `javascript:` links)."""
    import nh3

    raw = _markdown().render(text)
    return nh3.clean(raw, tags=_ALLOWED_TAGS, attributes=_ALLOWED_ATTRIBUTES)


_ALLOWED_TAGS = {
    "a", "abbr", "b", "blockquote", "br", "code", "dd", "del", "details", "div", "dl",
    "dt", "em", "figcaption", "figure", "h1", "h2", "h3", "h4", "h5", "h6", "hr", "i",
    "img", "kbd", "li", "ol", "p", "pre", "s", "span", "strong", "sub", "summary", "sup",
    "table", "tbody", "td", "th", "thead", "tr", "u", "ul",
}  # fmt: skip
_ALLOWED_ATTRIBUTES = {
    "a": {"href", "title", "name"},
    "img": {"src", "alt", "title", "width", "height"},
    "code": {"class"},
    "pre": {"class"},
    "td": {"align"},
    "th": {"align"},
    "*": {"id"},
}


COMMENT_ENVELOPE = (
    '<!DOCTYPE html PUBLIC "-//W3C//DTD HTML 4.0 Transitional//EN" '
    '"http://www.w3.org/TR/REC-html40/loose.dtd">\n<html><body>\n{}\n</body></html>\n'
)


def render_comment(markdown: str) -> str:
    """A comment's `body_html`: the real service sends a whole HTML document."""
    return COMMENT_ENVELOPE.format(render_markdown(markdown).strip())


_TAG = re.compile(r"<[^>]*>")


def html_text(markup: str) -> str:
    return html.unescape(_TAG.sub("", markup))


def reading_time(body: str) -> int:
    """`ceil(words / 275)`, words of the body (no front matter) split on non-word chars."""
    words = sum(1 for word in re.split(r"\W+", body) if word)
    return math.ceil(words / 275)


def default_description(body_html: str, author_name: str) -> str:
    """First 100 characters of the body text, plus `...` when there is more."""
    text = html_text(body_html).strip()
    if not text:
        return f"A post by {author_name}"
    portion = text[:100].replace("\n", " ").strip()
    return f"{portion}..." if len(text) > 100 else portion


def duration_text(seconds: int) -> str:
    """`mm:ss` below an hour, `h:mm:ss` from an hour on."""
    hours, rest = divmod(int(seconds), 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes:02d}:{secs:02d}"
