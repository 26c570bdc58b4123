"""Driving the MCP server from a test: a clock to move, the authorization screen answered
the way a writer answers it, raw OAuth and JSON-RPC requests, the SDK's own clients."""

from __future__ import annotations

import base64
import hashlib
import json
import secrets
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx

from toolkit.config import Config, load_config
from toolkit.mcp.events import EventRecorder
from toolkit.mcp.service import http_server
from toolkit.tls import shared_context

SECRET = "correct horse battery staple"  # the operator secret of every test server
REDIRECT = "http://localhost:3030/callback"
PROTOCOL = "2025-06-18"
# The request that opens a session.
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": PROTOCOL,
        "capabilities": {},
        "clientInfo": {"name": "test", "version": "1"},
    },
}
MCP_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}

POSTS = {
    "hello": ("Hello, world", "Some text.\n", {"tags": "python, tooling"}),
    "draft": ("A draft", "Not yet.\n", {}),
    "broken": ("", "No title.\n", {}),
}


class Clock:
    """The server's time: the real time plus what the test has moved it by."""

    def __init__(self) -> None:
        self.offset = 0.0

    def __call__(self) -> float:
        return time.time() + self.offset

    def advance(self, seconds: float) -> None:
        self.offset += seconds


def write_posts(project: Any) -> None:
    for name, (title, body, front) in POSTS.items():
        project.post(name, title, body, **front)


def mcp_config(project: Any, extra_env: dict[str, str] | None = None) -> Config:
    return load_config(
        project.root / "toolkit.toml",
        env={"TOOLKIT_MCP_OPERATOR_SECRET": SECRET, **(extra_env or {})},
    )


def pkce() -> tuple[str, str]:
    """A verifier and its S256 challenge."""
    verifier = secrets.token_urlsafe(48)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest())
    return verifier, challenge.decode().rstrip("=")


def query_of(url: str) -> dict[str, str]:
    return {k: v[0] for k, v in parse_qs(urlsplit(url).query).items()}


def approve(
    http: httpx.Client,
    consent_url: str,
    *,
    secret: str = SECRET,
    scopes: list[str] | None = None,
    decision: str = "approve",
    code: str | None = None,
) -> httpx.Response:
    """Answer the authorization screen as the writer does: open it, tick `scopes` (default:
    what the page ticks), type the secret (and the one-time code, when given), press the
    button."""
    page = http.get(consent_url)
    assert page.status_code == 200, page.text
    if scopes is None:
        scopes = [
            part.split('value="')[1].split('"')[0]
            for part in page.text.split("<input ")[1:]
            if 'name="scope"' in part and " checked" in part
        ]
    data: dict[str, Any] = {
        "request": query_of(consent_url)["request"],
        "secret": secret,
        "decision": decision,
        "scope": scopes,
    }
    if code is not None:
        data["code"] = code
    return http.post(consent_url.split("?")[0], data=data)


@dataclass
class Registered:
    client_id: str
    client_secret: str | None
    redirect_uri: str = REDIRECT

    def form(self) -> dict[str, str]:
        data = {"client_id": self.client_id}
        if self.client_secret:
            data["client_secret"] = self.client_secret
        return data


