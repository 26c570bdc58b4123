"""What interface D gives the sandbox's endpoint skeleton (interface.Endpoints): Google's
error body and JSON, OAuth bearer tokens, the query parameters Google's front end takes,
and the outage switch.

`@endpoint()` wraps a handler `async def h(ctx) -> data | Response`: it answers an
outage first (the control API's `outage`), then authenticates the bearer token (401
without one or with one the sandbox does not know, 403 without the licence scope),
checks the query against the parameters the method takes (400 for an unknown one or a
bad value, or a `fields=` selection the answer cannot give), applies `fields=` to the
answer, and the skeleton turns `ErrorAnswer` into Google's error body
`{"error": {"code", "message", "errors": [...], "status"}}` and any other exception into
a logged 500 in the same shape. Faults, body limits and recording are the sandbox's
generic layers (app.py); they answer in this body through `error`. A path or a method
the API does not have is Google's HTML 404 page instead (`unknown_path`), and an
application the caller does not own, or that does not exist, the same 403.
"""

from __future__ import annotations

import asyncio
import html
import json
import sqlite3
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from functools import wraps
from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.types import Scope

from toolkit_sandbox import interface
from toolkit_sandbox.interface import Answer, Call, Endpoint, Endpoints, ErrorAnswer, Handler
from toolkit_sandbox.licensing import fields
from toolkit_sandbox.licensing.seed import SCOPE
from toolkit_sandbox.state import SandboxState

NAME = "licensing"
REALM = 'Bearer realm="https://accounts.google.com/"'
SEE = (
    "Expected OAuth 2 access token, login cookie or other valid authentication "
    "credential. See https://developers.google.com/identity/sign-in/web/devconsole-project."
)

# Google's canonical status names and default messages, by HTTP status.
STATUS = {
    400: ("INVALID_ARGUMENT", "Request contains an invalid argument.", "badRequest"),
    401: ("UNAUTHENTICATED", f"Request had invalid authentication credentials. {SEE}", "authError"),
    403: ("PERMISSION_DENIED", "The caller does not have permission", "forbidden"),
    404: ("NOT_FOUND", "Requested entity was not found.", "notFound"),
    405: ("NOT_FOUND", "Requested entity was not found.", "notFound"),
    409: ("ABORTED", "The operation was aborted.", "aborted"),
    413: ("INVALID_ARGUMENT", "Request payload size exceeds the limit.", "badRequest"),
    429: (
        "RESOURCE_EXHAUSTED",
        "Resource has been exhausted (e.g. check quota).",
        "rateLimitExceeded",
    ),
    500: ("INTERNAL", "Internal error encountered.", "backendError"),
    501: (
        "UNIMPLEMENTED",
        "Operation is not implemented, or supported, or enabled.",
        "notImplemented",
    ),
    502: ("UNAVAILABLE", "The service is currently unavailable.", "backendError"),
    503: ("UNAVAILABLE", "The service is currently unavailable.", "backendError"),
    504: ("DEADLINE_EXCEEDED", "The request timed out.", "backendError"),
}

# Query parameters every Google API method takes (the discovery document's `parameters`).
SYSTEM_PARAMETERS = frozenset(
    {
        "access_token",
        "alt",
        "callback",
        "fields",
        "key",
        "oauth_token",
        "prettyPrint",
        "quotaUser",
        "upload_protocol",
        "uploadType",
        "$.xgafv",
    }
)


# A method parameter's names: the discovery document's, then the proto field's and its
# JSON name (`ccc.hosted.marketplace.v2.LicenseNotificationListRequest`).
ALIASES = {
    "max-results": ("max-results", "max_results", "maxResults"),
    "start-token": ("start-token", "start_token", "startToken"),
}


