"""The MCP HTTP server under abuse: what anyone can send is bounded, and one client's
flood or guesses never cost the writer's own client anything."""

from __future__ import annotations

import logging
import secrets
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.support.mcp_helpers import (
    REDIRECT,
    Clock,
    Registered,
    approve,
    mcp_config,
    pkce,
    query_of,
    result_of,
    serving,
)
from toolkit.mcp.consent import ATTEMPTS_PER_REQUEST, GUESSES_IN_ALL
from toolkit.tls import shared_context

# Every test here starts a process or opens a socket (tests/support/plugin.py).
pytestmark = pytest.mark.e2e


def start(server: Any, client: Any, **extra: str) -> Any:
    _, challenge = pkce()
    return server.http.get(
        server.base + "/authorize", params=server.authorize_params(client, challenge, **extra)
    )


# -- 14: attacker-controlled values are cut short in events and answers -------------------------


def test_a_huge_refused_redirect_uri_is_cut_short_in_events_and_the_answer(server):
    uri = "ftp://evil.example/" + "a" * 200_000
    response = server.http.post(
        server.base + "/register", json={"redirect_uris": [uri], "client_name": "x"}
    )
    assert response.status_code == 400
    assert len(response.text) < 2_000
    assert server.recorder.events
    for event in server.recorder.events:
        assert len(event.detail) <= 400 and len(str(event)) < 1_000


# -- 15: what /authorize stores is bounded ------------------------------------------------------


def test_an_over_long_state_is_refused_and_not_stored(server):
    client, _ = server.tokens()
    response = start(server, client, state="s" * 30_000)
    assert response.status_code == 302
    answer = query_of(response.headers["location"])
    assert answer["error"] == "invalid_request" and "state" in answer["error_description"]
    assert (
        server.http.get(
            server.base + "/authorize", params=server.authorize_params(client, pkce()[1])
        ).status_code
        == 302
    )  # a normal request still works


def test_pending_authorization_requests_are_bounded_per_client(server):
    client, _ = server.tokens()
    waiting = [start(server, client) for _ in range(10)]
    assert all("/consent?" in r.headers["location"] for r in waiting)
    refused = query_of(start(server, client).headers["location"])
    assert refused["error"] == "temporarily_unavailable"
    # Another client is not held back by this one.
    other, _ = server.tokens()
    assert "/consent?" in start(server, other).headers["location"]
    # Answering one makes room again.
    approve(server.http, waiting[0].headers["location"], decision="deny")
    assert "/consent?" in start(server, client).headers["location"]


# -- 16: a flood of registrations never evicts a client waiting on consent -----------------------


def test_a_flood_of_registrations_does_not_evict_the_writers_client_during_consent(server):
    writer = server.register()
    verifier, challenge = pkce()
    response = server.http.get(
        server.base + "/authorize", params=server.authorize_params(writer, challenge)
    )
    consent = response.headers["location"]
    for n in range(120):
        server.register(client_name=f"flood {n}")
    answer = approve(server.http, consent)
    assert answer.status_code == 302, answer.text
    code = query_of(answer.headers["location"])["code"]
    tokens = server.exchange(writer, code, verifier)
    assert tokens.status_code == 200, tokens.text
    session = server.session(tokens.json()["access_token"])
    assert not result_of(server.call(tokens.json()["access_token"], session, "list_posts"))[
        "isError"
    ]


@pytest.mark.parametrize("count", [11])
def test_too_many_redirect_uris_are_refused(shared_server, count):
    response = shared_server.http.post(
        shared_server.base + "/register",
        json={"redirect_uris": [f"{REDIRECT}{n}" for n in range(count)], "client_name": "x"},
    )
    assert response.status_code == 400


# -- 19: an over-long path is refused before anything resolves it --------------------------------


def logs_session(server: Any, granted: list[str] | None = None) -> tuple[str, str]:
    _, tokens = server.tokens(granted=granted or ["read", "draft-write", "logs"])
    token = tokens["access_token"]
    return token, server.session(token)


@pytest.mark.parametrize(
    ("tool", "arguments"),
    [
        ("read_post", {"path": "a/" * 200_000 + "x.md"}),
        ("check_posts", {"paths": ["a/" * 200_000]}),
        ("read_comments", {"path": "content/" + "x" * 5_000 + ".md"}),
    ],
)
def test_an_over_long_path_is_refused_by_the_schema(shared_server, tool, arguments):
    token, session = logs_session(shared_server)
    response = shared_server.call(token, session, tool, arguments)
    assert response.status_code == 400, response.text[:300]
    assert response.json()["error"]["code"] == -32602


def test_an_over_long_resource_path_is_refused(shared_server):
    token, session = logs_session(shared_server)
    response = shared_server.post_mcp(
        token,
        {
            "jsonrpc": "2.0",
            "id": 3,
            "method": "resources/read",
            "params": {"uri": "toolkit://post/" + "a/" * 100_000 + "x.md"},
        },
        session,
    )
    assert response.status_code == 200
    assert "at most 4096 characters" in response.json()["error"]["message"]


