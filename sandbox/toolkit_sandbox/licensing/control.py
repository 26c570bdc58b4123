"""Interface D's control routes, under `/__sandbox/licensing/`.

Scripts and tests steer the licensing service with them: the seeded tokens, every
licence at a glance, a customer's or a user's licence set to any state, notifications
added, an outage (every request failing with a status, or answered slowly), and licence
answers misrouted (naming another customer, application or user, or none). The
first line of each endpoint's docstring is its entry in `GET /__sandbox`; README.md
documents the shapes.
"""

from __future__ import annotations

import json
import time
from collections.abc import Awaitable, Callable
from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from toolkit_sandbox.control import ControlCtx, control
from toolkit_sandbox.faults import MAX_DELAY_MS
from toolkit_sandbox.interface import ErrorAnswer
from toolkit_sandbox.licensing import seed
from toolkit_sandbox.licensing.http import NAME, LicensingState
from toolkit_sandbox.licensing.licenses import (
    LISTS,
    customer_record,
    notification_record,
    user_record,
)

CUSTOMER_STATES = ("ACTIVE", "UNLICENSED")
USER_STATES = ("ACTIVE", "UNLICENSED", "EXPIRED")
MAX_ID = 254  # an email address's longest


class LicensingControlCtx(ControlCtx):
    def __init__(self, request: Request):
        super().__init__(request)
        self.licensing: LicensingState = self.state.of(NAME)

    def application(self, body: dict[str, Any]) -> str:
        app = body.get("application_id", seed.APPLICATION_ID)
        if not isinstance(app, str):
            raise ErrorAnswer(422, "application_id must be a string")
        with self.store.read() as db:
            if (
                db.execute("SELECT 1 FROM licensing_applications WHERE id = ?", (app,)).fetchone()
                is None
            ):
                raise ErrorAnswer(422, f"no application {app!r}")
        return app


ControlHandler = Callable[[LicensingControlCtx], Awaitable[Any]]


def licensing_control(
    status: int = 200,
) -> Callable[[ControlHandler], Callable[[Request], Awaitable[Response]]]:
    return control(status, context=LicensingControlCtx)


def _identifier(body: dict[str, Any], key: str) -> str:
    value = body.get(key)
    if not isinstance(value, str) or not value.strip() or len(value) > MAX_ID or "/" in value:
        raise ErrorAnswer(
            422, f"{key} must be a non-empty string without '/' (at most {MAX_ID} characters)"
        )
    return value


def _choice(
    body: dict[str, Any], key: str, allowed: tuple[str, ...], default: str | None = None
) -> str:
    value = body.get(key, default)
    if value not in allowed:
        raise ErrorAnswer(422, f"{key} must be one of {', '.join(allowed)}")
    return str(value)


def _editions(body: dict[str, Any], default: str) -> str:
    if "editions" not in body:
        return default
    editions = body["editions"]
    if not isinstance(editions, list) or not all(
        isinstance(item, dict)
        and isinstance(item.get("editionId"), str)
        and all(
            isinstance(item.get(k, 0), int) and not isinstance(item.get(k, 0), bool)
            for k in ("seatCount", "assignedSeats")
        )
        for item in editions
    ):
        raise ErrorAnswer(422, "editions must be a list of {editionId, seatCount, assignedSeats}")
    return json.dumps(
        [
            {
                "editionId": item["editionId"],
                "seatCount": item.get("seatCount", 0),
                "assignedSeats": item.get("assignedSeats", 0),
            }
            for item in editions
        ]
    )


@licensing_control()
async def tokens(ctx: LicensingControlCtx) -> list[dict[str, Any]]:
    """the seeded bearer tokens: [{label, token, owner, scopes, expired}]"""
    with ctx.store.read() as db:
        return seed.tokens(db)


@licensing_control()
async def licenses(ctx: LicensingControlCtx) -> dict[str, Any]:
    """every licence as the API shows it: {applications, customers, users}"""
    with ctx.store.read() as db:
        apps = db.execute("SELECT id, name, owner FROM licensing_applications ORDER BY id")
        applications = [dict(row) for row in apps]
        customers = [
            customer_record(row)
            for row in db.execute(
                "SELECT * FROM licensing_customers ORDER BY application_id, customer_id"
            )
        ]
        users = [
            user_record(row)
            for row in db.execute("SELECT * FROM licensing_users ORDER BY application_id, user_id")
        ]
    return {"applications": applications, "customers": customers, "users": users}


@licensing_control()
async def set_customer(ctx: LicensingControlCtx) -> dict[str, Any]:
    """{application_id?, customer_id, state, editions?} set (or add) a customer's licence"""
    body = await ctx.object()
    app = ctx.application(body)
    customer = _identifier(body, "customer_id")
    state = _choice(body, "state", CUSTOMER_STATES)
    with ctx.store.transaction() as db:
        old = db.execute(
            "SELECT editions FROM licensing_customers WHERE application_id = ? AND customer_id = ?",
            (app, customer),
        ).fetchone()
        editions = _editions(body, old["editions"] if old is not None else "[]")
        db.execute(
            "INSERT INTO licensing_customers (application_id, customer_id, license_id, state, "
            "editions) VALUES (?, ?, ?, ?, ?) ON CONFLICT (application_id, customer_id) "
            "DO UPDATE SET state = excluded.state, editions = excluded.editions",
            (app, customer, seed.customer_license_id(app, customer), state, editions),
        )
        row = db.execute(
            "SELECT * FROM licensing_customers WHERE application_id = ? AND customer_id = ?",
            (app, customer),
        ).fetchone()
    return customer_record(row)


