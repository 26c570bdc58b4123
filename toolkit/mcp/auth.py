"""The OAuth 2.1 authorization server of the HTTP transport: the provider behind the SDK's routes.

The SDK (`mcp.server.auth`) serves the routes and checks the protocol: metadata, the
`/authorize` request (only `S256` PKCE; a missing or `plain` challenge is refused there),
PKCE verifiers, redirect URIs matched exactly against the registered ones. This module is
the provider behind them, `ToolkitAuthProvider`, and what it decides that the SDK does not:

- clients, requests, codes and tokens in `AuthStore` (SQLite, everything secret hashed);
- registration stores only the metadata `registration.py` accepts (redirect URIs, grant
  types, response types and authentication methods this server supports);
- `/authorize` refuses a long `state` and bounds the requests waiting on the screen (per
  client and in all);
- `/authorize` sends the writer to the authorization screen (`consent.py`) instead of
  giving a code at once;
- an authorization code works once: a second use is refused and revokes every token the
  first one gave (RFC 6749 4.1.2);
- refresh tokens rotate: each exchange gives a new one, and a refresh token used twice
  revokes its whole grant, the live tokens included (OAuth 2.1 4.3.1);
- `client_credentials` tokens for the confidential clients the operator created
  (`toolkit mcp add-client`), answered by `/token` (`endpoints.py`, where client secrets
  are checked and a malformed request is refused first);
- access tokens expire after `[mcp] access_token_lifetime` seconds of `clock`, injectable.
"""

from __future__ import annotations

import contextvars
import re
from dataclasses import dataclass

from mcp.server.auth.provider import (
    AccessToken,
    AuthorizationCode,
    AuthorizationParams,
    AuthorizeError,
    OAuthAuthorizationServerProvider,
    RefreshToken,
    RegistrationError,
    TokenError,
)
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken
from starlette.responses import JSONResponse, Response

from toolkit.mcp import scopes as scope_names
from toolkit.mcp.events import AUTHORIZATION, McpEvent, McpListener, tell
from toolkit.mcp.registration import (
    MAX_REDIRECT_URIS,
    client_info,
    redirect_uri_problem,
    unsupported_metadata,
)
from toolkit.mcp.store import ACCESS, REFRESH, AuthStore, ClientRecord

CODE_TTL = 300.0  # seconds an authorization code can be exchanged
CONSENT_TTL = 600.0  # seconds the authorization screen waits for the writer
# An S256 challenge is the base64url SHA-256 of the verifier, without padding.
S256_CHALLENGE = re.compile(r"^[A-Za-z0-9_-]{43}$")
NO_STORE = {"Cache-Control": "no-store", "Pragma": "no-cache"}
MAX_STATE = 1024  # characters of the `state` an authorization request carries
PENDING_PER_CLIENT = 10  # authorization requests of one client waiting on the screen
PENDING_IN_ALL = 500  # ... and of every client together

# Why the last access token presented was refused, for the event of the 401 that follows.
token_refusal: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "token_refusal", default=None
)


class ToolkitCode(AuthorizationCode):
    used: bool = False


class ToolkitRefreshToken(RefreshToken):
    grant_id: str
    used: bool = False


class ToolkitAccessToken(AccessToken):
    grant_id: str


@dataclass(frozen=True)
class AuthPolicy:
    issuer_url: str  # the origin clients reach the server at, without a final slash
    resource_url: str  # the MCP endpoint: issuer_url + /mcp
    access_ttl: float
    refresh_ttl: float
    code_ttl: float = CODE_TTL
    consent_ttl: float = CONSENT_TTL


