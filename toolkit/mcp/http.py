"""The HTTP transport: Streamable HTTP at `/mcp` behind the server's own OAuth 2.1
authorization server, served by `BackgroundServer`.

`build_app` composes the app from the SDK's parts: its session manager (the transport),
its bearer authentication (a token is read from the `Authorization` header only, and a
request to `/mcp` without a valid token is a 401 with `WWW-Authenticate: Bearer ...
resource_metadata="..."`), its `/authorize` handler and its metadata models; with toolkit's
own endpoints where the SDK's do not do what toolkit needs:

- `/token` and `/register` go through `TokenEndpoint` and `RegisterEndpoint` (endpoints.py);
- the authorization server metadata lists client_credentials and the scopes; it ignores
  `MCP-Protocol-Version`, so any value a client sends gets it;
- protected-resource metadata lists every scope (so a client asks for them all and the
  writer unticks what it should not have), at `/.well-known/oauth-protected-resource/mcp`
  and at the root well-known path;
- `/consent`, the authorization screen (consent.py);
- in front of `/mcp`: a request carrying `access_token` in its query string is refused
  (400, whatever else it carries: tokens travel in the header only); a body that is not
  UTF-8 JSON of bounded nesting is 400, a tool call whose arguments do not fit the tool's
  schema strictly is 400 (-32602), and a JSON-RPC request outside the token's scopes gets
  403 `insufficient_scope` naming the scopes it needs (`ScopeGate`); a session whose grant
  was revoked or has expired is ended (`SessionGrants`); every refusal is told to the
  listener;
- every other route checks Host (421; DNS rebinding, as the SDK's transport does for
  `/mcp`) and `POST /consent` checks Origin (403) (`HostGuard`); an `/authorize` error
  goes back to the redirect URI only of a client the writer approved before
  (`AuthorizeEvents`: no open redirect).

A server on an address other than loopback must have a TLS certificate and key
(`bind_problem`): tokens and the operator secret never cross a network in clear text.
"""

from __future__ import annotations

import json
import ssl
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from mcp.server.auth.handlers.authorize import AuthorizationHandler
from mcp.server.auth.handlers.register import RegistrationHandler
from mcp.server.auth.middleware.auth_context import AuthContextMiddleware
from mcp.server.auth.middleware.bearer_auth import (
    AuthenticatedUser,
    BearerAuthBackend,
    RequireAuthMiddleware,
)
from mcp.server.auth.provider import OAuthAuthorizationServerProvider, ProviderTokenVerifier
from mcp.server.auth.routes import build_metadata, build_resource_metadata_url, cors_middleware
from mcp.server.auth.settings import ClientRegistrationOptions, RevocationOptions
from mcp.server.fastmcp.server import StreamableHTTPASGIApp
from mcp.server.transport_security import (
    DEFAULT_MAX_REQUEST_BODY_SIZE,
    RequestBodyLimitMiddleware,
    TransportSecuritySettings,
)
from mcp.shared.auth import ProtectedResourceMetadata
from mcp.types import INVALID_PARAMS
from pydantic import AnyHttpUrl
from starlette.applications import Starlette
from starlette.datastructures import Headers
from starlette.middleware import Middleware
from starlette.middleware.authentication import AuthenticationMiddleware
from starlette.middleware.cors import CORSMiddleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route, request_response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from toolkit.config import Config, Secret
from toolkit.errors import ConfigError, ServeError
from toolkit.mcp import scopes as scope_names
from toolkit.mcp.auth import AuthPolicy, ToolkitAuthProvider, token_refusal
from toolkit.mcp.bodies import parse_json_body
from toolkit.mcp.consent import ConsentScreen
from toolkit.mcp.endpoints import RegisterEndpoint, TokenEndpoint
from toolkit.mcp.events import AUTHORIZATION, McpEvent, McpListener, tell
from toolkit.mcp.server import ToolkitMCP, argument_problem
from toolkit.mcp.store import AuthStore
from toolkit.mcp.tools import scopes_for
from toolkit.serving import is_loopback, replay, url_host

MCP_PATH = "/mcp"
AS_METADATA = "/.well-known/oauth-authorization-server"
PRM_ROOT = "/.well-known/oauth-protected-resource"
REFUSAL = "toolkit.refusal"  # scope key: why a layer in front of /mcp refused the request
LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "[::1]")