@dataclass
class Harness:
    """A running HTTP transport and the requests a test makes to it."""

    base: str  # the origin
    clock: Clock
    recorder: Any
    announced: list[str] = field(default_factory=list)  # lines for the server's terminal
    http: httpx.Client = field(
        default_factory=lambda: httpx.Client(timeout=30, verify=shared_context())
    )

    @property
    def url(self) -> str:
        return self.base + "/mcp"

    def register(self, redirect_uris: list[str] | None = None, **metadata: Any) -> Registered:
        response = self.http.post(
            self.base + "/register",
            json={
                "redirect_uris": redirect_uris or [REDIRECT],
                "client_name": "test client",
                **metadata,
            },
        )
        assert response.status_code == 201, response.text
        body = response.json()
        return Registered(
            body["client_id"], body.get("client_secret"), (redirect_uris or [REDIRECT])[0]
        )

    def authorize_params(
        self, client: Registered, challenge: str | None, scopes: str | None = None, **extra: str
    ) -> dict[str, str]:
        params = {
            "response_type": "code",
            "client_id": client.client_id,
            "redirect_uri": client.redirect_uri,
            "state": "s-123",
            **extra,
        }
        if challenge is not None:
            params.update(code_challenge=challenge, code_challenge_method="S256")
        if scopes is not None:
            params["scope"] = scopes
        return params

    def authorize(
        self,
        client: Registered,
        challenge: str,
        scopes: str | None = None,
        granted: list[str] | None = None,
    ) -> str:
        """The code the writer's approval gives."""
        response = self.http.get(
            self.base + "/authorize", params=self.authorize_params(client, challenge, scopes)
        )
        assert response.status_code == 302, response.text
        answer = approve(self.http, response.headers["location"], scopes=granted)
        assert answer.status_code == 302, answer.text
        back = query_of(answer.headers["location"])
        assert back["state"] == "s-123"
        return back["code"]

    def token(self, data: dict[str, str], **kwargs: Any) -> httpx.Response:
        return self.http.post(self.base + "/token", data=data, **kwargs)

    def exchange(self, client: Registered, code: str, verifier: str) -> httpx.Response:
        return self.token(
            {
                "grant_type": "authorization_code",
                "code": code,
                "redirect_uri": client.redirect_uri,
                "code_verifier": verifier,
                **client.form(),
            }
        )

    def refresh(self, client: Registered, refresh_token: str) -> httpx.Response:
        return self.token(
            {"grant_type": "refresh_token", "refresh_token": refresh_token, **client.form()}
        )

    def tokens(
        self, scopes: str | None = None, granted: list[str] | None = None
    ) -> tuple[Registered, dict[str, Any]]:
        """A registered client and the tokens of one approved authorization."""
        client = self.register(scope=scopes) if scopes else self.register()
        verifier, challenge = pkce()
        code = self.authorize(client, challenge, scopes, granted)
        response = self.exchange(client, code, verifier)
        assert response.status_code == 200, response.text
        return client, response.json()

    # -- JSON-RPC over Streamable HTTP ------------------------------------------------------

    def post_mcp(
        self,
        token: str | None,
        message: dict[str, Any],
        session: str | None = None,
        *,
        params: dict[str, str] | None = None,
    ) -> httpx.Response:
        headers = dict(MCP_HEADERS)
        if token is not None:
            headers["Authorization"] = f"Bearer {token}"
        if session is not None:
            headers.update({"Mcp-Session-Id": session, "MCP-Protocol-Version": PROTOCOL})
        return self.http.post(self.url, json=message, headers=headers, params=params)

    def session(self, token: str) -> str:
        """An initialized MCP session of `token`; its id."""
        response = self.post_mcp(token, INITIALIZE)
        assert response.status_code == 200, response.text
        session = response.headers["mcp-session-id"]
        done = self.post_mcp(
            token, {"jsonrpc": "2.0", "method": "notifications/initialized"}, session
        )
        assert done.status_code == 202, done.text
        return session

    def call(
        self, token: str, session: str, tool: str, arguments: dict[str, Any] | None = None
    ) -> httpx.Response:
        return self.post_mcp(
            token,
            {
                "jsonrpc": "2.0",
                "id": 2,
                "method": "tools/call",
                "params": {"name": tool, "arguments": arguments or {}},
            },
            session,
        )


@contextmanager
def serving(config: Config, clock: Clock) -> Iterator[Harness]:
    """`toolkit mcp --transport http` on `config`, on a free loopback port, its time `clock`;
    stopped when the block ends."""
    recorder = EventRecorder()
    announced: list[str] = []
    running = http_server(config, port=0, clock=clock, listener=recorder, announce=announced.append)
    harness = Harness(running.issuer_url, clock, recorder, announced)
    try:
        yield harness
    finally:
        harness.http.close()
        running.stop()


def result_of(response: httpx.Response) -> dict[str, Any]:
    """The JSON-RPC result of a response (JSON, as this server answers)."""
    assert response.status_code == 200, response.text
    body = response.json()
    assert "result" in body, body
    result: dict[str, Any] = body["result"]
    return result


def challenge_of(response: httpx.Response) -> dict[str, str]:
    """The attributes of a `WWW-Authenticate: Bearer ...` header."""
    header = response.headers["www-authenticate"]
    assert header.startswith("Bearer "), header
    attributes: dict[str, str] = {}
    for part in header[len("Bearer ") :].split('", '):
        name, _, value = part.partition("=")
        attributes[name.strip()] = value.strip().strip('"')
    return attributes


def no_secrets_in(text: str, *secrets_: str) -> bool:
    return not any(value and value in text for value in secrets_)


def dumps(events: list[Any]) -> str:
    return json.dumps([event.to_json() for event in events])
