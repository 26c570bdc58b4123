"""The HTTP transport end to end with the MCP SDK's own clients: `OAuthClientProvider`
discovers, registers, is authorized on the screen (approved with the operator secret, as
the writer would), exchanges the code, lists and calls tools, refreshes; the
client_credentials client does its part; tokens survive a restart; revoking a client cuts
it off; the server will not start where it should not."""

from __future__ import annotations

import datetime as dt
import ssl
from typing import Any

import anyio
import httpx
import pytest
from mcp import ClientSession
from mcp.client.auth import OAuthClientProvider
from mcp.client.auth.extensions.client_credentials import ClientCredentialsOAuthProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import OAuthClientInformationFull, OAuthClientMetadata, OAuthToken
from pydantic import AnyUrl

from tests.support.mcp_helpers import (
    REDIRECT,
    SECRET,
    Clock,
    Harness,
    approve,
    mcp_config,
    query_of,
)
from toolkit.errors import ConfigError, ServeError
from toolkit.mcp.events import EventRecorder
from toolkit.mcp.service import add_client, http_server, mcp_clients
from toolkit.tls import shared_context


class MemoryStorage:
    """The SDK client's `TokenStorage`, in memory."""

    def __init__(self) -> None:
        self.tokens: OAuthToken | None = None
        self.client_info: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client_info

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client_info = client_info


class Writer:
    """Approves on the authorization screen what the SDK client's redirect handler opens,
    and hands the code back to its callback handler."""

    def __init__(self, scopes: list[str] | None = None):
        self.scopes = scopes
        self.answer: dict[str, str] = {}
        self.screens = 0

    async def redirect_handler(self, authorization_url: str) -> None:
        async with httpx.AsyncClient(verify=shared_context()) as http:
            response = await http.get(authorization_url)
            assert response.status_code == 302, response.text
            consent = response.headers["location"]
            self.screens += 1

        def answer() -> httpx.Response:
            with httpx.Client(verify=shared_context()) as browser:
                return approve(browser, consent, scopes=self.scopes)

        back = await anyio.to_thread.run_sync(answer)
        assert back.status_code == 302, back.text
        assert back.headers["location"].startswith(REDIRECT)
        self.answer = query_of(back.headers["location"])

    async def callback_handler(self) -> tuple[str, str | None]:
        return self.answer["code"], self.answer.get("state")


def oauth_client(url: str, storage: MemoryStorage, writer: Writer) -> OAuthClientProvider:
    return OAuthClientProvider(
        url,
        OAuthClientMetadata(client_name="an assistant", redirect_uris=[AnyUrl(REDIRECT)]),
        storage,
        writer.redirect_handler,
        writer.callback_handler,
    )


