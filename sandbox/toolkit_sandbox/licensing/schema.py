"""Interface D's SQLite tables, each prefixed `licensing_`, created by the store.

Booleans are 0/1 integers; notification times are milliseconds since the epoch, as the
API sends them. A notification's lists (`provisions`, `expiries`, `reassignments`,
`deletes`) are kept as the JSON the API answers, since nothing queries inside them.
"""

from __future__ import annotations

# Bump when the tables change: a file database of another version is refused (store.py).
SCHEMA_VERSION = "1"

DDL = """
CREATE TABLE IF NOT EXISTS licensing_tokens (
    id      INTEGER PRIMARY KEY AUTOINCREMENT,
    label   TEXT NOT NULL UNIQUE,
    secret  TEXT NOT NULL UNIQUE,
    owner   TEXT NOT NULL,            -- the developer whose applications it may read
    scopes  TEXT NOT NULL,            -- space-separated OAuth scopes
    expired INTEGER NOT NULL DEFAULT 0
);

CREATE TABLE IF NOT EXISTS licensing_applications (
    id    TEXT PRIMARY KEY,           -- the application id (a Cloud project number)
    name  TEXT NOT NULL,
    owner TEXT NOT NULL
);

CREATE TABLE IF NOT EXISTS licensing_customers (
    application_id TEXT NOT NULL,
    customer_id    TEXT NOT NULL,      -- the customer's domain name
    license_id     TEXT NOT NULL,
    state          TEXT NOT NULL,      -- ACTIVE | UNLICENSED
    editions       TEXT NOT NULL DEFAULT '[]',
    PRIMARY KEY (application_id, customer_id)
);

CREATE TABLE IF NOT EXISTS licensing_users (
    application_id TEXT NOT NULL,
    user_id        TEXT NOT NULL,      -- the user's email address
    customer_id    TEXT NOT NULL,
    license_id     TEXT NOT NULL,
    state          TEXT NOT NULL,      -- ACTIVE | UNLICENSED | EXPIRED
    enabled        INTEGER NOT NULL,
    edition_id     TEXT NOT NULL DEFAULT 'default_edition',
    PRIMARY KEY (application_id, user_id)
);

CREATE TABLE IF NOT EXISTS licensing_notifications (
    id             INTEGER PRIMARY KEY AUTOINCREMENT,
    application_id TEXT NOT NULL,
    customer_id    TEXT NOT NULL,
    timestamp_ms   INTEGER NOT NULL,
    provisions     TEXT NOT NULL DEFAULT '[]',
    expiries       TEXT NOT NULL DEFAULT '[]',
    reassignments  TEXT NOT NULL DEFAULT '[]',
    deletes        TEXT NOT NULL DEFAULT '[]'
);
CREATE INDEX IF NOT EXISTS licensing_notifications_app
    ON licensing_notifications (application_id, id);
"""

# Children first (a reset empties them in this order).
DATA_TABLES = (
    "licensing_notifications",
    "licensing_users",
    "licensing_customers",
    "licensing_applications",
    "licensing_tokens",
)