def error_response(
    status: int,
    message: str | None = None,
    *,
    headers: dict[str, str] | None = None,
    extra: dict[str, Any] | None = None,
    pretty: bool = True,
) -> Response:
    """Google's error body. `extra` may give `reason`, `detail` (the message of the
    `errors` item), `location` and `locationType`. A wrong method is a 404."""
    status = interface.routed(status)
    name, default, reason = STATUS.get(status, ("UNKNOWN", "Unknown error.", "unknown"))
    extra = extra or {}
    text = message or default
    item: dict[str, Any] = {
        "message": extra.get("detail", text),
        "domain": "global",
        "reason": extra.get("reason", reason),
    }
    for key in ("location", "locationType"):
        if key in extra:
            item[key] = extra[key]
    body: dict[str, Any] = {
        "error": {"code": status, "message": text, "errors": [item], "status": name}
    }
    if "details" in extra:
        body["error"]["details"] = extra["details"]
    return google_json(body, status, headers=headers, pretty=pretty)


SERVICE = "appsmarket.googleapis.com"
PACKAGE = "ccc.hosted.marketplace.v2"


def error_info(reason: str, method: str | None) -> list[dict[str, Any]]:
    """The `details` Google's front end adds to an authentication error: one
    `google.rpc.ErrorInfo` naming the reason, the service and the method called."""
    metadata = {"service": SERVICE}
    if method is not None:
        metadata["method"] = f"{PACKAGE}.{method}"
    return [
        {
            "@type": "type.googleapis.com/google.rpc.ErrorInfo",
            "reason": reason,
            "domain": "googleapis.com",
            "metadata": metadata,
        }
    ]


def google_json(
    data: Any, status: int = 200, *, headers: dict[str, str] | None = None, pretty: bool = True
) -> Response:
    """JSON as Google's front end sends it: indented unless `prettyPrint=false`."""
    text = json.dumps(data, indent=2 if pretty else None, ensure_ascii=False)
    return Response(
        text + ("\n" if pretty else ""),
        status_code=status,
        headers=headers,
        media_type="application/json; charset=UTF-8",
    )


def error(status: int, message: str | None = None) -> Response:
    """The interface's error body for the generic layers (faults, limits, unknown paths)."""
    return error_response(status, message)


NOT_FOUND_PAGE = """<!DOCTYPE html>
<html lang=en>
  <meta charset=utf-8>
  <title>Error 404 (Not Found)!!1</title>
  <p><b>404.</b> <ins>That\u2019s an error.</ins>
  <p>The requested URL <code>{path}</code> was not found on this server.  <ins>That\u2019s all we know.</ins>
"""


async def unknown_path(request: Request) -> Response:
    """A path (or a method) no method of the API has: Google's front end answers with its
    HTML 404 page, before any credential is looked at, not with the JSON error body."""
    page = NOT_FOUND_PAGE.format(path=html.escape(request.url.path[:2000]))
    return Response(page, status_code=404, media_type="text/html; charset=UTF-8")


def bad_request(message: str) -> ErrorAnswer:
    return ErrorAnswer(400, message, extra={"reason": "invalid"})


def not_found() -> ErrorAnswer:
    return ErrorAnswer(404)


@dataclass
class Token:
    """A bearer token the sandbox issued (never its secret: the label names it)."""

    id: int
    label: str
    owner: str
    scopes: frozenset[str]
    expired: bool


@dataclass
class LicensingState:
    """Runtime state: the outage switch and the misrouting switch. `status` answers every
    request with that error; `delay_ms` holds every request that long first (a slow
    service); `misroute` rewrites the ids of every licence answer (a string replaces the
    field, None leaves it out), as a misrouting proxy or a shared cache would."""

    status: int | None = None
    delay_ms: int = 0
    misroute: dict[str, str | None] = field(default_factory=dict)

    @classmethod
    def create(cls, rate_window: float) -> LicensingState:
        return cls()

    def reset(self) -> None:
        self.status = None
        self.delay_ms = 0
        self.misroute = {}

    def misrouted(self, record: dict[str, Any]) -> dict[str, Any]:
        """A licence record with the misrouting switch's ids in place of its own."""
        for key, value in self.misroute.items():
            if value is None:
                record.pop(key, None)
            elif key in record:
                record[key] = value
        return record

    def as_json(self) -> dict[str, Any]:
        return {"status": self.status, "delay_ms": self.delay_ms}


