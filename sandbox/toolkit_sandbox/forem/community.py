"""Followers, followed tags, the reading list, tags and podcast episodes.

* `/api/followers/users`: the caller's followers, 80 a page; `sort` is a comma list of
  fields (`created_at`, `id`, `name`, `username`), a leading `-` for descending;
  default `created_at` ascending. Unknown fields are ignored.
* `/api/readinglist`: the caller's reading list, newest reaction first, at most 100 a page.
* `/api/tags`: tags by popularity (number of published articles carrying them), 10 a page.
* `/api/podcast_episodes`: active episodes of published podcasts, newest first;
  `username` selects one podcast by slug (404 when there is no such published podcast).
"""

from __future__ import annotations

from typing import Any

from starlette.routing import Route

from toolkit_sandbox.forem import serializers as ser
from toolkit_sandbox.forem import text
from toolkit_sandbox.forem.http import Ctx, endpoint
from toolkit_sandbox.interface import ErrorAnswer

FOLLOWER_SORTS = {
    "created_at": "f.created_at",
    "id": "f.id",
    "name": "u.name",
    "username": "u.username",
}


def _follower_order(sort: str | None) -> str:
    terms = []
    for item in (sort or "created_at").split(","):
        item = item.strip()
        descending = item.startswith("-")
        column = FOLLOWER_SORTS.get(item.lstrip("-"))
        if column:
            terms.append(f"{column} {'DESC' if descending else 'ASC'}")
    return ", ".join(terms + ["f.id ASC"])


@endpoint(auth="required")
async def followers(ctx: Ctx) -> list[dict[str, Any]]:
    limit, offset = ctx.page(80)
    order = _follower_order(ctx.params.get("sort"))
    with ctx.store.read() as db:
        rows = db.execute(
            "SELECT f.id AS follow_id, f.created_at AS followed_at, u.* FROM user_follows f "
            f"JOIN users u ON u.id = f.follower_id WHERE f.followed_id = ? ORDER BY {order} "
            "LIMIT ? OFFSET ?",
            (ctx.user.id, limit, offset),
        ).fetchall()
    return [
        {
            "type_of": "user_follower",
            "id": row["follow_id"],
            "created_at": text.iso(row["followed_at"]),
            "user_id": row["id"],
            "name": row["name"],
            "path": f"/{row['username']}",
            "username": row["username"],
            "profile_image": ser.image_url(ctx.base, "users", row["id"], 60),
        }
        for row in rows
    ]


@endpoint(auth="required")
async def followed_tags(ctx: Ctx) -> list[dict[str, Any]]:
    with ctx.store.read() as db:
        rows = db.execute(
            "SELECT t.id, t.name, f.points FROM tag_follows f JOIN tags t ON t.id = f.tag_id "
            "WHERE f.user_id = ? ORDER BY f.points DESC, t.name",
            (ctx.user.id,),
        ).fetchall()
    return [{"id": row["id"], "name": row["name"], "points": row["points"]} for row in rows]


@endpoint(auth="required")
async def reading_list(ctx: Ctx) -> list[dict[str, Any]]:
    limit, offset = ctx.page(30, maximum=100)
    with ctx.store.read() as db:
        rows = db.execute(
            "SELECT r.id AS reading_id, r.status AS reading_status, r.created_at AS reading_at, "
            f"x.* FROM reading_list r JOIN ({ser.ARTICLE_SELECT}) x ON x.id = r.article_id "
            "WHERE r.user_id = ? AND x.published = 1 ORDER BY r.created_at DESC, r.id DESC LIMIT ? OFFSET ?",
            (ctx.user.id, limit, offset),
        ).fetchall()
    return [
        {
            "type_of": "readinglist",
            "id": row["reading_id"],
            "status": row["reading_status"],
            "created_at": text.iso(row["reading_at"]),
            "article": ser.article_index(row, ctx.base),
        }
        for row in rows
    ]


@endpoint()
async def tags(ctx: Ctx) -> list[dict[str, Any]]:
    limit, offset = ctx.page(10)
    with ctx.store.read() as db:
        rows = db.execute(
            "SELECT t.*, (SELECT COUNT(*) FROM taggings g JOIN articles a ON a.id = g.article_id "
            "WHERE g.tag_name = t.name AND a.published = 1) AS uses FROM tags t "
            "ORDER BY uses DESC, t.id ASC LIMIT ? OFFSET ?",
            (limit, offset),
        ).fetchall()
    return [
        {
            "id": row["id"],
            "name": row["name"],
            "bg_color_hex": row["bg_color_hex"],
            "text_color_hex": row["text_color_hex"],
        }
        for row in rows
    ]


@endpoint()
async def podcast_episodes(ctx: Ctx) -> list[dict[str, Any]]:
    limit, offset = ctx.page(30)
    where, args = "p.published = 1 AND e.reachable = 1", []
    slug = (ctx.params.get("username") or "").strip()
    with ctx.store.read() as db:
        if slug:
            podcast = db.execute(
                "SELECT id FROM podcasts WHERE slug = ? AND published = 1", (slug,)
            ).fetchone()
            if podcast is None:
                raise ErrorAnswer(404)
            where += " AND p.id = ?"
            args.append(podcast["id"])
        rows = db.execute(
            "SELECT e.*, p.title AS p_title, p.slug AS p_slug, p.image_url AS p_image "
            f"FROM podcast_episodes e JOIN podcasts p ON p.id = e.podcast_id WHERE {where} "
            "ORDER BY e.published_at DESC, e.id DESC LIMIT ? OFFSET ?",
            (*args, limit, offset),
        ).fetchall()
    return [
        {
            # Forem: app/views/api/v0/podcast_episodes/index.json.jbuilder.
            "type_of": "podcast_episodes",
            "class_name": "PodcastEpisode",
            "id": row["id"],
            "path": f"/{row['p_slug']}/{row['slug']}",
            "image_url": row["image_url"] or row["p_image"],
            "title": row["title"],
            "podcast": {
                "title": row["p_title"],
                "slug": row["p_slug"],
                "image_url": row["p_image"],
            },
        }
        for row in rows
    ]


routes = [
    Route("/api/followers/users", followers, methods=["GET"]),
    Route("/api/follows/tags", followed_tags, methods=["GET"]),
    Route("/api/readinglist", reading_list, methods=["GET"]),
    Route("/api/tags", tags, methods=["GET"]),
    Route("/api/podcast_episodes", podcast_episodes, methods=["GET"]),
]
