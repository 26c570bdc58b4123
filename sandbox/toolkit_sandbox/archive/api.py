"""Interface C's API under `/v2`: jobs, tasks, the three operations, lists, cancel,
retry, delete, and waiting.

The waits (`GET /v2/tasks/{id}/wait`, `GET /v2/jobs/{id}/wait`, and the same as the
real service's sync host serves them, `GET /sync/v2/tasks/{id}` and
`GET /sync/v2/jobs/{id}`, and `POST /sync/v2/jobs`, which creates a job first) hold the request until the task (every task of the job) has
finished or one has failed, and answer that: never an unfinished one. They are bounded
by the tasks' own timeouts (a task past its `timeout` ends in error, which ends the
wait), by the client leaving, and by the wait cap (`WAIT_CAP`, control route
`/__sandbox/archive/settings`), past which the answer is a 504 (ask again), as a proxy
in front of a held request would give.
"""

from __future__ import annotations

import asyncio
import ipaddress
import json
import time
import uuid
from collections.abc import Callable
from typing import Any
from urllib.parse import urlencode, urlsplit

from starlette.responses import Response
from starlette.routing import Route

from toolkit_sandbox.archive import serializers, specs, tasks, webhooks
from toolkit_sandbox.archive.http import ArchiveCtx, endpoint, invalid
from toolkit_sandbox.archive.worker import apply, file_of, part_of
from toolkit_sandbox.interface import ErrorAnswer

PER_PAGE, MAX_PER_PAGE = 100, 100  # a list's page: default and most items
DISCONNECT_CHECK = 5.0  # seconds between looks at whether a waiting client has left


def _expired(ctx: ArchiveCtx, **which: str) -> None:
    """Fail what has timed out unseen (a task is expired when it is looked at)."""
    with ctx.store.transaction() as db:
        effects = tasks.expire(db, time.time(), **which)
    if effects.start or effects.stop:
        apply(ctx.store, ctx.runtime, effects)


def _includes(ctx: ArchiveCtx) -> list[str]:
    """`include=retries,job`: what to add to a task (a 422 for anything else)."""
    given = [part for part in ctx.request.query_params.get("include", "").split(",") if part]
    unknown = [part for part in given if part not in serializers.INCLUDES]
    if unknown:
        raise invalid({"include": [f"include takes {', '.join(serializers.INCLUDES)}."]})
    return given


def _show_task(ctx: ArchiveCtx, task_id: str) -> tuple[dict[str, Any], bool, float]:
    """(the task's JSON, whether it is done, its deadline)."""
    include = _includes(ctx)
    _expired(ctx, task_id=task_id)
    with ctx.store.read() as db:
        row = tasks.task_row(db, task_id, ctx.account)
        return (
            serializers.task_json(row, ctx.base, db, include),
            row["status"] in tasks.DONE,
            row["created_at"] + row["timeout"],
        )


def _show_job(
    ctx: ArchiveCtx, job_id: str, *, full: bool = True
) -> tuple[dict[str, Any] | None, bool, float]:
    """(the job's JSON - None while not done unless `full`; whether it is done; the
    earliest deadline of its unfinished tasks)."""
    _expired(ctx, job_id=job_id)
    with ctx.store.read() as db:
        job = tasks.job_row(db, job_id, ctx.account)
        done = tasks.job_status(db, job_id) in tasks.DONE
        row = db.execute(
            "SELECT MIN(created_at + timeout) FROM archive_tasks WHERE job_id = ? "
            "AND status IN ('waiting', 'processing')",
            (job_id,),
        ).fetchone()
        deadline = row[0] if row[0] is not None else time.time()
        return (serializers.job_json(db, job, ctx.base) if full or done else None), done, deadline