@licensing_control()
async def set_user(ctx: LicensingControlCtx) -> dict[str, Any]:
    """{application_id?, user_id, customer_id?, state?, enabled?} set (or add) a user's licence"""
    body = await ctx.object()
    app = ctx.application(body)
    user = _identifier(body, "user_id")
    with ctx.store.transaction() as db:
        old = db.execute(
            "SELECT * FROM licensing_users WHERE application_id = ? AND user_id = ?", (app, user)
        ).fetchone()
        customer = (
            _identifier(body, "customer_id")
            if "customer_id" in body or old is None
            else str(old["customer_id"])
        )
        state = _choice(body, "state", USER_STATES, old["state"] if old is not None else None)
        enabled = body.get("enabled", bool(old["enabled"]) if old is not None else True)
        if not isinstance(enabled, bool):
            raise ErrorAnswer(422, "enabled must be true or false")
        db.execute(
            "INSERT INTO licensing_users (application_id, user_id, customer_id, license_id, "
            "state, enabled, edition_id) VALUES (?, ?, ?, ?, ?, ?, ?) "
            "ON CONFLICT (application_id, user_id) DO UPDATE SET customer_id = "
            "excluded.customer_id, state = excluded.state, enabled = excluded.enabled",
            (app, user, customer, seed.user_license_id(app, user), state, enabled, seed.EDITION),
        )
        row = db.execute(
            "SELECT * FROM licensing_users WHERE application_id = ? AND user_id = ?", (app, user)
        ).fetchone()
    return user_record(row)


def _lists(body: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    lists: dict[str, list[dict[str, Any]]] = {}
    for name in LISTS:
        value = body.get(name, [])
        if not isinstance(value, list) or not all(isinstance(item, dict) for item in value):
            raise ErrorAnswer(422, f"{name} must be a list of objects")
        lists[name] = value
    return lists


@licensing_control(status=201)
async def add_notifications(ctx: LicensingControlCtx) -> dict[str, Any]:
    """{application_id?, customer_id, timestamp?, provisions?, ...} or {count} add notifications

    One notification with the given lists (`timestamp` in milliseconds, default now), or
    `count` generated ones (a provision, a seat change, an expiry or a deletion in turn)."""
    body = await ctx.object()
    app = ctx.application(body)
    now = int(time.time() * 1000)
    count = body.get("count")
    with ctx.store.transaction() as db:
        if count is not None:
            if isinstance(count, bool) or not isinstance(count, int) or not 1 <= count <= 10_000:
                raise ErrorAnswer(422, "count must be an integer from 1 to 10000")
            ids = []
            for number in range(count):
                customer = f"customer-{number % 20 + 1:02d}.example"
                ids.append(
                    seed.insert_notification(
                        db, app, customer, now, seed.notification_lists(number, customer)
                    )
                )
            return {"ids": [str(i) for i in ids]}
        customer = _identifier(body, "customer_id")
        stamp = body.get("timestamp", now)
        if isinstance(stamp, bool) or not isinstance(stamp, int) or not 0 <= stamp < 2**62:
            raise ErrorAnswer(422, "timestamp must be milliseconds since the epoch")
        new = seed.insert_notification(db, app, customer, stamp, _lists(body))
        row = db.execute("SELECT * FROM licensing_notifications WHERE id = ?", (new,)).fetchone()
    return notification_record(row)


@licensing_control()
async def outage(ctx: LicensingControlCtx) -> dict[str, Any]:
    """{status: 503 | null, delay_ms: 0} every API request fails with status / is held delay_ms"""
    if ctx.request.method == "POST":
        body = await ctx.object()
        status = body.get("status", ctx.licensing.status)
        delay = body.get("delay_ms", ctx.licensing.delay_ms)
        if status is not None and (
            isinstance(status, bool) or not isinstance(status, int) or not 400 <= status <= 599
        ):
            raise ErrorAnswer(422, "status must be an error status (400-599) or null")
        if isinstance(delay, bool) or not isinstance(delay, int) or not 0 <= delay <= MAX_DELAY_MS:
            raise ErrorAnswer(422, f"delay_ms must be an integer from 0 to {MAX_DELAY_MS}")
        ctx.licensing.status, ctx.licensing.delay_ms = status, delay
    return ctx.licensing.as_json()


MISROUTABLE = ("applicationId", "customerId", "userId")


@licensing_control()
async def misroute(ctx: LicensingControlCtx) -> dict[str, Any]:
    """{applicationId?, customerId?, userId?} every licence answer names these instead
    (null: names none); {} ends it"""
    if ctx.request.method == "POST":
        body = await ctx.object()
        unknown = sorted(set(body) - set(MISROUTABLE))
        if unknown or not all(
            value is None or (isinstance(value, str) and len(value) <= MAX_ID)
            for value in body.values()
        ):
            raise ErrorAnswer(
                422,
                f"give only {', '.join(MISROUTABLE)}, each a string "
                f"(at most {MAX_ID} characters) or null",
            )
        ctx.licensing.misroute = dict(body)
    return dict(ctx.licensing.misroute)


# Paths relative to /__sandbox/licensing (app.py mounts them).
routes = [
    Route("/tokens", tokens, methods=["GET"]),
    Route("/licenses", licenses, methods=["GET"]),
    Route("/customers", set_customer, methods=["POST"]),
    Route("/users", set_user, methods=["POST"]),
    Route("/notifications", add_notifications, methods=["POST"]),
    Route("/outage", outage, methods=["GET", "POST"]),
    Route("/misroute", misroute, methods=["GET", "POST"]),
]
