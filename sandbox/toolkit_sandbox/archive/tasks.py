"""Tasks and jobs of interface C in the store: creation, the life cycle, and reading them.

A task is `waiting` until its inputs have finished (an upload task until its file
arrives), then `processing` (an archive task, built on a worker thread) and `finished`,
or `error` with a `code` and a `message`. An export task finishes as soon as its input
has. When a task ends in error, every task that waits for it ends in error too
(`INPUT_TASK_FAILED`). A task whose `timeout` (seconds from its creation) passes before
it has finished ends in error (`TIMEOUT`).

Everything here runs inside one store transaction (`db`) and returns what the caller
must do once it has committed: archive tasks to start on a worker, workers to stop.
What a task may be is validated beforehand (`specs`); how a task or job is shown is
`serializers`.
"""

from __future__ import annotations

import json
import secrets
import sqlite3
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from toolkit_sandbox.archive.http import invalid
from toolkit_sandbox.archive.specs import ARCHIVE, ENGINE, ENGINE_VERSION, EXPORT, Spec
from toolkit_sandbox.interface import ErrorAnswer

ARCHIVE_COST = 1  # credits per archive task; uploads and exports are free
DONE = ("finished", "error")


@dataclass
class Effects:
    """What to do once the transaction has committed."""

    start: list[str] = field(default_factory=list)  # archive tasks now processing
    stop: list[str] = field(default_factory=list)  # archive tasks no longer processing
    changed: bool = False  # the task asked for changed its state

    def merge(self, other: Effects) -> None:
        self.start += other.start
        self.stop += other.stop


# --- creation ------------------------------------------------------------------------


def _next_seq(db: sqlite3.Connection) -> int:
    row = db.execute("SELECT COALESCE(MAX(seq), 0) FROM archive_tasks").fetchone()
    return int(row[0]) + 1


def charge(db: sqlite3.Connection, account: int, specs: Sequence[Spec]) -> None:
    """Take the credits of the archive tasks, or refuse them all with a 402."""
    cost = ARCHIVE_COST * sum(item.operation == ARCHIVE for item in specs)
    if not cost:
        return
    row = db.execute("SELECT credits FROM archive_accounts WHERE id = ?", (account,)).fetchone()
    if row is None or row[0] < cost:
        left = row[0] if row is not None else 0
        raise ErrorAnswer(402, f"Not enough credits: these tasks cost {cost}, {left} left.")
    db.execute("UPDATE archive_accounts SET credits = credits - ? WHERE id = ?", (cost, account))


def create_job(
    db: sqlite3.Connection,
    account: int,
    specs: Sequence[Spec],
    tag: str | None,
    now: float,
    webhook_url: str | None = None,
) -> tuple[str, Effects]:
    charge(db, account, specs)
    job_id = str(uuid.uuid4())
    db.execute(
        "INSERT INTO archive_jobs (id, account_id, tag, created_at, webhook_url) "
        "VALUES (?, ?, ?, ?, ?)",
        (job_id, account, tag, now, webhook_url),
    )
    ids = {item.name: str(uuid.uuid4()) for item in specs}
    seq = _next_seq(db)
    for position, item in enumerate(specs):
        _insert(
            db,
            ids[item.name],
            seq + position,
            account,
            job_id,
            item,
            {given: ids[given] for given in item.inputs},
            now,
        )
    effects = Effects()
    for item in specs:  # tasks whose inputs are all finished start now
        effects.merge(_ready(db, ids[item.name], now))
    return job_id, effects


