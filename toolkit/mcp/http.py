"""The HTTP transport: Streamable HTTP at `/mcp` behind the server's own OAuth 2.1
authorization server, served by `BackgroundServer`.

`build_app` composes the app from the SDK's parts: its session manager (the transport),
its bearer authentication (a token is read from the `Authorization` header only, and a
request to `/mcp` without a valid token is a 401 with `WWW-Authenticate: Bearer ...
resource_metadata="..."`), its `/authorize` handler and its metadata models; with toolkit's
own endpoints where the SDK's do not do what toolkit needs:

- `/token` and `/register` go through `TokenEndpoint` and `RegisterEndpoint`
  (endpoints.py);
- the authorization server metadata lists client_credentials and the scopes; it ignores
  `MCP-Protocol-Version`, so any value a client sends gets it;
- protected-resource metadata lists every scope (so a client asks for them all and the
  writer unticks what it should not have), at `/.well-known/oauth-protected-resource/mcp`
  and at the root well-known path;
- `/consent`, the authorization screen (consent.py);
- in front of `/mcp`, the layers of guards.py: a request carrying `access_token` in its
  query string is refused (400, whatever else it carries: tokens travel in the header
  only); a body that is not UTF-8 JSON of bounded nesting is 400, a tool call whose
  arguments do not fit the tool's schema strictly is 400 (-32602), and a JSON-RPC request
  outside the token's scopes gets 403 `insufficient_scope` naming the scopes it needs
  (`ScopeGate`); a session whose grant was revoked or has expired is ended
  (`SessionGrants`); every refusal is told to the listener;
- every other route checks Host (421; DNS rebinding, as the SDK's transport does for
  `/mcp`) and `POST /consent` checks Origin (403) (`HostGuard`); an `/authorize` error
  goes back to the redirect URI only of a client the writer approved before
  (`AuthorizeEvents`: no open redirect).

This module holds where the server listens and what it is reached as (`bind_problem`,
`check_tls`, `issuer_for`, `HttpSite`) and the composition itself (`build_app`). A server
on an address other than loopback must have a TLS certificate and key (`bind_problem`):
tokens and the operator secret never cross a network in clear text.
"""

from __future__ import annotations

import ssl
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from mcp.server.auth.handlers.authorize import AuthorizationHandler
from mcp.server.auth.handlers.register import RegistrationHandler
from mcp.server.auth.middleware.auth_context import AuthContextMiddleware
from mcp.server.auth.middleware.bearer_auth import BearerAuthBackend, RequireAuthMiddleware
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
from pydantic import AnyHttpUrl
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.authentication import AuthenticationMiddleware
from starlette.middleware.cors import CORSMiddleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route, request_response
from starlette.types import ASGIApp

from toolkit.config import Config, Secret
from toolkit.errors import ConfigError, ServeError
from toolkit.mcp import scopes as scope_names
from toolkit.mcp.auth import AuthPolicy, ToolkitAuthProvider
from toolkit.mcp.consent import ConsentScreen
from toolkit.mcp.endpoints import RegisterEndpoint, TokenEndpoint
from toolkit.mcp.events import McpListener
from toolkit.mcp.guards import (
    AuthorizeEvents,
    HostGuard,
    QueryTokenGuard,
    RefusalEvents,
    RefusedInput,
    ScopeGate,
    SessionGrants,
)
from toolkit.mcp.server import ToolkitMCP
from toolkit.serving import is_loopback, url_host

MCP_PATH = "/mcp"
AS_METADATA = "/.well-known/oauth-authorization-server"
PRM_ROOT = "/.well-known/oauth-protected-resource"
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


# -- the app ------------------------------------------------------------------------------


def _with_cors(handler: Callable[[Request], Awaitable[Response]], methods: list[str]) -> ASGIApp:
    """What the SDK wraps its own client-facing endpoints in: a body size limit, CORS."""
    return CORSMiddleware(
        RequestBodyLimitMiddleware(
            RefusedInput(request_response(handler)), DEFAULT_MAX_REQUEST_BODY_SIZE
        ),
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
    announce: Callable[[str], None] | None = None,
) -> tuple[Starlette, ToolkitMCP]:
    """The whole HTTP application (and the MCP server in it), composed from the SDK's
    parts: its session manager, bearer authentication and `/authorize` handler. `announce`
    shows a line in the server's terminal (the authorization screen's one-time code)."""
    registration = ClientRegistrationOptions(
        enabled=True, valid_scopes=list(scope_names.ALL), default_scopes=list(scope_names.DEFAULT)
    )
    # The gate below (ScopeGate) checks every tool call's arguments: the session does not.
    server = ToolkitMCP(
        config,
        listener,
        transport="http",
        transport_security=site.transport_security(),
        gated=True,
    )
    sessions = server.http_sessions()
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
        RefusedInput(request_response(AuthorizationHandler(provider).handle)),
        DEFAULT_MAX_REQUEST_BODY_SIZE,
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

    consent = ConsentScreen(provider, operator_secret, config.site.title, announce)
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
            RequestBodyLimitMiddleware(
                RefusedInput(request_response(consent.handle)), DEFAULT_MAX_REQUEST_BODY_SIZE
            ),
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
        routes=routes,
        middleware=middleware,
        lifespan=lambda _: sessions.run(),
    )
    return app, server
