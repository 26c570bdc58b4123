"""What interface C gives the sandbox's endpoint skeleton (interface.Endpoints): its
authentication, its context and its error body.

`@endpoint()` wraps a handler `async def h(ctx) -> data | Response`: it binds the
runtime state to the running server, resolves `Authorization: Bearer <key>` (401
without a known key), counts the request against the account's rate limit (429 over
it; `X-RateLimit-Limit` and `X-RateLimit-Remaining` on every authenticated answer),
and the skeleton turns `ErrorAnswer` into the API's error body `{"message", "code",
"errors"}`.
The storage endpoints (upload form, download URL) take `auth=False`: their URLs carry
a signature instead, as the real storage's do, and they are not rate-limited.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.types import Scope

from toolkit_sandbox import interface
from toolkit_sandbox.archive.state import ArchiveState, now
from toolkit_sandbox.interface import Call, Context, Endpoint, Endpoints, ErrorAnswer, Handler
from toolkit_sandbox.limits import parse_json
from toolkit_sandbox.state import SandboxState

NAME = "archive"
# status -> (code, message) of the error body when a handler names neither.
ERRORS = {
    400: ("BAD_REQUEST", "The request is malformed."),
    401: ("UNAUTHENTICATED", "Unauthenticated."),
    402: ("CREDITS_EXCEEDED", "Not enough credits left for these tasks."),
    403: ("FORBIDDEN", "The signature is missing, wrong or expired."),
    404: ("NOT_FOUND", "Not found."),
    405: ("NOT_FOUND", "Not found."),
    409: ("CONFLICT", "The task is not in a state that allows this."),
    413: ("PAYLOAD_TOO_LARGE", "The request body is too large."),
    422: ("INVALID_DATA", "The given data was invalid."),
    429: ("TOO_MANY_REQUESTS", "Too Many Attempts."),
    500: ("INTERNAL_ERROR", "Internal Server Error."),
    502: ("BAD_GATEWAY", "Bad Gateway."),
    503: ("SERVICE_UNAVAILABLE", "Service Unavailable."),
    504: ("GATEWAY_TIMEOUT", "Gateway Timeout."),
}


def error_response(
    status: int,
    message: str | None = None,
    *,
    code: str | None = None,
    errors: dict[str, list[str]] | None = None,
    headers: dict[str, str] | None = None,
) -> JSONResponse:
    """The API's error body. A wrong method inside /v2 is a 404, like an unknown path."""
    status = interface.routed(status)
    default_code, default_message = ERRORS.get(status, ("ERROR", "Error."))
    body = {
        "message": message or default_message,
        "code": code or default_code,
        "errors": errors or {},
    }
    return JSONResponse(body, status_code=status, headers=headers)


def error(status: int, message: str | None = None) -> Response:
    """The interface's `ErrorBody` (faults, 413s and unknown paths use it)."""
    return error_response(status, message)


def throttled(retry_after: int) -> Response:
    return error_response(429, headers={"Retry-After": str(retry_after)})


def answer(exc: ErrorAnswer, request: Request | None = None) -> JSONResponse:
    errors = exc.extra.get("errors")
    return error_response(
        exc.status,
        exc.message,
        code=exc.extra.get("code"),
        errors=errors if isinstance(errors, dict) else None,
        headers=exc.headers,
    )


def invalid(errors: dict[str, list[str]]) -> ErrorAnswer:
    """A 422 naming each field and what is wrong with it."""
    return ErrorAnswer(422, extra={"errors": errors})


def _bearer(scope: Scope) -> str | None:
    for name, value in scope["headers"]:
        if name == b"authorization":
            scheme, _, token = value.decode("latin-1").partition(" ")
            return token.strip() if scheme.lower() == "bearer" and token.strip() else None
    return None


def account_of(state: SandboxState, key: str | None) -> int | None:
    if not key:
        return None
    with state.store.read() as db:
        row = db.execute("SELECT id FROM archive_accounts WHERE api_key = ?", (key,)).fetchone()
    return int(row[0]) if row is not None else None


def _account_called(scope: Scope, state: SandboxState) -> int | None:
    return account_of(state, _bearer(scope))


# Who called, for the request record: the account's id (never the key).
caller_of = interface.noted(_account_called)


class ArchiveCtx(Context):
    """One request as a handler sees it (task links, upload forms and downloads use
    `base`)."""

    def __init__(self, call: Call, account: int | None):
        super().__init__(call.request, call.state)
        self.runtime: ArchiveState = self.state.of(NAME)
        self._account = account

    @property
    def account(self) -> int:
        if self._account is None:  # guaranteed by @endpoint(auth=True)
            raise ErrorAnswer(401)
        return self._account

    async def object(self) -> dict[str, Any]:
        """The body as a JSON object (malformed JSON is a 400, anything else a 422)."""
        body = parse_json(await self.request.body())
        if not isinstance(body, dict):
            raise invalid({"body": ["The body must be a JSON object."]})
        return body


ENDPOINTS = Endpoints(error=answer)


async def _context(call: Call, auth: bool) -> ArchiveCtx:
    runtime: ArchiveState = call.state.of(NAME)
    if runtime.loop is None:
        runtime.bind(asyncio.get_running_loop(), call.state.files(NAME))
    account = None
    if auth:
        account = account_of(call.state, _bearer(call.request.scope))
        call.note_caller(account)
        if account is None:
            raise ErrorAnswer(401)
        call.headers = _take(runtime, account)
    return ArchiveCtx(call, account)


def endpoint(status: int = 200, *, auth: bool = True) -> Callable[[Handler[ArchiveCtx]], Endpoint]:
    """Wrap a handler; a returned dict becomes a JSON response with `status`."""

    async def context(call: Call) -> ArchiveCtx:
        return await _context(call, auth)

    return ENDPOINTS.endpoint(context, status)


def _take(runtime: ArchiveState, account: int) -> dict[str, str]:
    """Count one request of `account`; the rate-limit headers, or a 429 carrying them."""
    settings = runtime.settings
    if not settings.rate_limits:
        return {}
    allowed, remaining, left = runtime.limiter.take(account, settings.rate_limit, now())
    headers = {
        "X-RateLimit-Limit": str(settings.rate_limit),
        "X-RateLimit-Remaining": str(remaining),
    }
    if not allowed:
        raise ErrorAnswer(429, headers={**headers, "Retry-After": str(runtime.retry_after(left))})
    return headers
