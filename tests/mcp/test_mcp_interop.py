"""Interoperability and hardening of the MCP HTTP server's authorization server: the RFCs
its clients rely on, and the checks a browser-facing endpoint needs."""

from __future__ import annotations

import logging
import threading
import time

import pytest

from tests.support.mcp_helpers import (
    INITIALIZE,
    MCP_HEADERS,
    PROTOCOL,
    REDIRECT,
    SECRET,
    mcp_config,
    pkce,
    query_of,
    serving,
)
from toolkit.errors import ConfigError
from toolkit.mcp.events import EventRecorder
from toolkit.mcp.service import http_server
from toolkit.tls import shared_context


def test_a_loopback_redirect_uri_matches_on_any_port(shared_server):
    """RFC 8252 7.3: a native client listens on an ephemeral port."""
    client = shared_server.register()  # http://localhost:3030/callback
    client.redirect_uri = "http://localhost:49152/callback"
    verifier, challenge = pkce()
    code = shared_server.authorize(client, challenge)
    response = shared_server.exchange(client, code, verifier)
    assert response.status_code == 200, response.text


@pytest.mark.parametrize(
    "uri",
    [
        "http://localhost:3030/elsewhere",
        "http://127.0.0.1:3030/callback",
        "https://localhost:3030/callback",
    ],
)
def test_only_the_port_of_a_loopback_redirect_uri_may_differ(shared_server, uri):
    client = shared_server.register()
    client.redirect_uri = uri
    _, challenge = pkce()
    response = shared_server.http.get(
        shared_server.base + "/authorize", params=shared_server.authorize_params(client, challenge)
    )
    assert response.status_code == 400


def test_a_token_request_for_another_resource_is_invalid_target(shared_server):
    """RFC 8707: as /authorize refuses it."""
    client = shared_server.register()
    verifier, challenge = pkce()
    code = shared_server.authorize(client, challenge)
    response = shared_server.token(
        {
            "grant_type": "authorization_code",
            "code": code,
            "redirect_uri": client.redirect_uri,
            "code_verifier": verifier,
            "resource": "https://elsewhere.example/mcp",
            **client.form(),
        }
    )
    assert response.status_code == 400
    assert response.json()["error"] == "invalid_target"
    ours = shared_server.token(
        {
            "grant_type": "authorization_code",
            "code": code,
            "redirect_uri": client.redirect_uri,
            "code_verifier": verifier,
            "resource": shared_server.url,
            **client.form(),
        }
    )
    assert ours.status_code == 200, ours.text


def test_the_issuer_has_no_trailing_slash(shared_server):
    """RFC 8414 3.3: the issuer is the very URL the metadata was asked for by."""
    metadata = shared_server.http.get(
        shared_server.base + "/.well-known/oauth-authorization-server"
    ).json()
    assert metadata["issuer"] == shared_server.base
    resource = shared_server.http.get(
        shared_server.base + "/.well-known/oauth-protected-resource/mcp"
    ).json()
    assert resource["authorization_servers"] == [shared_server.base]


@pytest.mark.e2e
@pytest.mark.parametrize("host", ["::1", "127.0.0.2"])
def test_other_loopback_addresses_start(mcp_project, host):
    try:
        running = http_server(mcp_config(mcp_project), host=host, port=0, listener=EventRecorder())
    except OSError as exc:  # pragma: no cover - a machine without that address
        pytest.skip(f"{host}: {exc}")
    try:
        import httpx

        response = httpx.get(
            running.issuer_url + "/.well-known/oauth-authorization-server", verify=shared_context()
        )
        assert response.status_code == 200
        assert response.json()["issuer"] == running.issuer_url
    finally:
        running.stop()


@pytest.mark.parametrize(
    "path",
    ["/register", "/token", "/authorize", "/.well-known/oauth-authorization-server", "/consent"],
)
def test_the_oauth_endpoints_check_host(shared_server, path):
    """DNS rebinding: as /mcp does."""
    response = shared_server.http.request(
        "GET" if "well-known" in path or path in ("/authorize", "/consent") else "POST",
        shared_server.base + path,
        headers={"Host": "attacker.example"},
    )
    assert response.status_code == 421


