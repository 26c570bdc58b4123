"""The HTTP plumbing every interface-A endpoint shares.

`@endpoint(auth=..., limit=...)` wraps a handler `async def h(ctx) -> data | Response`:
it applies injected faults, resolves the `api-key` header, answers 401 where auth is
required, counts rate-limited writes, turns `ApiError` into the API's error body and
any other exception into a JSON 500 (logged) - a handler never leaks a traceback.
"""

from __future__ import annotations

import asyncio
import json
import logging
import math
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from functools import lru_cache, wraps
from typing import Any, Literal

from starlette.convertors import IntegerConvertor, register_url_convertor
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, Response

from toolkit.sandbox import ratelimit, text
from toolkit.sandbox.state import SandboxState

log = logging.getLogger("toolkit.sandbox")

MESSAGES = {
    400: "bad request",
    401: "unauthorized",
    402: "Not enough available credits",
    403: "forbidden",
    404: "not found",
    405: "not found",
    413: "payload too large",
    422: "unprocessable entity",
    500: "Internal Server Error",
    502: "Bad Gateway",
    503: "Service Unavailable",
    504: "Gateway Timeout",
}


# The largest request body read (the API's own limit on a body is 800 KB of Markdown).
MAX_BODY = 4 * 1024 * 1024
# Rails parses JSON with the json gem's default `max_nesting` of 100: deeper is a 400.
MAX_DEPTH = 100
# What SQLite stores as an integer (a signed 64-bit number).
INT_MIN, INT_MAX = -(2**63), 2**63 - 1

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

_CONVERTOR = re.compile(r"\{(\w+):\w+\}")


@lru_cache(maxsize=256)
def template(path: str) -> str:
    """A route's path as the stats show it: `/api/articles/{id:int}` -> `/api/articles/{id}`."""
    return _CONVERTOR.sub(r"{\1}", path)


class ApiError(Exception):
    """An answer with an error status and the API's body `{"error": ..., "status": ...}`."""

    def __init__(
        self,
        status: int,
        message: str | None = None,
        *,
        headers: dict[str, str] | None = None,
        extra: dict[str, Any] | None = None,
    ):
        self.status = status
        self.message = message or MESSAGES.get(status, "error")
        self.headers = headers or {}
        self.extra = extra or {}
        super().__init__(self.message)

    def response(self) -> JSONResponse:
        return error_response(self.status, self.message, headers=self.headers, extra=self.extra)


def error_response(
    status: int,
    message: str | None = None,
    *,
    headers: dict[str, str] | None = None,
    extra: dict[str, Any] | None = None,
) -> JSONResponse:
    body = {**(extra or {}), "error": message or MESSAGES.get(status, "error"), "status": status}
    return JSONResponse(body, status_code=status, headers=headers)


def rate_limited(retry_after: int) -> ApiError:
    return ApiError(
        429, ratelimit.message(retry_after), headers={"Retry-After": str(retry_after)}
    )


def unprocessable(message: str) -> ApiError:
    return ApiError(422, message)


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