def bind_problem(host: str, tls: bool) -> str | None:
    """Why the HTTP transport may not listen on `host`: only loopback goes without TLS."""
    if is_loopback(host) or tls:
        return None
    return (
        f"{host} is not a loopback address: serving the MCP server beyond this machine "
        "needs a TLS certificate and key (--tls-cert and --tls-key, or [mcp] tls_cert "
        "and tls_key)"
    )


def check_tls(cert: Path, key: Path) -> None:
    """Load the certificate and key once, so that a bad pair is a one-line error now
    rather than a server thread dying later."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    try:
        context.load_cert_chain(cert, key)
    except FileNotFoundError as exc:
        raise ServeError(f"TLS: {exc.filename}: no such file") from None
    except (ssl.SSLError, OSError) as exc:
        raise ServeError(
            f"TLS: cannot use the certificate {cert} with the key {key}: "
            f"{getattr(exc, 'reason', None) or exc}"
        ) from None


def issuer_for(configured: str | None, host: str, port: int, tls: bool) -> str:
    """The server's public origin: `[mcp] issuer_url`, else where it listens."""
    issuer = (configured or f"{'https' if tls else 'http'}://{url_host(host)}:{port}").rstrip("/")
    parts = urlsplit(issuer)
    if parts.path:
        raise ConfigError(
            [
                "toolkit.toml: mcp.issuer_url: must be an origin such as "
                "https://example.com, without a path (clients find the "
                "authorization server at the origin of the server's URL)"
            ]
        )
    host_name = parts.hostname or ""
    if (
        parts.query
        or parts.fragment
        or not host_name
        or not (parts.scheme == "https" or (parts.scheme == "http" and is_loopback(host_name)))
    ):
        raise ConfigError(
            [
                f"toolkit.toml: mcp.issuer_url: {issuer} must be https (http only "
                f"on a loopback address: localhost, 127.0.0.0/8, [::1])"
            ]
        )
    return issuer


@dataclass(frozen=True)
class HttpSite:
    """Where the server is and how it answers: its origin and its token rules."""

    issuer_url: str
    host: str  # the address it listens on
    port: int
    access_ttl: float
    refresh_ttl: float

    @property
    def resource_url(self) -> str:
        return self.issuer_url + MCP_PATH

    def policy(self) -> AuthPolicy:
        return AuthPolicy(self.issuer_url, self.resource_url, self.access_ttl, self.refresh_ttl)

    def transport_security(self) -> TransportSecuritySettings:
        """Host and Origin headers `/mcp` accepts (DNS rebinding protection): the public
        origin's, the listening address's, and loopback's."""
        public = urlsplit(self.issuer_url)
        hosts = [public.netloc, f"{url_host(self.host)}:{self.port}"]
        origins = [f"{public.scheme}://{public.netloc}"]
        if is_loopback(self.host):
            hosts += [f"{name}:*" for name in LOOPBACK_HOSTS]
            origins += [
                f"{scheme}://{name}:*" for scheme in ("http", "https") for name in LOOPBACK_HOSTS
            ]
        return TransportSecuritySettings(
            enable_dns_rebinding_protection=True,
            allowed_hosts=list(dict.fromkeys(hosts)),
            allowed_origins=list(dict.fromkeys(origins)),
        )


# -- in front of /mcp -----------------------------------------------------------------------


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


# -- the app ------------------------------------------------------------------------------


def _with_cors(handler: Callable[[Request], Awaitable[Response]], methods: list[str]) -> ASGIApp:
    """What the SDK wraps its own client-facing endpoints in: a body size limit, CORS."""
    return CORSMiddleware(
        RequestBodyLimitMiddleware(request_response(handler), DEFAULT_MAX_REQUEST_BODY_SIZE),
        allow_origins="*",
        allow_methods=methods,
        allow_headers=["mcp-protocol-version"],
    )


def _document(document: dict[str, Any]) -> ASGIApp:
    """A metadata endpoint answering `document`, as the SDK's handlers do (CORS, cached)."""

    async def handle(request: Request) -> Response:
        return JSONResponse(document, headers={"Cache-Control": "public, max-age=3600"})

    return cors_middleware(handle, ["GET", "OPTIONS"])


def _guarded(
    path: str,
    app: ASGIApp,
    methods: list[str] | None,
    security: TransportSecuritySettings,
    *,
    check_origin: bool = False,
) -> Route:
    """A route of the authorization server, behind `HostGuard`."""
    return Route(path, HostGuard(app, security, check_origin=check_origin), methods=methods)


