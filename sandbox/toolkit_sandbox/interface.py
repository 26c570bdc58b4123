"""The seam of the sandbox: what one emulated interface provides.

The sandbox is one ASGI application composed of interfaces (`app.default_interfaces()`):
the publishing API (A, `forem/`), the archive tasks (C, `archive/`), licensing (D,
`licensing/`) and the log stream (E, `logs/`). Each lives in its own folder under
`sandbox/toolkit_sandbox/` and exposes one `Interface`; adding one is that folder plus one line
in `default_interfaces()`.

What an interface declares, the application does for it, once for all of them:

* ownership: a request belongs to the interface with the longest prefix matching its path
  (`prefixes`); `excludes` gives back parts of a prefix (Forem owns `/api` but not
  `/api/v1`, which the log service owns). A path nobody owns gets a neutral 404;
* recording and stats, keyed by the interface's name;
* injected faults on its `fault_points` (every route by default), answered with its own
  error body (`error`, and `throttled` for a 429);
* body size limits (`max_body`) before its handlers run, answered with its error body;
* its `guard` (Forem's User-Agent rule) before anything else;
* its tables (`ddl`, `tables`, `seed`) created, seeded and reset by the store;
* its control routes mounted under `/__sandbox/<name>/`, behind the control API's guard;
* its runtime state (`state`, e.g. Forem's rate-limit counters), built once per running
  sandbox, reset with the rest.

Inside its prefixes, an unknown path or a wrong method gets the interface's own 404
(`error(404, None)`), the way Rails routing answers both.

The endpoints themselves share one skeleton (`Endpoints`, also the control API's): a
handler `async def h(ctx) -> data | Response` runs after the interface's context hook
(its authentication: an `ErrorAnswer` there refuses the request; the ctx it builds
derives from `Context`), its data becomes the
interface's JSON (`render`), an `ErrorAnswer` its error body (`error`) and any other
exception a logged 500 in that body; headers the context hook adds (`Call.headers`) go
on every answer. So an interface's `http.py` gives only its authentication, its context
and its error body.
"""

from __future__ import annotations

import logging
import re
import sqlite3
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from functools import cached_property, wraps
from typing import TYPE_CHECKING, Any, TypeVar

from starlette.datastructures import QueryParams
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute
from starlette.types import Scope

from toolkit_sandbox.protocols import Runtime

if TYPE_CHECKING:
    from toolkit_sandbox.state import SandboxState
    from toolkit_sandbox.store import Store

# The body of an interface's error answer for a status and an optional message.
ErrorBody = Callable[[int, "str | None"], Response]
# Who is calling, as a request record names them (an id, never a secret), or None.
CallerOf = Callable[[Scope, "SandboxState"], "int | str | None"]
# A refusal before anything else runs (Forem's edge refusing a User-Agent), or None.
Guard = Callable[[Scope, "SandboxState"], "Response | None"]
# What a wrapped handler gives back: JSON data (an object or an array) or a response.
Answer = dict[str, Any] | list[Any] | Response
# A route's endpoint as starlette calls it: what the handler decorators return.
Endpoint = Callable[[Request], Awaitable[Response]]


log = logging.getLogger("toolkit_sandbox")

MAX_BODY = 4 * 1024 * 1024  # the default request body limit, bytes
_NAME = re.compile(r"[a-z][a-z0-9-]{0,30}")


class ErrorAnswer(Exception):
    """Stop handling a request and answer this error status, in the body of the interface
    (or of the control API) that is answering. `extra` adds fields to a JSON body."""

    def __init__(
        self,
        status: int,
        message: str | None = None,
        *,
        headers: dict[str, str] | None = None,
        extra: dict[str, Any] | None = None,
    ):
        self.status = status
        self.message = message
        self.headers = headers or {}
        self.extra = extra or {}
        super().__init__(message or str(status))


