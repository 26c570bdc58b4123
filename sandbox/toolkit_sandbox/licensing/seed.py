"""Interface D's seed: one application of the demo developer with licensed and
unlicensed customers, users in every licence state, and 265 licence notifications.

The same seed always gives the same rows: tokens are derived from their labels, times
count from a fixed clock (May 2024), every list is generated in a fixed order.
"""

from __future__ import annotations

import datetime as dt
import functools
import hashlib
import json
import sqlite3
from typing import Any

SCOPE = "https://www.googleapis.com/auth/appsmarketplace.license"
OTHER_SCOPE = "https://www.googleapis.com/auth/userinfo.email"

DEVELOPER = "toolkit-developer"
OTHER_DEVELOPER = "other-developer"
APPLICATION_ID = "812345678901"  # the demo developer's application
OTHER_APPLICATION_ID = "823456789012"  # another developer's: the demo token gets a 403

LICENSED_CUSTOMER = "acme.example"
UNLICENSED_CUSTOMER = "initech.example"
ACTIVE_USER = "ana@acme.example"
UNLICENSED_USER = "ben@acme.example"
EXPIRED_USER = "cy@acme.example"
DISABLED_USER = "dee@acme.example"  # an ACTIVE licence the administrator has not enabled

# label -> (owner, scopes, expired)
TOKENS: dict[str, tuple[str, str, bool]] = {
    "developer": (DEVELOPER, SCOPE, False),
    "no-scope": (DEVELOPER, OTHER_SCOPE, False),
    "other-developer": (OTHER_DEVELOPER, SCOPE, False),
    "expired": (DEVELOPER, SCOPE, True),
}
DEMO_TOKEN_LABEL = "developer"

EDITION = "default_edition"
BASE_TIME = dt.datetime(2024, 5, 1, 9, 0, tzinfo=dt.UTC)
SEEDED_NOTIFICATIONS = 260  # of the demo application; more than two pages of 100
OTHER_NOTIFICATIONS = 5  # of the other application


def token_for(label: str) -> str:
    """The bearer token of a seeded label: shaped like a Google access token, never
    changing."""
    digest = hashlib.sha256(f"toolkit-sandbox-licensing:{label}".encode()).hexdigest()
    return f"ya29.sandbox-{digest[:32]}"


def base_ms(hours: float = 0) -> int:
    """Milliseconds since the epoch, `hours` after the seed's clock."""
    return int((BASE_TIME + dt.timedelta(hours=hours)).timestamp() * 1000)


def customer_license_id(application_id: str, customer_id: str) -> str:
    return f"{application_id}-{customer_id}"


def user_license_id(application_id: str, user_id: str) -> str:
    return f"{application_id}-{user_id}"


def editions(seats: int, assigned: int) -> str:
    return json.dumps([{"editionId": EDITION, "seatCount": seats, "assignedSeats": assigned}])


# (application, customer, state, editions)
CUSTOMERS: tuple[tuple[str, str, str, str], ...] = (
    (APPLICATION_ID, LICENSED_CUSTOMER, "ACTIVE", editions(25, 4)),
    (APPLICATION_ID, "globex.example", "ACTIVE", editions(5, 5)),
    (APPLICATION_ID, UNLICENSED_CUSTOMER, "UNLICENSED", "[]"),
    (APPLICATION_ID, "umbrella.example", "UNLICENSED", "[]"),
    (OTHER_APPLICATION_ID, LICENSED_CUSTOMER, "ACTIVE", editions(10, 1)),
)
# (application, user, customer, state, enabled)
USERS: tuple[tuple[str, str, str, str, bool], ...] = (
    (APPLICATION_ID, ACTIVE_USER, LICENSED_CUSTOMER, "ACTIVE", True),
    (APPLICATION_ID, UNLICENSED_USER, LICENSED_CUSTOMER, "UNLICENSED", True),
    (APPLICATION_ID, EXPIRED_USER, LICENSED_CUSTOMER, "EXPIRED", True),
    (APPLICATION_ID, DISABLED_USER, LICENSED_CUSTOMER, "ACTIVE", False),
    (APPLICATION_ID, "erin@globex.example", "globex.example", "ACTIVE", True),
    (OTHER_APPLICATION_ID, ACTIVE_USER, LICENSED_CUSTOMER, "ACTIVE", True),
)


def notification_lists(number: int, customer: str) -> dict[str, list[dict[str, Any]]]:
    """The event of the `number`th generated notification: a provision, a seat
    (un)assignment, an expiry or a deletion, in turn. The items' `kind`s are those of
    Google's reference of the method (`appsmarket#provisionNotification`...); the
    discovery document leaves them undescribed."""
    lists: dict[str, list[dict[str, Any]]] = {
        "provisions": [],
        "expiries": [],
        "reassignments": [],
        "deletes": [],
    }
    kind = number % 5
    if kind in (0, 1):
        lists["provisions"].append(
            {
                "kind": "appsmarket#provisionNotification",
                "editionId": EDITION,
                "seatCount": str(5 + number % 20),
            }
        )
    elif kind == 2:
        user = f"user{number % 17:02d}@{customer}"
        lists["reassignments"].append(
            {
                "kind": "appsmarket#reassignmentNotification",
                "editionId": EDITION,
                "userId": user,
                "type": "USER_ASSIGNMENT" if number % 2 else "USER_UNASSIGNMENT",
            }
        )
    elif kind == 3:
        lists["expiries"].append({"kind": "appsmarket#expiryNotification", "editionId": EDITION})
    else:
        lists["deletes"].append({"kind": "appsmarket#deleteNotification", "editionId": EDITION})
    return lists


