"""Creating and updating an article the way Forem does (its `evaluate_markdown`,
`evaluate_front_matter`, `create_slug` and validations, reference/NOTES.md).

Order of evaluation, as in the real model:

1. the JSON fields of the payload are assigned over the article's current values;
2. the front matter of `body_markdown` is read; its keys override the JSON fields
   (`title`, `tags`, `published` only when exactly true/false, `date` only when the
   article is published and had no `published_at`, `cover_image` - present with no
   value clears it -, `canonical_url`, `description`, `series`; a `title` without
   `series` removes the article from its series);
3. defaults: description from the body, `published_at` on first publish (never moved
   afterwards), `last_comment_at`, the slug (a draft's carries `-temp-slug-N` until
   first published), `edited_at` when an already published article is changed;
4. validation: every failure joined into one 422 sentence.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import random
import re
import sqlite3
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from toolkit_sandbox.forem import frontmatter, text
from toolkit_sandbox.forem.http import unprocessable
from toolkit_sandbox.limits import fits64
from toolkit_sandbox.store import inserted_id

# Forem's column default; replaced by `published_at` on first publish.
DEFAULT_LAST_COMMENT_AT = "2017-01-01T05:00:00.000000Z"
MAX_BODY_BYTES = 800 * 1024
MAX_TITLE = 128
MAX_TAGS = 4
MAX_TAG_LENGTH = 30
_TAG_NAME = re.compile(r"\A[a-z0-9]+\Z", re.IGNORECASE)
# `ForemInstance.contact_email` in the canonical URL message: the sandbox's own, fixed.
CONTACT_EMAIL = "sandbox@example.com"
# Hotness of a new article: above the seed's, so fresh writes lead the default feed.
NEW_HOTNESS = 1000


@dataclass
class Attrs:
    """The article's writable attributes while a write is being evaluated."""

    title: str | None = None
    body_markdown: str = ""
    published: bool = False
    description: str | None = None
    main_image: str | None = None
    canonical_url: str | None = None
    tags: list[str] = field(default_factory=list)
    collection_id: int | None = None
    organization_id: int | None = None
    published_at: str | None = None
    slug: str | None = None
    series: str | None = None  # a series name to find or create, set by the payload


@dataclass
class Author:
    id: int
    name: str


def to_sentence(messages: list[str]) -> str:
    """Rails' `Array#to_sentence`: `a`, `a and b`, `a, b, and c`."""
    if len(messages) <= 2:
        return " and ".join(messages)
    return ", ".join(messages[:-1]) + ", and " + messages[-1]


def _scalar(value: Any) -> str | None:
    """A strong-parameters scalar as a string; None for null."""
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _boolean(value: Any) -> bool:
    """ActiveRecord's boolean cast."""
    if isinstance(value, str):
        return value.strip().lower() not in ("", "false", "0", "f", "off", "no", "n")
    return bool(value)


def _is_scalar(value: Any) -> bool:
    return value is None or isinstance(value, str | int | float | bool)


def parse_date(value: Any) -> dt.datetime | None:
    """A front matter `date` (quoted, so a string; or a bare number): ISO 8601 in its
    extended or basic form (`2019-07-01T10:00Z`, `20190701T10:00Z`). None when unreadable."""
    raw = str(value).strip()
    match = re.fullmatch(
        r"(\d{4})-?(\d{2})-?(\d{2})"
        r"(?:[T ](\d{2}):?(\d{2})(?::?(\d{2})(?:\.\d+)?)?)?"
        r"\s*(Z|z|UTC|[+-]\d{2}(?::?\d{2})?)?",
        raw,
    )
    if not match:
        return None
    year, month, day, hour, minute, second, zone = match.groups()
    offset = dt.timedelta(0)
    if zone and zone[0] in "+-":
        digits = zone[1:].replace(":", "")
        offset = dt.timedelta(hours=int(digits[:2]), minutes=int(digits[2:4] or 0))
        if zone[0] == "-":
            offset = -offset
    try:
        moment = dt.datetime(
            int(year),
            int(month),
            int(day),
            int(hour or 0),
            int(minute or 0),
            int(second or 0),
            tzinfo=dt.timezone(offset),
        )
        return moment.astimezone(text.UTC)
    except (ValueError, OverflowError):  # no such day, or beyond year 1..9999 in UTC
        return None


