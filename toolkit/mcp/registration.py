"""What a client may register (RFC 7591), and a registered client as the MCP SDK sees it.

- a redirect URI must be https, or http on a loopback host (`localhost`, 127.0.0.1,
  [::1]), without a fragment or a user name (`redirect_uri_problem`); a loopback one then
  matches on any port (RFC 8252 7.3, `ToolkitClientInfo`);
- only the grant types, response types and authentication methods this server supports
  (`unsupported_metadata`), and a bounded number of redirect URIs of bounded length;
- the SDK is given a client's metadata, never its secret: a client handed to SDK code
  carries an unusable secret, so any SDK path comparing secrets as they are fails closed
  (`client_info`; the secret is checked against its hash in `endpoints.py`).

The provider (`auth.py`) applies these rules when a client registers.
"""

from __future__ import annotations

import secrets
from urllib.parse import urlsplit

from mcp.shared.auth import OAuthClientInformationFull
from pydantic import AnyUrl

from toolkit.mcp.events import clip
from toolkit.mcp.store import ClientRecord
from toolkit.serving import is_loopback

# What a client handed to the SDK carries as its secret: random, never shown, so that an
# SDK path comparing secrets as they are can never succeed.
UNUSABLE_SECRET = secrets.token_hex(32)
MAX_REDIRECT_URI = 2048  # characters of a registered redirect URI
MAX_REDIRECT_URIS = 10  # redirect URIs of one client


def redirect_uri_problem(uri: str) -> str | None:
    """Why a redirect URI may not be registered: it must be https, or http on a loopback
    host, with no fragment and no user name or password in it."""
    shown = clip(uri, 200)
    if len(uri) > MAX_REDIRECT_URI:
        return f"{shown}: a redirect URI must be at most {MAX_REDIRECT_URI} characters"
    try:
        parts = urlsplit(uri)
        host = parts.hostname or ""
        user = parts.username is not None or parts.password is not None
    except ValueError:
        return f"{shown}: not a valid URI"
    if parts.fragment or "#" in uri:
        return f"{shown}: a redirect URI must not have a fragment"
    if user:
        return f"{shown}: a redirect URI must not carry a user name or password"
    if parts.scheme == "https" and host:
        return None
    if parts.scheme == "http" and host and is_loopback(host):
        return None
    return f"{shown}: a redirect URI must be https, or http on localhost (127.0.0.1, [::1])"


REGISTERED_GRANTS = ("authorization_code", "refresh_token")
RESPONSE_TYPES = ("code",)
AUTH_METHODS = ("client_secret_post", "client_secret_basic", "none")


def unsupported_metadata(client: OAuthClientInformationFull) -> str | None:
    """What a registration asks for that this server does not do (so is never stored)."""
    grants = [g for g in client.grant_types if g not in REGISTERED_GRANTS]
    if grants:
        return (
            f"grant_types: {clip(grants[0], 60)} is not supported "
            f"(a registered client uses {' and '.join(REGISTERED_GRANTS)})"
        )
    responses = [r for r in client.response_types if r not in RESPONSE_TYPES]
    if responses:
        return f"response_types: {clip(responses[0], 60)} is not supported (only code)"
    method = client.token_endpoint_auth_method
    if method is not None and method not in AUTH_METHODS:
        return (
            f"token_endpoint_auth_method: {clip(str(method), 60)} is not supported "
            f"({', '.join(AUTH_METHODS)})"
        )
    return None


def _same_but_port(registered: str, given: str) -> bool:
    """Whether `given` is the loopback redirect URI `registered` on another port: a native
    client listens on an ephemeral port (RFC 8252 7.3); scheme, host, path and query must
    be the same."""
    try:
        ours, theirs = urlsplit(registered), urlsplit(given)
        ours_port, theirs_port = ours.port, theirs.port  # a malformed port raises here
    except ValueError:
        return False
    host = ours.hostname or ""
    return (
        ours.scheme == theirs.scheme == "http"
        and is_loopback(host)
        and theirs.hostname == host
        and ours.path == theirs.path
        and ours.query == theirs.query
        and not theirs.fragment
        and theirs.username is None
        and theirs.password is None
        and ours_port is not None
        and theirs_port is not None
    )


class ToolkitClientInfo(OAuthClientInformationFull):
    """A client as the SDK sees it; a loopback redirect URI matches on any port."""

    def validate_redirect_uri(self, redirect_uri: AnyUrl | None) -> AnyUrl:
        if (
            redirect_uri is not None
            and self.redirect_uris is not None
            and redirect_uri not in self.redirect_uris
            and any(_same_but_port(str(uri), str(redirect_uri)) for uri in self.redirect_uris)
        ):
            return redirect_uri
        return super().validate_redirect_uri(redirect_uri)


def client_info(record: ClientRecord) -> OAuthClientInformationFull:
    """What the SDK is given of a client: its metadata, never its secret."""
    return ToolkitClientInfo.model_validate(
        {
            **record.info,
            "client_id": record.client_id,
            "client_secret": UNUSABLE_SECRET if record.secret_hash else None,
        }
    )