async def _hold(
    ctx: ArchiveCtx, look: Callable[[bool], tuple[dict[str, Any] | None, bool, float]]
) -> dict[str, Any] | Response:
    """Look (`look(full)`: the JSON, or None while not done unless `full`) until done;
    between looks, sleep until a change, the next deadline, or a look at whether the
    client has left. Past the wait cap, a 504."""
    cap = ctx.runtime.settings.wait_cap
    ends = time.monotonic() + cap
    while True:
        changed = ctx.runtime.changed()  # taken before looking: no change is missed
        data, done, deadline = look(False)
        if done:
            return {"data": data if data is not None else look(True)[0]}
        left = ends - time.monotonic()
        if left <= 0:
            raise ErrorAnswer(
                504,
                f"The wait was cut off after {cap:g} s and the task is still running: wait again.",
            )
        if await ctx.request.is_disconnected():
            return Response(status_code=499)  # nobody to answer
        pause = min(left, max(deadline - time.time(), 0) + 0.01, DISCONNECT_CHECK)
        try:
            await asyncio.wait_for(changed.wait(), pause)
        except TimeoutError:
            pass


# --- jobs ----------------------------------------------------------------------------


async def _new_job(ctx: ArchiveCtx) -> tuple[str, dict[str, Any]]:
    """Create the job the body describes: (its id, its JSON as created)."""
    body = await ctx.object()
    requested = specs.job_specs(body)
    webhook = _webhook_url(body.get("webhook_url"))
    ctx.runtime.base = ctx.base
    with ctx.store.transaction() as db:
        job_id, effects = tasks.create_job(
            db, ctx.account, requested, body.get("tag"), time.time(), webhook
        )
        job = tasks.job_row(db, job_id, ctx.account)
        data = serializers.job_json(db, job, ctx.base)
        created = webhooks.deliveries(db, job, "job.created", ctx.base)
    webhooks.send(created)
    apply(ctx.store, ctx.runtime, effects)
    return job_id, data


@endpoint(status=201)
async def create_job(ctx: ArchiveCtx) -> dict[str, Any]:
    _, data = await _new_job(ctx)
    return {"data": data}


@endpoint(status=201)
async def create_job_and_wait(ctx: ArchiveCtx) -> dict[str, Any] | Response:
    """`POST /sync/v2/jobs`: create the job, then hold the request until it is done and
    answer the finished (or failed) job, as the sync API does."""
    job_id, _ = await _new_job(ctx)
    return await _hold(ctx, lambda full: _show_job(ctx, job_id, full=full))


def _webhook_url(value: Any, field: str = "webhook_url") -> str | None:
    """A webhook's URL: an http(s) URL; the sandbox calls loopback hosts only."""
    if value is None:
        return None
    parts = urlsplit(value) if isinstance(value, str) and len(value) <= 2048 else None
    if parts is None or parts.scheme not in ("http", "https") or not parts.hostname:
        raise invalid({field: ["The webhook url must be an http or https URL."]})
    host = parts.hostname
    try:
        loopback = host == "localhost" or ipaddress.ip_address(host).is_loopback
    except ValueError:
        loopback = False
    if not loopback:
        raise invalid({field: ["This sandbox calls webhooks on loopback hosts only."]})
    return str(value)


def _page(ctx: ArchiveCtx) -> tuple[int, int]:
    """(page, per_page) from the query: positive integers, per_page at most 100."""
    query = ctx.request.query_params
    try:
        page = int(query.get("page", "1"))
        per_page = int(query.get("per_page", str(PER_PAGE)))
    except ValueError:
        raise invalid({"page": ["page and per_page must be integers."]}) from None
    if page < 1 or not 1 <= per_page <= MAX_PER_PAGE:
        raise invalid({"per_page": [f"page is at least 1; per_page from 1 to {MAX_PER_PAGE}."]})
    return page, per_page


