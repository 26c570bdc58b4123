"""The ASGI layers the HTTP app (`http.py`) puts in front of its routes.

In front of `/mcp`, inside the SDK's bearer authentication:

- `QueryTokenGuard`: a request carrying `access_token` in its query string is refused
  (400, whatever else it carries: tokens travel in the header only);
- `ScopeGate`: a body that is not UTF-8 JSON of bounded nesting is 400, a tool call whose
  arguments do not fit the tool's schema strictly is 400 (-32602), and a JSON-RPC request
  outside the token's scopes gets 403 `insufficient_scope` naming the scopes it needs;
- `SessionGrants`: a session whose grant was revoked or has expired is ended;
- `RefusalEvents`: every refusal (400, 401, 403) is told to the listener, with why.

In front of the authorization server's routes:

- `HostGuard`: every route checks Host (421; DNS rebinding, as the SDK's transport does
  for `/mcp`), and `POST /consent` checks Origin (403);
- `AuthorizeEvents`: an `/authorize` refusal is told to the listener, and its error goes
  back to the redirect URI only of a client the writer approved before (no open
  redirect);
- `RefusedInput`: a request body is read whole (within the body limit around it) before
  its handler runs: a client that leaves before its body is complete, and a form with a
  field larger than the form parser takes, are each one line at INFO (the latter
  answered 400), never an error with a traceback in the server's log.
"""

from __future__ import annotations

import json
import logging
from typing import Any
from urllib.parse import parse_qs, urlsplit

from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.transport_security import TransportSecuritySettings
from mcp.types import INVALID_PARAMS
from starlette.datastructures import Headers
from starlette.exceptions import HTTPException
from starlette.formparsers import MultiPartException
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from toolkit.mcp import scopes as scope_names
from toolkit.mcp.auth import token_refusal
from toolkit.mcp.bodies import parse_json_body
from toolkit.mcp.events import AUTHORIZATION, McpEvent, McpListener, tell
from toolkit.mcp.server import argument_problem
from toolkit.mcp.store import AuthStore
from toolkit.mcp.tools import scopes_for
from toolkit.serving import replay

log = logging.getLogger("toolkit.mcp")

REFUSAL = "toolkit.refusal"  # scope key: why a layer in front of /mcp refused the request


async def _refuse(
    scope: Scope,
    receive: Receive,
    send: Send,
    status: int,
    error: str,
    description: str,
    extra: str = "",
) -> None:
    scope[REFUSAL] = description
    challenge = f'Bearer error="{error}", error_description="{description}"{extra}'
    response = Response(
        json.dumps({"error": error, "error_description": description}),
        status_code=status,
        media_type="application/json",
        headers={"WWW-Authenticate": challenge, "Cache-Control": "no-store"},
    )
    await response(scope, receive, send)


def _allowed(value: str, allowed: list[str]) -> bool:
    """Whether a Host or Origin value is one of `allowed`, where `name:*` is any port."""
    for pattern in allowed:
        if value == pattern:
            return True
        if pattern.endswith(":*"):
            base, _, port = value.rpartition(":")
            if base == pattern[:-2] and port.isdigit():
                return True
    return False


class HostGuard:
    """DNS rebinding protection for the authorization server's endpoints, as the SDK gives
    `/mcp`: a request whose Host is not one of the server's is 421; with `check_origin`
    (the consent form), a POST whose Origin is given and is not the server's is 403 (a
    form posted from another site)."""

    def __init__(
        self, app: ASGIApp, security: TransportSecuritySettings, *, check_origin: bool = False
    ):
        self.app = app
        self.security = security
        self.check_origin = check_origin

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            headers = Headers(scope=scope)
            if not _allowed(headers.get("host", ""), self.security.allowed_hosts):
                await Response("Invalid Host header", status_code=421)(scope, receive, send)
                return
            origin = headers.get("origin")
            if (
                self.check_origin
                and scope["method"] == "POST"
                and origin is not None
                and not _allowed(origin, self.security.allowed_origins)
            ):
                await Response("Invalid Origin header", status_code=403)(scope, receive, send)
                return
        await self.app(scope, receive, send)