def test_the_consent_form_checks_origin(shared_server):
    client = shared_server.register()
    _, challenge = pkce()
    consent = shared_server.http.get(
        shared_server.base + "/authorize", params=shared_server.authorize_params(client, challenge)
    ).headers["location"]
    request = query_of(consent)["request"]
    forged = shared_server.http.post(
        consent.split("?")[0],
        headers={"Origin": "https://evil.example"},
        data={"request": request, "secret": SECRET, "decision": "approve", "scope": ["read"]},
    )
    assert forged.status_code == 403
    assert "location" not in forged.headers
    same = shared_server.http.post(
        consent.split("?")[0],
        headers={"Origin": shared_server.base},
        data={"request": request, "secret": SECRET, "decision": "approve", "scope": ["read"]},
    )
    assert same.status_code == 302 and "code" in query_of(same.headers["location"])


@pytest.mark.parametrize("secret", ["aaaaaaaaaaaa", "abababababababab", "123412341234"])
def test_a_trivially_weak_operator_secret_is_refused(mcp_project, secret):
    with pytest.raises(ConfigError, match="too easy to guess"):
        http_server(mcp_config(mcp_project, {"TOOLKIT_MCP_OPERATOR_SECRET": secret}), port=0)


@pytest.mark.parametrize(
    ("metadata", "field"),
    [
        ({"grant_types": ["authorization_code", "refresh_token", "implicit"]}, "grant_types"),
        ({"grant_types": ["authorization_code", "refresh_token", "password"]}, "grant_types"),
        ({"response_types": ["code", "token"]}, "response_types"),
        ({"token_endpoint_auth_method": "private_key_jwt"}, "token_endpoint_auth_method"),
    ],
)
def test_registration_takes_only_what_the_server_supports(shared_server, metadata, field):
    response = shared_server.http.post(
        shared_server.base + "/register",
        json={"redirect_uris": [REDIRECT], "client_name": "x", **metadata},
    )
    assert response.status_code == 400, response.text
    assert field in response.json()["error_description"]


class _Records(logging.Handler):
    """Every log record, and an event set at each new one."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.records: list[logging.LogRecord] = []
        self.arrived = threading.Event()

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)
        self.arrived.set()

    def ended_or_failed(self) -> int:
        """Sessions ended (the server's own line) or failed (any error record)."""
        return sum(
            record.levelno >= logging.ERROR
            or (
                record.name == "toolkit.mcp.server"
                and record.getMessage() == "an MCP session ended"
            )
            for record in self.records
        )

    def wait_for(self, count: int) -> None:
        deadline = time.monotonic() + 10
        while self.ended_or_failed() < count and time.monotonic() < deadline:
            self.arrived.wait(max(deadline - time.monotonic(), 0))
            self.arrived.clear()
        assert self.ended_or_failed() >= count, "the session never ended"


@pytest.mark.e2e
def test_an_ended_session_is_not_an_error(mcp_project, clock):
    """A client's own DELETE, and an initialize refused for a foreign Origin (403) or Host
    (421), end their session: no error record, no traceback in the server's log."""
    records = _Records()
    root, server_log = logging.getLogger(), logging.getLogger("toolkit.mcp.server")
    level = server_log.level
    root.addHandler(records)
    server_log.setLevel(logging.DEBUG)
    try:
        with serving(mcp_config(mcp_project), clock) as server:
            _, tokens = server.tokens()
            token = tokens["access_token"]
            session = server.session(token)
            deleted = server.http.delete(
                server.url,
                headers={
                    "Authorization": f"Bearer {token}",
                    "Mcp-Session-Id": session,
                    "MCP-Protocol-Version": PROTOCOL,
                },
            )
            assert deleted.status_code == 200, deleted.text
            records.wait_for(1)
            for header, status in (("Origin", 403), ("Host", 421)):
                refused = server.http.post(
                    server.url,
                    json=INITIALIZE,
                    headers={
                        **MCP_HEADERS,
                        "Authorization": f"Bearer {token}",
                        header: "https://evil.example" if header == "Origin" else "evil.example",
                    },
                )
                assert refused.status_code == status, refused.text
            records.wait_for(3)
    finally:
        root.removeHandler(records)
        server_log.setLevel(level)
    failed = [
        f"{record.levelname} {record.name}: {record.getMessage()}"
        for record in records.records
        if record.levelno >= logging.ERROR or record.exc_info
    ]
    assert failed == []
