"""What interface E gives the sandbox's endpoint skeleton (interface.Endpoints): Basic
auth and text errors.

Parseable answers errors as `text/plain` messages, and checks credentials on each route:
no usable `Authorization: Basic` header is a 401 (`No authentication method supplied`),
a wrong user or password a 403. `@endpoint` does both for a handler
`async def h(request) -> Response`; the skeleton turns `ErrorAnswer` raised inside into
the text answer.
The sandbox's one user is Parseable's default (`admin` / `admin`, what `P_USERNAME` and
`P_PASSWORD` default to).
"""

from __future__ import annotations

import base64
import binascii
import hmac
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from starlette.datastructures import Headers
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.types import Scope

from toolkit_sandbox.interface import Call, Endpoints, ErrorAnswer

if TYPE_CHECKING:
    from toolkit_sandbox.state import SandboxState

NAME = "logs"
USERNAME = "admin"
PASSWORD = "admin"
MAX_BODY = 10 * 1024 * 1024  # Parseable's default limit of an ingest request

NO_CREDENTIALS = "No authentication method supplied"
FORBIDDEN = (
    "You don't have permission to access this resource. Please contact your "
    "administrator for assistance."
)
MESSAGES = {
    400: "Bad Request",
    401: NO_CREDENTIALS,
    403: FORBIDDEN,
    404: "",  # actix's own 404 has no body
    405: "",
    413: "A payload reached size limit.",
    429: "Too Many Requests",
    500: "Internal Server Error",
    502: "Bad Gateway",
    503: "Service Unavailable",
    504: "Gateway Timeout",
}

Handler = Callable[[Request], Awaitable[Response]]


def error(status: int, message: str | None = None) -> Response:
    """The interface's error answer: the message as `text/plain` (a wrong method on a
    known path is actix's 405 with no body, an unknown path its 404 with none)."""
    text = message if message is not None else MESSAGES.get(status, "")
    return PlainTextResponse(text, status_code=status)


def credentials(headers: Headers) -> tuple[str, str] | None:
    """The user and password of an `Authorization: Basic` header, or None."""
    scheme, _, token = headers.get("authorization", "").strip().partition(" ")
    if scheme.lower() != "basic" or not token.strip():
        return None
    try:
        decoded = base64.b64decode(token.strip(), validate=True).decode("utf-8")
    except (binascii.Error, ValueError):
        return None
    user, _, password = decoded.partition(":")
    return user.strip(), password.strip()


def authorized(given: tuple[str, str]) -> bool:
    user, password = given
    return hmac.compare_digest(user.encode(), USERNAME.encode()) & hmac.compare_digest(
        password.encode(), PASSWORD.encode()
    )


def caller_of(scope: Scope, state: SandboxState) -> str | None:
    """Who called, as a request record names them: the user when the credentials are
    right (never the password)."""
    given = credentials(Headers(scope=scope))
    return given[0] if given is not None and authorized(given) else None


def _answer(exc: ErrorAnswer, request: Request) -> Response:
    return error(exc.status, exc.message)


ENDPOINTS = Endpoints(error=_answer)


async def _authorized(call: Call) -> Request:
    """The request itself, once its credentials are right (a 401 or a 403 otherwise)."""
    given = credentials(call.request.headers)
    if given is None:
        raise ErrorAnswer(401)
    if not authorized(given):
        raise ErrorAnswer(403)
    return call.request


def endpoint(handler: Handler) -> Handler:
    """Check the credentials, then run the handler; `ErrorAnswer` becomes its text answer."""
    return ENDPOINTS.endpoint(_authorized)(handler)
