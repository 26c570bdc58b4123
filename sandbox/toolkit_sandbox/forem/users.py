"""Users, organisations, profile images and the super-admin invitation."""

from __future__ import annotations

import re
import sqlite3
from typing import Any
from urllib.parse import parse_qsl

from starlette.responses import Response
from starlette.routing import Route

from toolkit_sandbox.forem import serializers as ser
from toolkit_sandbox.forem.http import Ctx, endpoint, row_id, unprocessable
from toolkit_sandbox.interface import ErrorAnswer

_EMAIL = re.compile(r"\A[^@\s]+@[^@\s]+\.[^@\s]+\Z")


@endpoint()
async def show_user(ctx: Ctx) -> dict[str, Any]:
    """`/api/users/{id}` by integer id, or `/api/users/by_username?url=<username>`."""
    ident = ctx.path_param("id")
    with ctx.store.read() as db:
        if ident == "by_username":
            row = db.execute(
                "SELECT * FROM users WHERE username = ?", (ctx.params.get("url") or "",)
            ).fetchone()
        elif (user_id := row_id(ident)) is not None:
            row = db.execute("SELECT * FROM users WHERE id = ?", (user_id,)).fetchone()
        else:
            row = None
    if row is None:
        raise ErrorAnswer(404)
    return ser.user(row, ctx.base)


@endpoint(auth="required")
async def me(ctx: Ctx) -> dict[str, Any]:
    with ctx.store.read() as db:
        row = db.execute("SELECT * FROM users WHERE id = ?", (ctx.user.id,)).fetchone()
    return ser.user(row, ctx.base)


def _organization(ctx: Ctx) -> sqlite3.Row:
    with ctx.store.read() as db:
        row: sqlite3.Row | None = db.execute(
            "SELECT * FROM organizations WHERE username = ?", (ctx.path_param("username"),)
        ).fetchone()
    if row is None:
        raise ErrorAnswer(404)
    return row


V1 = "application/vnd.forem.api-v1+json"


@endpoint()
async def show_organization(ctx: Ctx) -> dict[str, Any]:
    """Version 0 by username; version 1 (`Accept: application/vnd.forem.api-v1+json`)
    first by id, then by username, and its answer carries the id (Forem:
    app/controllers/api/v1/organizations_controller.rb `show`)."""
    if V1 not in ctx.request.headers.get("accept", ""):
        return ser.organization(_organization(ctx), ctx.base)
    given = ctx.path_param("username")
    row: sqlite3.Row | None = None
    with ctx.store.read() as db:
        if given.isascii() and given.isdigit() and len(given) <= 18:
            row = db.execute("SELECT * FROM organizations WHERE id = ?", (int(given),)).fetchone()
        if row is None:
            row = db.execute("SELECT * FROM organizations WHERE username = ?", (given,)).fetchone()
    if row is None:
        raise ErrorAnswer(404)
    return {
        "type_of": "organization",
        "id": row["id"],
        **{k: v for k, v in ser.organization(row, ctx.base).items() if k != "type_of"},
    }


@endpoint()
async def organization_users(ctx: Ctx) -> list[dict[str, Any]]:
    org = _organization(ctx)
    limit, offset = ctx.page(30)
    with ctx.store.read() as db:
        rows = db.execute(
            "SELECT u.* FROM users u JOIN org_memberships m ON m.user_id = u.id "
            "WHERE m.organization_id = ? ORDER BY u.id LIMIT ? OFFSET ?",
            (org["id"], limit, offset),
        ).fetchall()
    return [ser.user(row, ctx.base) for row in rows]


@endpoint()
async def profile_image(ctx: Ctx) -> dict[str, Any]:
    username = ctx.path_param("username")
    with ctx.store.read() as db:
        user: sqlite3.Row | None = db.execute(
            "SELECT id FROM users WHERE username = ?", (username,)
        ).fetchone()
        org: sqlite3.Row | None = (
            None
            if user
            else db.execute(
                "SELECT id FROM organizations WHERE username = ?", (username,)
            ).fetchone()
        )
    if user is not None:
        kind, ident = "users", user["id"]
    elif org is not None:
        kind, ident = "organizations", org["id"]
    else:
        raise ErrorAnswer(404)
    return {
        "type_of": "profile_image",
        "image_of": "user" if user is not None else "organization",
        "profile_image": ser.image_url(ctx.base, kind, ident, 640),
        "profile_image_90": ser.image_url(ctx.base, kind, ident, 90),
    }


INVITE_FIELDS = ("name", "custom_invite_subject", "custom_invite_message", "custom_invite_footnote")


async def _params(ctx: Ctx) -> dict[str, Any]:
    """Rails' merged `params`: a flat JSON (or form) body, then the query string over it
    (`request_parameters.merge(query_parameters)`). A JSON body that is not an object
    gives nothing (Rails keeps it under `_json`)."""
    content_type = ctx.request.headers.get("content-type", "")
    if content_type.startswith("application/x-www-form-urlencoded"):
        body: Any = dict(parse_qsl((await ctx.request.body()).decode("utf-8", "replace")))
    else:
        body = await ctx.json()
    return {**(body if isinstance(body, dict) else {}), **dict(ctx.params)}


def _text(value: Any) -> str | None:
    """A parameter as the string Rails would store, None when absent or blank."""
    if value is None or isinstance(value, dict | list):
        return None
    text = ("true" if value else "false") if isinstance(value, bool) else str(value)
    return text if text.strip() else None


@endpoint(auth="required")
async def invite_user(ctx: Ctx) -> Response:
    """`POST /api/admin/users`: `email`, `name` and the three `custom_invite_*` values
    from the query string or a flat body (the query wins). Only a super-admin may invite
    (anyone else: 401). A missing or blank email is a 422; otherwise the answer is 200
    with an empty body, always - devise_invitable records an invalid or taken address as
    an error on the user and sends nothing, and the controller answers `head :ok`
    (Forem: app/controllers/concerns/api/admin/users_controller.rb). The sandbox records
    an invitation for a valid address no user has; inviting it again sends it again."""
    if not ctx.user.is_super_admin:
        raise ErrorAnswer(401, headers={"Cache-Control": "no-store"})
    params = await _params(ctx)
    email = _text(params.get("email"))
    if email is None:
        raise unprocessable("param is missing or the value is empty: email")
    email = email.strip()
    values = {key: _text(params.get(key)) for key in INVITE_FIELDS}
    now = ctx.now()
    with ctx.store.transaction() as db:
        taken = db.execute("SELECT 1 FROM users WHERE email = ?", (email,)).fetchone()
        if _EMAIL.match(email) and not taken:
            db.execute(
                "INSERT INTO invitations (email, name, custom_invite_subject, "
                "custom_invite_message, custom_invite_footnote, invited_by, created_at, "
                "sent_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (email) DO UPDATE SET "
                "sent_at = excluded.sent_at, sent_count = sent_count + 1",
                (email, *values.values(), ctx.user.id, now, now),
            )
    return Response(status_code=200)


routes = [
    Route("/api/users/me", me, methods=["GET"]),
    Route("/api/users/{id}", show_user, methods=["GET"]),
    Route("/api/organizations/{username}", show_organization, methods=["GET"]),
    Route("/api/organizations/{username}/users", organization_users, methods=["GET"]),
    Route("/api/profile_images/{username}", profile_image, methods=["GET"]),
    Route("/api/admin/users", invite_user, methods=["POST"]),
]
