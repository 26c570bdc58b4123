"""The sandbox-only control API under `/__sandbox/` (never under `/api`).

Scripts and tests drive the sandbox with it: the seeded accounts and their keys,
request counts, reset, injected faults, edits "made on the website", comments, bulk
articles, reading-list entries, switching rate limits. README.md beside this file
documents every endpoint with its exact shapes. Errors use the API's body
`{"error": ..., "status": ...}`. Control requests are not counted in the stats.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from functools import wraps
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from toolkit.sandbox import seed, text
from toolkit.sandbox.forem import serializers as ser
from toolkit.sandbox.forem.article_writes import Author, parse_date, save_article
from toolkit.sandbox.forem.comments import add_comment, comment_tree, delete_comment
from toolkit.sandbox.forem.http import ApiError, Ctx, error_response
from toolkit.sandbox.state import SandboxState

log = logging.getLogger("toolkit.sandbox")

Handler = Callable[[Ctx], Awaitable[Any]]


def control(status: int = 200) -> Callable[[Handler], Callable[[Request], Awaitable[Response]]]:
    def decorate(handler: Handler) -> Callable[[Request], Awaitable[Response]]:
        @wraps(handler)
        async def run(request: Request) -> Response:
            state: SandboxState = request.app.state.sandbox
            try:
                result = await handler(Ctx(request, state, None))
            except ApiError as exc:
                return exc.response()
            except Exception:
                log.exception("sandbox control endpoint failed: %s", request.url.path)
                return error_response(500)
            if isinstance(result, Response):
                return result
            return JSONResponse(result, status_code=status)

        return run

    return decorate


async def _object(ctx: Ctx) -> dict[str, Any]:
    body = await ctx.json()
    if not isinstance(body, dict):
        raise ApiError(422, "the body must be a JSON object")
    return body


def _user(ctx: Ctx, username: Any, default: str) -> Any:
    name = default if username is None else username
    with ctx.store.read() as db:
        row = db.execute("SELECT * FROM users WHERE username = ?", (str(name),)).fetchone()
    if row is None:
        raise ApiError(422, f"no user {name!r}")
    return row


def _flag(body: dict[str, Any]) -> bool:
    enabled = body.get("enabled")
    if not isinstance(enabled, bool):
        raise ApiError(422, "enabled must be true or false")
    return enabled


INDEX = {
    "GET /__sandbox/accounts": "the seeded accounts: [{username, api_key, role}]",
    "GET /__sandbox/credits": "listing credits: {users: {username: n}, organizations: {username: n}}",
    "GET /__sandbox/stats": "request counts: {requests: [{method, route, status, count}]}",
    "POST /__sandbox/stats/reset": "zero the request counts",
    "GET /__sandbox/requests?after=SEQ&limit=N": "request records (no keys, key ids only)",
    "POST /__sandbox/reset": "back to the seed (data, rate-limit windows, faults, settings)",
    "GET|POST|DELETE /__sandbox/faults": "injected faults: {method, route, count, status|delay_ms|drop_after_commit}",
    "POST /__sandbox/rate-limits": "{enabled: bool} switches the article rate limits",
    "POST /__sandbox/user-agent-check": "{enabled: bool} answers 403 to generic user agents",
    "POST /__sandbox/articles": "bulk-create articles without rate limits: {username?, articles: [...]}",
    "POST /__sandbox/articles/{id}/edit": "{body_markdown} an edit made on the website",
    "POST /__sandbox/comments": "add a comment: {article_id | podcast_episode_id, parent_id_code?, username?, body_markdown? | body_html?}",
    "DELETE /__sandbox/comments/{id_code}": "delete a comment",
    "POST /__sandbox/readinglist": "{username?, count} add reading-list entries",
}


@control()
async def index(ctx: Ctx) -> dict:
    return {"endpoints": INDEX}


@control()
async def health(ctx: Ctx) -> dict:
    return {"ok": True}


@control()
async def accounts(ctx: Ctx) -> list[dict]:
    with ctx.store.read() as db:
        return seed.accounts(db)


@control()
async def credits(ctx: Ctx) -> dict:
    with ctx.store.read() as db:
        users = db.execute("SELECT username, credits FROM users ORDER BY id").fetchall()
        orgs = db.execute("SELECT username, credits FROM organizations ORDER BY id").fetchall()
    return {"users": {row[0]: row[1] for row in users},
            "organizations": {row[0]: row[1] for row in orgs}}


@control()
async def stats(ctx: Ctx) -> dict:
    return {"requests": ctx.state.recorder.stats()}


@control()
async def reset_stats(ctx: Ctx) -> dict:
    ctx.state.recorder.reset_stats()
    return {"reset": True}


@control()
async def requests(ctx: Ctx) -> dict:
    after = max(ctx.int_param("after") or 0, 0)
    limit = min(max(ctx.int_param("limit") or 1000, 1), 10_000)
    recorder = ctx.state.recorder
    return {"requests": recorder.records(after, limit), "last_seq": recorder.last_seq}


@control()
async def reset(ctx: Ctx) -> dict:
    ctx.state.reset()
    return {"reset": True}


@control()
async def list_faults(ctx: Ctx) -> dict:
    return {"faults": ctx.state.faults.pending()}


@control(status=201)
async def add_fault(ctx: Ctx) -> dict:
    try:
        fault = ctx.state.faults.add(await ctx.json())
    except ValueError as exc:
        raise ApiError(422, str(exc)) from None
    return fault.as_json()


@control()
async def clear_faults(ctx: Ctx) -> Response:
    ctx.state.faults.clear()
    return Response(status_code=204)


@control()
async def rate_limits(ctx: Ctx) -> dict:
    limiter = ctx.state.limiter
    if ctx.request.method == "POST":
        limiter.enabled = _flag(await _object(ctx))
    return {"enabled": limiter.enabled, "window": limiter.window, "limits": limiter.limits}


@control()
async def user_agent_check(ctx: Ctx) -> dict:
    if ctx.request.method == "POST":
        ctx.state.user_agent_check = _flag(await _object(ctx))
    return {"enabled": ctx.state.user_agent_check}


EXTRAS = ("published_at", "public_reactions_count", "page_views_count", "featured", "hotness_score")


@control(status=201)
async def bulk_articles(ctx: Ctx) -> dict:
    """Create many articles at once, through the API's rules but without rate limits.
    Besides the write payload's fields an item may set `published_at` (RFC 3339; the
    article's creation and publication time), `public_reactions_count`,
    `page_views_count`, `featured` and `hotness_score`."""
    body = await _object(ctx)
    items = body.get("articles")
    if not isinstance(items, list):
        raise ApiError(422, "articles must be a list of article objects")
    user = _user(ctx, body.get("username"), seed.DEMO_USERNAME)
    author = Author(user["id"], user["name"])
    ids = []
    with ctx.store.transaction() as db:
        for position, item in enumerate(items):
            if not isinstance(item, dict):
                raise ApiError(422, f"articles[{position}]: must be an object")
            moment = parse_date(item["published_at"]) if item.get("published_at") else None
            try:
                article_id = save_article(db, ctx.state.rng, author, item, moment=moment)
            except ApiError as exc:
                raise ApiError(422, f"articles[{position}]: {exc.message}") from None
            for key in EXTRAS[1:]:
                if isinstance(item.get(key), bool | int):
                    db.execute(f"UPDATE articles SET {key} = ? WHERE id = ?",  # noqa: S608
                               (int(item[key]), article_id))
            ids.append(article_id)
    return {"ids": ids}


@control()
async def edit_article(ctx: Ctx) -> dict:
    """An edit made on the website: new body (front matter rules apply), `edited_at` set."""
    body = await _object(ctx)
    if not isinstance(body.get("body_markdown"), str):
        raise ApiError(422, "body_markdown is required")
    with ctx.store.transaction() as db:
        existing = db.execute(
            "SELECT a.*, u.name AS u_name FROM articles a JOIN users u ON u.id = a.user_id "
            "WHERE a.id = ?", (ctx.path_param("id"),)
        ).fetchone()
        if existing is None:
            raise ApiError(404)
        save_article(db, ctx.state.rng, Author(existing["user_id"], existing["u_name"]), body,
                     existing, website_edit=True)
        row = db.execute(f"{ser.ARTICLE_SELECT} WHERE a.id = ?", (existing["id"],)).fetchone()
    return ser.article_show(row, ctx.base)


def _target(body: dict[str, Any]) -> tuple[str, int]:
    article_id, episode_id = body.get("article_id"), body.get("podcast_episode_id")
    given = [value for value in (article_id, episode_id) if value is not None]
    if len(given) != 1 or not isinstance(given[0], int) or isinstance(given[0], bool):
        raise ApiError(422, "give exactly one of article_id, podcast_episode_id (an integer)")
    return ("Article", article_id) if article_id is not None else ("PodcastEpisode", episode_id)


@control(status=201)
async def create_comment(ctx: Ctx) -> dict:
    body = await _object(ctx)
    kind, target = _target(body)
    user = _user(ctx, body.get("username"), seed.SECOND_USERNAME)
    body_html, markdown = body.get("body_html"), body.get("body_markdown")
    if body_html is not None and not isinstance(body_html, str):
        raise ApiError(422, "body_html must be a string")
    if markdown is not None and not isinstance(markdown, str):
        raise ApiError(422, "body_markdown must be a string")
    if body_html is None:
        markdown = markdown if markdown is not None else "A comment from the sandbox."
        body_html = text.render_comment(markdown)
    with ctx.store.transaction() as db:
        table = "articles" if kind == "Article" else "podcast_episodes"
        if db.execute(f"SELECT 1 FROM {table} WHERE id = ?", (target,)).fetchone() is None:  # noqa: S608
            raise ApiError(404)
        parent_id = None
        if body.get("parent_id_code") is not None:
            parent_id = text.from_base26(str(body["parent_id_code"]))
            parent = db.execute(
                "SELECT 1 FROM comments WHERE id = ? AND commentable_type = ? AND commentable_id = ?",
                (parent_id, kind, target),
            ).fetchone()
            if parent is None:
                raise ApiError(422, "parent_id_code is not a comment of that article or episode")
        comment_id = add_comment(db, kind=kind, target=target, user_id=user["id"],
                                 parent_id=parent_id, body_markdown=markdown or "",
                                 body_html=body_html)
        return comment_tree(db, comment_id, ctx.base)


@control()
async def remove_comment(ctx: Ctx) -> Response:
    comment_id = text.from_base26(ctx.path_param("id_code"))
    with ctx.store.transaction() as db:
        if comment_id is None or not delete_comment(db, comment_id):
            raise ApiError(404)
    return Response(status_code=204)


@control(status=201)
async def add_to_reading_list(ctx: Ctx) -> dict:
    """Add `count` entries: published articles of other users not yet on the list, and
    new ones (by another seeded user, titled "Reading list pick N") when those run out."""
    body = await _object(ctx)
    count = body.get("count")
    if isinstance(count, bool) or not isinstance(count, int) or not 1 <= count <= 10_000:
        raise ApiError(422, "count must be an integer from 1 to 10000")
    user = _user(ctx, body.get("username"), seed.DEMO_USERNAME)
    other = _user(ctx, None, seed.SECOND_USERNAME if user["username"] != seed.SECOND_USERNAME
                  else seed.DEMO_USERNAME)
    with ctx.store.transaction() as db:
        candidates = [row["id"] for row in db.execute(
            "SELECT id FROM articles WHERE published = 1 AND user_id != ? AND id NOT IN "
            "(SELECT article_id FROM reading_list WHERE user_id = ?) ORDER BY id LIMIT ?",
            (user["id"], user["id"], count),
        )]
        number = 0
        while len(candidates) < count:
            number += 1
            title = f"Reading list pick {number}"
            if db.execute("SELECT 1 FROM articles WHERE user_id = ? AND title = ?",
                          (other["id"], title)).fetchone():
                continue
            candidates.append(save_article(
                db, ctx.state.rng, Author(other["id"], other["name"]),
                {"title": title, "published": True, "tags": ["reading"],
                 "body_markdown": f"Article number {number} for the reading list.\n"},
            ))
        for article_id in candidates:
            db.execute(
                "INSERT INTO reading_list (user_id, article_id, status, created_at) "
                "VALUES (?, ?, 'valid', ?)", (user["id"], article_id, ctx.now()),
            )
    return {"added": count}


routes = [
    Route("/__sandbox", index, methods=["GET"]),
    Route("/__sandbox/", index, methods=["GET"]),
    Route("/__sandbox/health", health, methods=["GET"]),
    Route("/__sandbox/accounts", accounts, methods=["GET"]),
    Route("/__sandbox/credits", credits, methods=["GET"]),
    Route("/__sandbox/stats", stats, methods=["GET"]),
    Route("/__sandbox/stats/reset", reset_stats, methods=["POST"]),
    Route("/__sandbox/requests", requests, methods=["GET"]),
    Route("/__sandbox/reset", reset, methods=["POST"]),
    Route("/__sandbox/faults", list_faults, methods=["GET"]),
    Route("/__sandbox/faults", add_fault, methods=["POST"]),
    Route("/__sandbox/faults", clear_faults, methods=["DELETE"]),
    Route("/__sandbox/rate-limits", rate_limits, methods=["GET", "POST"]),
    Route("/__sandbox/user-agent-check", user_agent_check, methods=["GET", "POST"]),
    Route("/__sandbox/articles", bulk_articles, methods=["POST"]),
    Route("/__sandbox/articles/{id:rowid}/edit", edit_article, methods=["POST"]),
    Route("/__sandbox/comments", create_comment, methods=["POST"]),
    Route("/__sandbox/comments/{id_code}", remove_comment, methods=["DELETE"]),
    Route("/__sandbox/readinglist", add_to_reading_list, methods=["POST"]),
]
