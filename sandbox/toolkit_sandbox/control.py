"""The sandbox's own control API under `/__sandbox/`: what is the same for every interface.

Here: the index (which also lists every interface's control routes), health, request
stats and records, reset (every interface back to its seed) and injected faults. Each
interface adds its own routes under `/__sandbox/<name>/` (`Interface.control_routes`).
README.md beside this file documents every endpoint with its exact shapes.

Errors use the body `{"error": ..., "status": ...}` (422 for a bad request body, 404
for an unknown path or id). Control requests are not recorded in the stats. The
application answers only control requests addressed to the sandbox itself (app.py).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, TypeVar, overload

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from toolkit_sandbox import interface
from toolkit_sandbox.interface import Answer, Call, Context, Endpoint, Endpoints, ErrorAnswer
from toolkit_sandbox.limits import INT_MAX, parse_json, query_int

if TYPE_CHECKING:
    from toolkit_sandbox.protocols import Application

PREFIX = "/__sandbox"


def error(status: int, message: str | None = None) -> JSONResponse:
    """The control API's error body."""
    status = interface.routed(status)
    return JSONResponse(
        {"error": message or interface.MESSAGES.get(status, "error"), "status": status},
        status_code=status,
    )


def _answer(exc: ErrorAnswer, request: Request) -> Response:
    response = error(exc.status, exc.message)
    response.headers.update(exc.headers)
    return response


ENDPOINTS = Endpoints(error=_answer, what="control endpoint")


class ControlCtx(Context):
    """One control request as a handler sees it."""

    def __init__(self, request: Request):
        super().__init__(request)
        self.app: Application = request.app

    def int_param(self, name: str) -> int | None:
        """A query integer, clamped into the store's range; absent or not one: None."""
        value = query_int(self.request.query_params.get(name))
        return None if value is None else max(min(value, INT_MAX), -INT_MAX)

    async def json(self) -> Any:
        return parse_json(await self.request.body())

    async def object(self) -> dict[str, Any]:
        body = await self.json()
        if not isinstance(body, dict):
            raise ErrorAnswer(422, "the body must be a JSON object")
        return body


C = TypeVar("C", bound=ControlCtx)
# A control handler on the context `C` it is given.
ControlHandler = Callable[[C], Awaitable[Answer]]


@overload
def control(status: int = 200) -> Callable[[ControlHandler[ControlCtx]], Endpoint]: ...


@overload
def control(
    status: int = 200, *, context: Callable[[Request], C]
) -> Callable[[ControlHandler[C]], Endpoint]: ...


@overload
def control(
    status: int, context: Callable[[Request], C]
) -> Callable[[ControlHandler[C]], Endpoint]: ...


def control(
    status: int = 200, context: Callable[[Request], ControlCtx] = ControlCtx
) -> Callable[[ControlHandler[Any]], Endpoint]:
    """Wrap a control handler `async def h(ctx) -> data | Response` in the endpoint
    skeleton (interface.Endpoints): a dict or list becomes JSON with `status`, an
    `ErrorAnswer` the control error body, anything else a logged 500. `context` builds
    the ctx (an interface's control routes pass a richer one)."""

    async def build(call: Call) -> ControlCtx:
        return context(call.request)

    return ENDPOINTS.endpoint(build, status)


def flag(body: dict[str, Any]) -> bool:
    """`{"enabled": true|false}` of a switch."""
    enabled = body.get("enabled")
    if not isinstance(enabled, bool):
        raise ErrorAnswer(422, "enabled must be true or false")
    return enabled


@control()
async def index(ctx: ControlCtx) -> dict[str, Any]:
    """This list: every control endpoint, the generic ones and each interface's."""
    return {"endpoints": ctx.app.control_index(), "interfaces": ctx.app.describe()}


@control()
async def health(ctx: ControlCtx) -> dict[str, Any]:
    """{ok: true}"""
    return {"ok": True}


@control()
async def stats(ctx: ControlCtx) -> dict[str, Any]:
    """request counts: {requests: [{interface, method, route, status, count}]}"""
    await ctx.app.quiescent()
    return {"requests": ctx.state.recorder.stats()}


@control()
async def reset_stats(ctx: ControlCtx) -> dict[str, Any]:
    """zero the request counts"""
    await ctx.app.quiescent()
    ctx.state.recorder.reset_stats()
    return {"reset": True}


@control()
async def requests(ctx: ControlCtx) -> dict[str, Any]:
    """request records after SEQ (?after=SEQ&limit=N); callers by id, never a secret"""
    after = max(ctx.int_param("after") or 0, 0)
    limit = min(max(ctx.int_param("limit") or 1000, 1), 10_000)
    recorder = ctx.state.recorder
    await ctx.app.quiescent()
    return {"requests": recorder.records(after, limit), "last_seq": recorder.last_seq}


@control()
async def reset(ctx: ControlCtx) -> dict[str, Any]:
    """every interface back to its seed (data, runtime state, settings), faults cleared"""
    await ctx.app.quiescent()
    ctx.state.reset()
    return {"reset": True}


@control()
async def list_faults(ctx: ControlCtx) -> dict[str, Any]:
    """the pending faults: {faults: [...]}"""
    return {"faults": ctx.state.faults.pending()}


@control(status=201)
async def add_fault(ctx: ControlCtx) -> dict[str, Any]:
    """inject a fault: {interface?, method, route, count, status|delay_ms|delay_response_ms|drop_after_commit, until_released?}"""
    try:
        fault = ctx.state.faults.add(await ctx.json(), ctx.app.owner_name)
    except ValueError as exc:
        raise ErrorAnswer(422, str(exc)) from None
    return fault.as_json()


@control()
async def release_fault(ctx: ControlCtx) -> dict[str, Any]:
    """end the hold of a fault given `until_released`: what it holds goes on at once"""
    fault_id = ctx.request.path_params["fault_id"]
    if not ctx.state.faults.release(fault_id):
        raise ErrorAnswer(404, f"no fault {fault_id} holds requests until released")
    return {"released": fault_id}


@control()
async def clear_faults(ctx: ControlCtx) -> Response:
    """clear every pending fault, and end every hold until released"""
    ctx.state.faults.clear()
    return Response(status_code=204)


routes = [
    Route(PREFIX, index, methods=["GET"]),
    Route(f"{PREFIX}/", index, methods=["GET"]),
    Route(f"{PREFIX}/health", health, methods=["GET"]),
    Route(f"{PREFIX}/stats", stats, methods=["GET"]),
    Route(f"{PREFIX}/stats/reset", reset_stats, methods=["POST"]),
    Route(f"{PREFIX}/requests", requests, methods=["GET"]),
    Route(f"{PREFIX}/reset", reset, methods=["POST"]),
    Route(f"{PREFIX}/faults", list_faults, methods=["GET"]),
    Route(f"{PREFIX}/faults", add_fault, methods=["POST"]),
    Route(f"{PREFIX}/faults", clear_faults, methods=["DELETE"]),
    Route(f"{PREFIX}/faults/{{fault_id:int}}/release", release_fault, methods=["POST"]),
]
