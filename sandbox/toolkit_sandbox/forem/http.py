"""What interface A gives the sandbox's endpoint skeleton (interface.Endpoints): its
authentication, its context and its error body.

`@endpoint(auth=...)` wraps a handler `async def h(ctx) -> data | Response`: it
resolves the `api-key` header, answers 401 where auth is required, and the skeleton
turns `ErrorAnswer` into the API's error body `{"error": ..., "status": ...}` and any
other exception into a JSON 500 (logged) - a handler never leaks a traceback. Faults,
body limits and recording are the sandbox's generic layers (app.py); they answer in
this interface's body through `error` and `throttled`. Rate limits are checked inside
the article writes, where Forem checks them (ratelimit.py).
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Literal

from starlette.convertors import IntegerConvertor, register_url_convertor
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.types import Scope

from toolkit_sandbox import interface
from toolkit_sandbox.forem import ratelimit, text
from toolkit_sandbox.forem.state import ForemState
from toolkit_sandbox.interface import Call, Context, Endpoint, Endpoints, ErrorAnswer, Handler
from toolkit_sandbox.limits import INT_MAX, parse_json, query_int
from toolkit_sandbox.state import SandboxState

NAME = "forem"
MESSAGES = {
    **interface.MESSAGES,
    401: "unauthorized",
    402: "Not enough available credits",
    502: "Bad Gateway",
    503: "Service Unavailable",
    504: "Gateway Timeout",
}

_ROW_ID = re.compile(r"[0-9]{1,18}")


class RowIdConvertor(IntegerConvertor):
    """`{id:rowid}`: an id that fits SQLite's integer; a longer number matches no route
    (404) instead of overflowing in a query."""

    regex = _ROW_ID.pattern


def row_id(text: str) -> int | None:
    """A path segment as a row id: ASCII digits that fit SQLite's integer, else None.
    (`str.isdigit` and `int` also take `²` or Arabic-Indic digits.)"""
    return int(text) if _ROW_ID.fullmatch(text) else None


register_url_convertor("rowid", RowIdConvertor())


def error_response(
    status: int,
    message: str | None = None,
    *,
    headers: dict[str, str] | None = None,
    extra: dict[str, Any] | None = None,
) -> JSONResponse:
    """The API's error body. A wrong method is a 404, as Rails routing answers it."""
    status = interface.routed(status)
    body = {**(extra or {}), "error": message or MESSAGES.get(status, "error"), "status": status}
    return JSONResponse(body, status_code=status, headers=headers)


def error(status: int, message: str | None = None) -> Response:
    """The interface's error body for the generic layers (faults, limits, unknown paths)."""
    return error_response(status, message)


def throttled(retry_after: int) -> Response:
    """The 429 of a rate limit, as `ApplicationController#error_too_many_requests` sends
    it (Forem: app/controllers/application_controller.rb)."""
    return error_response(
        429, ratelimit.message(retry_after), headers={"Retry-After": str(retry_after)}
    )


def answer(exc: ErrorAnswer, request: Request | None = None) -> JSONResponse:
    return error_response(exc.status, exc.message, headers=exc.headers, extra=exc.extra)


ENDPOINTS = Endpoints(error=answer)


def rate_limited(retry_after: int) -> ErrorAnswer:
    return ErrorAnswer(
        429, ratelimit.message(retry_after), headers={"Retry-After": str(retry_after)}
    )


def unprocessable(message: str) -> ErrorAnswer:
    return ErrorAnswer(422, message)


@dataclass
class Caller:
    """The user an `api-key` header belongs to."""

    id: int
    username: str
    name: str
    role: str
    api_key_id: int

    @property
    def is_super_admin(self) -> bool:
        return self.role == "super_admin"


