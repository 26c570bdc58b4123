"""What `toolkit mirror` leaves in `content/_mirror/`, read for the site.

- `comments/<slug>.json` (or `<post stem>.json`): `{"article": {...}, "comments": [...]}`,
  each comment in the API's own shape with its replies nested under `children`;
- `readinglist.json`: the API's reading-list items, as a JSON array.

Both come from outside: every text is escaped by the templates, every comment body is
sanitised here, and a URL is kept only when it is http(s).
"""

from __future__ import annotations

import datetime as dt
import json
import re
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from toolkit.mirror_layout import COMMENTS as COMMENTS
from toolkit.mirror_layout import MIRROR as MIRROR
from toolkit.mirror_layout import READING_LIST as READING_LIST

_USERNAME = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")
_ID = re.compile(r"[^A-Za-z0-9_-]")
MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")


class MirrorError(Exception):
    """A mirror file that cannot be used; `line` is where the problem is."""

    def __init__(self, message: str, line: int = 1):
        super().__init__(message)
        self.line = line


def display_date(value: dt.datetime) -> str:
    """`Mar 5, 2024`: the same on every machine, whatever its locale."""
    return f"{MONTHS[value.month - 1]} {value.day}, {value.year}"


def parse_time(value: Any) -> dt.datetime | None:
    if not isinstance(value, str) or not value.strip():
        return None
    try:
        parsed = dt.datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=dt.UTC)


def http_url(value: Any) -> str | None:
    if not isinstance(value, str):
        return None
    parts = urlsplit(value.strip())
    return value.strip() if parts.scheme in ("http", "https") and parts.netloc else None


def read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_bytes())
    except json.JSONDecodeError as exc:
        raise MirrorError(f"not valid JSON: {exc.msg}", exc.lineno) from None
    except UnicodeDecodeError:
        raise MirrorError("not valid UTF-8 text") from None
    except OSError as exc:
        raise MirrorError(f"cannot read the file: {exc.strerror}") from None


def check_comments(data: Any) -> None:
    if not isinstance(data, dict) or not isinstance(data.get("comments", []), list):
        raise MirrorError('expected {"article": {...}, "comments": [...]}')


def check_reading_list(data: Any) -> None:
    if not isinstance(data, list):
        raise MirrorError("expected a JSON array of reading-list items")


def _text(value: Any) -> str:
    return value.strip() if isinstance(value, str) else ""


def _object(value: Any) -> dict[str, Any]:
    """A JSON object, or an empty one in place of anything else."""
    return value if isinstance(value, dict) else {}


def _array(value: Any) -> list[Any]:
    """A JSON array, or an empty one in place of anything else."""
    return value if isinstance(value, list) else []


def _comment(data: Any, site: str | None) -> dict[str, Any] | None:
    from markupsafe import Markup

    from toolkit.site.sanitize import clean_html

    if not isinstance(data, dict):
        return None
    user = _object(data.get("user"))
    username = _text(user.get("username"))
    created = parse_time(data.get("created_at"))
    children = _array(data.get("children"))
    return {
        "id": _ID.sub("", str(data.get("id_code") or "")),
        "author": _text(user.get("name")) or username or "Anonymous",
        "profile": f"{site}/{username}" if site and _USERNAME.match(username) else None,
        "date": created.isoformat() if created else None,
        "date_display": display_date(created) if created else "",
        "body": Markup(clean_html(str(data.get("body_html") or ""), site)),
        "children": [c for c in (_comment(child, site) for child in children) if c],
    }


def _count(thread: list[dict[str, Any]]) -> int:
    return sum(1 + _count(comment["children"]) for comment in thread)


def comment_thread(data: Any) -> dict[str, Any]:
    """The template's view of a comments file: count, thread (sanitised), article URL."""
    check_comments(data)
    article = _object(data.get("article"))
    url = http_url(article.get("url"))
    site = None
    if url:
        parts = urlsplit(url)
        site = f"{parts.scheme}://{parts.netloc}"
    thread = [c for c in (_comment(item, site) for item in data.get("comments") or []) if c]
    return {"count": _count(thread), "thread": thread, "url": url}


def _tags(article: dict[str, Any]) -> list[str]:
    raw = article.get("tag_list")
    if raw is None:
        raw = article.get("tags")
    if isinstance(raw, str):  # the API sends a string on some endpoints, an array on others
        raw = raw.split(",")
    if not isinstance(raw, list):
        return []
    return [t for t in (_text(str(tag)) for tag in raw) if t]


def reading_list_items(data: Any) -> list[dict[str, Any]]:
    """The template's view of the reading list, in the file's order."""
    check_reading_list(data)
    items = []
    for entry in data:
        if not isinstance(entry, dict):
            continue
        article = _object(entry.get("article"))
        user = _object(article.get("user"))
        minutes = article.get("reading_time_minutes")
        items.append(
            {
                "title": _text(article.get("title")) or "Untitled",
                "url": http_url(article.get("url")),
                "author": _text(user.get("name")) or _text(user.get("username")),
                "description": _text(article.get("description")),
                "date": _text(article.get("readable_publish_date")),
                "reading_time": minutes if isinstance(minutes, int) and minutes > 0 else None,
                "tags": _tags(article),
                "status": _text(entry.get("status")),
            }
        )
    return items