async def with_session(url: str, auth: httpx.Auth, work: Any, seen: list[str] | None = None) -> Any:
    async def record(request: httpx.Request) -> None:
        if seen is not None:
            seen.append(f"{request.method} {request.url.path}")

    async with (
        httpx.AsyncClient(
            auth=auth, timeout=30, event_hooks={"request": [record]}, verify=shared_context()
        ) as http,
        streamable_http_client(url, http_client=http) as (read, write, _),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        return await work(session)


def test_the_sdk_client_is_authorized_and_uses_the_tools(server, mcp_project):
    storage, writer, seen = MemoryStorage(), Writer(), list[str]()

    async def work(session: ClientSession) -> dict[str, Any]:
        tools = await session.list_tools()
        listed = await session.call_tool("list_posts", {})
        checked = await session.call_tool("check_posts", {"paths": ["content/broken.md"]})
        resources = await session.list_resources()
        text = await session.read_resource(resources.resources[0].uri)
        return {
            "tools": tools,
            "listed": listed,
            "checked": checked,
            "resources": resources,
            "text": text,
        }

    got = anyio.run(with_session, server.url, oauth_client(server.url, storage, writer), work, seen)
    # Discovery (RFC 9728 first, then RFC 8414), registration, the screen, the exchange.
    assert seen[:6] == [
        "POST /mcp",
        "GET /.well-known/oauth-protected-resource/mcp",
        "GET /.well-known/oauth-authorization-server",
        "POST /register",
        "POST /token",
        "POST /mcp",
    ]
    assert writer.screens == 1
    assert storage.tokens is not None and storage.tokens.scope == "read draft-write logs"
    names = [tool.name for tool in got["tools"].tools]
    assert {
        "list_posts",
        "read_post",
        "check_posts",
        "plan",
        "push_drafts",
        "read_comments",
        "build_site",
    } <= set(names)
    assert all(
        tool.outputSchema and tool.inputSchema and tool.description for tool in got["tools"].tools
    )
    posts = got["listed"].structuredContent["posts"]
    assert {p["path"] for p in posts} == {
        "content/hello.md",
        "content/draft.md",
        "content/broken.md",
    }
    assert (
        got["checked"]
        .structuredContent["problems"][0]["text"]
        .startswith("content/broken.md:2: title:")
    )
    first = got["resources"].resources[0]
    assert str(first.uri) == "toolkit://post/content/broken.md"
    assert got["text"].contents[0].text == (mcp_project.content / "broken.md").read_text()
    # The client is the writer's to see and revoke.
    (client,) = mcp_clients(mcp_config(mcp_project))
    assert client.name == "an assistant" and client.granted == ["read", "draft-write", "logs"]


def test_the_sdk_client_refreshes_an_expired_token(server):
    storage, writer = MemoryStorage(), Writer()
    auth = oauth_client(server.url, storage, writer)

    async def first(session: ClientSession) -> None:
        await session.call_tool("list_posts", {})

    anyio.run(with_session, server.url, auth, first)
    before = storage.tokens
    assert before is not None
    # An hour and more later: the server's token expired, and the client's clock says so.
    server.clock.advance(3700)
    auth.context.token_expiry_time = 1.0  # a second after the epoch: long past

    async def later(session: ClientSession) -> bool:
        result = await session.call_tool("list_posts", {})
        return result.isError

    assert anyio.run(with_session, server.url, auth, later) is False
    assert writer.screens == 1  # refreshed, not authorized again
    after = storage.tokens
    assert after is not None and after.refresh_token != before.refresh_token
    assert after.access_token != before.access_token
    assert any(e.action == "refresh" and e.outcome == "ok" for e in server.recorder.events)
    old = server.post_mcp(before.access_token, {"jsonrpc": "2.0", "id": 1, "method": "ping"})
    assert old.status_code == 401


@pytest.mark.e2e
def test_tokens_and_clients_survive_a_restart(mcp_project):
    clock = Clock()
    first = http_server(mcp_config(mcp_project), port=0, clock=clock, listener=EventRecorder())
    harness = Harness(first.issuer_url, clock, None)
    try:
        _, tokens = harness.tokens()
    finally:
        first.stop()
    second = http_server(mcp_config(mcp_project), port=0, clock=clock, listener=EventRecorder())
    again = Harness(second.issuer_url, clock, None)
    try:
        assert again.session(tokens["access_token"])  # the same token, a new process state
    finally:
        again.http.close()
        harness.http.close()
        second.stop()


def test_client_credentials_with_the_sdk_client(server, mcp_project):
    created = add_client(mcp_config(mcp_project), "nightly check", ["read"])
    auth = ClientCredentialsOAuthProvider(
        server.url,
        MemoryStorage(),
        created.client.client_id,
        created.client_secret,
        scopes="read",
        issuer=server.base + "/",
    )

    async def work(session: ClientSession) -> Any:
        return await session.call_tool("check_posts", {})

    result = anyio.run(with_session, server.url, auth, work)
    assert result.structuredContent["errors"] == 1
    assert any(
        e.action == "client_credentials" and e.outcome == "ok" for e in server.recorder.events
    )


def test_client_credentials_refusals(server, mcp_project):
    created = add_client(mcp_config(mcp_project), "ci", ["read"])
    client_id, secret = created.client.client_id, created.client_secret
    ok = server.token({"grant_type": "client_credentials"}, auth=(client_id, secret))
    assert ok.status_code == 200 and ok.json()["scope"] == "read"
    assert "refresh_token" not in ok.json()
    wrong = server.token({"grant_type": "client_credentials"}, auth=(client_id, "wrong"))
    assert wrong.status_code == 401 and wrong.json()["error"] == "invalid_client"
    assert wrong.headers["www-authenticate"].startswith("Basic")
    # Asking for more gives what the client may have (RFC 6749 3.3), never more...
    more = server.token(
        {"grant_type": "client_credentials", "scope": "read publish"}, auth=(client_id, secret)
    )
    assert more.status_code == 200 and more.json()["scope"] == "read"
    # ...and nothing it may have is refused.
    outside = server.token(
        {"grant_type": "client_credentials", "scope": "publish"}, auth=(client_id, secret)
    )
    assert outside.status_code == 400 and outside.json()["error"] == "invalid_scope"
    # A client that registered itself is not one the operator approved for it.
    registered = server.register()
    refused = server.token({"grant_type": "client_credentials", **registered.form()})
    assert refused.status_code == 400 and refused.json()["error"] == "unauthorized_client"
    asked = server.http.post(
        server.base + "/register",
        json={"redirect_uris": [REDIRECT], "grant_types": ["client_credentials"]},
    )
    assert asked.status_code == 400


def test_a_revoked_client_is_cut_off(server, mcp_project):
    client, tokens = server.tokens()
    assert server.session(tokens["access_token"])
    result = mcp_project.run(
        "mcp", "revoke", client.client_id, env={"TOOLKIT_MCP_OPERATOR_SECRET": SECRET}
    )
    assert result.exit_code == 0, result.output
    assert f"revoked {client.client_id}" in result.output
    assert (
        server.post_mcp(
            tokens["access_token"], {"jsonrpc": "2.0", "id": 1, "method": "ping"}
        ).status_code
        == 401
    )
    assert server.refresh(client, tokens["refresh_token"]).status_code in (400, 401)
    again = mcp_project.run("mcp", "revoke", client.client_id)
    assert again.exit_code == 1
    assert again.output == f"Error: MCP client {client.client_id} was revoked already\n"
    listed = mcp_project.run("mcp", "clients", "--all", "--json")
    assert '"revoked": true' in listed.output
    assert mcp_project.run("mcp", "revoke", "nobody").output.startswith(
        "Error: no MCP client 'nobody'"
    )


# -- where the server refuses to start ---------------------------------------------------------


def test_no_operator_secret_no_http_server(mcp_project):
    result = mcp_project.run("mcp", "--transport", "http", "--port", "0")
    assert result.exit_code == 1
    assert result.output.startswith("Error: TOOLKIT_MCP_OPERATOR_SECRET is not set")


def test_a_short_operator_secret_is_refused(mcp_project):
    with pytest.raises(ConfigError, match="at least 12 characters"):
        http_server(mcp_config(mcp_project, {"TOOLKIT_MCP_OPERATOR_SECRET": "short"}), port=0)


@pytest.mark.parametrize("host", ["0.0.0.0", "192.0.2.10", "example.com"])
def test_a_non_loopback_address_needs_tls(mcp_project, host):
    result = mcp_project.run(
        "mcp",
        "--transport",
        "http",
        "--host",
        host,
        "--port",
        "0",
        env={"TOOLKIT_MCP_OPERATOR_SECRET": SECRET},
    )
    assert result.exit_code == 1
    assert result.output.startswith(f"Error: {host} is not a loopback address")


@pytest.mark.e2e
def test_an_issuer_with_a_path_is_refused(make_project):
    project = make_project('[site]\ntitle = "T"\n[mcp]\nissuer_url = "https://example.com/mcp"\n')
    with pytest.raises(ConfigError, match="must be an origin"):
        http_server(mcp_config(project), port=0)


def self_signed(folder) -> tuple[Any, Any]:
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = dt.datetime.now(dt.UTC)
    import ipaddress

    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(days=1))
        .not_valid_after(now + dt.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
            critical=False,
        )
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = folder / "cert.pem", folder / "key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return cert_path, key_path


