"""Article endpoints: the public lists and lookups, the caller's own lists, and writes.

Ordering rules (seed spec, "Behaviour rules for A endpoints"):

* `GET /api/articles`: featured published articles by descending popularity;
  `tag`/`tags`/`tags_exclude` select by tags (any article, not only featured), still by
  popularity; `top=N` keeps articles published in the last N days, most reactions
  first; `state=fresh|rising` selects new articles with few / a rising number of
  reactions; `username` gives one user's or organisation's articles by descending
  publication date (page size 1000 with `state=all`); `collection_id` gives a series
  in ascending publication order.
* Popularity is the article's hotness score (seeded; a new article starts above the
  seed), ties broken by publication date then id, newest first.
* `/articles/latest`: published, by descending publication date.
* `/articles/me` and `/me/published`: descending publication date; `/me/unpublished`:
  descending creation date; `/me/all`: unpublished first (by creation date), then
  published (by publication date).
"""

from __future__ import annotations

import datetime as dt
import sqlite3
from typing import Any

from starlette.responses import JSONResponse
from starlette.routing import Route

from toolkit_sandbox.forem import serializers as ser
from toolkit_sandbox.forem import text
from toolkit_sandbox.forem.article_writes import Author, save_article
from toolkit_sandbox.forem.http import (
    Ctx,
    endpoint,
    rate_limited,
    require_hash,
    require_object,
)
from toolkit_sandbox.interface import Endpoint, ErrorAnswer
from toolkit_sandbox.limits import fits64

POPULAR = "a.hotness_score DESC, a.published_at DESC, a.id DESC"
NEWEST = "a.published_at DESC, a.id DESC"
FRESH_HOURS = 7 * 24  # "fresh": published in the last week with fewer than 2 reactions
RISING_DAYS = 3  # "rising": published in the last 3 days, 20 to 32 reactions


def _split(value: str | None) -> list[str]:
    return [part.strip().lower() for part in (value or "").split(",") if part.strip()]


def _since(**delta: float) -> str:
    return text.stored(text.now() - dt.timedelta(**delta))


def _index_query(ctx: Ctx) -> tuple[str, list[Any], str, int]:
    """WHERE clause, its arguments, ORDER BY and the default page size for /articles."""
    params = ctx.params
    where = ["a.published = 1"]
    args: list[Any] = []
    username = (params.get("username") or "").strip()
    collection_id = ctx.int_param("collection_id")
    if collection_id is not None and not fits64(collection_id):
        # Rails' `where(collection_id: huge)` is `WHERE 1=0`: nothing, never an error.
        return "0", [], NEWEST, 30
    state = params.get("state")
    if username:
        where.append(
            "(a.organization_id = (SELECT id FROM organizations WHERE username = ?) OR "
            "(a.user_id = (SELECT id FROM users WHERE username = ?)))"
        )
        args += [username, username]
        if collection_id is not None:
            where.append("a.collection_id = ?")
            args.append(collection_id)
        return " AND ".join(where), args, NEWEST, 1000 if state == "all" else 30
    if collection_id is not None:
        where.append("a.collection_id = ?")
        args.append(collection_id)
        return " AND ".join(where), args, "a.published_at ASC, a.id ASC", 30
    filtered = False
    if params.get("tag", "").strip():
        where.append(
            "EXISTS (SELECT 1 FROM taggings t WHERE t.article_id = a.id AND t.tag_name = ?)"
        )
        args.append(params["tag"].strip().lower())
        filtered = True
    any_of = _split(params.get("tags"))
    if any_of:
        marks = ", ".join("?" for _ in any_of)
        where.append(
            f"EXISTS (SELECT 1 FROM taggings t WHERE t.article_id = a.id AND t.tag_name IN ({marks}))"
        )
        args += any_of
        filtered = True
    none_of = _split(params.get("tags_exclude"))
    if none_of:
        marks = ", ".join("?" for _ in none_of)
        where.append(
            f"NOT EXISTS (SELECT 1 FROM taggings t WHERE t.article_id = a.id AND t.tag_name IN ({marks}))"
        )
        args += none_of
        filtered = True
    order = POPULAR
    if state == "fresh":
        where.append("a.public_reactions_count < 2 AND a.published_at > ?")
        args.append(_since(hours=FRESH_HOURS))
        order, filtered = NEWEST, True
    elif state == "rising":
        where.append("a.public_reactions_count BETWEEN 20 AND 32 AND a.published_at > ?")
        args.append(_since(days=RISING_DAYS))
        order, filtered = NEWEST, True
    top = ctx.int_param("top")
    if top is not None and top >= 1:
        where.append("a.published_at > ?")
        args.append(_since(days=min(top, 100_000)))
        order, filtered = "a.public_reactions_count DESC, " + NEWEST, True
    if not filtered:
        where.append("a.featured = 1")
    return " AND ".join(where), args, order, 30


