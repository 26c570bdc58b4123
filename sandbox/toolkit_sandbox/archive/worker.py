"""Running what a committed change asks for: archive tasks built on worker threads,
workers stopped, waiting requests woken.

Files live in the interface's folder (`state.files("archive")`), one file per task
named by its id: `<task id>` is an upload task's file or an archive task's archive
(`<task id>.part` while it is being received or written). Names from outside never
become paths: the name a file is known by is kept in the task's result.
"""

from __future__ import annotations

import functools
import json
import threading
import time
from collections import Counter
from pathlib import Path

from toolkit_sandbox.archive import tasks, webhooks
from toolkit_sandbox.archive.builder import WRITABLE, Entry, Stopped, build
from toolkit_sandbox.archive.state import ArchiveState
from toolkit_sandbox.store import Store


def file_of(runtime: ArchiveState, task_id: str) -> Path:
    return runtime.files() / task_id


def part_of(runtime: ArchiveState, task_id: str) -> Path:
    return runtime.files() / f"{task_id}.part"


def apply(store: Store, runtime: ArchiveState, effects: tasks.Effects) -> None:
    """Start and stop workers as a committed change says, then wake the waiting requests."""
    for task_id in effects.stop:
        runtime.cancel(task_id)
    for task_id in effects.start:
        runtime.start(task_id, functools.partial(run, store, runtime, task_id))
    _webhooks(store, runtime)
    runtime.notify()


def _webhooks(store: Store, runtime: ArchiveState) -> None:
    """Tell each job's webhooks (its `webhook_url`, its account's webhooks) once it is
    done: `job.finished` or `job.failed` (webhooks.py signs and sends them)."""
    found: list[webhooks.Delivery] = []
    with store.transaction() as db:
        for job in db.execute("SELECT * FROM archive_jobs WHERE notified = 0").fetchall():
            status = tasks.job_status(db, job["id"])
            if status not in tasks.DONE:
                continue
            db.execute("UPDATE archive_jobs SET notified = 1 WHERE id = ?", (job["id"],))
            event = "job.finished" if status == "finished" else "job.failed"
            found += webhooks.deliveries(db, job, event, runtime.base)
    webhooks.send(found)


def run(store: Store, runtime: ArchiveState, task_id: str, stop: threading.Event) -> None:
    """Build the archive of `task_id` (processing), then finish or fail it."""
    with store.read() as db:
        row = db.execute("SELECT * FROM archive_tasks WHERE id = ?", (task_id,)).fetchone()
        if row is None or row["status"] != "processing":
            return
        inputs = [
            db.execute("SELECT id, result FROM archive_tasks WHERE id = ?", (input_id,)).fetchone()
            for input_id in tasks.input_ids(db, task_id)
        ]
    deadline = row["created_at"] + row["timeout"]
    payload = json.loads(row["payload"])
    fmt = payload["output_format"]

    def end(code: str, message: str) -> None:
        with store.transaction() as db:
            effects = tasks.fail(db, task_id, code, message, time.time())
        apply(store, runtime, effects)

    fault = runtime.take_fault("error", "slow")
    if fault is not None and fault.kind == "slow":
        stop.wait(max(0.0, min(fault.seconds, deadline - time.time())))
    if stop.is_set():
        return
    if time.time() >= deadline:
        _expire(store, runtime, task_id)
        return
    if fault is not None and fault.kind == "error":
        end(fault.code, fault.message)
        return
    if fmt not in WRITABLE:
        end(
            "FORMAT_NOT_AVAILABLE",
            f"This sandbox cannot write {fmt.upper()} archives: only the proprietary rar tool "
            f"does. Choose one of {', '.join(WRITABLE)}.",
        )
        return
    entries: list[Entry] = []
    try:
        for item in inputs:
            if item is None:
                end("INPUT_TASK_FAILED", "Input task has failed")
                return
            source = file_of(runtime, item["id"])
            for file in json.loads(item["result"] or "{}").get("files", []):
                entries.append(
                    Entry(file["filename"], source, int(file["size"]), source.stat().st_mtime)
                )
    except OSError:
        end("INPUT_TASK_FAILED", "An input file is gone")
        return
    duplicates = sorted(
        name for name, count in Counter(e.name for e in entries).items() if count > 1
    )
    if duplicates:
        end("DUPLICATE_FILENAMES", f"Several input files are named {duplicates[0]!r}.")
        return
    part = part_of(runtime, task_id)
    try:
        build(fmt, part, entries, lambda: stop.is_set() or time.time() >= deadline)
    except Stopped:
        part.unlink(missing_ok=True)
        if not stop.is_set():
            _expire(store, runtime, task_id)
        return
    except (OSError, ValueError) as exc:
        part.unlink(missing_ok=True)
        end("ARCHIVE_FAILED", f"The archive could not be written: {exc}")
        return
    target = part.replace(file_of(runtime, task_id))
    filename = payload.get("filename") or f"archive.{fmt}"
    with store.transaction() as db:
        effects = tasks.finish(
            db,
            task_id,
            {"files": [{"filename": filename, "size": target.stat().st_size}]},
            time.time(),
        )
        gone = (
            db.execute("SELECT status FROM archive_tasks WHERE id = ?", (task_id,)).fetchone()
            is None
        )
    if gone:  # deleted (or the sandbox reset) while it was being written
        target.unlink(missing_ok=True)
    apply(store, runtime, effects)


def _expire(store: Store, runtime: ArchiveState, task_id: str) -> None:
    with store.transaction() as db:
        effects = tasks.expire(db, time.time(), task_id=task_id)
    apply(store, runtime, effects)