def _bearer(request: Request) -> tuple[str | None, bool]:
    """(the token presented, whether a credential was presented at all). A malformed
    `Authorization` header is a credential that matches no token."""
    header = request.headers.get("authorization")
    if header is not None:
        scheme, _, value = header.strip().partition(" ")
        if scheme.lower() == "bearer" and value.strip():
            return value.strip(), True
        return None, True
    for name in ("access_token", "oauth_token"):  # Google still takes these
        given = request.query_params.get(name)
        if given:
            return given, True
    return None, False


def _lookup(state: SandboxState, secret: str | None) -> Token | None:
    if not secret:
        return None
    with state.store.read() as db:
        row = db.execute(
            "SELECT id, label, owner, scopes, expired FROM licensing_tokens WHERE secret = ?",
            (secret,),
        ).fetchone()
    if row is None:
        return None
    return Token(
        row["id"],
        row["label"],
        row["owner"],
        frozenset(row["scopes"].split()),
        bool(row["expired"]),
    )


def authenticate(call: Call, method: str | None = None) -> Token:
    """The caller's token, or the 401 / 403 Google answers (`method`: the proto method
    the error's `ErrorInfo` names)."""
    secret, presented = _bearer(call.request)
    token = _lookup(call.state, secret)
    if token is not None:
        call.note_caller(token.label)
    if not presented:
        raise ErrorAnswer(
            401,
            f"Request is missing required authentication credential. {SEE}",
            headers={"WWW-Authenticate": REALM},
            extra={
                "reason": "required",
                "detail": "Login Required.",
                "location": "Authorization",
                "locationType": "header",
                "details": error_info("CREDENTIALS_MISSING", method),
            },
        )
    if token is None or token.expired:
        raise ErrorAnswer(
            401,
            headers={"WWW-Authenticate": f'{REALM}, error="invalid_token"'},
            extra={
                "detail": "Invalid Credentials",
                "location": "Authorization",
                "locationType": "header",
                **(
                    {"details": error_info("ACCESS_TOKEN_EXPIRED", method)}
                    if token is not None
                    else {}
                ),
            },
        )
    if SCOPE not in token.scopes:
        raise ErrorAnswer(
            403,
            "Request had insufficient authentication scopes.",
            headers={"WWW-Authenticate": f'{REALM}, error="insufficient_scope", scope="{SCOPE}"'},
            # Google adds an ErrorInfo (ACCESS_TOKEN_SCOPE_INSUFFICIENT) here too; it is
            # left out so that Google's client library reports this 403's `errors` item
            # (its `error_details`), as the tests of that library pin it (README).
            extra={"reason": "insufficientPermissions", "detail": "Insufficient Permission"},
        )
    return token


def _label_of(scope: Scope, state: SandboxState) -> str | None:
    secret, _ = _bearer(Request(scope))
    token = _lookup(state, secret)
    return token.label if token is not None else None


# Who called, for the request record: the token's label (never the token).
caller_of = interface.noted(_label_of)


class LicensingCtx(interface.Context):
    """One request as a handler sees it."""

    def __init__(self, call: Call, token: Token | None, selection: fields.Tree | None):
        super().__init__(call.request, call.state)
        self.token = token
        self.licensing: LicensingState = self.state.of(NAME)
        self.selection = selection  # what `fields=` selects of the answer (None: all)

    def application(self, application_id: str) -> sqlite3.Row:
        """The application the caller asks about: 403 when the caller's developer does not
        own it, and the same 403 when there is no such application (Google does not tell a
        caller which applications exist)."""
        with self.store.read() as db:
            row: sqlite3.Row | None = db.execute(
                "SELECT * FROM licensing_applications WHERE id = ?", (application_id,)
            ).fetchone()
        if row is None or (self.token is not None and row["owner"] != self.token.owner):
            raise ErrorAnswer(
                403, "Not authorized to access the application ID", extra={"reason": "forbidden"}
            )
        return row

    def param(self, name: str) -> str | None:
        """A query parameter of the method by any name Google's front end binds to its
        field: the discovery document's (`max-results`), the proto field's (`max_results`)
        or its JSON name (`maxResults`)."""
        for alias in ALIASES.get(name, (name,)):
            value = self.params.get(alias)
            if value is not None:
                return value
        return None

    def uint(self, name: str, field_name: str, *, bits: int = 32) -> int | None:
        """A query integer as Google binds it to an unsigned field (`TYPE_UINT32`,
        `TYPE_UINT64`), or None when absent; anything else is the 400 Google sends."""
        raw = self.param(name)
        if raw is None:
            return None
        kind = f"TYPE_UINT{bits}"
        text = raw.strip()
        digits = text[1:] if text[:1] == "+" else text
        value = int(digits) if digits.isascii() and digits.isdigit() and len(digits) <= 20 else None
        if value is None or not 0 <= value < 2**bits:
            raise bad_request(f"Invalid value at '{field_name}' ({kind}), \"{raw[:100]}\"")
        return value