def _listed(
    ctx: ArchiveCtx, path: str, items: list[dict[str, Any]], page: int, per_page: int, more: bool
) -> dict[str, Any]:
    """A page of a list, with the `links` and `meta` the API's lists carry."""
    kept = {key: value for key, value in ctx.request.query_params.multi_items() if key != "page"}

    def link(number: int) -> str:
        return f"{ctx.base}{path}?{urlencode([*kept.items(), ('page', str(number))])}"

    first = (page - 1) * per_page + 1
    return {
        "data": items,
        "links": {
            "first": link(1),
            "last": None,
            "prev": link(page - 1) if page > 1 else None,
            "next": link(page + 1) if more else None,
        },
        "meta": {
            "current_page": page,
            "from": first if items else None,
            "path": f"{ctx.base}{path}",
            "per_page": per_page,
            "to": first + len(items) - 1 if items else None,
        },
    }


def _filters(ctx: ArchiveCtx, allowed: dict[str, str]) -> tuple[str, list[Any]]:
    """`filter[name]=value` as SQL conditions on the columns `allowed` names."""
    where, args = [], []
    for key, value in ctx.request.query_params.multi_items():
        if key.startswith("filter[") and key.endswith("]"):
            name = key[7:-1]
            if name not in allowed:
                raise invalid({key: [f"Filters are {', '.join(allowed)}."]})
            where.append(allowed[name])
            args.append(value)
    return "".join(f" AND {condition}" for condition in where), args


@endpoint()
async def list_jobs(ctx: ArchiveCtx) -> dict[str, Any]:
    """`GET /v2/jobs`: the account's jobs, newest first; `filter[status]`, `filter[tag]`,
    `include=tasks`, `page`, `per_page`."""
    page, per_page = _page(ctx)
    include = [part for part in ctx.request.query_params.get("include", "").split(",") if part]
    if any(part != "tasks" for part in include):
        raise invalid({"include": ["include takes tasks."]})
    _filters(ctx, {"status": "", "tag": ""})  # refuses any other filter
    status = ctx.request.query_params.get("filter[status]")
    tag = ctx.request.query_params.get("filter[tag]")
    where, args = (" AND tag = ?", [tag]) if tag is not None else ("", [])
    with ctx.store.read() as db:
        rows = db.execute(
            f"SELECT * FROM archive_jobs WHERE account_id = ?{where} "
            "ORDER BY created_at DESC, rowid DESC",
            (ctx.account, *args),
        ).fetchall()
        jobs = [job for job in rows if status is None or tasks.job_status(db, job["id"]) == status]
        shown = jobs[(page - 1) * per_page : page * per_page]
        items = [serializers.job_json(db, job, ctx.base, tasks="tasks" in include) for job in shown]
    return _listed(ctx, "/v2/jobs", items, page, per_page, len(jobs) > page * per_page)


@endpoint()
async def list_tasks(ctx: ArchiveCtx) -> dict[str, Any]:
    """`GET /v2/tasks`: the account's tasks, newest first; `filter[job_id]`,
    `filter[status]`, `filter[operation]`, `include`, `page`, `per_page`."""
    page, per_page = _page(ctx)
    include = _includes(ctx)
    where, args = _filters(
        ctx, {"job_id": "job_id = ?", "status": "status = ?", "operation": "operation = ?"}
    )
    with ctx.store.read() as db:
        rows = db.execute(
            f"SELECT * FROM archive_tasks WHERE account_id = ?{where} "
            "ORDER BY seq DESC LIMIT ? OFFSET ?",
            (ctx.account, *args, per_page + 1, (page - 1) * per_page),
        ).fetchall()
        items = [serializers.task_json(row, ctx.base, db, include) for row in rows[:per_page]]
    return _listed(ctx, "/v2/tasks", items, page, per_page, len(rows) > per_page)


@endpoint()
async def show_job(ctx: ArchiveCtx) -> dict[str, Any]:
    data, _, _ = _show_job(ctx, ctx.path_param("id"))
    return {"data": data}


@endpoint()
async def wait_job(ctx: ArchiveCtx) -> dict[str, Any] | Response:
    job_id = ctx.path_param("id")
    return await _hold(ctx, lambda full: _show_job(ctx, job_id, full=full))


