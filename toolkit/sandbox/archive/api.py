"""Interface C's API under `/v2`: jobs, tasks, the three operations, and waiting.

The waits (`GET /v2/tasks/{id}/wait`, `GET /v2/jobs/{id}/wait`, and the same as the
real service's sync host serves them, `GET /sync/v2/tasks/{id}` and
`GET /sync/v2/jobs/{id}`) hold the request until the task (every task of the job) has
finished or one has failed, at most the wait cap (`WAIT_CAP`, control route
`/__sandbox/archive/settings`); then they answer what is there, like a show.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

from starlette.responses import Response
from starlette.routing import Route

from toolkit.sandbox.archive import tasks
from toolkit.sandbox.archive.http import ArchiveCtx, endpoint
from toolkit.sandbox.archive.worker import apply, file_of, part_of


def _expired(ctx: ArchiveCtx, **which: str) -> None:
    """Fail what has timed out unseen (a task is expired when it is looked at)."""
    with ctx.store.transaction() as db:
        effects = tasks.expire(db, time.time(), **which)
    if effects.start or effects.stop:
        apply(ctx.store, ctx.runtime, effects)


def _show_task(ctx: ArchiveCtx, task_id: str) -> tuple[dict[str, Any], bool, float]:
    """(the task's JSON, whether it is done, its deadline)."""
    _expired(ctx, task_id=task_id)
    with ctx.store.read() as db:
        row = tasks.task_row(db, task_id, ctx.account)
        return (tasks.task_json(row, ctx.base), row["status"] in tasks.DONE,
                row["created_at"] + row["timeout"])


def _show_job(ctx: ArchiveCtx, job_id: str, *, full: bool = True
              ) -> tuple[dict[str, Any] | None, bool, float]:
    """(the job's JSON - None while not done unless `full`; whether it is done; the
    earliest deadline of its unfinished tasks)."""
    _expired(ctx, job_id=job_id)
    with ctx.store.read() as db:
        job = tasks.job_row(db, job_id, ctx.account)
        done = tasks.job_status(db, job_id) in tasks.DONE
        row = db.execute("SELECT MIN(created_at + timeout) FROM archive_tasks WHERE job_id = ? "
                         "AND status IN ('waiting', 'processing')", (job_id,)).fetchone()
        deadline = row[0] if row[0] is not None else time.time()
        return (tasks.job_json(db, job, ctx.base) if full or done else None), done, deadline


async def _hold(ctx: ArchiveCtx, look: Callable[[bool], tuple[dict[str, Any] | None, bool, float]]
                ) -> dict[str, Any]:
    """Look (`look(full)`: the JSON, or None while not done unless `full`) until done or
    the wait cap has passed; between looks, sleep until a change or the next deadline."""
    cap = time.monotonic() + ctx.runtime.settings.wait_cap
    while True:
        changed = ctx.runtime.changed()  # taken before looking: no change is missed
        data, done, deadline = look(False)
        left = cap - time.monotonic()
        if done or left <= 0:
            return {"data": data if data is not None else look(True)[0]}
        try:
            await asyncio.wait_for(changed.wait(), min(left, max(deadline - time.time(), 0) + 0.01))
        except TimeoutError:
            pass


# --- jobs ----------------------------------------------------------------------------


@endpoint(status=201)
async def create_job(ctx: ArchiveCtx) -> dict[str, Any]:
    body = await ctx.object()
    specs = tasks.job_specs(body)
    with ctx.store.transaction() as db:
        job_id, effects = tasks.create_job(db, ctx.account, specs, body.get("tag"), time.time())
        job = tasks.job_row(db, job_id, ctx.account)
        data = tasks.job_json(db, job, ctx.base)
    apply(ctx.store, ctx.runtime, effects)
    return {"data": data}


@endpoint()
async def show_job(ctx: ArchiveCtx) -> dict[str, Any]:
    data, _, _ = _show_job(ctx, ctx.path_param("id"))
    return {"data": data}


@endpoint()
async def wait_job(ctx: ArchiveCtx) -> dict[str, Any]:
    job_id = ctx.path_param("id")
    return await _hold(ctx, lambda full: _show_job(ctx, job_id, full=full))


@endpoint()
async def delete_job(ctx: ArchiveCtx) -> Response:
    job_id = ctx.path_param("id")
    with ctx.store.transaction() as db:
        tasks.job_row(db, job_id, ctx.account)
        ids = [row[0] for row in db.execute(
            "SELECT id FROM archive_tasks WHERE job_id = ? ORDER BY seq DESC", (job_id,))]
        effects = tasks.Effects()
        for task_id in ids:
            effects.merge(tasks.delete(db, task_id, time.time()))
        db.execute("DELETE FROM archive_jobs WHERE id = ?", (job_id,))
    _remove_files(ctx, ids)
    apply(ctx.store, ctx.runtime, effects)
    return Response(status_code=204)


# --- tasks ---------------------------------------------------------------------------


def _create(operation: str) -> Callable[[ArchiveCtx], Any]:
    async def create(ctx: ArchiveCtx) -> dict[str, Any]:
        item = tasks.spec(await ctx.object(), "", operation)
        with ctx.store.transaction() as db:
            task_id, effects = tasks.create_task(db, ctx.account, item, time.time())
            data = tasks.task_json(tasks.task_row(db, task_id, ctx.account), ctx.base)
        apply(ctx.store, ctx.runtime, effects)
        return {"data": data}

    create.__name__ = f"create_{operation.replace('/', '_')}"
    return create


@endpoint()
async def show_task(ctx: ArchiveCtx) -> dict[str, Any]:
    data, _, _ = _show_task(ctx, ctx.path_param("id"))
    return {"data": data}


@endpoint()
async def wait_task(ctx: ArchiveCtx) -> dict[str, Any]:
    task_id = ctx.path_param("id")
    return await _hold(ctx, lambda _full: _show_task(ctx, task_id))


@endpoint()
async def delete_task(ctx: ArchiveCtx) -> Response:
    task_id = ctx.path_param("id")
    with ctx.store.transaction() as db:
        tasks.task_row(db, task_id, ctx.account)
        effects = tasks.delete(db, task_id, time.time())
    _remove_files(ctx, [task_id])
    apply(ctx.store, ctx.runtime, effects)
    return Response(status_code=204)


def _remove_files(ctx: ArchiveCtx, ids: list[str]) -> None:
    for task_id in ids:
        ctx.runtime.cancel(task_id)
        file_of(ctx.runtime, task_id).unlink(missing_ok=True)
        if task_id not in ctx.runtime.uploading:
            part_of(ctx.runtime, task_id).unlink(missing_ok=True)


@endpoint()
async def me(ctx: ArchiveCtx) -> dict[str, Any]:
    with ctx.store.read() as db:
        row = db.execute("SELECT id, username, credits FROM archive_accounts WHERE id = ?",
                         (ctx.account,)).fetchone()
    return {"data": {"id": row["id"], "username": row["username"], "credits": row["credits"]}}


routes = [
    Route("/v2/jobs", create_job, methods=["POST"]),
    Route("/v2/jobs/{id}", show_job, methods=["GET"]),
    Route("/v2/jobs/{id}", delete_job, methods=["DELETE"]),
    Route("/v2/jobs/{id}/wait", wait_job, methods=["GET"]),
    Route("/sync/v2/jobs/{id}", wait_job, methods=["GET"]),
    Route("/v2/import/upload", endpoint(status=201)(_create(tasks.UPLOAD)), methods=["POST"]),
    Route("/v2/archive", endpoint(status=201)(_create(tasks.ARCHIVE)), methods=["POST"]),
    Route("/v2/export/url", endpoint(status=201)(_create(tasks.EXPORT)), methods=["POST"]),
    Route("/v2/tasks/{id}", show_task, methods=["GET"]),
    Route("/v2/tasks/{id}", delete_task, methods=["DELETE"]),
    Route("/v2/tasks/{id}/wait", wait_task, methods=["GET"]),
    Route("/sync/v2/tasks/{id}", wait_task, methods=["GET"]),
    Route("/v2/users/me", me, methods=["GET"]),
]