def _http_url(value: str) -> bool:
    parts = urlsplit(value)
    return parts.scheme in ("http", "https") and bool(parts.netloc)


def tag_colors(name: str) -> tuple[str, str]:
    """A stable colour pair for a new tag."""
    digest = hashlib.sha256(name.encode()).hexdigest()
    background = "#" + digest[:6]
    red, green, blue = (int(digest[i : i + 2], 16) for i in (0, 2, 4))
    foreground = "#000000" if (red * 299 + green * 587 + blue * 114) / 1000 > 140 else "#ffffff"
    return background, foreground


def _collection_id(db: sqlite3.Connection, user_id: int, series: str, now: str) -> int:
    row = db.execute(
        "SELECT id FROM collections WHERE user_id = ? AND slug = ?", (user_id, series)
    ).fetchone()
    if row is not None:
        found: int = row["id"]
        return found
    return inserted_id(
        db.execute(
            "INSERT INTO collections (user_id, slug, created_at) VALUES (?, ?, ?)",
            (user_id, series, now),
        )
    )


def _is_member(db: sqlite3.Connection, user_id: int, organization_id: Any) -> bool:
    """`allowed_to_change_org_id?`: a membership of the user; an id beyond 64 bits is no
    organisation (Rails' `exists?` with an out-of-range value finds nothing), so the key
    is dropped like any other unknown organisation's."""
    if not fits64(organization_id):
        return False
    row = db.execute(
        "SELECT 1 FROM org_memberships WHERE user_id = ? AND organization_id = ?",
        (user_id, organization_id),
    ).fetchone()
    return row is not None


def permitted_tags(params: dict[str, Any]) -> list[Any] | None:
    """`tags` as strong parameters' `tags: []` permits it: an array of scalars (`null`
    items removed, as Rails' deep_munge does), else None - dropped as if absent, with no
    error (a string, an object, an array holding an array or an object). Forem:
    app/controllers/api/v0/articles_controller.rb `article_params`."""
    tags = params.get("tags")
    if not isinstance(tags, list) or not all(_is_scalar(item) for item in tags):
        return None
    return [item for item in tags if item is not None]


def _assign_json(
    db: sqlite3.Connection, attrs: Attrs, params: dict[str, Any], user_id: int, creating: bool
) -> None:
    """Step 1: the permitted JSON fields; non-scalar values are dropped like Rails does.
    `tags` absent or dropped leaves the tags as they are (none on a create); `[]` clears
    them (Forem: app/services/articles/attributes.rb, creator.rb)."""
    for key in ("title", "description", "main_image", "canonical_url"):
        if key in params and _is_scalar(params[key]):
            setattr(attrs, key, _scalar(params[key]))
    if "body_markdown" in params and _is_scalar(params["body_markdown"]):
        attrs.body_markdown = _scalar(params["body_markdown"]) or ""
    if "published" in params and _is_scalar(params["published"]):
        attrs.published = _boolean(params["published"])
    tags = permitted_tags(params)
    if tags is not None:
        attrs.tags = frontmatter.tag_names(tags)
    if "series" in params and _is_scalar(params["series"]):
        series = _scalar(params["series"])
        if frontmatter.present(series):
            attrs.series = series
        elif not creating:
            attrs.collection_id = None
    if "organization_id" in params and _is_member(db, user_id, params["organization_id"]):
        attrs.organization_id = params["organization_id"]