@endpoint()
async def delete_job(ctx: ArchiveCtx) -> Response:
    job_id = ctx.path_param("id")
    with ctx.store.transaction() as db:
        tasks.job_row(db, job_id, ctx.account)
        ids = [
            row[0]
            for row in db.execute(
                "SELECT id FROM archive_tasks WHERE job_id = ? ORDER BY seq DESC", (job_id,)
            )
        ]
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
        item = specs.spec(await ctx.object(), "", operation)
        with ctx.store.transaction() as db:
            task_id, effects = tasks.create_task(db, ctx.account, item, time.time())
            data = serializers.task_json(tasks.task_row(db, task_id, ctx.account), ctx.base)
        apply(ctx.store, ctx.runtime, effects)
        return {"data": data}

    create.__name__ = f"create_{operation.replace('/', '_')}"
    return create


@endpoint()
async def show_task(ctx: ArchiveCtx) -> dict[str, Any]:
    data, _, _ = _show_task(ctx, ctx.path_param("id"))
    return {"data": data}


@endpoint()
async def wait_task(ctx: ArchiveCtx) -> dict[str, Any] | Response:
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


@endpoint()
async def cancel_task(ctx: ArchiveCtx) -> dict[str, Any]:
    """`POST /v2/tasks/{id}/cancel`: the task, cancelled (what waits for it fails)."""
    task_id = ctx.path_param("id")
    _expired(ctx, task_id=task_id)
    with ctx.store.transaction() as db:
        tasks.task_row(db, task_id, ctx.account)
        effects = tasks.cancel(db, task_id, time.time())
        data = serializers.task_json(tasks.task_row(db, task_id, ctx.account), ctx.base)
    apply(ctx.store, ctx.runtime, effects)
    return {"data": data}


@endpoint(status=201)
async def retry_task(ctx: ArchiveCtx) -> dict[str, Any]:
    """`POST /v2/tasks/{id}/retry`: a new task like it (`retry_of_task_id`)."""
    task_id = ctx.path_param("id")
    with ctx.store.transaction() as db:
        new_id, effects = tasks.retry(db, ctx.account, task_id, time.time())
        data = serializers.task_json(tasks.task_row(db, new_id, ctx.account), ctx.base)
    apply(ctx.store, ctx.runtime, effects)
    return {"data": data}


def _remove_files(ctx: ArchiveCtx, ids: list[str]) -> None:
    for task_id in ids:
        ctx.runtime.cancel(task_id)
        file_of(ctx.runtime, task_id).unlink(missing_ok=True)
        if task_id not in ctx.runtime.uploading:
            part_of(ctx.runtime, task_id).unlink(missing_ok=True)


# --- webhooks ------------------------------------------------------------------------


@endpoint(status=201)
async def create_webhook(ctx: ArchiveCtx) -> dict[str, Any]:
    """`POST /v2/webhooks` `{"url", "events"}`: an account webhook, told of every job's
    `job.created`, `job.finished` or `job.failed` it asked for, signed with its own
    `signing_secret`."""
    body = await ctx.object()
    url = _webhook_url(body.get("url"), "url")
    events = body.get("events")
    errors: dict[str, list[str]] = {}
    if url is None:
        errors["url"] = ["The url field is required."]
    if (
        not isinstance(events, list)
        or not events
        or not all(isinstance(event, str) and event in webhooks.EVENTS for event in events)
    ):
        errors["events"] = [f"The events must be a list of {', '.join(webhooks.EVENTS)}."]
    if errors or not isinstance(events, list):
        raise invalid(errors)
    hook_id = str(uuid.uuid4())
    with ctx.store.transaction() as db:
        db.execute(
            "INSERT INTO archive_webhooks (id, account_id, url, events, signing_secret, "
            "created_at) VALUES (?, ?, ?, ?, ?, ?)",
            (
                hook_id,
                ctx.account,
                url,
                json.dumps(list(dict.fromkeys(events))),
                webhooks.new_secret(),
                time.time(),
            ),
        )
        row = db.execute("SELECT * FROM archive_webhooks WHERE id = ?", (hook_id,)).fetchone()
    return {"data": webhooks.webhook_json(row, ctx.base)}