def build_app(
    config: Config,
    provider: ToolkitAuthProvider,
    site: HttpSite,
    operator_secret: Secret,
    listener: McpListener,
) -> tuple[Starlette, ToolkitMCP]:
    """The whole HTTP application (and the MCP server in it), composed from the SDK's
    parts: its session manager, bearer authentication and `/authorize` handler."""
    registration = ClientRegistrationOptions(
        enabled=True, valid_scopes=list(scope_names.ALL), default_scopes=list(scope_names.DEFAULT)
    )
    # No `auth=` for FastMCP: its app is not the one served, only its session manager is.
    server = ToolkitMCP(
        config, listener, transport="http", transport_security=site.transport_security()
    )
    server.streamable_http_app()  # makes the SDK's session manager (its app is not used)
    sessions = server.session_manager
    issuer = AnyHttpUrl(site.issuer_url)
    resource_metadata_url = str(build_resource_metadata_url(AnyHttpUrl(site.resource_url)))
    security = site.transport_security()

    metadata = build_metadata(issuer, None, registration, RevocationOptions(enabled=False))
    metadata.grant_types_supported = ["authorization_code", "refresh_token", "client_credentials"]
    metadata.token_endpoint_auth_methods_supported = [
        "client_secret_post",
        "client_secret_basic",
        "none",
    ]
    metadata.scopes_supported = list(scope_names.ALL)
    # The issuer exactly as clients reach it, without the final slash pydantic's URL type
    # adds to an origin (RFC 8414 3.3: identical to the URL metadata was asked for by).
    as_document = metadata.model_dump(mode="json", exclude_none=True) | {"issuer": site.issuer_url}

    # The SDK's own authorization endpoint (no CORS: a client redirects to it), body-limited.
    authorize = RequestBodyLimitMiddleware(
        request_response(AuthorizationHandler(provider).handle), DEFAULT_MAX_REQUEST_BODY_SIZE
    )
    token = TokenEndpoint(provider)
    register = RegisterEndpoint(provider, RegistrationHandler(provider, registration))

    resource = ProtectedResourceMetadata(
        resource=AnyHttpUrl(site.resource_url),
        authorization_servers=[issuer],
        scopes_supported=list(scope_names.ALL),
        resource_name="toolkit",
    )
    prm = _document(
        resource.model_dump(mode="json", exclude_none=True)
        | {"resource": site.resource_url, "authorization_servers": [site.issuer_url]}
    )

    # /mcp: the SDK's transport checks Host and Origin itself.
    gate = RequireAuthMiddleware(
        RequestBodyLimitMiddleware(
            ScopeGate(
                SessionGrants(StreamableHTTPASGIApp(sessions), provider.store),
                resource_metadata_url,
                server.argument_validators,
            ),
            DEFAULT_MAX_REQUEST_BODY_SIZE,
        ),
        [],
        AnyHttpUrl(resource_metadata_url),
    )

    consent = ConsentScreen(provider, operator_secret, config.site.title)
    routes: list[BaseRoute] = [
        _guarded(AS_METADATA, _document(as_document), ["GET", "OPTIONS"], security),
        _guarded(
            "/authorize",
            AuthorizeEvents(authorize, listener, provider.store),
            ["GET", "POST"],
            security,
        ),
        _guarded(
            "/token", _with_cors(token.handle, ["POST", "OPTIONS"]), ["POST", "OPTIONS"], security
        ),
        _guarded(
            "/register",
            _with_cors(register.handle, ["POST", "OPTIONS"]),
            ["POST", "OPTIONS"],
            security,
        ),
        Route(MCP_PATH, endpoint=QueryTokenGuard(RefusalEvents(gate, listener))),
        _guarded(urlsplit(resource_metadata_url).path, prm, ["GET", "OPTIONS"], security),
        _guarded(PRM_ROOT, prm, ["GET", "OPTIONS"], security),
        _guarded(
            "/consent",
            request_response(consent.handle),
            ["GET", "POST"],
            security,
            check_origin=True,
        ),
    ]
    # As the SDK's app: the bearer token of any request read into `scope["user"]` (and the
    # SDK's auth context), the session manager running for the app's lifetime.
    tokens: OAuthAuthorizationServerProvider[Any, Any, Any] = provider
    middleware = [
        Middleware(
            AuthenticationMiddleware, backend=BearerAuthBackend(ProviderTokenVerifier(tokens))
        ),
        Middleware(AuthContextMiddleware),
    ]
    app = Starlette(
        debug=server.settings.debug,
        routes=routes,
        middleware=middleware,
        lifespan=lambda _: sessions.run(),
    )
    return app, server