def create_task(
    db: sqlite3.Connection, account: int, item: Spec, now: float
) -> tuple[str, Effects]:
    """A task of its own (`POST /v2/archive`...): its inputs are ids of the account's
    tasks, none of them failed (a 422 otherwise)."""
    depends: dict[str, str] = {}
    for given in item.inputs:
        row = db.execute(
            "SELECT id, operation, status FROM archive_tasks WHERE id = ? AND account_id = ?",
            (given, account),
        ).fetchone()
        if row is None:
            raise invalid({"input": [f"The input task {given!r} does not exist."]})
        if row["status"] == "error":
            raise invalid({"input": [f"The input task {given!r} has failed."]})
        if item.operation == ARCHIVE and row["operation"] == EXPORT:
            raise invalid({"input": [f"The input task {given!r} produces no files to archive."]})
        depends[given] = row["id"]
    charge(db, account, [item])
    task_id = str(uuid.uuid4())
    _insert(db, task_id, _next_seq(db), account, None, item, depends, now)
    return task_id, _ready(db, task_id, now)


def _insert(
    db: sqlite3.Connection,
    task_id: str,
    seq: int,
    account: int,
    job_id: str | None,
    item: Spec,
    depends: dict[str, str],
    now: float,
    retry_of: str | None = None,
) -> None:
    reserved = ARCHIVE_COST if item.operation == ARCHIVE else 0
    engine = (ENGINE, item.engine_version) if item.operation == ARCHIVE else (None, None)
    db.execute(
        "INSERT INTO archive_tasks (id, seq, account_id, job_id, name, operation, status, "
        "reserved, created_at, timeout, pending, depends, payload, engine, engine_version, "
        "token, retry_of) VALUES (?, ?, ?, ?, ?, ?, 'waiting', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            task_id,
            seq,
            account,
            job_id,
            item.name,
            item.operation,
            reserved,
            now,
            item.timeout,
            len(item.inputs),
            json.dumps(depends),
            json.dumps(item.payload),
            *engine,
            secrets.token_urlsafe(24),
            retry_of,
        ),
    )
    db.executemany(
        "INSERT INTO archive_task_inputs (task_id, input_id, position) VALUES (?, ?, ?)",
        [
            (task_id, input_id, position)
            for position, input_id in enumerate(depends[given] for given in item.inputs)
        ],
    )


def cancel(db: sqlite3.Connection, task_id: str, now: float) -> Effects:
    """Cancel a waiting or processing task: it ends in error (`CANCELLED`), its credits
    are given back, and what waits for it fails; a 409 for a task already done."""
    row = db.execute("SELECT status FROM archive_tasks WHERE id = ?", (task_id,)).fetchone()
    if row is None or row["status"] in DONE:
        raise ErrorAnswer(409, "Only a waiting or processing task can be cancelled.")
    return fail(db, task_id, "CANCELLED", "Task has been cancelled", now)


def retry(db: sqlite3.Connection, account: int, task_id: str, now: float) -> tuple[str, Effects]:
    """A new task like `task_id` (its operation, payload, inputs, job and name), whose
    `retry_of_task_id` names it; a 409 while `task_id` is not done, a 422 when an input
    is gone or has failed."""
    row = task_row(db, task_id, account)
    if row["status"] not in DONE:
        raise ErrorAnswer(409, "Only a finished or failed task can be retried.")
    depends = {
        given: _latest(db, input_id) for given, input_id in json.loads(row["depends"]).items()
    }
    for input_id in depends.values():
        found = db.execute("SELECT status FROM archive_tasks WHERE id = ?", (input_id,)).fetchone()
        if found is None or found["status"] == "error":
            raise invalid({"input": [f"The input task {input_id!r} is gone or has failed."]})
    payload = json.loads(row["payload"])
    item = Spec(
        row["operation"],
        payload,
        list(depends),
        row["timeout"],
        row["name"],
        payload.get("output_format"),
        payload.get("filename"),
        row["engine_version"] or ENGINE_VERSION,
    )
    charge(db, account, [item])
    new_id = str(uuid.uuid4())
    _insert(db, new_id, _next_seq(db), account, row["job_id"], item, depends, now, retry_of=task_id)
    return new_id, _ready(db, new_id, now)


def _latest(db: sqlite3.Connection, task_id: str) -> str:
    """The newest retry of `task_id` (itself when it has none)."""
    for _ in range(1000):
        row = db.execute(
            "SELECT id FROM archive_tasks WHERE retry_of = ? ORDER BY seq DESC LIMIT 1", (task_id,)
        ).fetchone()
        if row is None:
            break
        task_id = row[0]
    return task_id


