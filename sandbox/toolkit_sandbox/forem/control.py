"""Interface A's control routes, under `/__sandbox/forem/` (and, as before interfaces had
their own prefix, directly under `/__sandbox/`).

Scripts and tests steer the publishing API with them: the seeded accounts and their
keys, listing credits, the rate-limit and User-Agent switches, bulk articles, edits
"made on the website", comments and reading-list entries. The first line of each
endpoint's docstring is its entry in `GET /__sandbox`; README.md documents the shapes.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Callable
from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from toolkit_sandbox.control import ControlCtx, ControlHandler, control, flag
from toolkit_sandbox.forem import seed, text
from toolkit_sandbox.forem import serializers as ser
from toolkit_sandbox.forem.article_writes import Author, parse_date, save_article
from toolkit_sandbox.forem.comments import add_comment, comment_tree, delete_comment
from toolkit_sandbox.forem.http import NAME
from toolkit_sandbox.forem.state import ForemState
from toolkit_sandbox.interface import Endpoint, ErrorAnswer
from toolkit_sandbox.store import inserted_id


class ForemControlCtx(ControlCtx):
    def __init__(self, request: Request):
        super().__init__(request)
        self.forem: ForemState = self.state.of(NAME)

    def now(self) -> str:
        return text.stored(text.now())

    def user(self, username: Any, default: str) -> sqlite3.Row:
        name = default if username is None else username
        with self.store.read() as db:
            row: sqlite3.Row | None = db.execute(
                "SELECT * FROM users WHERE username = ?", (str(name),)
            ).fetchone()
        if row is None:
            raise ErrorAnswer(422, f"no user {name!r}")
        return row


def forem_control(status: int = 200) -> Callable[[ControlHandler[ForemControlCtx]], Endpoint]:
    return control(status, context=ForemControlCtx)


@forem_control()
async def accounts(ctx: ForemControlCtx) -> list[dict[str, str]]:
    """the seeded accounts: [{username, api_key, role}]"""
    with ctx.store.read() as db:
        return seed.accounts(db)


USERNAME = re.compile(r"[a-z0-9_]{1,30}")


@forem_control(status=201)
async def add_user(ctx: ForemControlCtx) -> dict[str, Any]:
    """add a user with an API key: {username, name?, organizations?: [username]} -> {username, api_key, key_id}

    The user's key is derived from the username, like the seeded accounts'; each
    organisation named takes the user as a member."""
    body = await ctx.object()
    username, name, orgs = body.get("username"), body.get("name"), body.get("organizations", [])
    if not isinstance(username, str) or not USERNAME.fullmatch(username):
        raise ErrorAnswer(422, "username must be 1 to 30 of a-z, 0-9 and _")
    if name is not None and not isinstance(name, str):
        raise ErrorAnswer(422, "name must be a string")
    if not isinstance(orgs, list) or not all(isinstance(org, str) for org in orgs):
        raise ErrorAnswer(422, "organizations must be a list of organisation usernames")
    now = ctx.now()
    key = seed.api_key_for(username)
    with ctx.store.transaction() as db:
        if db.execute("SELECT 1 FROM users WHERE username = ?", (username,)).fetchone():
            raise ErrorAnswer(422, f"username {username!r} is taken")
        user_id = inserted_id(
            db.execute(
                "INSERT INTO users (username, name, email, created_at) VALUES (?, ?, ?, ?)",
                (username, name or username, f"{username}@example.com", now),
            )
        )
        key_id = inserted_id(
            db.execute(
                "INSERT INTO api_keys (user_id, secret, created_at) VALUES (?, ?, ?)",
                (user_id, key, now),
            )
        )
        for org in orgs:
            row = db.execute("SELECT id FROM organizations WHERE username = ?", (org,)).fetchone()
            if row is None:
                raise ErrorAnswer(422, f"no organisation {org!r}")
            db.execute(
                "INSERT OR IGNORE INTO org_memberships (user_id, organization_id, role) "
                "VALUES (?, ?, 'member')",
                (user_id, row["id"]),
            )
    return {"username": username, "api_key": key, "key_id": key_id}


@forem_control()
async def credits(ctx: ForemControlCtx) -> dict[str, Any]:
    """listing credits: {users: {username: n}, organizations: {username: n}}"""
    with ctx.store.read() as db:
        users = db.execute("SELECT username, credits FROM users ORDER BY id").fetchall()
        orgs = db.execute("SELECT username, credits FROM organizations ORDER BY id").fetchall()
    return {
        "users": {row[0]: row[1] for row in users},
        "organizations": {row[0]: row[1] for row in orgs},
    }


@forem_control()
async def rate_limits(ctx: ForemControlCtx) -> dict[str, Any]:
    """{enabled: bool} switches the article rate limits"""
    limiter = ctx.forem.limiter
    if ctx.request.method == "POST":
        limiter.enabled = flag(await ctx.object())
    return {"enabled": limiter.enabled, "window": limiter.window, "limits": limiter.limits}


@forem_control()
async def user_agent_check(ctx: ForemControlCtx) -> dict[str, Any]:
    """{enabled: bool} answers the edge's 403 to the User-Agents it refuses"""
    if ctx.request.method == "POST":
        ctx.forem.user_agent_check = flag(await ctx.object())
    return {"enabled": ctx.forem.user_agent_check}