class ToolkitAuthProvider(
    OAuthAuthorizationServerProvider[ToolkitCode, ToolkitRefreshToken, ToolkitAccessToken]
):
    """The provider the SDK's routes call; decisions are told to `listener`."""

    def __init__(self, store: AuthStore, policy: AuthPolicy, listener: McpListener):
        self.store = store
        self.policy = policy
        self.listener = listener

    def event(
        self,
        action: str,
        outcome: str,
        *,
        client_id: str | None = None,
        scopes: list[str] | tuple[str, ...] = (),
        detail: str = "",
        status: int | None = None,
    ) -> None:
        tell(
            self.listener,
            McpEvent(
                AUTHORIZATION,
                action,
                outcome,
                client_id,
                tuple(scopes),
                detail=detail,
                status=status,
            ),
        )

    # -- clients ---------------------------------------------------------------------------

    async def get_client(self, client_id: str) -> OAuthClientInformationFull | None:
        record = self.store.client(client_id)
        return client_info(record) if record is not None else None

    async def register_client(self, client_info: OAuthClientInformationFull) -> None:
        if len(client_info.redirect_uris or []) > MAX_REDIRECT_URIS:
            many = f"a client may register at most {MAX_REDIRECT_URIS} redirect URIs"
            self.event("register", "denied", detail=many, status=400)
            raise RegistrationError("invalid_redirect_uri", many)
        unsupported = unsupported_metadata(client_info)
        if unsupported:
            self.event("register", "denied", detail=unsupported, status=400)
            raise RegistrationError("invalid_client_metadata", unsupported)
        for uri in client_info.redirect_uris or []:
            problem = redirect_uri_problem(str(uri))
            if problem:
                self.event("register", "denied", detail=problem, status=400)
                raise RegistrationError("invalid_redirect_uri", problem)
        assert client_info.client_id is not None  # the SDK's handler always sets one
        info = client_info.model_dump(mode="json", exclude={"client_secret"}, exclude_none=True)
        name = (client_info.client_name or "unnamed client").strip()[:200]
        self.store.add_client(
            client_info.client_id, info, client_info.client_secret, name=name, origin="registered"
        )
        self.event(
            "register",
            "ok",
            client_id=client_info.client_id,
            scopes=scope_names.parse(client_info.scope),
            detail=name,
        )

    # -- authorization ---------------------------------------------------------------------

    async def authorize(
        self, client: OAuthClientInformationFull, params: AuthorizationParams
    ) -> str:
        """Park the request and send the writer to the authorization screen."""
        assert client.client_id is not None
        if not S256_CHALLENGE.match(params.code_challenge):
            self.event(
                "authorize",
                "denied",
                client_id=client.client_id,
                detail="code_challenge is not an S256 challenge",
            )
            raise AuthorizeError(
                "invalid_request",
                "code_challenge must be an S256 challenge (43 base64url characters)",
            )
        requested = params.scopes or scope_names.parse(client.scope) or list(scope_names.DEFAULT)
        bad = scope_names.unknown(requested)
        if bad:
            raise AuthorizeError("invalid_scope", f"unknown scope {bad[0]!r}")
        if params.resource is not None and not same_resource(
            params.resource, self.policy.resource_url
        ):
            self.event(
                "authorize",
                "denied",
                client_id=client.client_id,
                detail="resource is another server",
            )
            raise AuthorizeError("invalid_request", f"resource must be {self.policy.resource_url}")
        if params.state is not None and len(params.state) > MAX_STATE:
            self.event(
                "authorize",
                "denied",
                client_id=client.client_id,
                detail=f"state longer than {MAX_STATE} characters",
            )
            raise AuthorizeError("invalid_request", f"state must be at most {MAX_STATE} characters")
        waiting, in_all = self.store.pending_counts(client.client_id)
        if waiting >= PENDING_PER_CLIENT or in_all >= PENDING_IN_ALL:
            self.event(
                "authorize",
                "denied",
                client_id=client.client_id,
                detail="too many authorization requests waiting on the screen",
            )
            raise AuthorizeError(
                "temporarily_unavailable",
                "too many authorization requests are waiting for the writer; "
                "answer or let them expire, then try again",
            )
        request_id = self.store.add_pending(
            client.client_id,
            {
                "state": params.state,
                "scopes": scope_names.parse(" ".join(requested)),
                "code_challenge": params.code_challenge,
                "redirect_uri": str(params.redirect_uri),
                "redirect_uri_provided_explicitly": params.redirect_uri_provided_explicitly,
                "resource": params.resource,
            },
            self.policy.consent_ttl,
        )
        self.event(
            "authorize",
            "ok",
            client_id=client.client_id,
            scopes=requested,
            detail="waiting on the authorization screen",
        )
        return f"{self.policy.issuer_url}/consent?request={request_id}"

    async def load_authorization_code(
        self, client: OAuthClientInformationFull, authorization_code: str
    ) -> ToolkitCode | None:
        record = self.store.code(authorization_code)
        if record is None or record.expires_at < self.store.clock():
            return None
        if record.used:
            # Used before: refused, and what the first use gave is revoked, whoever asks.
            if record.grant_id is not None:
                self.store.revoke_grant(record.grant_id, "authorization code used twice")
            self.event(
                "token",
                "denied",
                client_id=record.client_id,
                scopes=record.scopes,
                detail="authorization code used twice: the tokens it gave are revoked",
                status=400,
            )
        return ToolkitCode(
            code=authorization_code,
            scopes=list(record.scopes),
            expires_at=record.expires_at,
            client_id=record.client_id,
            code_challenge=record.challenge,
            redirect_uri=record.redirect_uri,  # type: ignore[arg-type]  # pydantic parses it
            redirect_uri_provided_explicitly=record.redirect_explicit,
            resource=record.resource,
            used=record.used,
        )

    async def exchange_authorization_code(
        self, client: OAuthClientInformationFull, authorization_code: ToolkitCode
    ) -> OAuthToken:
        code = authorization_code
        if code.used:
            raise TokenError(
                "invalid_grant",
                "authorization code used already; the tokens it gave are revoked: authorize again",
            )
        grant_id = self.store.add_grant(code.client_id, code.scopes, "authorization_code")
        if not self.store.redeem_code(code.code, grant_id):  # another request won the race
            self.store.revoke_grant(grant_id, "authorization code used twice")
            winner = self.store.code(code.code)
            if winner is not None and winner.grant_id is not None:
                self.store.revoke_grant(winner.grant_id, "authorization code used twice")
            raise TokenError(
                "invalid_grant",
                "authorization code used already; the tokens it gave are revoked: authorize again",
            )
        issued = self.store.issue(
            grant_id,
            code.client_id,
            code.scopes,
            code.resource,
            access_ttl=self.policy.access_ttl,
            refresh_ttl=self.policy.refresh_ttl,
        )
        self.event(
            "token", "ok", client_id=code.client_id, scopes=code.scopes, detail="authorization_code"
        )
        return OAuthToken(
            access_token=issued.access_token,
            expires_in=int(self.policy.access_ttl),
            scope=" ".join(code.scopes),
            refresh_token=issued.refresh_token,
        )

    # -- refresh tokens ------------------------------------------------------------------------

    async def load_refresh_token(
        self, client: OAuthClientInformationFull, refresh_token: str
    ) -> ToolkitRefreshToken | None:
        record = self.store.token(refresh_token, REFRESH)
        if record is None or record.revoked or record.expires_at < self.store.clock():
            return None
        if record.used:
            self.store.revoke_grant(record.grant_id, "refresh token used twice")
            self.event(
                "refresh",
                "denied",
                client_id=record.client_id,
                scopes=record.scopes,
                detail="refresh token used twice: its grant is revoked",
                status=400,
            )
        return ToolkitRefreshToken(
            token=refresh_token,
            client_id=record.client_id,
            scopes=list(record.scopes),
            expires_at=int(record.expires_at),
            resource=record.resource,
            grant_id=record.grant_id,
            used=record.used,
        )

    async def exchange_refresh_token(
        self,
        client: OAuthClientInformationFull,
        refresh_token: ToolkitRefreshToken,
        scopes: list[str],
    ) -> OAuthToken:
        token = refresh_token
        refused = TokenError(
            "invalid_grant",
            "refresh token used already; every token of this "
            "authorization is revoked: authorize again",
        )
        if token.used:
            raise refused
        if not self.store.rotate(token.token):  # another request rotated it first
            self.store.revoke_grant(token.grant_id, "refresh token used twice")
            raise refused
        if self.store.grant_revoked(token.grant_id):
            raise TokenError("invalid_grant", "this authorization was revoked")
        issued = self.store.issue(
            token.grant_id,
            token.client_id,
            scopes,
            token.resource,
            access_ttl=self.policy.access_ttl,
            refresh_ttl=self.policy.refresh_ttl,
            refresh_scopes=token.scopes,
        )
        self.event("refresh", "ok", client_id=token.client_id, scopes=scopes)
        return OAuthToken(
            access_token=issued.access_token,
            expires_in=int(self.policy.access_ttl),
            scope=" ".join(scopes),
            refresh_token=issued.refresh_token,
        )

    # -- access tokens -------------------------------------------------------------------------

    async def load_access_token(self, token: str) -> ToolkitAccessToken | None:
        record = self.store.token(token, ACCESS)
        if record is None:
            token_refusal.set("unknown access token")
            return None
        if record.revoked:
            token_refusal.set("revoked access token")
            return None
        if record.expires_at <= self.store.clock():
            token_refusal.set("expired access token")
            return None
        # No expires_at for the SDK: `clock` alone decides when a token expires.
        return ToolkitAccessToken(
            token=token,
            client_id=record.client_id,
            scopes=list(record.scopes),
            resource=record.resource,
            grant_id=record.grant_id,
        )

    async def revoke_token(self, token: ToolkitAccessToken | ToolkitRefreshToken) -> None:
        self.store.revoke_grant(token.grant_id, "revoked by the client")
        self.event("revoke", "ok", client_id=token.client_id, scopes=token.scopes)

    # -- client_credentials -------------------------------------------------------------------

    def client_credentials(self, client: ClientRecord, scope: str | None) -> Response:
        """A token for a confidential client acting for itself (no refresh token: it can
        ask again with its secret)."""
        if client.origin != "operator" or "client_credentials" not in client.info.get(
            "grant_types", []
        ):
            self.event(
                "client_credentials",
                "denied",
                client_id=client.client_id,
                status=400,
                detail="not a client the operator created for client_credentials",
            )
            return token_error(
                "unauthorized_client",
                "client_credentials is for the clients "
                "the operator creates with `toolkit mcp add-client`",
            )
        allowed = scope_names.parse(client.info.get("scope"))
        asked = scope_names.parse(scope) if scope else allowed
        # What it may have of what it asked for (RFC 6749 3.3: the scope answered says so).
        wanted = [s for s in asked if s in allowed]
        if not wanted:
            self.event(
                "client_credentials",
                "denied",
                client_id=client.client_id,
                status=400,
                detail=f"scope {' '.join(asked)} not allowed",
            )
            return token_error("invalid_scope", f"this client may ask for {' '.join(allowed)}")
        grant_id = self.store.add_grant(client.client_id, wanted, "client_credentials")
        issued = self.store.issue(
            grant_id,
            client.client_id,
            wanted,
            None,
            access_ttl=self.policy.access_ttl,
            refresh_ttl=None,
        )
        self.event("client_credentials", "ok", client_id=client.client_id, scopes=wanted)
        body = OAuthToken(
            access_token=issued.access_token,
            expires_in=int(self.policy.access_ttl),
            scope=" ".join(wanted),
        )
        return JSONResponse(body.model_dump(exclude_none=True), headers=NO_STORE)


def same_resource(given: str, ours: str) -> bool:
    return given.rstrip("/") == ours.rstrip("/")


def token_error(
    error: str, description: str, status: int = 400, headers: dict[str, str] | None = None
) -> JSONResponse:
    return JSONResponse(
        {"error": error, "error_description": description},
        status_code=status,
        headers={**NO_STORE, **(headers or {})},
    )