def _check_query(request: Request, allowed: Collection[str]) -> None:
    """Google's front end binds each query parameter to a field of the method's request
    (by the discovery document's name, the field's proto name or its JSON name); a name
    it cannot bind is a 400, and so is `alt` other than json."""
    names = {alias for name in allowed for alias in ALIASES.get(name, (name,))}
    for name in request.query_params:
        if name not in names and name not in SYSTEM_PARAMETERS:
            raise bad_request(
                f'Invalid JSON payload received. Unknown name "{name[:100]}": Cannot bind '
                f"query parameter. Field '{name[:100]}' could not be found in request message."
            )
    alt = request.query_params.get("alt", "json")
    if alt != "json":
        raise bad_request(
            f"Invalid value at 'alt' (type.googleapis.com/"
            f'google.api.SystemParameter.Alt), "{alt[:100]}"'
        )


def _pretty(request: Request) -> bool:
    return request.query_params.get("prettyPrint", "true").lower() != "false"


def _selection(request: Request, schema: fields.Schema | None) -> fields.Tree | None:
    """What `fields=` selects of the method's answer (None: all of it), or Google's 400."""
    selector = request.query_params.get("fields", "")
    if schema is None or not selector.strip():
        return None
    try:
        tree = fields.parse(selector)
        bad = fields.check(tree, schema)
    except fields.InvalidSelection as exc:
        bad = str(exc)
    if bad is not None:
        raise ErrorAnswer(
            400,
            f"Invalid field selection {bad[:100]}",
            extra={"reason": "invalidParameter", "location": "fields", "locationType": "parameter"},
        )
    return tree


def _answer(exc: ErrorAnswer, request: Request) -> Response:
    return error_response(
        exc.status, exc.message, headers=exc.headers, extra=exc.extra, pretty=_pretty(request)
    )


def _render(data: Answer, status: int, request: Request) -> Response:
    return google_json(data, pretty=_pretty(request))


ENDPOINTS = Endpoints(error=_answer, render=_render)


async def _context(
    call: Call,
    auth: bool,
    query: Collection[str],
    schema: fields.Schema | None,
    method: str | None = None,
) -> LicensingCtx:
    licensing: LicensingState = call.state.of(NAME)
    if licensing.delay_ms:
        await asyncio.sleep(licensing.delay_ms / 1000)
    if licensing.status is not None:
        raise ErrorAnswer(licensing.status)
    token = authenticate(call, method) if auth else None
    _check_query(call.request, query)
    return LicensingCtx(call, token, _selection(call.request, schema))


def endpoint(
    *,
    auth: bool = True,
    query: Collection[str] = (),
    schema: fields.Schema | None = None,
    method: str | None = None,
) -> Callable[[Handler[LicensingCtx]], Endpoint]:
    """Wrap a handler; a returned dict becomes Google's JSON with status 200. `query`:
    the method's own query parameters (besides Google's system ones); `schema`: the
    fields of its answer, which `fields=` selects from; `method`: its proto method
    (`CustomerLicenseService.Get`), named by an authentication error's `details`."""

    async def context(call: Call) -> LicensingCtx:
        return await _context(call, auth, query, schema, method)

    def decorate(handler: Handler[LicensingCtx]) -> Endpoint:
        async def selected(ctx: LicensingCtx) -> Answer:
            result = await handler(ctx)
            if ctx.selection is not None and not isinstance(result, Response):
                result = fields.select(result, ctx.selection)
            return result

        return ENDPOINTS.endpoint(context)(wraps(handler)(selected))

    return decorate
