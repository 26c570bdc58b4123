"""The seam of the sandbox: what one emulated interface provides.

The sandbox is one ASGI application composed of interfaces (`app.default_interfaces()`):
the publishing API (A, `forem/`) today, the archive tasks (C), licensing (D) and the log
stream (E) next. Each lives in its own folder under `toolkit/sandbox/` and exposes one
`Interface`; adding one is that folder plus one line in `default_interfaces()`.

What an interface declares, the application does for it, once for all of them:

* ownership: a request belongs to the interface with the longest prefix matching its path
  (`prefixes`); `excludes` gives back parts of a prefix (Forem owns `/api` but not
  `/api/v1`, which the log service will own). A path nobody owns gets a neutral 404;
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
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute
from starlette.types import Scope

if TYPE_CHECKING:
    from toolkit.sandbox.state import SandboxState

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


class Runtime(Protocol):
    """An interface's runtime state in a running sandbox (`Interface.state`)."""

    def reset(self) -> None:
        """Back to the start, with the rest of the sandbox (POST /__sandbox/reset)."""


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