@pytest.mark.e2e
def test_tls_serves_https(mcp_project, tmp_path):
    cert, key = self_signed(tmp_path)
    running = http_server(
        mcp_config(mcp_project), port=0, tls_cert=cert, tls_key=key, listener=EventRecorder()
    )
    try:
        assert running.url.startswith("https://127.0.0.1:")
        trusted = ssl.create_default_context(cafile=str(cert))
        response = httpx.get(
            running.issuer_url + "/.well-known/oauth-authorization-server", verify=trusted
        )
        assert response.status_code == 200
        assert response.json()["token_endpoint"].startswith("https://")
    finally:
        running.stop()


def test_a_bad_certificate_is_one_line(mcp_project, tmp_path):
    (tmp_path / "cert.pem").write_text("not a certificate")
    (tmp_path / "key.pem").write_text("not a key")
    with pytest.raises(ServeError, match="TLS: cannot use the certificate"):
        http_server(
            mcp_config(mcp_project),
            port=0,
            tls_cert=tmp_path / "cert.pem",
            tls_key=tmp_path / "key.pem",
        )


def test_client_credentials_take_the_secret_by_either_advertised_method(server, mcp_project):
    created = add_client(mcp_config(mcp_project), "ci", ["read"])
    client_id, secret = created.client.client_id, created.client_secret
    metadata = server.http.get(server.base + "/.well-known/oauth-authorization-server").json()
    assert {"client_secret_post", "client_secret_basic"} <= set(
        metadata["token_endpoint_auth_methods_supported"]
    )
    posted = server.token(
        {"grant_type": "client_credentials", "client_id": client_id, "client_secret": secret}
    )
    assert posted.status_code == 200, posted.text
    assert posted.json()["scope"] == "read"
    wrong = server.token(
        {"grant_type": "client_credentials", "client_id": client_id, "client_secret": "wrong"}
    )
    assert wrong.status_code == 401 and wrong.json()["error"] == "invalid_client"
    both = server.token(
        {"grant_type": "client_credentials", "client_secret": secret}, auth=(client_id, secret)
    )
    assert both.status_code == 401 and "one method" in both.json()["error_description"]
    missing = server.token({"grant_type": "client_credentials", "client_id": client_id})
    assert missing.status_code == 401
    assert "client_secret_basic" in missing.json()["error_description"]
