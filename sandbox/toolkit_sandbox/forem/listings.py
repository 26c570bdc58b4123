"""Listings (classified ads): lists, lookups, creation with credits, and the update actions.

Rules (seed spec "A. Listing", reference/NOTES.md, the real ListingsToolkit):

* lists hold published listings only, freshest (last bumped) first;
* an unpublished listing can be read by id only with the owner's `api-key`;
* creating costs credits - `jobs` 25, `products` 5, any other category 1 -, taken from
  the organisation (`organization_id`, the caller must belong to it) when it has enough,
  else from the user; neither: 402 `Not enough available credits`. `"action": "draft"`
  creates an unpublished listing and costs nothing (its first publish pays);
* update actions `bump` (pays again, sets the bump time), `publish` and `unpublish`
  take priority over other fields and are exempt from the update restrictions;
* any other update needs one of title, body_markdown, tags, tag_list, and is applied
  only when the listing is unpublished or was bumped in the last 24 hours. Otherwise
  the listing is returned unchanged with 200, as the real service does;
* validation failures answer 422 with the real `{"errors": {"field": ["..."]}}` plus
  `error`/`status`, so the body also fits the API's documented error schema.

The update answer carries the listing fields plus the article fields of `ArticleShow`,
because the published OpenAPI documents that operation's 200 with the article schema.
"""

from __future__ import annotations

import datetime as dt
import re
import sqlite3
from typing import Any, TypedDict

from starlette.routing import Route

from toolkit_sandbox.forem import frontmatter, text
from toolkit_sandbox.forem import serializers as ser
from toolkit_sandbox.forem.http import Ctx, endpoint, require_object
from toolkit_sandbox.forem.seed import listing_cost
from toolkit_sandbox.interface import ErrorAnswer
from toolkit_sandbox.limits import fits64
from toolkit_sandbox.store import inserted_id

CATEGORIES = tuple(ser.CATEGORY_IDS)
MAX_TITLE, MAX_BODY, MAX_TAGS = 128, 400, 8
CONTENT_FIELDS = ("title", "body_markdown", "tags", "tag_list")
FRESHEST = "l.bumped_at DESC, l.id DESC"
_TAG_NAME = re.compile(r"\A[a-z0-9]+\Z")


class ListingFields(TypedDict):
    """The fields a create or an update sets, as given (validated before they are stored)."""

    title: str | None
    body_markdown: str | None
    category: str | None
    tags: list[str]


class ValidFields(TypedDict):
    """The same fields once validation passed."""

    title: str
    body_markdown: str
    category: str
    tags: list[str]


def _listing_tags(params: dict[str, Any]) -> list[str] | None:
    """`tags` (array) takes precedence over `tag_list` (comma string); None when neither."""
    if isinstance(params.get("tags"), list):
        return frontmatter.tag_names(params["tags"])
    if isinstance(params.get("tag_list"), str):
        return frontmatter.tag_names(params["tag_list"])
    return None


def _validate(values: ListingFields) -> dict[str, list[str]]:
    errors: dict[str, list[str]] = {}
    title, body = values.get("title"), values.get("body_markdown")
    if not frontmatter.present(title):
        errors.setdefault("title", []).append("can't be blank")
    elif len(title) > MAX_TITLE:
        errors.setdefault("title", []).append(f"is too long (maximum is {MAX_TITLE} characters)")
    if not frontmatter.present(body):
        errors.setdefault("body_markdown", []).append("can't be blank")
    elif len(body) > MAX_BODY:
        errors.setdefault("body_markdown", []).append(
            f"is too long (maximum is {MAX_BODY} characters)"
        )
    if values.get("category") not in CATEGORIES:
        errors.setdefault("listing_category", []).append("must exist")
    tags = values.get("tags") or []
    if len(tags) > MAX_TAGS:
        errors.setdefault("tag_list", []).append(f"exceed the maximum of {MAX_TAGS} tags")
    for tag in tags:
        if not _TAG_NAME.match(tag) or len(tag) > 30:
            errors.setdefault("tag", []).append(
                f'"{tag}" contains non-alphanumeric or prohibited unicode characters'
            )
    return errors


def _invalid(errors: dict[str, list[str]]) -> ErrorAnswer:
    messages = [
        f"{field.replace('_', ' ').capitalize()} {message}"
        for field, items in errors.items()
        for message in items
    ]
    return ErrorAnswer(422, ", ".join(messages), extra={"errors": errors})


def _validated(values: ListingFields) -> ValidFields:
    """The fields of a write that passes validation; else the 422 naming every failure."""
    errors = _validate(values)
    title, body, category = values["title"], values["body_markdown"], values["category"]
    if errors or title is None or body is None or category is None:  # None is never valid
        raise _invalid(errors)
    return ValidFields(title=title, body_markdown=body, category=category, tags=values["tags"])


def _str(value: Any) -> str | None:
    return None if value is None or isinstance(value, dict | list) else str(value)


def _load(db: sqlite3.Connection, listing_id: int) -> sqlite3.Row | None:
    row: sqlite3.Row | None = db.execute(
        f"{ser.LISTING_SELECT} WHERE l.id = ?", (listing_id,)
    ).fetchone()
    return row


