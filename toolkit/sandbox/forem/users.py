"""Users, organisations, profile images and the super-admin invitation."""

from __future__ import annotations

import re

from starlette.responses import Response
from starlette.routing import Route

from toolkit.sandbox.forem import serializers as ser
from toolkit.sandbox.forem.http import Ctx, endpoint, row_id, unprocessable
from toolkit.sandbox.interface import ErrorAnswer

_EMAIL = re.compile(r"\A[^@\s]+@[^@\s]+\.[^@\s]+\Z")


@endpoint()
async def show_user(ctx: Ctx) -> dict:
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
async def me(ctx: Ctx) -> dict:
    with ctx.store.read() as db:
        row = db.execute("SELECT * FROM users WHERE id = ?", (ctx.user.id,)).fetchone()
    return ser.user(row, ctx.base)


def _organization(ctx: Ctx):
    with ctx.store.read() as db:
        row = db.execute(
            "SELECT * FROM organizations WHERE username = ?", (ctx.path_param("username"),)
        ).fetchone()
    if row is None:
        raise ErrorAnswer(404)
    return row


@endpoint()
async def show_organization(ctx: Ctx) -> dict:
    return ser.organization(_organization(ctx), ctx.base)


@endpoint()
async def organization_users(ctx: Ctx) -> list[dict]:
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
async def profile_image(ctx: Ctx) -> dict:
    username = ctx.path_param("username")
    with ctx.store.read() as db:
        user = db.execute("SELECT id FROM users WHERE username = ?", (username,)).fetchone()
        org = None if user else db.execute(
            "SELECT id FROM organizations WHERE username = ?", (username,)
        ).fetchone()
    if user is None and org is None:
        raise ErrorAnswer(404)
    kind, ident = ("users", user["id"]) if user else ("organizations", org["id"])
    return {
        "type_of": "profile_image",
        "image_of": "user" if user else "organization",
        "profile_image": ser.image_url(ctx.base, kind, ident, 640),
        "profile_image_90": ser.image_url(ctx.base, kind, ident, 90),
    }


@endpoint(auth="required")
async def invite_user(ctx: Ctx) -> Response:
    """`POST /api/admin/users` with a flat `{"email", "name"}`: 200, empty body.
    Only a super-admin may invite; anyone else gets 401."""
    if not ctx.user.is_super_admin:
        raise ErrorAnswer(401)
    body = await ctx.json()
    email = body.get("email") if isinstance(body, dict) else None
    if not isinstance(email, str) or not email.strip():
        raise unprocessable("param is missing or the value is empty: email")
    if not _EMAIL.match(email.strip()):
        raise unprocessable("Email is invalid")
    name = body.get("name")
    with ctx.store.transaction() as db:
        if db.execute("SELECT 1 FROM users WHERE email = ?", (email.strip(),)).fetchone():
            raise unprocessable("Email has already been taken")
        db.execute(
            "INSERT INTO invitations (email, name, invited_by, created_at) VALUES (?, ?, ?, ?)",
            (email.strip(), name if isinstance(name, str) else None, ctx.user.id, ctx.now()),
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
