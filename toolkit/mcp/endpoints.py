"""`/token` and `/register`: toolkit's endpoints in front of the SDK's handlers.

- `/token` refuses a malformed request (400, RFC 6749 5.2) before anything else, then
  authenticates the client (401), then answers `client_credentials` itself (the
  provider's `client_credentials`) and hands the other grants to the SDK's handler
  (`TokenEndpoint`);
- client secrets are checked against their hash in constant time
  (`HashedClientAuthenticator`; the SDK's own authenticator compares the stored secret as
  it is, so it is never used);
- `/register` answers 400 for a body that is not a JSON object of bounded size and for a
  client asking for client_credentials, then hands the request to the SDK's handler,
  which asks the provider (`RegisterEndpoint`);
- every refusal is told to the provider's listener.
"""

from __future__ import annotations

import base64
import binascii
import hmac
import json
from urllib.parse import unquote

from mcp.server.auth.handlers.register import RegistrationHandler
from mcp.server.auth.handlers.token import TokenHandler
from mcp.server.auth.middleware.client_auth import AuthenticationError, ClientAuthenticator
from mcp.shared.auth import OAuthClientInformationFull
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from toolkit.mcp.auth import ToolkitAuthProvider, same_resource, token_error
from toolkit.mcp.bodies import parse_json_body
from toolkit.mcp.registration import client_info
from toolkit.mcp.store import ClientRecord, digest

MAX_REGISTRATION = 16 * 1024  # bytes of a client's metadata at /register (it is stored)


class HashedClientAuthenticator(ClientAuthenticator):
    """Client authentication at `/token`: the secret (HTTP Basic or the form's
    `client_secret`, either of the methods the metadata advertises) checked against its stored hash in constant
    time. Public clients (`none`) present no secret."""

    def __init__(self, provider: ToolkitAuthProvider):
        super().__init__(provider)
        self.store = provider.store

    async def authenticate_request(self, request: Request) -> OAuthClientInformationFull:
        return client_info(await self.authenticate(request))

    async def authenticate(self, request: Request) -> ClientRecord:
        form = await request.form()
        form_id = form.get("client_id")
        client_id = form_id if isinstance(form_id, str) and form_id else None
        basic = _basic_credentials(request)
        if basic is not None:
            if client_id is not None and client_id != basic[0]:
                raise AuthenticationError("client_id differs from the Basic credentials")
            client_id = basic[0]
        if client_id is None:
            raise AuthenticationError("client_id is missing")
        record = self.store.client(client_id)
        if record is None:
            raise AuthenticationError("unknown client")
        method = record.info.get("token_endpoint_auth_method", "client_secret_post")
        if record.secret_hash is None or method == "none":
            return record
        # Either method the metadata advertises, whichever the client registered with
        # (RFC 6749 2.3.1: one method per request, so both at once is refused).
        value = form.get("client_secret")
        posted = value if isinstance(value, str) and value else None
        if basic is not None and posted is not None:
            raise AuthenticationError(
                "client secret given twice (Basic and the form): use one method"
            )
        presented = basic[1] if basic is not None else posted
        if not presented:
            raise AuthenticationError(
                "client secret is missing: send it with HTTP Basic (client_secret_basic) "
                "or as client_secret in the form (client_secret_post)"
            )
        if not hmac.compare_digest(digest(presented), record.secret_hash):
            raise AuthenticationError("client secret is wrong")
        return record