# -- 22: a body that is not usable JSON is a 4xx, never a 500 -----------------------------------


def nested(depth: int) -> bytes:
    return b"[" * depth + b"]" * depth


@pytest.mark.parametrize(
    "body",
    [
        nested(100_000),
        b'{"jsonrpc": "2.0", "x": "\xff\xfe"}',
        b'{"a":' * 5_000 + b"1" + b"}" * 5_000,
    ],
)
def test_a_bad_body_on_mcp_is_400(shared_server, body):
    token, session = logs_session(shared_server)
    response = shared_server.http.post(
        shared_server.url,
        content=body,
        headers={
            "Authorization": f"Bearer {token}",
            "Mcp-Session-Id": session,
            "MCP-Protocol-Version": "2025-06-18",
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
        },
    )
    assert response.status_code == 400, response.text[:300]


@pytest.mark.parametrize(
    "body",
    [nested(100_000), b'{"redirect_uris": ["\xff"]}', b'{"a":' * 5_000 + b"1" + b"}" * 5_000],
)
def test_a_bad_body_on_register_is_400(shared_server, body):
    response = shared_server.http.post(
        shared_server.base + "/register", content=body, headers={"Content-Type": "application/json"}
    )
    assert response.status_code == 400, response.text[:300]
    assert response.json()["error"] == "invalid_client_metadata"


# -- 20: no error redirect to a client the writer never approved ---------------------------------


def test_an_authorize_error_for_a_client_never_approved_is_a_page_not_a_redirect(server):
    stranger = server.register(["https://evil.example/landing"])
    response = server.http.get(
        server.base + "/authorize", params=server.authorize_params(stranger, None)
    )
    assert response.status_code == 400
    assert "location" not in response.headers
    assert response.json()["error"] == "invalid_request"
    events = [e for e in server.recorder.events if e.action == "authorize"]
    assert events and events[-1].outcome == "denied"


# -- 21: a symlink out of the content folder is no post to any tool --------------------------------


def test_a_symlink_out_of_the_content_folder_is_left_out_by_every_tool(make_project, sandbox):
    import anyio
    import httpx
    from mcp.shared.memory import create_connected_server_and_client_session

    from toolkit.config import load_config
    from toolkit.mcp import scopes
    from toolkit.mcp.events import EventRecorder
    from toolkit.mcp.server import ToolkitMCP

    sandbox.reset()
    project = make_project("[forem]\nrate_window = 1\n")
    project.post("real", "A real draft", "Draft body.\n")
    notes = project.root / "notes"
    notes.mkdir()
    (notes / "secret.md").write_text(
        "---\ntitle: Private notes\npublished: false\n---\nNot for anyone.\n", encoding="utf-8"
    )
    (project.root / "content" / "linked.md").symlink_to(notes / "secret.md")
    config = load_config(
        project.root / "toolkit.toml",
        env={"FOREM_BASE_URL": sandbox.base_url, "FOREM_API_KEY": sandbox.demo_api_key},
    )
    server = ToolkitMCP(config, EventRecorder(), local_scopes=scopes.ALL)

    async def run() -> dict[str, Any]:
        async with create_connected_server_and_client_session(server) as client:
            return {
                "list": (await client.call_tool("list_posts", {})).structuredContent,
                "resources": [str(r.uri) for r in (await client.list_resources()).resources],
                "check": (await client.call_tool("check_posts", {})).structuredContent,
                "push": (await client.call_tool("push_drafts", {})).structuredContent,
                "build": (await client.call_tool("build_site", {"drafts": True})).structuredContent,
            }

    seen = anyio.run(run)
    assert [p["path"] for p in seen["list"]["posts"]] == ["content/real.md"]
    assert seen["resources"] == ["toolkit://post/content/real.md"]
    assert "linked" not in str(seen["check"])
    assert [p["path"] for p in seen["push"]["posts"]] == ["content/real.md"]
    assert "linked" in str(seen["build"]), seen["build"]  # said, not built
    site = project.root / "site"
    assert (site / "real" / "index.html").is_file()
    assert not (site / "linked").exists()
    assert not any(
        "Not for anyone" in page.read_text(encoding="utf-8", errors="replace")
        for page in site.rglob("*.html")
    )
    titles = [
        a["title"]
        for a in httpx.get(
            f"{sandbox.base_url}/api/articles/me/all",
            params={"per_page": 100},
            headers={"api-key": sandbox.demo_api_key},
            verify=shared_context(),
        ).json()
    ]
    assert "A real draft" in titles and "Private notes" not in titles


def test_registration_metadata_is_bounded_before_it_is_stored(server, mcp_project):
    response = server.http.post(
        server.base + "/register",
        json={
            "redirect_uris": [REDIRECT],
            "client_name": "x",
            "client_uri": "https://a.example/",
            "contacts": ["c" * 1_000 + "@example.com"] * 100,
        },
    )
    assert response.status_code == 400
    assert "at most 16 KiB" in response.json()["error_description"]


# -- refused input is one line at INFO, never an error with a traceback ---------------------------


