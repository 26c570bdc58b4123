"""Interface C's SQLite tables, created by the store on first start.

Times are seconds since the epoch (REAL), shown by the API as ISO 8601 with `+00:00`.
A task's `payload`, `depends` and `result` are JSON text; `pending` counts its inputs
that have not finished yet (0: it can start), so finishing an upload costs one update
of each task that waits for it, however large the job.
"""

from __future__ import annotations

# Bump when the tables change: a file database of another version is refused (store.py).
SCHEMA_VERSION = "3"

DDL = """
CREATE TABLE IF NOT EXISTS archive_accounts (
    id        INTEGER PRIMARY KEY,
    username  TEXT NOT NULL UNIQUE,
    api_key   TEXT NOT NULL UNIQUE,
    credits   INTEGER NOT NULL
);

CREATE TABLE IF NOT EXISTS archive_jobs (
    id          TEXT PRIMARY KEY,
    account_id  INTEGER NOT NULL,
    tag         TEXT,
    created_at  REAL NOT NULL,
    webhook_url TEXT,                          -- told job.finished / job.failed
    notified    INTEGER NOT NULL DEFAULT 0     -- 1 once its webhooks have been told it ended
);

CREATE TABLE IF NOT EXISTS archive_webhooks (  -- the account's webhooks (POST /v2/webhooks)
    id              TEXT PRIMARY KEY,
    account_id      INTEGER NOT NULL,
    url             TEXT NOT NULL,
    events          TEXT NOT NULL,             -- JSON array of job.created | finished | failed
    signing_secret  TEXT NOT NULL,
    created_at      REAL NOT NULL
);

CREATE TABLE IF NOT EXISTS archive_tasks (
    id              TEXT PRIMARY KEY,
    seq             INTEGER NOT NULL,          -- creation order (a job's tasks in its order)
    account_id      INTEGER NOT NULL,
    job_id          TEXT,
    name            TEXT,
    operation       TEXT NOT NULL,             -- import/upload | archive | export/url
    status          TEXT NOT NULL,             -- waiting | processing | finished | error
    message         TEXT,
    code            TEXT,
    credits         INTEGER,                   -- what it cost, once finished
    reserved        INTEGER NOT NULL DEFAULT 0,  -- credits taken at creation
    created_at      REAL NOT NULL,
    started_at      REAL,
    ended_at        REAL,
    timeout         REAL NOT NULL,             -- seconds from created_at
    pending         INTEGER NOT NULL DEFAULT 0,
    depends         TEXT NOT NULL DEFAULT '{}',
    payload         TEXT NOT NULL,
    engine          TEXT,
    engine_version  TEXT,
    result          TEXT,
    token           TEXT NOT NULL,             -- signs its upload form and download URLs
    retry_of        TEXT                       -- the task this one is a retry of
);
CREATE INDEX IF NOT EXISTS archive_tasks_job ON archive_tasks (job_id, seq);
CREATE INDEX IF NOT EXISTS archive_tasks_retry ON archive_tasks (retry_of);

CREATE TABLE IF NOT EXISTS archive_task_inputs (
    task_id   TEXT NOT NULL,
    input_id  TEXT NOT NULL,
    position  INTEGER NOT NULL,
    PRIMARY KEY (task_id, position)
);
CREATE INDEX IF NOT EXISTS archive_task_inputs_input ON archive_task_inputs (input_id);
"""

# Children first: a reset empties them in this order.
DATA_TABLES = (
    "archive_webhooks",
    "archive_task_inputs",
    "archive_tasks",
    "archive_jobs",
    "archive_accounts",
)