def _basic_credentials(request: Request) -> tuple[str, str] | None:
    header = request.headers.get("authorization", "")
    if not header.lower().startswith("basic "):
        return None
    try:
        decoded = base64.b64decode(header[6:].strip(), validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        raise AuthenticationError("malformed Basic credentials") from None
    if ":" not in decoded:
        raise AuthenticationError("malformed Basic credentials")
    client_id, secret = decoded.split(":", 1)
    return unquote(client_id), unquote(secret)


GRANTS = ("authorization_code", "refresh_token", "client_credentials")


class TokenEndpoint:
    """`POST /token`: the request's shape first (400 for a malformed one, as RFC 6749 5.2
    says), then the client (401), then the grant: client_credentials here, the others by
    the SDK's handler."""

    def __init__(self, provider: ToolkitAuthProvider):
        self.provider = provider
        self.authenticator = HashedClientAuthenticator(provider)
        self.sdk = TokenHandler(provider, self.authenticator)

    async def handle(self, request: Request) -> Response:
        response = await self._handle(request)
        if response.status_code >= 400:
            error, description = _error_of(response)
            self.provider.event(
                "token", "denied", detail=f"{error}: {description}", status=response.status_code
            )
        return response

    async def _handle(self, request: Request) -> Response:
        media = request.headers.get("content-type", "").split(";")[0].strip().lower()
        if media != "application/x-www-form-urlencoded":
            return token_error(
                "invalid_request", "the token endpoint takes application/x-www-form-urlencoded"
            )
        form = await request.form()
        repeated = [key for key in set(form.keys()) if len(form.getlist(key)) > 1]
        if repeated:
            return token_error("invalid_request", f"{sorted(repeated)[0]} is given more than once")
        grant = form.get("grant_type")
        if not isinstance(grant, str) or not grant:
            return token_error("invalid_request", "grant_type is missing")
        if grant not in GRANTS:
            return token_error(
                "unsupported_grant_type", f"grant_type must be one of {', '.join(GRANTS)}"
            )
        resource = form.get("resource")
        if isinstance(resource, str) and not same_resource(
            resource, self.provider.policy.resource_url
        ):
            return token_error(
                "invalid_target", f"resource must be {self.provider.policy.resource_url}"
            )
        try:
            client = await self.authenticator.authenticate(request)
        except AuthenticationError as exc:
            basic = request.headers.get("authorization", "").lower().startswith("basic ")
            return token_error(
                "invalid_client",
                exc.message,
                401,
                {"WWW-Authenticate": 'Basic realm="toolkit"'} if basic else None,
            )
        if grant == "client_credentials":
            scope = form.get("scope")
            return self.provider.client_credentials(
                client, scope if isinstance(scope, str) else None
            )
        response: Response = await self.sdk.handle(request)
        return response


def _error_of(response: Response) -> tuple[str, str]:
    try:
        body = json.loads(bytes(response.body))
        return str(body.get("error", "")), str(body.get("error_description", ""))
    except (ValueError, AttributeError):
        return "", ""


class RegisterEndpoint:
    """`POST /register` (RFC 7591): 400 for a body that is not a JSON object and for a
    client asking for client_credentials, then the SDK's handler (which asks the provider,
    where the redirect URIs are checked)."""

    def __init__(self, provider: ToolkitAuthProvider, sdk: RegistrationHandler):
        self.provider = provider
        self.sdk = sdk

    async def handle(self, request: Request) -> Response:
        media = request.headers.get("content-type", "").split(";")[0].strip().lower()
        if media != "application/json":
            return self._refuse("the registration endpoint takes application/json")
        raw = await request.body()
        if len(raw) > MAX_REGISTRATION:
            return self._refuse(f"client metadata is at most {MAX_REGISTRATION // 1024} KiB")
        body, problem = parse_json_body(raw)
        if problem is not None:
            return self._refuse(problem)
        if not isinstance(body, dict):
            return self._refuse("the body must be a JSON object of client metadata")
        grants = body.get("grant_types")
        if isinstance(grants, list) and "client_credentials" in grants:
            return self._refuse(
                "client_credentials clients are created by the operator "
                "(toolkit mcp add-client), not registered"
            )
        response: Response = await self.sdk.handle(request)
        if response.status_code >= 400:
            error, description = _error_of(response)
            self.provider.event(
                "register", "denied", detail=f"{error}: {description}", status=response.status_code
            )
        return response

    def _refuse(self, description: str) -> Response:
        self.provider.event("register", "denied", detail=description, status=400)
        return JSONResponse(
            {"error": "invalid_client_metadata", "error_description": description}, status_code=400
        )