class QueryTokenGuard:
    """Refuses (400) a request with `access_token` in its query string: bearer tokens are
    accepted in the Authorization header only (MCP authorization, 2.6), and one that was
    put in a URL is refused rather than silently ignored."""

    def __init__(self, app: ASGIApp):
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
        if scope["type"] == "http" and "access_token" in query:
            await _refuse(
                scope,
                receive,
                send,
                400,
                "invalid_request",
                "access tokens are accepted in the Authorization header only, "
                "never in the query string",
            )
            return
        await self.app(scope, receive, send)


async def _jsonrpc_error(
    scope: Scope,
    receive: Receive,
    send: Send,
    status: int,
    code: int,
    message: str,
    request_id: Any = None,
) -> None:
    scope[REFUSAL] = message
    if not isinstance(request_id, str | int) or isinstance(request_id, bool):
        request_id = None
    response = Response(
        json.dumps(
            {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}
        ),
        status_code=status,
        media_type="application/json",
        headers={"Cache-Control": "no-store"},
    )
    await response(scope, receive, send)


class ScopeGate:
    """In front of the transport, for each POST: a body that is not UTF-8 JSON nested at
    most MAX_JSON_DEPTH levels is 400 (-32700, parse error); a tool call whose arguments do
    not fit the tool's schema, strictly, is 400 (-32602, invalid params); a JSON-RPC request
    the token's scopes do not cover (a tool call: the scopes of that tool, and `publish` for
    a push that publishes; a resource read) is 403 `insufficient_scope`. Reads the
    (size-limited) body and hands it on unchanged."""

    def __init__(
        self, app: ASGIApp, resource_metadata_url: str, validators: dict[str, Any] | None = None
    ):
        self.app = app
        self.resource_metadata_url = resource_metadata_url
        self.validators = validators or {}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            await self.app(scope, receive, send)
            return
        chunks: list[bytes] = []
        while True:
            message = await receive()
            if message["type"] != "http.request":
                return  # the client went away
            chunks.append(message.get("body", b""))
            if not message.get("more_body", False):
                break
        body = b"".join(chunks)
        payload, problem = parse_json_body(body)
        if problem is not None:
            await _jsonrpc_error(scope, receive, send, 400, -32700, f"Parse error: {problem}")
            return
        for message in payload if isinstance(payload, list) else [payload]:
            if isinstance(message, dict) and message.get("method") == "tools/call":
                given = message.get("params")
                params = given if isinstance(given, dict) else {}
                wrong = argument_problem(
                    self.validators, params.get("name"), params.get("arguments")
                )
                if wrong is not None:
                    await _jsonrpc_error(
                        scope,
                        receive,
                        send,
                        400,
                        INVALID_PARAMS,
                        f"Invalid params: {wrong}",
                        message.get("id"),
                    )
                    return
        user = scope.get("user")
        granted = set(user.scopes) if isinstance(user, AuthenticatedUser) else set()
        needed = self.needed(payload)
        missing = [s for s in needed if s not in granted]
        if missing:
            await _refuse(
                scope,
                receive,
                send,
                403,
                "insufficient_scope",
                f"this request needs the scope {' '.join(missing)}",
                f', scope="{" ".join(needed)}", resource_metadata="{self.resource_metadata_url}"',
            )
            return
        await self.app(scope, replay(body, receive), send)

    @staticmethod
    def needed(payload: Any) -> list[str]:
        """The scopes the JSON-RPC message(s) of `payload` need."""
        needed: list[str] = []
        for message in payload if isinstance(payload, list) else [payload]:
            if not isinstance(message, dict):
                continue
            method = message.get("method")
            given = message.get("params")
            params: dict[str, Any] = given if isinstance(given, dict) else {}
            if method == "tools/call":
                name = params.get("name")
                arguments = params.get("arguments")
                if isinstance(name, str):
                    needed += scopes_for(name, arguments if isinstance(arguments, dict) else {})
            elif method in ("resources/list", "resources/read", "resources/templates/list"):
                needed.append(scope_names.READ)
        return list(dict.fromkeys(needed))


