"""Tasks and jobs of interface C as the API shows them: their JSON, with the upload
form of a waiting upload task and the signed download URLs of an export task.
"""

from __future__ import annotations

import datetime as dt
import json
import sqlite3
from collections.abc import Sequence
from typing import Any
from urllib.parse import quote

from toolkit_sandbox.archive.specs import EXPORT, MAX_UPLOAD, UPLOAD
from toolkit_sandbox.archive.tasks import DONE, job_status

HOST_NAME = "sandbox"  # the worker's host name, set once a task has started
WAITING_FOR_UPLOAD = "Waiting for upload"  # an upload task's message until its file arrives
INCLUDES = ("retries", "depends_on_tasks", "payload", "job")


def iso(moment: float | None) -> str | None:
    if moment is None:
        return None
    return dt.datetime.fromtimestamp(moment, dt.UTC).isoformat(timespec="seconds")


def upload_url(base: str, task_id: str) -> str:
    return f"{base}/v2/storage/{task_id}"


def download_url(base: str, task_id: str, index: int, filename: str, token: str) -> str:
    return f"{base}/v2/storage/{task_id}/{index}/{quote(filename, safe='')}?signature={token}"


def _shown_files(result: dict[str, Any]) -> list[dict[str, Any]]:
    """A result's files as the API shows them: their names (the size is the sandbox's)."""
    return [{"filename": f["filename"]} for f in result.get("files", [])]


def _form_parameters(row: sqlite3.Row) -> dict[str, Any]:
    """The upload form's parameters; `redirect` when the task was given one."""
    parameters: dict[str, Any] = {
        "expires": int(row["created_at"] + row["timeout"]),
        "max_file_count": 1,
        "max_file_size": MAX_UPLOAD,
    }
    redirect = json.loads(row["payload"]).get("redirect")
    if isinstance(redirect, str):
        parameters["redirect"] = redirect
    parameters["signature"] = row["token"]
    return parameters


def task_json(
    row: sqlite3.Row, base: str, db: sqlite3.Connection | None = None, include: Sequence[str] = ()
) -> dict[str, Any]:
    """A task as the API shows it; `include` (with `db`) adds `retries`,
    `depends_on_tasks` (its input tasks, as an array of tasks) and `job`."""
    depends: dict[str, str] = json.loads(row["depends"])
    stored = json.loads(row["result"]) if row["result"] else None
    result: dict[str, Any] | None = None
    if row["operation"] == UPLOAD and row["status"] == "waiting":
        result = {
            "form": {
                "url": upload_url(base, row["id"]),
                "parameters": _form_parameters(row),
            }
        }
    elif row["operation"] == EXPORT and stored is not None:
        result = {
            "files": [
                {
                    "filename": file["filename"],
                    "url": download_url(base, row["id"], index, file["filename"], row["token"]),
                }
                for index, file in enumerate(stored.get("files", []))
            ]
        }
    elif stored is not None:
        result = {"files": _shown_files(stored)}
    data: dict[str, Any] = {
        "id": row["id"],
        "name": row["name"],
        "job_id": row["job_id"],
        "operation": row["operation"],
        "status": row["status"],
        "message": row["message"]
        if row["message"] is not None or result is None or "form" not in result
        else WAITING_FOR_UPLOAD,
        "code": row["code"],
        "percent": 100 if row["status"] in DONE else 0,
        "credits": row["credits"],
        "created_at": iso(row["created_at"]),
        "started_at": iso(row["started_at"]),
        "ended_at": iso(row["ended_at"]),
        "retry_of_task_id": row["retry_of"],
        "copy_of_task_id": None,
        "host_name": HOST_NAME if row["started_at"] is not None else None,
        "storage": None,
        "depends_on_task_ids": list(depends.values()),
        "engine": row["engine"],
        "engine_version": row["engine_version"],
        "payload": json.loads(row["payload"]),
        "result": result,
        "links": {"self": f"{base}/v2/tasks/{row['id']}"},
    }
    if row["job_id"] is None:
        del data["name"]
    if db is not None and "retries" in include:
        data["retries"] = [
            task_json(retry, base)
            for retry in db.execute(
                "SELECT * FROM archive_tasks WHERE retry_of = ? ORDER BY seq", (row["id"],)
            )
        ]
    if db is not None and "depends_on_tasks" in include:
        rows = [
            db.execute("SELECT * FROM archive_tasks WHERE id = ?", (task_id,)).fetchone()
            for task_id in depends.values()
        ]
        data["depends_on_tasks"] = [task_json(found, base) for found in rows if found is not None]
    if db is not None and "job" in include and row["job_id"] is not None:
        job = db.execute("SELECT * FROM archive_jobs WHERE id = ?", (row["job_id"],)).fetchone()
        data["job"] = job_json(db, job, base, tasks=False) if job is not None else None
    return data


def job_json(
    db: sqlite3.Connection, job: sqlite3.Row, base: str, *, tasks: bool = True
) -> dict[str, Any]:
    """A job as the API shows it (`tasks`: with its tasks)."""
    rows = db.execute(
        "SELECT * FROM archive_tasks WHERE job_id = ? ORDER BY seq", (job["id"],)
    ).fetchall()
    status = job_status(db, job["id"])
    started = [row["started_at"] for row in rows if row["started_at"] is not None]
    ended = [row["ended_at"] for row in rows if row["ended_at"] is not None]
    data: dict[str, Any] = {
        "id": job["id"],
        "tag": job["tag"],
        "status": status,
        "created_at": iso(job["created_at"]),
        "started_at": iso(min(started)) if started else None,
        "ended_at": iso(max(ended)) if ended and status in DONE else None,
        "tasks": [task_json(row, base) for row in rows],
        "links": {"self": f"{base}/v2/jobs/{job['id']}"},
    }
    if not tasks:
        del data["tasks"]
    return data