def _select(
    ctx: Ctx, where: str, args: list[Any], order: str, limit: int, offset: int
) -> list[sqlite3.Row]:
    sql = f"{ser.ARTICLE_SELECT} WHERE {where} ORDER BY {order} LIMIT ? OFFSET ?"
    with ctx.store.read() as db:
        rows: list[sqlite3.Row] = db.execute(sql, (*args, limit, offset)).fetchall()
    return rows


@endpoint()
async def list_articles(ctx: Ctx) -> list[dict[str, Any]]:
    where, args, order, default = _index_query(ctx)
    limit, offset = ctx.page(default)
    return [
        ser.article_index(row, ctx.base) for row in _select(ctx, where, args, order, limit, offset)
    ]


@endpoint()
async def latest_articles(ctx: Ctx) -> list[dict[str, Any]]:
    limit, offset = ctx.page(30)
    rows = _select(ctx, "a.published = 1", [], NEWEST, limit, offset)
    return [ser.article_index(row, ctx.base) for row in rows]


@endpoint()
async def show_article(ctx: Ctx) -> dict[str, Any]:
    with ctx.store.read() as db:
        row = db.execute(
            f"{ser.ARTICLE_SELECT} WHERE a.id = ? AND a.published = 1", (ctx.path_param("id"),)
        ).fetchone()
    if row is None:
        raise ErrorAnswer(404)
    return ser.article_show(row, ctx.base)


@endpoint()
async def show_article_by_path(ctx: Ctx) -> dict[str, Any]:
    owner, slug = ctx.path_param("username"), ctx.path_param("slug")
    with ctx.store.read() as db:
        row = db.execute(
            f"{ser.ARTICLE_SELECT} WHERE a.slug = ? AND a.published = 1 AND "
            "((o.username IS NOT NULL AND o.username = ?) OR (o.username IS NULL AND u.username = ?))",
            (slug, owner, owner),
        ).fetchone()
    if row is None:
        raise ErrorAnswer(404)
    return ser.article_show(row, ctx.base)


def _mine(state: str) -> Endpoint:
    where = {"published": "a.published = 1", "unpublished": "a.published = 0", "all": "1 = 1"}[
        state
    ]
    order = {
        "published": NEWEST,
        "unpublished": "a.created_at DESC, a.id DESC",
        "all": "a.published ASC, CASE WHEN a.published = 0 THEN a.created_at "
        "ELSE a.published_at END DESC, a.id DESC",
    }[state]

    @endpoint(auth="required")
    async def handler(ctx: Ctx) -> list[dict[str, Any]]:
        limit, offset = ctx.page(30)
        rows = _select(ctx, f"a.user_id = ? AND {where}", [ctx.user.id], order, limit, offset)
        return [ser.article_me(row, ctx.base) for row in rows]

    handler.__name__ = f"my_{state}_articles"
    return handler