class SessionGrants:
    """Ends an MCP session when the authorization (grant) that opened it is revoked or has
    expired: its next request is 404, as for a session that never was, and the SDK's
    session is terminated. Each call is still authorised on its own request's token (the
    SDK lets any token of the same client use a session); this one makes sure a session
    does not outlive the grant that opened it."""

    KEPT = 10_000  # sessions remembered; the oldest are forgotten first

    def __init__(self, app: ASGIApp, store: AuthStore):
        self.app = app
        self.store = store
        self.grants: dict[str, str] = {}  # session id -> grant id

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        session = Headers(scope=scope).get("mcp-session-id")
        if session is None:
            await self.app(scope, receive, self._remember(scope, send))
            return
        opened_by = self.grants.get(session)
        if opened_by is not None and not self.store.grant_live(opened_by):
            self.grants.pop(session, None)
            await self._end(scope)
            await _jsonrpc_error(
                scope,
                receive,
                send,
                404,
                -32600,
                "Session not found: the authorization that opened it was revoked or has expired",
            )
            return
        await self.app(scope, receive, send)
        if scope["method"] == "DELETE":
            self.grants.pop(session, None)

    def _remember(self, scope: Scope, send: Send) -> Send:
        user = scope.get("user")
        grant = (
            getattr(user.access_token, "grant_id", None)
            if isinstance(user, AuthenticatedUser)
            else None
        )

        async def watch(message: Message) -> None:
            if message["type"] == "http.response.start" and isinstance(grant, str):
                opened = Headers(raw=message.get("headers", [])).get("mcp-session-id")
                if opened:
                    self.grants[opened] = grant
                    while len(self.grants) > self.KEPT:
                        self.grants.pop(next(iter(self.grants)))
            await send(message)

        return watch

    async def _end(self, scope: Scope) -> None:
        """Terminate the SDK's session as a DELETE of it would (its answer is dropped)."""

        async def receive() -> Message:
            return {"type": "http.request", "body": b"", "more_body": False}

        async def send(message: Message) -> None:
            return None

        await self.app({**scope, "method": "DELETE"}, receive, send)


class RefusalEvents:
    """Tells the listener of every request to /mcp refused with 400, 401 or 403, why, and
    for which client (never the token)."""

    def __init__(self, app: ASGIApp, listener: McpListener):
        self.app = app
        self.listener = listener

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        async def watch(message: Message) -> None:
            if message["type"] == "http.response.start" and message["status"] in (400, 401, 403):
                status = message["status"]
                user = scope.get("user")
                client_id = (
                    user.access_token.client_id if isinstance(user, AuthenticatedUser) else None
                )
                detail = (
                    scope.get(REFUSAL)
                    or (token_refusal.get() if status == 401 else None)
                    or ("no bearer token" if status == 401 else "")
                )
                tell(
                    self.listener,
                    McpEvent(
                        AUTHORIZATION,
                        "request",
                        "denied",
                        client_id,
                        tuple(user.scopes) if isinstance(user, AuthenticatedUser) else (),
                        detail=str(detail),
                        status=status,
                    ),
                )
            await send(message)

        await self.app(scope, receive, watch)