def notification_row(
    application_id: str,
    customer_id: str,
    timestamp_ms: int,
    lists: dict[str, list[dict[str, Any]]],
) -> tuple[str, str, int, str, str, str, str]:
    """The values of one `licensing_notifications` row (without its id)."""
    provisions, expiries, reassignments, deletes = (
        json.dumps(lists.get(name, []))
        for name in ("provisions", "expiries", "reassignments", "deletes")
    )
    return (
        application_id,
        customer_id,
        timestamp_ms,
        provisions,
        expiries,
        reassignments,
        deletes,
    )


_INSERT_NOTIFICATION = (
    "INSERT INTO licensing_notifications (application_id, customer_id, timestamp_ms, "
    "provisions, expiries, reassignments, deletes) VALUES (?, ?, ?, ?, ?, ?, ?)"
)


def insert_notification(
    db: sqlite3.Connection,
    application_id: str,
    customer_id: str,
    timestamp_ms: int,
    lists: dict[str, list[dict[str, Any]]],
) -> int:
    cursor = db.execute(
        _INSERT_NOTIFICATION, notification_row(application_id, customer_id, timestamp_ms, lists)
    )
    return int(cursor.lastrowid or 0)


@functools.cache
def _notification_rows() -> tuple[tuple[str, str, int, str, str, str, str], ...]:
    """The seeded notifications' rows, in id order. Built once per process: every reset
    seeds them again, and the seed never changes."""
    customers = [f"customer-{n:02d}.example" for n in range(1, 21)] + [
        LICENSED_CUSTOMER,
        "globex.example",
        UNLICENSED_CUSTOMER,
        "umbrella.example",
    ]
    rows = []
    for number in range(SEEDED_NOTIFICATIONS):
        customer = customers[number % len(customers)]
        rows.append(
            notification_row(
                APPLICATION_ID, customer, base_ms(number), notification_lists(number, customer)
            )
        )
    for number in range(OTHER_NOTIFICATIONS):
        rows.append(
            notification_row(
                OTHER_APPLICATION_ID,
                LICENSED_CUSTOMER,
                base_ms(number + 0.5),
                notification_lists(number, LICENSED_CUSTOMER),
            )
        )
    return tuple(rows)


def _notifications(db: sqlite3.Connection) -> None:
    db.executemany(_INSERT_NOTIFICATION, _notification_rows())


def load(db: sqlite3.Connection, content: bool = True) -> None:
    """Insert the seed (inside the caller's transaction). `content=False` (`--no-seed`):
    the tokens and the applications only; the control API adds customers and users."""
    for label, (owner, scopes, expired) in TOKENS.items():
        db.execute(
            "INSERT INTO licensing_tokens (label, secret, owner, scopes, expired) "
            "VALUES (?, ?, ?, ?, ?)",
            (label, token_for(label), owner, scopes, expired),
        )
    db.executemany(
        "INSERT INTO licensing_applications (id, name, owner) VALUES (?, ?, ?)",
        [
            (APPLICATION_ID, "toolkit premium", DEVELOPER),
            (OTHER_APPLICATION_ID, "another vendor's application", OTHER_DEVELOPER),
        ],
    )
    if not content:
        return
    db.executemany(
        "INSERT INTO licensing_customers (application_id, customer_id, license_id, state, "
        "editions) VALUES (?, ?, ?, ?, ?)",
        [
            (app, customer, customer_license_id(app, customer), state, seats)
            for app, customer, state, seats in CUSTOMERS
        ],
    )
    db.executemany(
        "INSERT INTO licensing_users (application_id, user_id, customer_id, license_id, state, "
        "enabled, edition_id) VALUES (?, ?, ?, ?, ?, ?, ?)",
        [
            (app, user, customer, user_license_id(app, user), state, enabled, EDITION)
            for app, user, customer, state, enabled in USERS
        ],
    )
    _notifications(db)


def tokens(db: sqlite3.Connection) -> list[dict[str, Any]]:
    """`[{"label", "token", "owner", "scopes", "expired"}]`, in id order."""
    rows = db.execute(
        "SELECT label, secret, owner, scopes, expired FROM licensing_tokens ORDER BY id"
    ).fetchall()
    return [
        {
            "label": row[0],
            "token": row[1],
            "owner": row[2],
            "scopes": row[3].split(),
            "expired": bool(row[4]),
        }
        for row in rows
    ]