@forem_control()
async def invitations(ctx: ForemControlCtx) -> list[dict[str, Any]]:
    """invitations sent by POST /api/admin/users: [{email, name, custom_invite_*, sent_count}]"""
    with ctx.store.read() as db:
        rows = db.execute(
            "SELECT email, name, custom_invite_subject, custom_invite_message, "
            "custom_invite_footnote, sent_count FROM invitations ORDER BY id"
        ).fetchall()
    return [dict(row) for row in rows]


EXTRAS = ("published_at", "public_reactions_count", "page_views_count", "featured", "hotness_score")


@forem_control(status=201)
async def bulk_articles(ctx: ForemControlCtx) -> dict[str, Any]:
    """bulk-create articles without rate limits: {username?, articles: [...]}

    Through the API's rules but without rate limits. Besides the write payload's fields
    an item may set `published_at` (RFC 3339; the article's creation and publication
    time), `public_reactions_count`, `page_views_count`, `featured` and `hotness_score`."""
    body = await ctx.object()
    items = body.get("articles")
    if not isinstance(items, list):
        raise ErrorAnswer(422, "articles must be a list of article objects")
    user = ctx.user(body.get("username"), seed.DEMO_USERNAME)
    author = Author(user["id"], user["name"])
    ids = []
    with ctx.store.transaction() as db:
        for position, item in enumerate(items):
            if not isinstance(item, dict):
                raise ErrorAnswer(422, f"articles[{position}]: must be an object")
            moment = parse_date(item["published_at"]) if item.get("published_at") else None
            try:
                article_id = save_article(db, ctx.forem.rng, author, item, moment=moment)
            except ErrorAnswer as exc:
                raise ErrorAnswer(422, f"articles[{position}]: {exc.message}") from None
            for key in EXTRAS[1:]:
                if isinstance(item.get(key), bool | int):
                    db.execute(
                        f"UPDATE articles SET {key} = ? WHERE id = ?", (int(item[key]), article_id)
                    )
            ids.append(article_id)
    return {"ids": ids}


@forem_control()
async def edit_article(ctx: ForemControlCtx) -> dict[str, Any]:
    """{body_markdown} an edit made on the website (front matter rules apply, edited_at set)"""
    body = await ctx.object()
    if not isinstance(body.get("body_markdown"), str):
        raise ErrorAnswer(422, "body_markdown is required")
    with ctx.store.transaction() as db:
        existing = db.execute(
            "SELECT a.*, u.name AS u_name FROM articles a JOIN users u ON u.id = a.user_id "
            "WHERE a.id = ?",
            (ctx.path_param("id"),),
        ).fetchone()
        if existing is None:
            raise ErrorAnswer(404)
        save_article(
            db,
            ctx.forem.rng,
            Author(existing["user_id"], existing["u_name"]),
            body,
            existing,
            website_edit=True,
        )
        row = db.execute(f"{ser.ARTICLE_SELECT} WHERE a.id = ?", (existing["id"],)).fetchone()
    return ser.article_show(row, ctx.base)


def _target(body: dict[str, Any]) -> tuple[str, int]:
    article_id, episode_id = body.get("article_id"), body.get("podcast_episode_id")
    given = [value for value in (article_id, episode_id) if value is not None]
    target = given[0] if len(given) == 1 else None
    if not isinstance(target, int) or isinstance(target, bool):
        raise ErrorAnswer(422, "give exactly one of article_id, podcast_episode_id (an integer)")
    return ("Article" if article_id is not None else "PodcastEpisode"), target


