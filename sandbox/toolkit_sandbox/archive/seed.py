"""Interface C's seed: one account, `demo`, with a fixed API key and its credits."""

from __future__ import annotations

import hashlib
import sqlite3

DEMO_USERNAME = "demo"
DEMO_CREDITS = 1000  # each archive task costs ARCHIVE_COST of them


def api_key_for(username: str) -> str:
    """The fixed API key of a seeded account (fake, so printing it is fine); another
    derivation than interface A's, so one interface's key is never valid on the other."""
    return "cc-" + hashlib.sha256(f"toolkit-sandbox:archive:{username}".encode()).hexdigest()[:40]


DEMO_API_KEY = api_key_for(DEMO_USERNAME)
# The secret webhooks are signed with (`CloudConvert-Signature`), fixed like the key.
WEBHOOK_SECRET = "whsec-" + hashlib.sha256(b"toolkit-sandbox:archive:webhooks").hexdigest()[:32]


def load(conn: sqlite3.Connection, content: bool) -> None:
    """The demo account (with or without `--no-seed`: there is no API to create one)."""
    conn.execute(
        "INSERT INTO archive_accounts (id, username, api_key, credits) VALUES (?, ?, ?, ?)",
        (1, DEMO_USERNAME, DEMO_API_KEY, DEMO_CREDITS),
    )


def accounts(conn: sqlite3.Connection) -> list[dict[str, object]]:
    rows = conn.execute("SELECT username, api_key, credits FROM archive_accounts ORDER BY id")
    return [{"username": row[0], "api_key": row[1], "credits": row[2]} for row in rows]