class Ctx(Context):
    """One request as a handler sees it (article and profile URLs use `base`)."""

    def __init__(self, call: Call, caller: Caller | None):
        super().__init__(call.request, call.state)
        self.forem: ForemState = self.state.of(NAME)
        self.caller = caller

    @property
    def user(self) -> Caller:
        assert self.caller is not None  # guaranteed by @endpoint(auth="required")
        return self.caller

    def int_param(self, name: str) -> int | None:
        """A query integer, of any size; absent or not an integer reads as absent. A
        caller passing it to the store checks `fits64` first (or clamps it): a value
        beyond 64 bits matches no row, as Rails' `where(id: huge)` builds `WHERE 1=0`."""
        return query_int(self.params.get(name))

    def page(self, default: int, maximum: int = 1000) -> tuple[int, int]:
        """(limit, offset) from `page` and `per_page`: per_page is clamped into
        1..maximum (a huge one is the maximum, as Forem's `[per_page, 1000].min`), page
        to at least 1 (a huge one is past the last page); values that are not integers
        read as the default."""
        per_page = self.int_param("per_page")
        per_page = default if per_page is None else min(max(per_page, 1), maximum)
        page = max(self.int_param("page") or 1, 1)
        return per_page, min((page - 1) * per_page, INT_MAX)

    async def json(self) -> Any:
        """The request body as JSON (limits.parse_json: malformed, too deep or not finite
        is a 400). The body's size was checked before the handler ran (a 413). Integers
        of any size are kept: a field stored as text takes them as Rails does, and an id
        beyond 64 bits matches nothing (`fits64`), never an overflow."""
        return parse_json(await self.request.body(), int64=False)

    def now(self) -> str:
        return text.stored(text.now())


def _ruby_class(value: Any) -> str:
    """The Ruby class name of a parsed JSON value, as Rails holds it in `params`."""
    if value is None:
        return "NilClass"
    if isinstance(value, bool):
        return "TrueClass" if value else "FalseClass"
    return {str: "String", int: "Integer", float: "Float", list: "Array"}.get(type(value), "Hash")


def require_hash(body: Any, key: str) -> Any:
    """`validate_article_param_is_hash`, the before_action of the article writes, run
    before the 404 and before `params.require`: a 422 naming the Ruby class given (a body
    that is not an object leaves `params[key]` nil; Forem turned parameter wrapping off,
    config/initializers/wrap_parameters.rb). Forem: app/controllers/api/v0/articles_controller.rb."""
    value = body.get(key) if isinstance(body, dict) else None
    if not isinstance(value, dict):
        raise unprocessable(
            f"{key} param must be a JSON object. You provided {key} as a {_ruby_class(value)}"
        )
    return body


def require_object(body: Any, key: str) -> dict[str, Any]:
    """`params.require(key)`: the nested object, or 422 like Rails says it."""
    value = body.get(key) if isinstance(body, dict) else None
    if not isinstance(value, dict) or not value:
        raise unprocessable(f"param is missing or the value is empty: {key}")
    return value


def _lookup(state: SandboxState, key: str | None) -> Caller | None:
    if not key:
        return None
    with state.store.read() as db:
        row = db.execute(
            "SELECT u.id, u.username, u.name, u.role, k.id AS key_id FROM api_keys k "
            "JOIN users u ON u.id = k.user_id WHERE k.secret = ?",
            (key,),
        ).fetchone()
    if row is None:
        return None
    return Caller(row["id"], row["username"], row["name"], row["role"], row["key_id"])


def _api_key(scope: Scope) -> str | None:
    headers: list[tuple[bytes, bytes]] = scope["headers"]
    for name, value in headers:
        if name == b"api-key":
            return value.decode("latin-1")
    return None


def _key_id(caller: Caller | None) -> int | None:
    return caller.api_key_id if caller is not None else None


def _key_of(scope: Scope, state: SandboxState) -> int | None:
    return _key_id(_lookup(state, _api_key(scope)))


# Who called, for the request record: the API key's id (never the key). An endpoint
# notes it as it authenticates; a request answered before (a fault, a 413) is looked up.
caller_of = interface.noted(_key_of)


Auth = Literal["none", "optional", "required"]


def _context(auth: Auth) -> Callable[[Call], Awaitable[Ctx]]:
    async def build(call: Call) -> Ctx:
        caller = None
        if auth != "none":
            caller = _lookup(call.state, call.request.headers.get("api-key"))
            call.note_caller(_key_id(caller))
            if caller is None and auth == "required":
                raise ErrorAnswer(401, headers={"Cache-Control": "no-store"})
        return Ctx(call, caller)

    return build


def _cors(request: Request, response: Response) -> None:
    if request.method == "GET":
        # Endpoints without authentication are CORS enabled.
        response.headers["Access-Control-Allow-Origin"] = "*"


def endpoint(auth: Auth = "none", status: int = 200) -> Callable[[Handler[Ctx]], Endpoint]:
    """Wrap a handler; a returned dict or list becomes a JSON response with `status`."""
    return ENDPOINTS.endpoint(_context(auth), status, finish=_cors if auth == "none" else None)
