"""The licensing endpoints: a customer's licence, a user's licence, the (deprecated)
licence notifications, and the discovery document that describes them.

Records are shaped as Google sends them (reference/NOTES.md part D, the discovery
document, the examples of Google's "Get app installation and licensing details" guide):
JSON of a proto message, so a repeated field with nothing in it (`editions`, the four
notification lists, `notifications`) is left out; 64-bit numbers of notifications are
strings. A customer that never installed the application, or a user who holds no seat,
is an answer, not an error: 200 with `state: UNLICENSED`.

Notifications are listed in the order they happened (their id), at most `max-results`
(default 100, at most 500) a page. `nextPageToken` continues after the last notification
of the page: it comes with every page that has notifications, so a client can keep the
last one and ask again later for only what is new; a page with none has no
`notifications` and an empty `nextPageToken`, as Google's guide shows it.
`timestamp` (milliseconds) keeps the notifications at or after that time.

Every method takes `fields=` (fields.py); a path or a method the API does not have is
Google's HTML 404 page (`unknown_path`).
"""

from __future__ import annotations

import base64
import binascii
import copy
import json
import sqlite3
from functools import lru_cache
from pathlib import Path
from typing import Any

from starlette.routing import Route

from toolkit_sandbox.licensing import fields
from toolkit_sandbox.licensing.http import (
    LicensingCtx,
    bad_request,
    endpoint,
    not_found,
    unknown_path,
)

DEFAULT_PAGE = 100
MAX_PAGE = 500
DISCOVERY_FILE = Path(__file__).resolve().parent / "appsmarket-v2.json"
LISTS = ("provisions", "expiries", "reassignments", "deletes")
ANY_METHOD = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]


# Each message's fields in the order of their numbers in the published proto
# (`google/apps/market/v2/resources.proto`): the order a proto's JSON printer writes them,
# which is the order of the response schemas of `fields=`.
FIELD_ORDER = {
    "appsmarket#customerLicense": tuple(fields.CUSTOMER_SCHEMA),
    "appsmarket#userLicense": tuple(fields.USER_SCHEMA),
    "appsmarket#licenseNotification": tuple(fields.NOTIFICATION_SCHEMA),
    "appsmarket#licenseNotificationList": tuple(fields.LIST_SCHEMA),
    "appsmarket#provisionNotification": tuple(fields.NOTIFICATION_SCHEMA["provisions"]),
    "appsmarket#reassignmentNotification": tuple(fields.NOTIFICATION_SCHEMA["reassignments"]),
}
EDITION_ORDER = tuple(fields.CUSTOMER_SCHEMA["editions"])


def _proto(value: Any) -> Any:
    if isinstance(value, dict):
        return proto_json(value)
    if isinstance(value, list):
        return [_proto(item) for item in value]
    return value


def proto_json(record: dict[str, Any]) -> dict[str, Any]:
    """`record` as Google's JSON of a proto message: a repeated field with nothing in it
    is left out, at every depth, and the fields come in the order of their numbers."""
    kind = record.get("kind")
    order = FIELD_ORDER.get(kind, ()) if isinstance(kind, str) else EDITION_ORDER
    rank = {name: position for position, name in enumerate(order)}
    keys = sorted(record, key=lambda name: rank.get(name, len(rank)))
    return {key: _proto(record[key]) for key in keys if record[key] != []}


def customer_record(row: sqlite3.Row) -> dict[str, Any]:
    return proto_json(
        {
            "kind": "appsmarket#customerLicense",
            "id": row["license_id"],
            "applicationId": row["application_id"],
            "customerId": row["customer_id"],
            "state": row["state"],
            "editions": json.loads(row["editions"]),
        }
    )


def no_customer_record(application_id: str, customer_id: str) -> dict[str, Any]:
    """A customer that never installed the application: no licence, so no licence id."""
    return proto_json(
        {
            "kind": "appsmarket#customerLicense",
            "applicationId": application_id,
            "customerId": customer_id,
            "state": "UNLICENSED",
        }
    )


def user_record(row: sqlite3.Row) -> dict[str, Any]:
    return proto_json(
        {
            "kind": "appsmarket#userLicense",
            "id": row["license_id"],
            "applicationId": row["application_id"],
            "customerId": row["customer_id"],
            "userId": row["user_id"],
            "enabled": bool(row["enabled"]),
            "state": row["state"],
            "editionId": row["edition_id"],
        }
    )


def no_seat_record(application_id: str, user_id: str, enabled: bool) -> dict[str, Any]:
    """A user who holds no seat: UNLICENSED, of the domain of their address; `enabled`
    when the domain's administrator has installed the application."""
    return proto_json(
        {
            "kind": "appsmarket#userLicense",
            "applicationId": application_id,
            "customerId": user_id.rpartition("@")[2],
            "userId": user_id,
            "enabled": enabled,
            "state": "UNLICENSED",
        }
    )


def notification_record(row: sqlite3.Row) -> dict[str, Any]:
    record: dict[str, Any] = {
        "kind": "appsmarket#licenseNotification",
        "id": str(row["id"]),
        "applicationId": row["application_id"],
        "customerId": row["customer_id"],
        "timestamp": str(row["timestamp_ms"]),
    }
    for name in LISTS:
        record[name] = json.loads(row[name])
    return proto_json(record)