def _written(db: sqlite3.Connection, listing_id: int) -> sqlite3.Row:
    """A listing this transaction has just written, as the answer shows it."""
    row = _load(db, listing_id)
    assert row is not None  # written above, in the same transaction
    return row


def _charge(db: sqlite3.Connection, table: str, ident: int, cost: int) -> bool:
    """Spend `cost` credits of a user or organisation; False when it has too few."""
    cursor = db.execute(
        f"UPDATE {table} SET credits = credits - ? WHERE id = ? AND credits >= ?",
        (cost, ident, cost),
    )
    return cursor.rowcount == 1


def _page(ctx: Ctx, where: str, args: list[Any]) -> list[dict[str, Any]]:
    category = (ctx.params.get("category") or "").strip()
    if category:
        where += " AND l.category = ?"
        args = [*args, category]
    limit, offset = ctx.page(30)
    with ctx.store.read() as db:
        rows = db.execute(
            f"{ser.LISTING_SELECT} WHERE {where} ORDER BY {FRESHEST} LIMIT ? OFFSET ?",
            (*args, limit, offset),
        ).fetchall()
    return [ser.listing(row, ctx.base) for row in rows]


@endpoint()
async def list_listings(ctx: Ctx) -> list[dict[str, Any]]:
    return _page(ctx, "l.published = 1", [])


@endpoint()
async def listings_by_category(ctx: Ctx) -> list[dict[str, Any]]:
    limit, offset = ctx.page(30)
    with ctx.store.read() as db:
        rows = db.execute(
            f"{ser.LISTING_SELECT} WHERE l.published = 1 AND l.category = ? "
            f"ORDER BY {FRESHEST} LIMIT ? OFFSET ?",
            (ctx.path_param("category"), limit, offset),
        ).fetchall()
    return [ser.listing(row, ctx.base) for row in rows]


@endpoint()
async def organization_listings(ctx: Ctx) -> list[dict[str, Any]]:
    with ctx.store.read() as db:
        org = db.execute(
            "SELECT id FROM organizations WHERE username = ?", (ctx.path_param("username"),)
        ).fetchone()
    if org is None:
        raise ErrorAnswer(404)
    return _page(ctx, "l.published = 1 AND l.organization_id = ?", [org["id"]])


@endpoint(auth="optional")
async def show_listing(ctx: Ctx) -> dict[str, Any]:
    with ctx.store.read() as db:
        row = _load(db, ctx.path_param("id"))
    if row is None or not (
        row["published"] or (ctx.caller is not None and row["user_id"] == ctx.caller.id)
    ):
        raise ErrorAnswer(404)
    return ser.listing(row, ctx.base)


@endpoint(auth="required", status=201)
async def create_listing(ctx: Ctx) -> dict[str, Any]:
    params = require_object(await ctx.json(), "listing")
    values = ListingFields(
        title=_str(params.get("title")),
        body_markdown=_str(params.get("body_markdown")),
        category=_str(params.get("category")),
        tags=_listing_tags(params) or [],
    )
    org_id = params.get("organization_id")
    now = ctx.now()
    with ctx.store.transaction() as db:
        if org_id is not None:
            # `Organization.find_by(id: huge)` is nil: beyond 64 bits is no organisation.
            member = db.execute(
                "SELECT 1 FROM org_memberships WHERE user_id = ? AND organization_id = ?",
                (ctx.user.id, org_id if fits64(org_id) else -1),
            ).fetchone()
            if member is None:  # not your organisation: the real service says 401
                raise ErrorAnswer(401)
        fields = _validated(values)
        draft = params.get("action") == "draft"
        if not draft:
            cost = listing_cost(fields["category"])
            paid = (org_id is not None and _charge(db, "organizations", org_id, cost)) or _charge(
                db, "users", ctx.user.id, cost
            )
            if not paid:
                raise ErrorAnswer(402)
        bumped = None if draft else now
        listing_id = inserted_id(
            db.execute(
                "INSERT INTO listings (user_id, organization_id, title, slug, body_markdown, "
                "processed_html, category, cached_tag_list, published, bumped_at, "
                "originally_published_at, expires_at, location, contact_via_connect, created_at, "
                "updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    ctx.user.id,
                    org_id,
                    fields["title"],
                    text.slug_for(fields["title"], ctx.forem.rng),
                    fields["body_markdown"],
                    text.render_markdown(fields["body_markdown"]),
                    fields["category"],
                    ", ".join(fields["tags"]),
                    int(not draft),
                    bumped,
                    bumped,
                    _str(params.get("expires_at")),
                    _str(params.get("location")),
                    int(params.get("contact_via_connect") is True),
                    now,
                    now,
                ),
            )
        )
        row = _written(db, listing_id)
    return ser.listing(row, ctx.base, with_created_at=False)


def _pay_first_publish(db: sqlite3.Connection, row: sqlite3.Row, caller_id: int) -> bool:
    """A draft's first publish: the author (organisation or user) pays, else the caller."""
    cost = listing_cost(row["category"])
    if row["organization_id"] is not None:
        return _charge(db, "organizations", row["organization_id"], cost) or _charge(
            db, "users", caller_id, cost
        )
    return _charge(db, "users", row["user_id"], cost)