class AuthorizeEvents:
    """Tells the listener of every `/authorize` request the SDK's handler refuses: a 400
    (an unknown client, a redirect URI not registered) or a redirect back to the client
    carrying an error (no PKCE challenge, the `plain` method, an unknown scope).

    An error is sent back to the client's redirect URI only for a client the writer has
    approved before (or the operator created): anyone can register any https URI, and an
    error redirect to it would make this server an open redirector. Any other client gets
    the error as a page (400) instead."""

    def __init__(self, app: ASGIApp, listener: McpListener, store: AuthStore):
        self.app = app
        self.listener = listener
        self.store = store

    def _approved(self, client_id: str | None) -> bool:
        record = self.store.client(client_id) if client_id else None
        return record is not None and (
            record.origin == "operator" or record.last_grant_at is not None
        )

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        replaced = False

        async def watch(message: Message) -> None:
            nonlocal replaced
            if replaced:
                return  # the SDK's body of a response replaced by the error page
            if message["type"] == "http.response.start":
                headers = {
                    k.decode("latin-1").lower(): v.decode("latin-1")
                    for k, v in message.get("headers", [])
                }
                answer = parse_qs(urlsplit(headers.get("location", "")).query)
                if message["status"] >= 400 or "error" in answer:
                    query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
                    client_id = query.get("client_id", [None])[0]
                    error = answer.get("error", ["invalid_request"])[0]
                    why = answer.get("error_description", [""])[0]
                    tell(
                        self.listener,
                        McpEvent(
                            AUTHORIZATION,
                            "authorize",
                            "denied",
                            client_id,
                            detail=f"{error}: {why}"[:300],
                            status=message["status"],
                        ),
                    )
                    if "error" in answer and not self._approved(client_id):
                        replaced = True
                        page = Response(
                            json.dumps({"error": error, "error_description": why[:300]}),
                            status_code=400,
                            media_type="application/json",
                            headers={"Cache-Control": "no-store"},
                        )
                        await page(scope, receive, send)
                        return
            await send(message)

        await self.app(scope, receive, watch)


FORMS = ("application/x-www-form-urlencoded", "multipart/form-data")


class RefusedInput:
    """The body of a request read whole before `app` (a handler of the authorization
    server) sees it, so that input it refuses is never an error of the server: a client
    that leaves before its body is complete is let go (one line at INFO; nobody is left to
    answer), and a form Starlette's parser refuses (a field over its 1 MiB, too many
    fields) is answered 400 `invalid_request` (one line at INFO). The SDK's handlers log
    any exception of theirs as an error with its traceback."""

    def __init__(self, app: ASGIApp):
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope.get("method") not in ("POST", "PUT", "PATCH"):
            await self.app(scope, receive, send)
            return
        path = scope.get("path", "")
        chunks: list[bytes] = []
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                log.info("mcp %s: the client left before its request body was complete", path)
                return
            chunks.append(message.get("body", b""))
            if not message.get("more_body", False):
                break
        body = b"".join(chunks)
        media = Headers(scope=scope).get("content-type", "").split(";")[0].strip().lower()
        if media in FORMS:
            problem = await _form_problem(scope, body)
            if problem is not None:
                log.info("mcp %s: refused a form: %s", path, problem)
                response = Response(
                    json.dumps({"error": "invalid_request", "error_description": problem}),
                    status_code=400,
                    media_type="application/json",
                    headers={"Cache-Control": "no-store"},
                )
                await response(scope, replay(body, receive), send)
                return
        await self.app(scope, replay(body, receive), send)


async def _form_problem(scope: Scope, body: bytes) -> str | None:
    """Why Starlette's form parser refuses `body`, or None when it takes it."""

    async def nothing_more() -> Message:
        return {"type": "http.disconnect"}

    # Parsed outside the app (no "app" in the scope): the parser's own exception.
    bare = {key: value for key, value in scope.items() if key != "app"}
    request = Request(bare, replay(body, nothing_more))
    try:
        form = await request.form()
    except (MultiPartException, HTTPException) as exc:
        detail = getattr(exc, "message", None) or getattr(exc, "detail", None) or str(exc)
        return str(detail)[:200]
    except ValueError as exc:  # a malformed multipart boundary, a bad encoding
        return f"the form cannot be read ({str(exc)[:160]})"
    await form.close()
    return None