class Ctx:
    """One request as a handler sees it."""

    def __init__(self, request: Request, state: SandboxState, caller: Caller | None):
        self.request = request
        self.state = state
        self.store = state.store
        self.caller = caller
        # Article and profile URLs use the origin the client called.
        self.base = str(request.base_url).rstrip("/")

    @property
    def params(self):
        return self.request.query_params

    def path_param(self, name: str) -> Any:
        return self.request.path_params[name]

    @property
    def user(self) -> Caller:
        assert self.caller is not None  # guaranteed by @endpoint(auth="required")
        return self.caller

    def int_param(self, name: str) -> int | None:
        """A query integer; absent or not an integer reads as absent."""
        raw = self.params.get(name)
        if raw is None:
            return None
        try:
            value = int(raw.strip())
        except ValueError:
            return None
        # Beyond any id or page the store can hold: read as absent, never an overflow.
        return value if abs(value) < 10**15 else None

    def page(self, default: int, maximum: int = 1000) -> tuple[int, int]:
        """(limit, offset) from `page` and `per_page`: per_page is clamped into
        1..maximum, page to at least 1; values that are not integers read as the default."""
        per_page = self.int_param("per_page")
        per_page = default if per_page is None else min(max(per_page, 1), maximum)
        page = max(self.int_param("page") or 1, 1)
        return per_page, (page - 1) * per_page

    async def json(self) -> Any:
        """The request body as JSON; an empty body is `{}`. A malformed body, one nested
        deeper than Rails accepts or holding NaN or an infinite number is a 400; one over
        `MAX_BODY` a 413; an integer that SQLite cannot store a 422."""
        raw = await self._body()
        if not raw.strip():
            return {}
        try:
            value = json.loads(raw, parse_constant=_no_constant)
        except (ValueError, UnicodeDecodeError, RecursionError):
            raise ApiError(400) from None
        _check_values(value)
        return value

    async def _body(self) -> bytes:
        length = self.request.headers.get("content-length", "")
        if length.isascii() and length.isdigit() and int(length) > MAX_BODY:
            raise ApiError(413)
        chunks, size = [], 0
        try:
            async for chunk in self.request.stream():
                size += len(chunk)
                if size > MAX_BODY:
                    raise ApiError(413)
                chunks.append(chunk)
        except ClientDisconnect:  # gone (or cut off by the server's body timeout)
            raise ApiError(400) from None
        return b"".join(chunks)

    def now(self) -> str:
        return text.stored(text.now())


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _check_values(value: Any) -> None:
    """Walk a parsed body (without recursion): nesting within `MAX_DEPTH`, numbers finite,
    integers within SQLite's range (422 naming the field)."""
    stack: list[tuple[Any, str, int]] = [(value, "", 1)]
    while stack:
        item, where, depth = stack.pop()
        if isinstance(item, dict | list):
            if depth > MAX_DEPTH:
                raise ApiError(400)
            pairs = item.items() if isinstance(item, dict) else enumerate(item)
            for key, child in pairs:
                name = f"{where}.{key}" if isinstance(item, dict) else f"{where}[{key}]"
                stack.append((child, name.lstrip("."), depth + 1))
        elif isinstance(item, float) and not math.isfinite(item):
            raise ApiError(400)
        elif isinstance(item, int) and not INT_MIN <= item <= INT_MAX:
            raise unprocessable(f"{where or 'the body'} is out of range")


def require_object(body: Any, key: str) -> dict[str, Any]:
    """`params.require(key)`: the nested object, or 422 like Rails says it."""
    value = body.get(key) if isinstance(body, dict) else None
    if not isinstance(value, dict) or not value:
        raise unprocessable(f"param is missing or the value is empty: {key}")
    return value


def _caller(state: SandboxState, key: str | None) -> Caller | None:
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


Handler = Callable[[Ctx], Awaitable[Any]]


def endpoint(
    auth: Literal["none", "optional", "required"] = "none",
    limit: Literal["create", "update"] | None = None,
    status: int = 200,
) -> Callable[[Handler], Callable[[Request], Awaitable[Response]]]:
    """Wrap a handler; a returned dict or list becomes a JSON response with `status`."""

    def decorate(handler: Handler) -> Callable[[Request], Awaitable[Response]]:
        @wraps(handler)
        async def run(request: Request) -> Response:
            state: SandboxState = request.app.state.sandbox
            info = request.scope.setdefault("sandbox", {})
            route = template(request.scope["route"].path)
            info["route"] = route
            try:
                fault = state.faults.take(request.method, route, request.url.path)
                if fault is not None:
                    if fault.delay_ms:
                        await asyncio.sleep(fault.delay_ms / 1000)
                    elif fault.status:
                        if fault.status == 429:
                            raise rate_limited(fault.retry_after)
                        raise ApiError(fault.status)
                    elif fault.drop_after_commit:
                        info["drop"] = True
                caller = None
                if auth != "none":
                    caller = _caller(state, request.headers.get("api-key"))
                    if caller is not None:
                        info["api_key_id"] = caller.api_key_id
                    elif auth == "required":
                        raise ApiError(401, headers={"Cache-Control": "no-store"})
                if limit is not None and caller is not None:
                    retry_after = state.limiter.hit(limit, caller.api_key_id)
                    if retry_after is not None:
                        raise rate_limited(retry_after)
                result = await handler(Ctx(request, state, caller))
            except ApiError as exc:
                return exc.response()
            except Exception:  # a bug: logged, and still answered in the API's shape
                log.exception("sandbox handler failed: %s %s", request.method, route)
                return error_response(500)
            if isinstance(result, Response):
                response = result
            else:
                response = JSONResponse(result, status_code=status)
            if auth == "none" and request.method == "GET":
                # Endpoints without authentication are CORS enabled.
                response.headers["Access-Control-Allow-Origin"] = "*"
            return response

        return run

    return decorate