def _ready(db: sqlite3.Connection, task_id: str, now: float) -> Effects:
    """Count the inputs of a new task that have already finished; start it if all have,
    fail it if one has failed (it may have failed since the job was validated)."""
    rows = db.execute(
        "SELECT t.status FROM archive_task_inputs i JOIN archive_tasks t ON t.id = i.input_id "
        "WHERE i.task_id = ?",
        (task_id,),
    ).fetchall()
    finished = sum(row[0] == "finished" for row in rows)
    db.execute("UPDATE archive_tasks SET pending = pending - ? WHERE id = ?", (finished, task_id))
    if any(row[0] == "error" for row in rows):
        return fail(db, task_id, "INPUT_TASK_FAILED", "Input task has failed", now)
    return _maybe_start(db, task_id, now)


# --- the life cycle ------------------------------------------------------------------


def _maybe_start(db: sqlite3.Connection, task_id: str, now: float) -> Effects:
    row = db.execute(
        "SELECT operation, status, pending FROM archive_tasks WHERE id = ?", (task_id,)
    ).fetchone()
    if row is None or row["status"] != "waiting" or row["pending"] > 0:
        return Effects()
    if row["operation"] == ARCHIVE:
        db.execute(
            "UPDATE archive_tasks SET status = 'processing', started_at = ? WHERE id = ?",
            (now, task_id),
        )
        return Effects(start=[task_id])
    if row["operation"] == EXPORT:
        files = [file for input_id in input_ids(db, task_id) for file in files_of(db, input_id)]
        db.execute("UPDATE archive_tasks SET started_at = ? WHERE id = ?", (now, task_id))
        return finish(db, task_id, {"files": files}, now)
    return Effects()


def finish(db: sqlite3.Connection, task_id: str, result: dict[str, Any], now: float) -> Effects:
    """`task_id` has finished with `result`: its credits are taken for good, and the
    tasks waiting for it count one input less (and start when none is left)."""
    changed = db.execute(
        "UPDATE archive_tasks SET status = 'finished', result = ?, ended_at = ?, "
        "started_at = COALESCE(started_at, ?), credits = reserved, reserved = 0 "
        "WHERE id = ? AND status IN ('waiting', 'processing')",
        (json.dumps(result), now, now, task_id),
    ).rowcount
    effects = Effects(changed=bool(changed))
    if not changed:
        return effects
    for (dependent,) in db.execute(
        "SELECT task_id FROM archive_task_inputs WHERE input_id = ?", (task_id,)
    ).fetchall():
        db.execute("UPDATE archive_tasks SET pending = pending - 1 WHERE id = ?", (dependent,))
        effects.merge(_maybe_start(db, dependent, now))
    return effects


def fail(
    db: sqlite3.Connection,
    task_id: str,
    code: str,
    message: str,
    now: float,
    ended_at: float | None = None,
) -> Effects:
    """`task_id` ends in error; its credits are given back, and so for every task that
    waits for it (`INPUT_TASK_FAILED`), transitively."""
    effects = Effects()
    queue = [(task_id, code, message, ended_at if ended_at is not None else now)]
    while queue:
        current, code, message, moment = queue.pop()
        row = db.execute(
            "SELECT status, account_id, reserved FROM archive_tasks WHERE id = ?", (current,)
        ).fetchone()
        if row is None or row["status"] in DONE:
            continue
        if row["status"] == "processing":
            effects.stop.append(current)
        db.execute(
            "UPDATE archive_tasks SET status = 'error', code = ?, message = ?, ended_at = ?, "
            "result = NULL, reserved = 0 WHERE id = ?",
            (code, message, moment, current),
        )
        db.execute(
            "UPDATE archive_accounts SET credits = credits + ? WHERE id = ?",
            (row["reserved"], row["account_id"]),
        )
        for (dependent,) in db.execute(
            "SELECT task_id FROM archive_task_inputs WHERE input_id = ?", (current,)
        ).fetchall():
            queue.append((dependent, "INPUT_TASK_FAILED", "Input task has failed", now))
    return effects


