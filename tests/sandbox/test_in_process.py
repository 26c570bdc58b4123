"""The in-process transport (`SandboxServer.transport()`), which most sandbox tests use:
the same request gets the same answer, request record and counts as over loopback HTTP,
and it reaches no other origin."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from tests.support.sandbox_client import Api
from toolkit_sandbox.interface import MAX_BODY

Call = Callable[[Api], httpx.Response]

CALLS: dict[str, Call] = {
    "a read": lambda api: api.get("/api/articles", params={"per_page": 2}),
    "an authenticated read": lambda api: api.get("/api/users/me", user="demo"),
    "a wrong key": lambda api: api.get("/api/users/me", headers={"api-key": "wrong"}),
    "a create": lambda api: api.post(
        "/api/articles", user="demo", json={"article": {"title": "Same", "body_markdown": "x"}}
    ),
    "an invalid create": lambda api: api.post(
        "/api/articles", user="demo", json={"article": {"body_markdown": "no title"}}
    ),
    "malformed JSON": lambda api: api.post(
        "/api/articles", user="demo", content=b"{", headers={"Content-Type": "application/json"}
    ),
    "a body over the limit": lambda api: api.post(
        "/api/articles",
        user="demo",
        content=json.dumps({"article": {"title": "Big", "body_markdown": "x" * MAX_BODY}}),
        headers={"Content-Type": "application/json"},
    ),
    "an unknown path inside an interface": lambda api: api.get("/api/nowhere"),
    "a path no interface owns": lambda api: api.get("/nowhere"),
    "a refused User-Agent": lambda api: api.get("/api/articles", headers={"User-Agent": "Ruby"}),
    "a licence read": lambda api: api.get(
        "/apps/licensing/v1/product/812345678901/sku/default_edition/user/ana@acme.example",
        headers={"Authorization": "Bearer wrong"},
    ),
    "the control API": lambda api: api.get("/__sandbox/forem/accounts"),
    "the control API, a foreign Host": lambda api: api.get(
        "/__sandbox/forem/accounts", headers={"Host": "evil.example"}
    ),
}


def _seen(api: Api, call: Call) -> tuple[Any, ...]:
    """What one call gives on a sandbox at its seed: its status, body and headers, and
    the request records and counts it left (times and sequence numbers left out)."""
    server = api.server
    server.reset()
    server.reset_stats()
    if call is CALLS["a refused User-Agent"]:
        server.control("POST", "/forem/user-agent-check", {"enabled": True})
    after = server.control("GET", "/requests?limit=1")["last_seq"]
    response = call(api)
    records = [
        {key: value for key, value in record.items() if key not in ("seq", "time", "duration_ms")}
        for record in server.requests(after=after)
    ]
    headers = {
        name: value
        for name, value in response.headers.items()
        if name not in ("date", "server", "content-length")  # uvicorn's; a body's own length
    }
    body: Any = response.content
    if response.headers.get("content-type", "").startswith("application/json"):
        body = response.json()
        if isinstance(body, dict) and "slug" in body:  # a new article: its slug and times
            body = {key: value for key, value in body.items() if key not in VARYING}
            assert headers.pop("location") == response.json()["url"]
    return response.status_code, body, headers, records, server.stats()


# The fields of a new article that differ between two creates (a random slug suffix, the
# time of the create).
VARYING = {"slug", "path", "url", "canonical_url", "created_at", "published_at"}
VARYING |= {"published_timestamp", "readable_publish_date", "edited_at", "last_comment_at"}


@pytest.mark.parametrize("name", list(CALLS))
def test_a_request_in_process_is_answered_and_recorded_as_over_the_socket(sandbox, name) -> None:
    over_socket, in_process = Api(sandbox), Api(sandbox, in_process=True)
    try:
        expected = _seen(over_socket, CALLS[name])
        found = _seen(in_process, CALLS[name])
    finally:
        over_socket.close()
        in_process.close()
    assert found == expected
    # Every call but the control API's leaves a record to compare.
    assert bool(expected[3]) is not name.startswith("the control API"), expected


def test_rate_limits_count_requests_of_both_kinds_alike(sandbox) -> None:
    over_socket, in_process = Api(sandbox), Api(sandbox, in_process=True)
    try:
        sandbox.reset()
        statuses = []
        for number in range(11):  # ten published creates in the window are allowed
            client = in_process if number % 2 else over_socket
            statuses.append(
                client.post(
                    "/api/articles",
                    user="demo",
                    json={
                        "article": {"title": f"N{number}", "body_markdown": "x", "published": True}
                    },
                ).status_code
            )
    finally:
        over_socket.close()
        in_process.close()
    assert statuses == [201] * 10 + [429]


def test_another_origin_is_never_handed_to_the_sandbox(sandbox) -> None:
    with httpx.Client(transport=sandbox.transport()) as client:
        for url in (
            f"http://127.0.0.1:{sandbox.port + 1}/api/articles",
            f"https://127.0.0.1:{sandbox.port}/api/articles",
            "http://example.com/api/articles",
        ):
            with pytest.raises(httpx.ConnectError, match="is not the sandbox"):
                client.get(url)
        assert client.get(f"{sandbox.base_url}/__sandbox/forem/accounts").status_code == 200