@forem_control(status=201)
async def create_comment(ctx: ForemControlCtx) -> dict[str, Any]:
    """add a comment: {article_id | podcast_episode_id, parent_id_code?, username?, body_markdown? | body_html?}"""
    body = await ctx.object()
    kind, target = _target(body)
    user = ctx.user(body.get("username"), seed.SECOND_USERNAME)
    body_html, markdown = body.get("body_html"), body.get("body_markdown")
    if body_html is not None and not isinstance(body_html, str):
        raise ErrorAnswer(422, "body_html must be a string")
    if markdown is not None and not isinstance(markdown, str):
        raise ErrorAnswer(422, "body_markdown must be a string")
    if body_html is None:
        markdown = markdown if markdown is not None else "A comment from the sandbox."
        body_html = text.render_comment(markdown)
    with ctx.store.transaction() as db:
        table = "articles" if kind == "Article" else "podcast_episodes"
        if db.execute(f"SELECT 1 FROM {table} WHERE id = ?", (target,)).fetchone() is None:
            raise ErrorAnswer(404)
        parent_id = None
        if body.get("parent_id_code") is not None:
            parent_id = text.from_base26(str(body["parent_id_code"]))
            parent = db.execute(
                "SELECT 1 FROM comments WHERE id = ? AND commentable_type = ? AND commentable_id = ?",
                (parent_id, kind, target),
            ).fetchone()
            if parent is None:
                raise ErrorAnswer(422, "parent_id_code is not a comment of that article or episode")
        comment_id = add_comment(
            db,
            kind=kind,
            target=target,
            user_id=user["id"],
            parent_id=parent_id,
            body_markdown=markdown or "",
            body_html=body_html,
        )
        tree = comment_tree(db, comment_id, ctx.base)
        assert tree is not None  # inserted just above, in this transaction
        return tree


@forem_control()
async def remove_comment(ctx: ForemControlCtx) -> Response:
    """delete a comment (one with replies stays as `[deleted]`)"""
    comment_id = text.from_base26(ctx.path_param("id_code"))
    with ctx.store.transaction() as db:
        if comment_id is None or not delete_comment(db, comment_id):
            raise ErrorAnswer(404)
    return Response(status_code=204)


@forem_control(status=201)
async def add_to_reading_list(ctx: ForemControlCtx) -> dict[str, Any]:
    """{username?, count} add reading-list entries

    Published articles of other users not yet on the list first, then new ones (by
    another seeded user, titled "Reading list pick N") when those run out."""
    body = await ctx.object()
    count = body.get("count")
    if isinstance(count, bool) or not isinstance(count, int) or not 1 <= count <= 10_000:
        raise ErrorAnswer(422, "count must be an integer from 1 to 10000")
    user = ctx.user(body.get("username"), seed.DEMO_USERNAME)
    other = ctx.user(
        None,
        seed.SECOND_USERNAME if user["username"] != seed.SECOND_USERNAME else seed.DEMO_USERNAME,
    )
    with ctx.store.transaction() as db:
        candidates = [
            row["id"]
            for row in db.execute(
                "SELECT id FROM articles WHERE published = 1 AND user_id != ? AND id NOT IN "
                "(SELECT article_id FROM reading_list WHERE user_id = ?) ORDER BY id LIMIT ?",
                (user["id"], user["id"], count),
            )
        ]
        number = 0
        while len(candidates) < count:
            number += 1
            title = f"Reading list pick {number}"
            if db.execute(
                "SELECT 1 FROM articles WHERE user_id = ? AND title = ?", (other["id"], title)
            ).fetchone():
                continue
            candidates.append(
                save_article(
                    db,
                    ctx.forem.rng,
                    Author(other["id"], other["name"]),
                    {
                        "title": title,
                        "published": True,
                        "tags": ["reading"],
                        "body_markdown": f"Article number {number} for the reading list.\n",
                    },
                )
            )
        for article_id in candidates:
            db.execute(
                "INSERT INTO reading_list (user_id, article_id, status, created_at) "
                "VALUES (?, ?, 'valid', ?)",
                (user["id"], article_id, ctx.now()),
            )
    return {"added": count}


# Paths relative to /__sandbox/forem (app.py mounts them).
routes = [
    Route("/accounts", accounts, methods=["GET"]),
    Route("/users", add_user, methods=["POST"]),
    Route("/credits", credits, methods=["GET"]),
    Route("/invitations", invitations, methods=["GET"]),
    Route("/rate-limits", rate_limits, methods=["GET", "POST"]),
    Route("/user-agent-check", user_agent_check, methods=["GET", "POST"]),
    Route("/articles", bulk_articles, methods=["POST"]),
    Route("/articles/{id:rowid}/edit", edit_article, methods=["POST"]),
    Route("/comments", create_comment, methods=["POST"]),
    Route("/comments/{id_code}", remove_comment, methods=["DELETE"]),
    Route("/readinglist", add_to_reading_list, methods=["POST"]),
]
