"""Interface C's control routes, under `/__sandbox/archive/`.

The seeded account and its API key, its credits (read and set), the settings (the wait
cap, the rate limit), task faults (the next archive tasks fail or run slow, the next
downloads are cut short) and the files the interface keeps. README.md documents the
shapes; the first line of each docstring is its entry in `GET /__sandbox`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from toolkit_sandbox.archive import seed
from toolkit_sandbox.archive.http import NAME
from toolkit_sandbox.archive.state import UPLOAD_NAMES, ArchiveState
from toolkit_sandbox.control import ControlCtx, control
from toolkit_sandbox.interface import ErrorAnswer


class ArchiveControlCtx(ControlCtx):
    def __init__(self, request: Request):
        super().__init__(request)
        self.archive: ArchiveState = self.state.of(NAME)


ControlHandler = Callable[[ArchiveControlCtx], Awaitable[Any]]


def archive_control(
    status: int = 200,
) -> Callable[[ControlHandler], Callable[[Request], Awaitable[Response]]]:
    return control(status, context=ArchiveControlCtx)


@archive_control()
async def accounts(ctx: ArchiveControlCtx) -> list[dict[str, object]]:
    """the seeded account: [{username, api_key, credits}]"""
    with ctx.store.read() as db:
        return seed.accounts(db)


@archive_control()
async def webhooks(ctx: ArchiveControlCtx) -> dict[str, Any]:
    """{signing_secret} the secret job webhooks are signed with (CloudConvert-Signature)"""
    return {"signing_secret": seed.WEBHOOK_SECRET}


@archive_control()
async def credits(ctx: ArchiveControlCtx) -> dict[str, Any]:
    """{credits: n} read or set the demo account's credits (each archive task costs 1)"""
    if ctx.request.method == "POST":
        value = (await ctx.object()).get("credits")
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 10**9:
            raise ErrorAnswer(422, "credits must be an integer from 0 to 1000000000")
        with ctx.store.transaction() as db:
            db.execute(
                "UPDATE archive_accounts SET credits = ? WHERE username = ?",
                (value, seed.DEMO_USERNAME),
            )
    with ctx.store.read() as db:
        row = db.execute(
            "SELECT credits FROM archive_accounts WHERE username = ?", (seed.DEMO_USERNAME,)
        ).fetchone()
    return {"username": seed.DEMO_USERNAME, "credits": row[0] if row is not None else 0}


@archive_control()
async def settings(ctx: ArchiveControlCtx) -> dict[str, Any]:
    """{wait_cap?, rate_limit?, rate_limits?, upload_names?, storage_redirect?} the wait cap (s), requests per window, rate limits on, what an uploaded name keeps of a / (path|basename), uploads and downloads redirected to another origin"""
    current = ctx.archive.settings
    if ctx.request.method == "POST":
        body = await ctx.object()
        wait_cap = body.get("wait_cap", current.wait_cap)
        if (
            isinstance(wait_cap, bool)
            or not isinstance(wait_cap, int | float)
            or not 0 <= wait_cap <= 86400
        ):
            raise ErrorAnswer(422, "wait_cap must be a number of seconds from 0 to 86400")
        upload_names = body.get("upload_names", current.upload_names)
        if upload_names not in UPLOAD_NAMES:
            raise ErrorAnswer(422, f"upload_names must be one of {', '.join(UPLOAD_NAMES)}")
        rate_limit = body.get("rate_limit", current.rate_limit)
        if isinstance(rate_limit, bool) or not isinstance(rate_limit, int) or rate_limit < 1:
            raise ErrorAnswer(422, "rate_limit must be a positive integer")
        enabled = body.get("rate_limits", current.rate_limits)
        if not isinstance(enabled, bool):
            raise ErrorAnswer(422, "rate_limits must be true or false")
        current.wait_cap, current.rate_limit, current.rate_limits = (
            float(wait_cap),
            rate_limit,
            enabled,
        )
        current.upload_names = str(upload_names)
        redirect = body.get("storage_redirect", current.storage_redirect)
        if not isinstance(redirect, bool):
            raise ErrorAnswer(422, "storage_redirect must be true or false")
        current.storage_redirect = redirect
        ctx.archive.limiter.reset()
    return {**current.as_json(), "window": ctx.archive.limiter.window}


@archive_control(status=201)
async def add_fault(ctx: ArchiveControlCtx) -> dict[str, Any]:
    """{kind: error|slow|truncate|corrupt, count?, seconds?, code?, message?, offset?} the next archive tasks fail or run slow, or the next downloads are cut in half or get one byte flipped"""
    try:
        return ctx.archive.add_fault(await ctx.object()).as_json()
    except ValueError as exc:
        raise ErrorAnswer(422, str(exc)) from None


@archive_control()
async def list_faults(ctx: ArchiveControlCtx) -> dict[str, Any]:
    """the pending task faults: {faults: [...]}"""
    return {"faults": ctx.archive.pending_faults()}


@archive_control()
async def clear_faults(ctx: ArchiveControlCtx) -> Response:
    """clear every pending task fault"""
    ctx.archive.clear_faults()
    return Response(status_code=204)


@archive_control()
async def files(ctx: ArchiveControlCtx) -> dict[str, Any]:
    """the files kept on disk: {files: [{path, size}], workers: n}"""
    folder = ctx.archive.folder
    found = (
        []
        if folder is None or not folder.is_dir()
        else sorted(
            (path.relative_to(folder).as_posix(), path.stat().st_size)
            for path in folder.rglob("*")
            if path.is_file()
        )
    )
    return {
        "files": [{"path": path, "size": size} for path, size in found],
        "workers": ctx.archive.running(),
    }


# Paths relative to /__sandbox/archive (app.py mounts them).
routes = [
    Route("/accounts", accounts, methods=["GET"]),
    Route("/credits", credits, methods=["GET", "POST"]),
    Route("/webhooks", webhooks, methods=["GET"]),
    Route("/settings", settings, methods=["GET", "POST"]),
    Route("/task-faults", list_faults, methods=["GET"]),
    Route("/task-faults", add_fault, methods=["POST"]),
    Route("/task-faults", clear_faults, methods=["DELETE"]),
    Route("/files", files, methods=["GET"]),
]