def load_article(ctx: Ctx, article_id: int) -> sqlite3.Row:
    with ctx.store.read() as db:
        row: sqlite3.Row | None = db.execute(
            f"{ser.ARTICLE_SELECT} WHERE a.id = ?", (article_id,)
        ).fetchone()
    if row is None:
        raise ErrorAnswer(404)
    return row


@endpoint(auth="required")
async def create_article(ctx: Ctx) -> JSONResponse:
    """401, 422 (article param), then the rate limit, then the save (201 or 422)."""
    params = require_object(require_hash(await ctx.json(), "article"), "article")
    with ctx.store.transaction() as db:
        retry_after = ctx.forem.limiter.create_refused(db, ctx.user.id)
        if retry_after is not None:
            raise rate_limited(retry_after)
        article_id = save_article(db, ctx.forem.rng, Author(ctx.user.id, ctx.user.name), params)
    data = ser.article_show(load_article(ctx, article_id), ctx.base)
    return JSONResponse(data, status_code=201, headers={"Location": data["url"]})


@endpoint(auth="required")
async def update_article(ctx: Ctx) -> dict[str, Any]:
    """401, 422 (article not an object), 404, 422 (article missing), then the rate
    limit, then the update (200 or 422); only a successful update counts."""
    article_id = ctx.path_param("id")
    body = require_hash(await ctx.json(), "article")
    with ctx.store.transaction() as db:
        existing = db.execute(
            "SELECT * FROM articles WHERE id = ? AND user_id = ?", (article_id, ctx.user.id)
        ).fetchone()
        if existing is None:  # another user's article is a 404 too
            raise ErrorAnswer(404)
        params = require_object(body, "article")
        retry_after = ctx.forem.limiter.update_refused(ctx.user.id)
        if retry_after is not None:
            raise rate_limited(retry_after)
        save_article(db, ctx.forem.rng, Author(ctx.user.id, ctx.user.name), params, existing)
    ctx.forem.limiter.count_update(ctx.user.id)
    return ser.article_show(load_article(ctx, article_id), ctx.base)


@endpoint()
async def list_videos(ctx: Ctx) -> list[dict[str, Any]]:
    limit, offset = ctx.page(24)
    rows = _select(
        ctx,
        "a.published = 1 AND a.video_source_url IS NOT NULL AND a.video_thumbnail_url IS NOT NULL",
        [],
        POPULAR,
        limit,
        offset,
    )
    return [ser.video_article(row, ctx.base) for row in rows]


@endpoint()
async def organization_articles(ctx: Ctx) -> list[dict[str, Any]]:
    username = ctx.path_param("username")
    with ctx.store.read() as db:
        org = db.execute("SELECT id FROM organizations WHERE username = ?", (username,)).fetchone()
    if org is None:
        raise ErrorAnswer(404)
    limit, offset = ctx.page(30)
    rows = _select(
        ctx, "a.published = 1 AND a.organization_id = ?", [org["id"]], NEWEST, limit, offset
    )
    return [ser.article_index(row, ctx.base) for row in rows]


routes = [
    Route("/api/articles", list_articles, methods=["GET"]),
    Route("/api/articles", create_article, methods=["POST"]),
    Route("/api/articles/latest", latest_articles, methods=["GET"]),
    Route("/api/articles/me", _mine("published"), methods=["GET"]),
    Route("/api/articles/me/published", _mine("published"), methods=["GET"]),
    Route("/api/articles/me/unpublished", _mine("unpublished"), methods=["GET"]),
    Route("/api/articles/me/all", _mine("all"), methods=["GET"]),
    Route("/api/articles/{id:rowid}", show_article, methods=["GET"]),
    Route("/api/articles/{id:rowid}", update_article, methods=["PUT"]),
    Route("/api/articles/{username}/{slug}", show_article_by_path, methods=["GET"]),
    Route("/api/videos", list_videos, methods=["GET"]),
    Route("/api/organizations/{username}/articles", organization_articles, methods=["GET"]),
]