@dataclass(frozen=True)
class Interface:
    """One emulated interface. Only `name`, `prefixes`, `routes` and `error` are required."""

    name: str  # lower-case, also its control prefix: /__sandbox/<name>/
    prefixes: tuple[str, ...]  # the paths it owns, e.g. ("/api", "/images")
    routes: Sequence[BaseRoute]  # its API routes, with their full paths
    error: ErrorBody  # its error body for any status
    excludes: tuple[str, ...] = ()  # parts of its prefixes it leaves to others
    # Its 429 for a given Retry-After (seconds); default: error(429) plus the header.
    throttled: Callable[[int], Response] | None = None
    # Which routes (templates as the stats show them) take injected faults; None: all.
    fault_points: tuple[str, ...] | None = None
    caller: CallerOf | None = None  # its auth, as request records name the caller
    guard: Guard | None = None
    max_body: int = MAX_BODY
    # The status its error body is given for a known path asked with a method it does not
    # take: 404 (as Rails routing answers), or 405 where the real service answers that.
    wrong_method: int = 404
    # Routes (templates) whose handler reads the request body itself, as it arrives (an
    # upload of any size, streamed to disk): the application does not read it first, so
    # `max_body` does not apply there and a delay fault holds without watching the client.
    streamed: tuple[str, ...] = ()
    # Its control routes, paths relative to /__sandbox/<name> (e.g. "/accounts"); each
    # endpoint's docstring's first line describes it in the control index.
    control_routes: Sequence[BaseRoute] = ()
    # Also serve the control routes at /__sandbox/<path> (interface A's paths predate the
    # per-interface prefix; only one interface may do so).
    control_aliases: bool = False
    # CREATE TABLE IF NOT EXISTS ...; a new interface prefixes its table names with its
    # own name (interface A's predate that rule); two interfaces never share a table.
    ddl: str = ""
    tables: tuple[str, ...] = ()  # its data tables, children first (a reset empties them)
    schema_version: str = "1"  # bump when its tables change: old files are refused
    # Fill its tables; `content` False: accounts only (`--no-seed`).
    seed: Callable[[sqlite3.Connection, bool], None] | None = None
    # Its runtime state for a running sandbox, from the rate-limit window in seconds;
    # an object with a `reset()` method, kept in SandboxState.interfaces[name].
    state: Callable[[float], Runtime] | None = None

    def __post_init__(self) -> None:
        if not _NAME.fullmatch(self.name):
            raise ValueError(f"interface name {self.name!r}: lower-case letters, digits, -")
        for prefix in (*self.prefixes, *self.excludes):
            if not prefix.startswith("/") or prefix.endswith("/") or prefix.startswith("/__"):
                raise ValueError(f"interface {self.name}: bad prefix {prefix!r}")
        if not self.prefixes:
            raise ValueError(f"interface {self.name}: no prefix")

    def throttle(self, retry_after: int) -> Response:
        """Its 429 answer with `Retry-After`."""
        if self.throttled is not None:
            return self.throttled(retry_after)
        response = self.error(429, None)
        response.headers["Retry-After"] = str(retry_after)
        return response

    def takes_faults(self, route: str) -> bool:
        return self.fault_points is None or route in self.fault_points


def under(path: str, prefix: str) -> bool:
    """`path` is `prefix` or below it, on a segment boundary (`/apix` is not under `/api`)."""
    return path == prefix or path.startswith(prefix + "/")


# --- the endpoint skeleton ------------------------------------------------------------

# The messages of a JSON `{"error", "status"}` body (the control API's, Forem's) when the
# handler gives none; an interface adds its own statuses to them.
MESSAGES = {
    400: "bad request",
    403: "forbidden",
    404: "not found",
    405: "not found",
    413: "payload too large",
    422: "unprocessable entity",
    500: "Internal Server Error",
}


