"""What a post's front matter fields mean, apart from any one post: the keys the API and
toolkit read, a title made a slug, tags as written made a list, a date as written made a
datetime."""

from __future__ import annotations

import datetime as dt
import re
import unicodedata
from typing import Any

# Front matter keys the publishing API honours, in the order toolkit writes them.
FOREM_KEYS = (
    "title",
    "published",
    "description",
    "tags",
    "canonical_url",
    "cover_image",
    "series",
    "date",
)
# Keys only toolkit reads; never sent to the API.
# `pinned: true` lists the post first on the site's home page; `id` is the article the
# post is bound to, as devto-cli writes it (`toolkit.sync.identity` reads it).
# `crosspost: true` sends a post that predates `[source] adopted` (`toolkit.sync.adoption`).
TOOLKIT_KEYS = ("premium", "slug", "organization_id", "pinned", "id", "crosspost")
KNOWN_KEYS = frozenset(FOREM_KEYS + TOOLKIT_KEYS)
# What YAML reads as a line break (its own four, and CR LF): a title holding one is
# refused, a description is sent folded on one line.
LINE_BREAK = re.compile("[\r\n\x85\u2028\u2029]")


def slugify(text: str) -> str:
    """`Hello, World!` -> `hello-world`; ASCII only, so it is safe in any URL."""
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    slug = re.sub(r"[^a-z0-9]+", "-", ascii_text.lower()).strip("-")
    return slug or "post"


def split_tags(value: Any) -> list[str]:
    """Tags as written (a list, or a comma-separated string), trimmed; not yet validated."""
    if value is None:
        return []
    items = value.split(",") if isinstance(value, str) else value
    if not isinstance(items, list):
        return [str(items)]
    return [str(item).strip() for item in items if str(item).strip()]


def parse_date(value: Any) -> dt.datetime | None:
    if isinstance(value, dt.datetime):
        return value if value.tzinfo else value.replace(tzinfo=dt.UTC)
    if isinstance(value, dt.date):
        return dt.datetime(value.year, value.month, value.day, tzinfo=dt.UTC)
    if isinstance(value, str) and value.strip():
        try:
            parsed = dt.datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
        except ValueError:
            return None
        return parsed if parsed.tzinfo else parsed.replace(tzinfo=dt.UTC)
    return None
