"""Every tool call is authorised on the token of the request that carries it: not on the
token that opened the MCP session, whatever the arguments say, and never after the grant
that opened the session was revoked or has expired."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import anyio
import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mcp.shared.exceptions import McpError
from mcp.shared.memory import create_connected_server_and_client_session
from mcp.types import TextContent

from tests.support.mcp_helpers import (
    Clock,
    Harness,
    Registered,
    mcp_config,
    pkce,
    result_of,
    serving,
)
from toolkit.config import load_config
from toolkit.mcp import scopes
from toolkit.mcp.events import EventRecorder
from toolkit.mcp.server import ToolkitMCP
from toolkit.tls import shared_context

PUBLISH = ["read", "draft-write", "publish", "logs"]
NO_PUBLISH = ["read", "draft-write", "logs"]
LIVE_TITLE = "Going live"


def grant(server: Harness, client: Registered, granted: list[str]) -> dict[str, Any]:
    """The tokens of one more authorization of `client`, the writer ticking `granted`."""
    verifier, challenge = pkce()
    code = server.authorize(client, challenge, " ".join(scopes.ALL), granted)
    response = server.exchange(client, code, verifier)
    assert response.status_code == 200, response.text
    tokens: dict[str, Any] = response.json()
    assert tokens["scope"].split() == granted
    return tokens


def tool_events(server: Harness, tool: str) -> list[Any]:
    return [e for e in server.recorder.events if e.kind == "tool" and e.tool == tool]


@pytest.fixture
def publishing(make_project, sandbox) -> Iterator[Harness]:
    """The HTTP server on a project with one post marked published: true, its publishing
    API the sandbox."""
    sandbox.reset()
    project = make_project("[forem]\nrate_window = 1\n")
    project.post("live", LIVE_TITLE, "Live body.\n", published=True)
    config = mcp_config(
        project, {"FOREM_BASE_URL": sandbox.base_url, "FOREM_API_KEY": sandbox.demo_api_key}
    )
    with serving(config, Clock()) as harness:
        yield harness


def published(sandbox: Any) -> bool:
    response = httpx.get(
        f"{sandbox.base_url}/api/articles/me/all",
        params={"per_page": 1000},
        headers={"api-key": sandbox.demo_api_key},
        verify=shared_context(),
    )
    response.raise_for_status()
    return any(a["title"] == LIVE_TITLE and a["published"] for a in response.json())


# -- a boolean is a boolean -------------------------------------------------------------------


@pytest.mark.parametrize("value", ["true", 1, "yes", "1", None, [True], {"a": True}])
def test_a_boolean_argument_that_is_not_a_boolean_is_400_invalid_params(publishing, sandbox, value):
    client = publishing.register(scope=" ".join(scopes.ALL))
    tokens = grant(publishing, client, NO_PUBLISH)
    session = publishing.session(tokens["access_token"])
    response = publishing.call(tokens["access_token"], session, "push_drafts", {"publish": value})
    assert response.status_code == 400, response.text
    assert response.json()["error"]["code"] == -32602
    assert "publish" in response.json()["error"]["message"]
    assert not published(sandbox)
    assert tool_events(publishing, "push_drafts") == []


@pytest.mark.parametrize("value", ["true", 1, "yes"])
def test_over_stdio_a_boolean_that_is_not_one_is_invalid_params(mcp_project, value):
    config = load_config(mcp_project.root / "toolkit.toml", env={})
    server = ToolkitMCP(config, EventRecorder(), local_scopes=scopes.ALL)

    async def run() -> McpError:
        async with create_connected_server_and_client_session(server) as client:
            with pytest.raises(McpError) as refused:
                await client.call_tool("build_site", {"clean": value})
            return refused.value

    error = anyio.run(run)
    assert error.error.code == -32602
    assert "clean" in error.error.message


# -- the current request's token, not the session's ------------------------------------------


def test_a_call_is_authorised_on_its_own_token_not_the_sessions(publishing, sandbox):
    client = publishing.register(scope=" ".join(scopes.ALL))
    with_publish = grant(publishing, client, PUBLISH)
    without = grant(publishing, client, NO_PUBLISH)
    session = publishing.session(with_publish["access_token"])
    refused = publishing.call(without["access_token"], session, "push_drafts", {"publish": True})
    assert refused.status_code == 403, refused.text
    assert not published(sandbox)
    # A call the token covers runs, and the run log says the scopes of that token.
    ran = publishing.call(without["access_token"], session, "push_drafts", {"publish": False})
    assert result_of(ran)["structuredContent"]["published_allowed"] is False
    assert not published(sandbox)
    (event,) = tool_events(publishing, "push_drafts")
    assert list(event.scopes) == NO_PUBLISH


def test_a_revoked_grant_ends_its_sessions(publishing, sandbox):
    client = publishing.register(scope=" ".join(scopes.ALL))
    with_publish = grant(publishing, client, PUBLISH)
    without = grant(publishing, client, NO_PUBLISH)
    session = publishing.session(with_publish["access_token"])
    # The publish grant's refresh token is used twice: the whole grant is revoked.
    assert publishing.refresh(client, with_publish["refresh_token"]).status_code == 200
    assert publishing.refresh(client, with_publish["refresh_token"]).status_code == 400
    ended = publishing.call(without["access_token"], session, "list_posts")
    assert ended.status_code == 404, ended.text
    # Gone for good, for any token of the client.
    again = publishing.call(without["access_token"], session, "list_posts")
    assert again.status_code == 404
    # The other grant opens sessions of its own as before.
    fresh = publishing.session(without["access_token"])
    assert not result_of(publishing.call(without["access_token"], fresh, "list_posts"))["isError"]


def test_an_expired_grant_ends_its_sessions(publishing):
    client = publishing.register(scope=" ".join(scopes.ALL))
    with_publish = grant(publishing, client, PUBLISH)
    session = publishing.session(with_publish["access_token"])
    publishing.clock.advance(400 * 86400)  # past the access and the refresh token
    without = grant(publishing, client, NO_PUBLISH)
    ended = publishing.call(without["access_token"], session, "list_posts")
    assert ended.status_code == 404, ended.text


# -- the property: any value, any pairing ------------------------------------------------------


def nested(inner: st.SearchStrategy[object]) -> st.SearchStrategy[object]:
    return st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3)


JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8)
    | st.sampled_from(["true", "True", "yes", "1", "on", "false"]),
    nested,
    max_leaves=6,
)
ABSENT = object()


def test_property_publishing_needs_a_true_boolean_and_the_callers_publish_scope(
    publishing, sandbox
):
    client = publishing.register(scope=" ".join(scopes.ALL))
    tokens = {
        True: grant(publishing, client, PUBLISH)["access_token"],
        False: grant(publishing, client, NO_PUBLISH)["access_token"],
    }
    sessions = {holder: publishing.session(token) for holder, token in tokens.items()}
    allowed_publish = False  # whether a call that may publish has run yet

    @settings(
        max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
    )
    @given(value=JSON_VALUES | st.just(ABSENT), opener=st.booleans(), caller=st.booleans())
    def one_call(value: Any, opener: bool, caller: bool) -> None:
        nonlocal allowed_publish
        arguments = {} if value is ABSENT else {"publish": value}
        before = len(tool_events(publishing, "push_drafts"))
        response = publishing.call(tokens[caller], sessions[opener], "push_drafts", arguments)
        if value is not ABSENT and not isinstance(value, bool):
            assert response.status_code == 400, response.text
            assert response.json()["error"]["code"] == -32602
        elif value is True and not caller:
            assert response.status_code == 403, response.text
        else:
            result = result_of(response)
            assert result["isError"] is False, result
            assert result["structuredContent"]["published_allowed"] is (value is True)
            event = tool_events(publishing, "push_drafts")[-1]
            assert list(event.scopes) == (PUBLISH if caller else NO_PUBLISH)
            allowed_publish = allowed_publish or value is True
        if response.status_code != 200:
            assert len(tool_events(publishing, "push_drafts")) == before
        assert published(sandbox) <= allowed_publish

    one_call()


# -- query_run_log: bounded, and stopped when its client leaves ---------------------------------
# A local query runs in a process of its own (`toolkit.mcp.query_worker`), killed at its
# deadline or when its client leaves: each of these tests starts one, or more.


# A cross join of a dozen events, nine times, each of its 10^10 rows filtered on a string
# built for it: far more work than any deadline of these tests allows.
FOREVER = (
    "SELECT count(*) AS n FROM toolkit a, toolkit b, toolkit c, toolkit d, toolkit e, "
    "toolkit f, toolkit g, toolkit h, toolkit i WHERE length(concat(a.event, b.event, "
    "c.event, d.event, e.event, f.event, g.event, h.event, i.event)) > 1000"
)


def local_log(project: Any) -> None:
    """A local run log of a few dozen events to ask about."""
    for _ in range(3):
        assert project.run("check").exit_code in (0, 1)


def query_server(project: Any, **limits: Any) -> ToolkitMCP:
    from toolkit.mcp.tools import QueryLimits

    config = load_config(project.root / "toolkit.toml", env={})
    server = ToolkitMCP(config, EventRecorder(), local_scopes=scopes.ALL)
    server.toolbox.query_limits = QueryLimits(**limits)
    return server


def query(server: ToolkitMCP, sql: str) -> Any:
    async def run() -> Any:
        async with create_connected_server_and_client_session(server) as client:
            return await client.call_tool("query_run_log", {"sql": sql})

    return anyio.run(run)


@pytest.mark.e2e
@pytest.mark.timeout(90)
def test_a_query_past_its_deadline_is_stopped(mcp_project):
    local_log(mcp_project)
    result = query(query_server(mcp_project, seconds=1.0), FOREVER)
    assert result.isError is True
    assert "ran longer than 1 s and was stopped" in result.content[0].text


@pytest.mark.e2e
@pytest.mark.timeout(90)
def test_a_query_past_its_memory_bound_fails_as_one_line(mcp_project):
    local_log(mcp_project)
    sql = (
        "SELECT a.message, b.message FROM toolkit a JOIN toolkit b ON a.run_id = b.run_id "
        "ORDER BY a.message, b.message"
    )
    assert query(query_server(mcp_project), sql).isError is False
    result = query(query_server(mcp_project, memory_bytes=16 * 1024), sql)
    assert result.isError is True
    text = result.content[0].text
    assert text.startswith("Error: ") and "Resources exhausted" in text and "\n" not in text


@pytest.mark.e2e
def test_a_query_answers_at_most_the_row_bound(mcp_project):
    local_log(mcp_project)
    result = query(query_server(mcp_project, rows=3), "SELECT event FROM toolkit")
    assert result.isError is False
    assert len(result.structuredContent["records"]) == 3
    assert result.structuredContent["truncated"] is True
    small = query(query_server(mcp_project, rows=3), "SELECT event FROM toolkit LIMIT 2")
    assert small.structuredContent["truncated"] is False


@pytest.mark.e2e
def test_an_answer_past_its_size_bound_says_so_in_one_line(mcp_project):
    local_log(mcp_project)
    server = query_server(mcp_project, answer_bytes=1024 * 1024)
    result = query(server, "SELECT repeat('x', 2000000) AS big")
    assert result.isError is True
    (content,) = result.content
    assert content.text == (
        "Error: the answer is larger than 1 MiB: ask for fewer or smaller columns"
    )


def query_workers() -> list[str]:
    """The query worker processes this test process (and its server thread) started."""
    import os
    from pathlib import Path

    found = []
    for entry in Path("/proc").iterdir():
        try:
            stat = (entry / "stat").read_text()
            command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue  # not a process, or gone
        parent = int(stat.rsplit(")", 1)[1].split()[1])
        if parent == os.getpid() and "toolkit.mcp.query_worker" in command:
            found.append(entry.name)
    return found


@pytest.mark.timeout(90)
def test_a_query_stops_when_its_client_leaves(server, mcp_project):
    import json
    import socket
    from urllib.parse import urlsplit

    local_log(mcp_project)
    _, tokens = server.tokens(granted=["logs"])
    session = server.session(tokens["access_token"])
    body = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": 7,
            "method": "tools/call",
            "params": {"name": "query_run_log", "arguments": {"sql": FOREVER, "local": True}},
        }
    ).encode()
    where = urlsplit(server.base)
    head = (
        f"POST /mcp HTTP/1.1\r\nHost: {where.netloc}\r\n"
        f"Authorization: Bearer {tokens['access_token']}\r\n"
        f"Mcp-Session-Id: {session}\r\nMCP-Protocol-Version: 2025-06-18\r\n"
        "Accept: application/json, text/event-stream\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\n\r\n"
    ).encode()
    with socket.create_connection((where.hostname, where.port)) as connection:
        connection.sendall(head + body)
    # The client is gone: the call ends as cancelled, its worker process with it.
    while not [e for e in tool_events(server, "query_run_log") if e.outcome == "cancelled"]:
        anyio.run(anyio.sleep, 0.05)
    assert query_workers() == []


def test_a_call_s_arguments_are_checked_once(mcp_project):
    """Over stdio the session checks a tool call's arguments as it reads the message, and
    the tool's handler does not check them again: one strict validation a call."""
    config = load_config(mcp_project.root / "toolkit.toml", env={})
    events = EventRecorder()
    server = ToolkitMCP(config, events, local_scopes=scopes.ALL)
    checked: list[object] = []
    model = server.argument_validators["list_posts"]

    class Counted(model):  # type: ignore[valid-type, misc]
        @classmethod
        def model_validate(cls, obj: Any, **kwargs: Any) -> Any:
            checked.append(obj)
            return super().model_validate(obj, **kwargs)

    server.argument_validators["list_posts"] = Counted

    async def run() -> None:
        async with create_connected_server_and_client_session(server) as client:
            result = await client.call_tool("list_posts", {})
            assert not result.isError, result.content

    anyio.run(run)
    assert checked == [{}]
    unknown = anyio.run(server.run_tool, "no_such_tool", {})
    assert unknown.isError and isinstance(unknown.content[0], TextContent)
    assert unknown.content[0].text == "Error: Unknown tool: no_such_tool"