def expire(
    db: sqlite3.Connection, now: float, *, task_id: str | None = None, job_id: str | None = None
) -> Effects:
    """Fail the tasks (of a job, or one task) whose timeout has passed unfinished, as of
    the moment it passed."""
    where, args = ("job_id = ?", job_id) if job_id is not None else ("id = ?", task_id)
    rows = db.execute(
        f"SELECT id, created_at, timeout FROM archive_tasks WHERE {where} "
        "AND status IN ('waiting', 'processing') AND created_at + timeout <= ?",
        (args, now),
    ).fetchall()
    effects = Effects()
    for row in rows:
        effects.merge(
            fail(
                db,
                row["id"],
                "TIMEOUT",
                f"The task timed out after {row['timeout']:g} seconds.",
                now,
                ended_at=row["created_at"] + row["timeout"],
            )
        )
    return effects


def delete(db: sqlite3.Connection, task_id: str, now: float) -> Effects:
    """Remove a task (and its credits, if still reserved); what waits for it fails."""
    row = db.execute(
        "SELECT status, account_id, reserved FROM archive_tasks WHERE id = ?", (task_id,)
    ).fetchone()
    effects = Effects()
    if row is None:
        return effects
    if row["status"] == "processing":
        effects.stop.append(task_id)
    for (dependent,) in db.execute(
        "SELECT task_id FROM archive_task_inputs WHERE input_id = ?", (task_id,)
    ).fetchall():
        effects.merge(fail(db, dependent, "INPUT_TASK_FAILED", "Input task has failed", now))
    db.execute(
        "UPDATE archive_accounts SET credits = credits + ? WHERE id = ?",
        (row["reserved"], row["account_id"]),
    )
    db.execute("DELETE FROM archive_task_inputs WHERE task_id = ?", (task_id,))
    db.execute("DELETE FROM archive_tasks WHERE id = ?", (task_id,))
    return effects


# --- reading -------------------------------------------------------------------------


def input_ids(db: sqlite3.Connection, task_id: str) -> list[str]:
    return [
        row[0]
        for row in db.execute(
            "SELECT input_id FROM archive_task_inputs WHERE task_id = ? ORDER BY position",
            (task_id,),
        )
    ]


def files_of(db: sqlite3.Connection, task_id: str) -> list[dict[str, Any]]:
    row = db.execute("SELECT result FROM archive_tasks WHERE id = ?", (task_id,)).fetchone()
    result = json.loads(row[0]) if row is not None and row[0] else {}
    return [{"filename": f["filename"], "size": f["size"]} for f in result.get("files", [])]


def task_row(db: sqlite3.Connection, task_id: str, account: int) -> sqlite3.Row:
    row: sqlite3.Row | None = db.execute(
        "SELECT * FROM archive_tasks WHERE id = ? AND account_id = ?", (task_id, account)
    ).fetchone()
    if row is None:
        raise ErrorAnswer(404)
    return row


def job_row(db: sqlite3.Connection, job_id: str, account: int) -> sqlite3.Row:
    row: sqlite3.Row | None = db.execute(
        "SELECT * FROM archive_jobs WHERE id = ? AND account_id = ?", (job_id, account)
    ).fetchone()
    if row is None:
        raise ErrorAnswer(404)
    return row


def job_status(db: sqlite3.Connection, job_id: str) -> str:
    counts = dict(
        db.execute(  # a task that has been retried counts as its retry
            "SELECT status, COUNT(*) FROM archive_tasks t WHERE job_id = ? AND NOT EXISTS "
            "(SELECT 1 FROM archive_tasks r WHERE r.retry_of = t.id) GROUP BY status",
            (job_id,),
        ).fetchall()
    )
    if counts.get("error"):
        return "error"
    if not counts or set(counts) == {"finished"}:
        return "finished"
    if counts.get("processing") or counts.get("finished"):
        return "processing"
    return "waiting"