def _bumped_recently(row: sqlite3.Row) -> bool:
    if row["bumped_at"] is None:
        return False
    return text.parse_stored(row["bumped_at"]) > text.now() - dt.timedelta(hours=24)


def _apply_update(
    db: sqlite3.Connection, row: sqlite3.Row, params: dict[str, Any], now: str
) -> None:
    if not any(key in params for key in CONTENT_FIELDS):
        return
    if row["published"] and not _bumped_recently(row):
        return  # the real service ignores the update and answers 200
    tags = _listing_tags(params)
    fields = _validated(
        ListingFields(
            title=_str(params["title"]) if "title" in params else row["title"],
            body_markdown=_str(params["body_markdown"])
            if "body_markdown" in params
            else row["body_markdown"],
            category=_str(params["category"]) if "category" in params else row["category"],
            tags=tags if tags is not None else ser.tag_list(row),
        )
    )
    db.execute(
        "UPDATE listings SET title = ?, body_markdown = ?, processed_html = ?, category = ?, "
        "cached_tag_list = ?, updated_at = ? WHERE id = ?",
        (
            fields["title"],
            fields["body_markdown"],
            text.render_markdown(fields["body_markdown"]),
            fields["category"],
            ", ".join(fields["tags"]),
            now,
            row["id"],
        ),
    )


def _owns(db: sqlite3.Connection, row: sqlite3.Row, user_id: int) -> bool:
    if row["user_id"] == user_id:
        return True
    if row["organization_id"] is None:
        return False
    return (
        db.execute(
            "SELECT 1 FROM org_memberships WHERE user_id = ? AND organization_id = ? AND role = 'admin'",
            (user_id, row["organization_id"]),
        ).fetchone()
        is not None
    )


@endpoint(auth="required")
async def update_listing(ctx: Ctx) -> dict[str, Any]:
    params = require_object(await ctx.json(), "listing")
    now = ctx.now()
    with ctx.store.transaction() as db:
        row = _load(db, ctx.path_param("id"))
        if row is None:
            raise ErrorAnswer(404)
        if not _owns(db, row, ctx.user.id):
            raise ErrorAnswer(401)
        action = params.get("action")
        if action == "bump":
            cost = listing_cost(row["category"])
            table, ident = (
                ("organizations", row["organization_id"])
                if row["organization_id"]
                else ("users", ctx.user.id)
            )
            if not _charge(db, table, ident, cost):
                raise ErrorAnswer(402)
            db.execute(
                "UPDATE listings SET bumped_at = ?, updated_at = ? WHERE id = ?",
                (now, now, row["id"]),
            )
        elif action == "unpublish":
            db.execute(
                "UPDATE listings SET published = 0, updated_at = ? WHERE id = ?", (now, row["id"])
            )
        elif action == "publish":
            if row["bumped_at"] is None:
                if not _pay_first_publish(db, row, ctx.user.id):
                    raise ErrorAnswer(402)
                db.execute(
                    "UPDATE listings SET published = 1, bumped_at = ?, originally_published_at = ?, "
                    "updated_at = ? WHERE id = ?",
                    (now, now, now, row["id"]),
                )
            else:
                db.execute(
                    "UPDATE listings SET published = 1, updated_at = ? WHERE id = ?",
                    (now, row["id"]),
                )
        else:
            _apply_update(db, row, params, now)
        row = _written(db, row["id"])
    return updated_listing(row, ctx.base)


def updated_listing(row: sqlite3.Row, base: str) -> dict[str, Any]:
    """The listing, plus the article fields the OpenAPI documents for this answer."""
    data = ser.listing(row, base)
    when = row["bumped_at"] or row["created_at"]
    path = f"/listings/{row['category']}/{row['slug']}"
    data.update(
        description=text.default_description(row["processed_html"], row["u_name"]),
        cover_image=None,
        readable_publish_date=text.readable_date(when),
        social_image=ser.image_url(base, "social", f"listing-{row['id']}", 1000),
        path=path,
        url=base + path,
        canonical_url=base + path,
        comments_count=0,
        positive_reactions_count=0,
        public_reactions_count=0,
        created_at=text.iso(row["created_at"]),
        edited_at=text.iso(row["updated_at"]),
        crossposted_at=None,
        published_at=text.iso(when),
        last_comment_at=text.iso(when),
        published_timestamp=text.iso(when),
        body_html=row["processed_html"],
        reading_time_minutes=text.reading_time(row["body_markdown"]),
    )
    return data


routes = [
    Route("/api/listings", list_listings, methods=["GET"]),
    Route("/api/listings", create_listing, methods=["POST"]),
    Route("/api/listings/category/{category}", listings_by_category, methods=["GET"]),
    Route("/api/listings/{id:rowid}", show_listing, methods=["GET"]),
    Route("/api/listings/{id:rowid}", update_listing, methods=["PUT"]),
    Route("/api/organizations/{username}/listings", organization_listings, methods=["GET"]),
]