class Heard(logging.Handler):
    """The server's log lines, and an event set when one holds `wanted`."""

    def __init__(self, wanted: str):
        super().__init__(logging.DEBUG)
        self.wanted = wanted
        self.records: list[logging.LogRecord] = []
        self.said = threading.Event()

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)
        if self.wanted in record.getMessage():
            self.said.set()


@contextmanager
def server_log(wanted: str) -> Iterator[Heard]:
    heard = Heard(wanted)
    root = logging.getLogger()
    level = root.level
    root.addHandler(heard)
    root.setLevel(logging.DEBUG)
    try:
        yield heard
    finally:
        root.removeHandler(heard)
        root.setLevel(level)


def no_errors(heard: Heard) -> None:
    errors = [r for r in heard.records if r.levelno >= logging.ERROR or r.exc_info]
    assert errors == [], [r.getMessage() for r in errors]


@pytest.mark.parametrize("path", ["/authorize", "/token", "/consent"])
def test_an_oversize_form_field_is_400_and_one_line_at_info(server, path):
    client = server.register()
    with server_log("refused a form") as heard:
        response = server.http.post(
            server.base + path,
            data={"client_id": client.client_id, "state": "s" * (1024 * 1024 + 1)},
            headers={"Origin": server.base},
        )
        assert heard.said.wait(30)
    assert response.status_code == 400, response.text[:300]
    assert "Field exceeded maximum size" in response.json()["error_description"]
    no_errors(heard)
    (line,) = [r for r in heard.records if "refused a form" in r.getMessage()]
    assert line.levelno == logging.INFO and "\n" not in line.getMessage()


@pytest.mark.parametrize("path", ["/register", "/authorize", "/token"])
def test_a_body_the_client_drops_half_way_is_one_line_at_info(server, path):
    from urllib.parse import urlsplit

    origin = urlsplit(server.base)
    with server_log("left before its request body was complete") as heard:
        with socket.create_connection((origin.hostname, origin.port)) as raw:
            raw.sendall(
                f"POST {path} HTTP/1.1\r\nHost: {origin.netloc}\r\n"
                "Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n"
                '{"redirect_uris": '.encode()
            )
        assert heard.said.wait(30), [r.getMessage() for r in heard.records]
    no_errors(heard)


# -- the screen: guesses bounded in all, and nobody but the writer keeps the writer out -----------


def _client_at(address: str) -> httpx.Client:
    """A client whose connections come from `address` (any of 127.0.0.0/8 reaches the
    server on 127.0.0.1)."""
    return httpx.Client(
        timeout=30,
        verify=shared_context(),
        transport=httpx.HTTPTransport(local_address=address, verify=shared_context()),
    )


def _authorization(server: Any, http: httpx.Client) -> str:
    """A new client registered from `http`, and the screen of its authorization request."""
    registered = http.post(
        server.base + "/register", json={"redirect_uris": [REDIRECT], "client_name": "guesser"}
    )
    assert registered.status_code == 201, registered.text
    client = Registered(registered.json()["client_id"], registered.json().get("client_secret"))
    _, challenge = pkce()
    started = http.get(
        server.base + "/authorize", params=server.authorize_params(client, challenge)
    )
    assert started.status_code == 302, started.text
    return str(started.headers["location"])


@settings(
    max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    plan=st.lists(
        st.tuples(
            st.integers(min_value=0, max_value=3),  # the address guessing
            st.integers(min_value=1, max_value=ATTEMPTS_PER_REQUEST),  # its wrong answers
            st.booleans(),  # with a made-up one-time code too
        ),
        min_size=1,
        max_size=10,
    ),
    writer=st.integers(min_value=0, max_value=3),  # the writer's own address among them
)
def test_property_guesses_are_bounded_in_all_and_nobody_keeps_the_writer_out(
    mcp_project, plan, writer
):
    addresses = [f"127.0.0.{n}" for n in range(1, 5)]
    with serving(mcp_config(mcp_project), Clock()) as server:
        clients = [_client_at(address) for address in addresses]
        try:
            for who, wrong, with_code in plan:
                consent = _authorization(server, clients[who])
                for _ in range(wrong):
                    answer = approve(
                        clients[who],
                        consent,
                        secret="guess " + secrets.token_hex(4),
                        code="2222-3333-4444" if with_code else None,
                    )
                    assert answer.status_code in (302, 403, 429), answer.text[:200]
            compared = sum("wrong operator secret" in e.detail for e in server.recorder.events)
            assert compared <= GUESSES_IN_ALL
            consent = _authorization(server, clients[writer])
            answer = approve(clients[writer], consent)
            if answer.status_code == 429:  # too many guesses lately: the terminal's code
                assert server.announced, "no one-time code was shown"
                code = server.announced[-1].rsplit(" ", 1)[-1]
                answer = approve(clients[writer], consent, code=code)
            assert answer.status_code == 302, answer.text[:300]
            assert "code" in query_of(answer.headers["location"])
        finally:
            for client in clients:
                client.close()