def routed(status: int) -> int:
    """The status an error body carries: a wrong method is a 404 everywhere in the
    sandbox, as Rails routing (and the sandbox's routers) answer it."""
    return 404 if status == 405 else status


class Call:
    """One request on its way through `Endpoints`: what the context hook is given."""

    def __init__(self, request: Request):
        self.request = request
        self.state: SandboxState = request.app.state.sandbox
        # Added to whatever this request is answered, an error included (rate-limit
        # headers); the context hook sets them once it knows them.
        self.headers: dict[str, str] = {}

    def note_caller(self, caller: int | str | None) -> None:
        """Name the caller (an id, never a secret) for the request record (`noted`)."""
        self.request.scope.setdefault("sandbox", {})["caller"] = caller


class Context:
    """What every handler's context has; an interface's context class derives from it
    and adds what its handlers need (its caller, its runtime state, its own readers)."""

    def __init__(self, request: Request, state: SandboxState | None = None):
        self.request = request
        self.state: SandboxState = state if state is not None else request.app.state.sandbox
        self.store: Store = self.state.store

    @cached_property
    def base(self) -> str:
        """The origin the client called: URLs in answers use it."""
        return str(self.request.base_url).rstrip("/")

    @property
    def params(self) -> QueryParams:
        return self.request.query_params

    def path_param(self, name: str) -> Any:
        return self.request.path_params[name]


def noted(lookup: CallerOf) -> CallerOf:
    """An interface's `caller`: the one its endpoint noted as it authenticated
    (`Call.note_caller`), else `lookup`'s (a request answered before an endpoint ran:
    a fault, a 413, an unknown path)."""

    def caller(scope: Scope, state: SandboxState) -> int | str | None:
        info: dict[str, Any] = scope.get("sandbox", {})
        if "caller" in info:
            found: int | str | None = info["caller"]
            return found
        return lookup(scope, state)

    return caller


def json_answer(data: Answer, status: int, request: Request) -> Response:
    """The default `render`: a handler's data as JSON with the endpoint's status."""
    return JSONResponse(data, status_code=status)


C = TypeVar("C")
# A handler on the context `C` its context hook builds.
Handler = Callable[[C], Awaitable[Answer]]
# The context hook: authenticates the call (an `ErrorAnswer` refuses it) and builds the
# handler's context.
ContextOf = Callable[[Call], Awaitable[C]]


@dataclass(frozen=True)
class Endpoints:
    """The skeleton every endpoint of one interface (or of the control API) runs in.

    `error` is the interface's error body for an `ErrorAnswer` (of its context hook or its
    handler; a handler that fails otherwise is logged and answered `ErrorAnswer(500)`);
    `render` turns a handler's data into its answer (JSON by default). `endpoint(context,
    status)` wraps a handler; `finish` may add to its successful answers (Forem's CORS)."""

    error: Callable[[ErrorAnswer, Request], Response]
    render: Callable[[Answer, int, Request], Response] = json_answer
    what: str = "handler"  # named in the log line of a handler that fails

    def endpoint(
        self,
        context: ContextOf[C],
        status: int = 200,
        *,
        finish: Callable[[Request, Response], None] | None = None,
    ) -> Callable[[Handler[C]], Endpoint]:
        def decorate(handler: Handler[C]) -> Endpoint:
            @wraps(handler)
            async def run(request: Request) -> Response:
                call = Call(request)
                try:
                    result = await handler(await context(call))
                except ErrorAnswer as exc:
                    response = self.error(exc, request)
                except Exception:  # a bug: logged, and still answered in the body's shape
                    log.exception(
                        "sandbox %s failed: %s %s", self.what, request.method, request.url.path
                    )
                    response = self.error(ErrorAnswer(500), request)
                else:
                    response = (
                        result
                        if isinstance(result, Response)
                        else self.render(result, status, request)
                    )
                    if finish is not None:
                        finish(request, response)
                response.headers.update(call.headers)
                return response

            return run

        return decorate