def _evaluate_front_matter(attrs: Attrs, fm: dict[str, Any], now: dt.datetime) -> list[str]:
    """Step 2: front matter over JSON. Returns validation messages found on the way."""
    problems: list[str] = []
    if frontmatter.present(fm.get("title")):
        attrs.title = _scalar(fm["title"])
    if frontmatter.present(fm.get("tags")):
        attrs.tags = frontmatter.tag_names(fm["tags"])
    published = fm.get("published")
    if published is True or published is False or published in ("true", "false"):
        attrs.published = published in (True, "true")
    if attrs.published and attrs.published_at is None:
        date = fm.get("date")
        moment = parse_date(date) if frontmatter.present(date) else None
        if moment is not None and moment > now:
            problems.append(
                "Date time must be entered in DD/MM/YYYY format with current or past date"
            )
        attrs.published_at = text.stored(moment or now)
    if "cover_image" in fm and (frontmatter.present(fm["cover_image"]) or attrs.main_image):
        attrs.main_image = _scalar(fm["cover_image"]) or None
    if frontmatter.present(fm.get("canonical_url")):
        attrs.canonical_url = _scalar(fm["canonical_url"])
    if frontmatter.present(fm.get("description")) or frontmatter.present(fm.get("title")):
        description = fm.get("description")
        attrs.description = _scalar(description) if frontmatter.present(description) else None
    if frontmatter.present(fm.get("title")):
        attrs.collection_id = None
        attrs.series = None
    if frontmatter.present(fm.get("series")):
        attrs.series = _scalar(fm["series"])
    return problems


def _validate(
    db: sqlite3.Connection, attrs: Attrs, user_id: int, article_id: int | None
) -> list[str]:
    """The model's validations, in its order of declaration (Forem: app/models/article.rb);
    messages from config/locales/models/en.yml."""
    problems: list[str] = []
    if len(attrs.body_markdown.encode()) > MAX_BODY_BYTES:
        problems.append("Body markdown is too long.")
    # `validates :body_markdown, uniqueness: { scope: %i[user_id title] }`: the same user,
    # title and body; a repeated title alone is fine (slugs get a random suffix).
    if db.execute(
        "SELECT 1 FROM articles WHERE user_id = ? AND title = ? AND body_markdown = ? "
        "AND id IS NOT ?",
        (user_id, attrs.title, attrs.body_markdown, article_id),
    ).fetchone():
        problems.append("Body markdown has already been taken")
    url = attrs.canonical_url
    if url is not None:
        # `uniqueness: { scope: :published, message: unique_url_error }, if: :published?`:
        # checked only for a published article, only against published ones
        # (https://github.com/forem/forem/issues/9759, pull 10161).
        if (
            attrs.published
            and db.execute(
                "SELECT 1 FROM articles WHERE canonical_url = ? AND published = 1 AND id IS NOT ?",
                (url, article_id),
            ).fetchone()
        ):
            problems.append(
                f"Canonical url has already been taken. Email {CONTACT_EMAIL} for further details."
            )
        if re.search(r"\s", url):
            problems.append("Canonical url must not have spaces")
        elif not _http_url(url):
            problems.append("Canonical url is not a valid URL")
    if attrs.main_image is not None and not _http_url(attrs.main_image):
        problems.append("Main image is not a valid URL")
    title = attrs.title
    if not frontmatter.present(title):
        problems.append("Title can't be blank")
    elif len(title) > MAX_TITLE:
        problems.append(f"Title is too long (maximum is {MAX_TITLE} characters)")
    if len(attrs.tags) > MAX_TAGS:
        problems.append(f"Tag list exceed the maximum of {MAX_TAGS} tags")
    else:
        for tag in attrs.tags:
            if len(tag) > MAX_TAG_LENGTH:
                problems.append(f'Tag "{tag}" is too long (maximum is {MAX_TAG_LENGTH} characters)')
            if not _TAG_NAME.match(tag):
                problems.append(
                    f'Tag "{tag}" contains non-alphanumeric or prohibited unicode characters'
                )
    return problems


def _write_tags(db: sqlite3.Connection, article_id: int, tags: list[str]) -> None:
    db.execute("DELETE FROM taggings WHERE article_id = ?", (article_id,))
    for name in tags:
        bg, fg = tag_colors(name)
        db.execute(
            "INSERT OR IGNORE INTO tags (name, bg_color_hex, text_color_hex) VALUES (?, ?, ?)",
            (name, bg, fg),
        )
        db.execute("INSERT INTO taggings (article_id, tag_name) VALUES (?, ?)", (article_id, name))