def page_token(application_id: str, after: int) -> str:
    """An opaque token: continue after notification `after` of this application."""
    raw = f"{application_id}:{after}".encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def read_page_token(token: str, application_id: str) -> int:
    """The notification id a token continues after; a 400 for one this application never
    gave out."""
    try:
        raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)).decode()
    except (binascii.Error, UnicodeDecodeError, ValueError):
        raw = ""
    app, _, after = raw.rpartition(":")
    if app != application_id or not (after.isascii() and after.isdigit()) or len(after) > 18:
        raise bad_request("Invalid page token.")
    return int(after)


def _customer(db: sqlite3.Connection, application_id: str, customer_id: str) -> sqlite3.Row | None:
    """The customer (a domain) of an application, if it has installed it."""
    row: sqlite3.Row | None = db.execute(
        "SELECT * FROM licensing_customers WHERE application_id = ? AND customer_id = ?",
        (application_id, customer_id),
    ).fetchone()
    return row


@endpoint(schema=fields.CUSTOMER_SCHEMA, method="CustomerLicenseService.Get")
async def customer_license(ctx: LicensingCtx) -> dict[str, Any]:
    application = ctx.application(ctx.path_param("applicationId"))
    customer = ctx.path_param("customerId")
    with ctx.store.read() as db:
        row = _customer(db, application["id"], customer)
    record = (
        customer_record(row) if row is not None else no_customer_record(application["id"], customer)
    )
    return ctx.licensing.misrouted(record)


@endpoint(schema=fields.USER_SCHEMA, method="UserLicenseService.Get")
async def user_license(ctx: LicensingCtx) -> dict[str, Any]:
    application = ctx.application(ctx.path_param("applicationId"))
    user = ctx.path_param("userId")
    with ctx.store.read() as db:
        row = db.execute(
            "SELECT * FROM licensing_users WHERE application_id = ? AND user_id = ?",
            (application["id"], user),
        ).fetchone()
        if row is not None:
            return ctx.licensing.misrouted(user_record(row))
        # No seat: the user's domain (of their address) may still have installed it.
        domain = _customer(db, application["id"], user.rpartition("@")[2])
    installed = domain is not None and domain["state"] == "ACTIVE"
    return ctx.licensing.misrouted(no_seat_record(application["id"], user, installed))


@endpoint(
    query=("max-results", "start-token", "timestamp"),
    schema=fields.LIST_SCHEMA,
    method="LicenseNotificationService.List",
)
async def license_notifications(ctx: LicensingCtx) -> dict[str, Any]:
    application = ctx.application(ctx.path_param("applicationId"))
    app_id = application["id"]
    limit = ctx.uint("max-results", "max_results") or DEFAULT_PAGE
    limit = min(limit, MAX_PAGE)
    since = ctx.uint("timestamp", "timestamp", bits=64)
    since = min(since, 2**63 - 1) if since is not None else None  # past every stored time
    token = ctx.param("start-token")
    after = read_page_token(token, app_id) if token else 0
    sql = "SELECT * FROM licensing_notifications WHERE application_id = ? AND id > ?"
    args: list[Any] = [app_id, after]
    if since is not None:
        sql += " AND timestamp_ms >= ?"
        args.append(since)
    with ctx.store.read() as db:
        rows = db.execute(sql + " ORDER BY id LIMIT ?", (*args, limit)).fetchall()
    body: dict[str, Any] = {
        "kind": "appsmarket#licenseNotificationList",
        "notifications": [notification_record(row) for row in rows],
        "nextPageToken": page_token(app_id, rows[-1]["id"]) if rows else "",
    }
    return proto_json(body)


@lru_cache(maxsize=1)
def _discovery_document() -> dict[str, Any]:
    document: dict[str, Any] = json.loads(DISCOVERY_FILE.read_text(encoding="utf-8"))
    return document


@endpoint(auth=False, query=("version",))
async def discovery(ctx: LicensingCtx) -> dict[str, Any]:
    """The discovery document Google serves at `/$discovery/rest?version=v2`, verbatim
    but for its roots, which name this sandbox, so that Google's client library built from
    it calls the sandbox."""
    version = ctx.params.get("version", "v2")
    if version != "v2":
        raise not_found()
    document = copy.deepcopy(_discovery_document())
    root = str(ctx.request.base_url)
    root = root if root.endswith("/") else root + "/"
    document["rootUrl"] = root
    document["mtlsRootUrl"] = root
    document["baseUrl"] = root + document.get("basePath", "").lstrip("/")
    return document


routes = [
    Route(
        "/appsmarket/v2/customerLicense/{applicationId}/{customerId}",
        customer_license,
        methods=["GET"],
    ),
    Route("/appsmarket/v2/userLicense/{applicationId}/{userId}", user_license, methods=["GET"]),
    Route(
        "/appsmarket/v2/licenseNotification/{applicationId}", license_notifications, methods=["GET"]
    ),
    Route("/$discovery/rest", discovery, methods=["GET"]),
    # Last: whatever the routes above do not take (another path, another method).
    *(
        Route(path, unknown_path, methods=ANY_METHOD)
        for path in (
            "/appsmarket",
            "/appsmarket/{rest:path}",
            "/$discovery",
            "/$discovery/{rest:path}",
        )
    ),
]