@endpoint()
async def list_webhooks(ctx: ArchiveCtx) -> dict[str, Any]:
    """`GET /v2/users/me/webhooks` (and `GET /v2/webhooks`): the account's webhooks,
    newest first; `filter[url]`, `page`, `per_page`."""
    page, per_page = _page(ctx)
    where, args = _filters(ctx, {"url": "url = ?"})
    with ctx.store.read() as db:
        rows = db.execute(
            f"SELECT * FROM archive_webhooks WHERE account_id = ?{where} "
            "ORDER BY created_at DESC, rowid DESC LIMIT ? OFFSET ?",
            (ctx.account, *args, per_page + 1, (page - 1) * per_page),
        ).fetchall()
    items = [webhooks.webhook_json(row, ctx.base) for row in rows[:per_page]]
    return _listed(ctx, ctx.request.url.path, items, page, per_page, len(rows) > per_page)


@endpoint()
async def delete_webhook(ctx: ArchiveCtx) -> Response:
    """`DELETE /v2/webhooks/{id}`: 204; a webhook of no one's or another account's: 404."""
    with ctx.store.transaction() as db:
        gone = db.execute(
            "DELETE FROM archive_webhooks WHERE id = ? AND account_id = ?",
            (ctx.path_param("id"), ctx.account),
        ).rowcount
    if not gone:
        raise ErrorAnswer(404)
    return Response(status_code=204)


@endpoint()
async def me(ctx: ArchiveCtx) -> dict[str, Any]:
    with ctx.store.read() as db:
        row = db.execute(
            "SELECT id, username, credits FROM archive_accounts WHERE id = ?", (ctx.account,)
        ).fetchone()
    return {
        "data": {
            "id": row["id"],
            "username": row["username"],
            "email": f"{row['username']}@example.com",
            "created_at": serializers.iso(0),
            "credits": row["credits"],
            "links": {"self": f"{ctx.base}/v2/users/{row['id']}"},
        }
    }


routes = [
    Route("/v2/jobs", create_job, methods=["POST"]),
    Route("/v2/jobs", list_jobs, methods=["GET"]),
    Route("/v2/tasks", list_tasks, methods=["GET"]),
    Route("/v2/tasks/{id}/cancel", cancel_task, methods=["POST"]),
    Route("/v2/tasks/{id}/retry", retry_task, methods=["POST"]),
    Route("/v2/jobs/{id}", show_job, methods=["GET"]),
    Route("/v2/jobs/{id}", delete_job, methods=["DELETE"]),
    Route("/v2/jobs/{id}/wait", wait_job, methods=["GET"]),
    Route("/sync/v2/jobs", create_job_and_wait, methods=["POST"]),
    Route("/sync/v2/jobs/{id}", wait_job, methods=["GET"]),
    Route("/v2/import/upload", endpoint(status=201)(_create(specs.UPLOAD)), methods=["POST"]),
    Route("/v2/archive", endpoint(status=201)(_create(specs.ARCHIVE)), methods=["POST"]),
    Route("/v2/export/url", endpoint(status=201)(_create(specs.EXPORT)), methods=["POST"]),
    Route("/v2/tasks/{id}", show_task, methods=["GET"]),
    Route("/v2/tasks/{id}", delete_task, methods=["DELETE"]),
    Route("/v2/tasks/{id}/wait", wait_task, methods=["GET"]),
    Route("/sync/v2/tasks/{id}", wait_task, methods=["GET"]),
    Route("/v2/users/me", me, methods=["GET"]),
    Route("/v2/webhooks", create_webhook, methods=["POST"]),
    Route("/v2/webhooks", list_webhooks, methods=["GET"]),
    Route("/v2/users/me/webhooks", list_webhooks, methods=["GET"]),
    Route("/v2/webhooks/{id}", delete_webhook, methods=["DELETE"]),
]
