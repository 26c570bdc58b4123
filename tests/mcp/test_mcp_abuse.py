"""The MCP HTTP server under abuse: what anyone can send is bounded, and one client's
flood or guesses never cost the writer's own client anything."""

from __future__ import annotations

from typing import Any

import pytest
from mcp_helpers import REDIRECT, approve, pkce, query_of, result_of


def start(server: Any, client: Any, **extra: str) -> Any:
    _, challenge = pkce()
    return server.http.get(server.base + "/authorize",
                           params=server.authorize_params(client, challenge, **extra))


# -- 14: attacker-controlled values are cut short in events and answers -------------------------


def test_a_huge_refused_redirect_uri_is_cut_short_in_events_and_the_answer(server):
    uri = "ftp://evil.example/" + "a" * 200_000
    response = server.http.post(server.base + "/register",
                                json={"redirect_uris": [uri], "client_name": "x"})
    assert response.status_code == 400
    assert len(response.text) < 2_000
    assert server.recorder.events
    for event in server.recorder.events:
        assert len(event.detail) <= 400 and len(str(event)) < 1_000


# -- 15: what /authorize stores is bounded ------------------------------------------------------


def test_an_over_long_state_is_refused_and_not_stored(server):
    client = server.register()
    response = start(server, client, state="s" * 30_000)
    assert response.status_code == 302
    answer = query_of(response.headers["location"])
    assert answer["error"] == "invalid_request" and "state" in answer["error_description"]
    assert server.http.get(server.base + "/authorize", params=server.authorize_params(
        client, pkce()[1])).status_code == 302  # a normal request still works


def test_pending_authorization_requests_are_bounded_per_client(server):
    client = server.register()
    waiting = [start(server, client) for _ in range(10)]
    assert all("/consent?" in r.headers["location"] for r in waiting)
    refused = query_of(start(server, client).headers["location"])
    assert refused["error"] == "temporarily_unavailable"
    # Another client is not held back by this one.
    other = server.register()
    assert "/consent?" in start(server, other).headers["location"]
    # Answering one makes room again.
    approve(server.http, waiting[0].headers["location"], decision="deny")
    assert "/consent?" in start(server, client).headers["location"]


# -- 16: a flood of registrations never evicts a client waiting on consent -----------------------


def test_a_flood_of_registrations_does_not_evict_the_writers_client_during_consent(server):
    writer = server.register()
    verifier, challenge = pkce()
    response = server.http.get(server.base + "/authorize",
                               params=server.authorize_params(writer, challenge))
    consent = response.headers["location"]
    for n in range(120):
        server.register(client_name=f"flood {n}")
    answer = approve(server.http, consent)
    assert answer.status_code == 302, answer.text
    code = query_of(answer.headers["location"])["code"]
    tokens = server.exchange(writer, code, verifier)
    assert tokens.status_code == 200, tokens.text
    session = server.session(tokens.json()["access_token"])
    assert not result_of(server.call(tokens.json()["access_token"], session,
                                     "list_posts"))["isError"]


@pytest.mark.parametrize("count", [11])
def test_too_many_redirect_uris_are_refused(server, count):
    response = server.http.post(server.base + "/register", json={
        "redirect_uris": [f"{REDIRECT}{n}" for n in range(count)], "client_name": "x"})
    assert response.status_code == 400