def _attrs_of(row: sqlite3.Row) -> Attrs:
    return Attrs(
        title=row["title"],
        body_markdown=row["body_markdown"],
        published=bool(row["published"]),
        description=row["description"],
        main_image=row["main_image"],
        canonical_url=row["canonical_url"],
        tags=[name.strip() for name in row["cached_tag_list"].split(",") if name.strip()],
        collection_id=row["collection_id"],
        organization_id=row["organization_id"],
        published_at=row["published_at"],
        slug=row["slug"],
    )


def save_article(
    db: sqlite3.Connection,
    rng: random.Random,
    author: Author,
    params: dict[str, Any],
    existing: sqlite3.Row | None = None,
    *,
    website_edit: bool = False,
    moment: dt.datetime | None = None,
) -> int:
    """Create (existing=None) or update an article from a payload's `article` object.
    Returns its id; raises ErrorAnswer 422 with the API's message when refused.
    `moment` is the time of the write (the seed passes its fixed clock)."""
    moment = moment or text.now()
    now = text.stored(moment)
    creating = existing is None
    attrs = Attrs() if existing is None else _attrs_of(existing)
    was_published = existing is not None and bool(existing["published"])
    _assign_json(db, attrs, params, author.id, creating)

    try:
        parsed = frontmatter.parse(attrs.body_markdown)
    except frontmatter.FrontMatterError as exc:
        raise unprocessable(str(exc)) from None
    problems: list[str] = []
    if parsed.front_matter:
        problems += _evaluate_front_matter(attrs, parsed.front_matter, moment)
    if attrs.published and attrs.published_at is None:
        attrs.published_at = now
    if attrs.canonical_url == "":
        attrs.canonical_url = None
    current_id: int | None = None if existing is None else existing["id"]
    problems = _validate(db, attrs, author.id, current_id) + problems
    if problems:
        raise unprocessable(to_sentence(problems))

    body_html = text.render_markdown(parsed.content)
    if not frontmatter.present(attrs.description):
        attrs.description = text.default_description(body_html, author.name)
    if attrs.series:
        attrs.collection_id = _collection_id(db, author.id, attrs.series, now)
    # create_slug: a draft gets a temporary slug once; the first publish replaces it.
    if not attrs.slug and not attrs.published:
        attrs.slug = text.temp_slug_for(attrs.title or "", rng)
    elif attrs.published and (not attrs.slug or "-temp-slug-" in attrs.slug):
        attrs.slug = text.slug_for(attrs.title or "", rng)
    last_comment_at = DEFAULT_LAST_COMMENT_AT if existing is None else existing["last_comment_at"]
    if attrs.published_at and last_comment_at == DEFAULT_LAST_COMMENT_AT:
        last_comment_at = attrs.published_at
    values = {
        "title": attrs.title,
        "slug": attrs.slug,
        "body_markdown": attrs.body_markdown,
        "body_html": body_html,
        "description": attrs.description,
        "main_image": attrs.main_image,
        "canonical_url": attrs.canonical_url,
        "cached_tag_list": ", ".join(attrs.tags),
        "published": int(attrs.published),
        "published_at": attrs.published_at,
        "collection_id": attrs.collection_id,
        "organization_id": attrs.organization_id,
        "last_comment_at": last_comment_at,
        "reading_time_minutes": text.reading_time(parsed.content),
        "updated_at": now,
    }
    if existing is None:
        values.update(user_id=author.id, created_at=now, featured=1, hotness_score=NEW_HOTNESS)
        columns = ", ".join(values)
        marks = ", ".join("?" for _ in values)
        article_id = inserted_id(
            db.execute(
                f"INSERT INTO articles ({columns}) VALUES ({marks})",  # fixed keys
                tuple(values.values()),
            )
        )
    else:
        article_id = existing["id"]
        if was_published or website_edit:
            values["edited_at"] = now
        assignments = ", ".join(f"{key} = ?" for key in values)
        db.execute(
            f"UPDATE articles SET {assignments} WHERE id = ?",  # fixed keys
            (*values.values(), article_id),
        )
    _write_tags(db, article_id, attrs.tags)
    return article_id
