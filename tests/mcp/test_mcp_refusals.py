"""Every refusal of the HTTP transport, each on its own, against the real server on
loopback: what the client gets, and that what should not work does not. A test that only
reads the server or registers a client shares one server with the module's others
(`shared_server`); one that moves its clock, reads its events or counts guesses has its
own (`server`)."""

from __future__ import annotations

import pytest

from tests.support.mcp_helpers import (
    INITIALIZE,
    REDIRECT,
    SECRET,
    approve,
    challenge_of,
    dumps,
    pkce,
    query_of,
    result_of,
)
from toolkit.mcp.consent import ATTEMPTS_PER_REQUEST, GUESS_WINDOW, GUESSES_IN_ALL

# -- 401: no token, a bad token, an expired token ---------------------------------------------


def initialize(server, token):
    return server.post_mcp(token, INITIALIZE)


def test_no_token_is_401_with_where_to_find_the_authorization_server(server):
    response = initialize(server, None)
    assert response.status_code == 401
    challenge = challenge_of(response)
    assert (
        challenge["resource_metadata"] == f"{server.base}/.well-known/oauth-protected-resource/mcp"
    )
    assert challenge["error"] == "invalid_token"


def test_a_bad_token_is_401(server):
    response = initialize(server, "tka_not-a-token-this-server-gave")
    assert response.status_code == 401
    assert challenge_of(response)["resource_metadata"].endswith("/oauth-protected-resource/mcp")
    assert server.recorder.events[-1].detail == "unknown access token"


def test_an_expired_token_is_401(server):
    _, tokens = server.tokens()
    assert initialize(server, tokens["access_token"]).status_code == 200
    assert tokens["expires_in"] == 3600  # [mcp] access_token_lifetime's default
    server.clock.advance(3601)
    response = initialize(server, tokens["access_token"])
    assert response.status_code == 401
    assert "resource_metadata" in challenge_of(response)
    assert server.recorder.events[-1].detail == "expired access token"


def test_a_token_still_valid_just_before_it_expires(server):
    _, tokens = server.tokens()
    server.clock.advance(3590)
    assert initialize(server, tokens["access_token"]).status_code == 200


# -- the token in the query string -------------------------------------------------------------


def test_a_token_in_the_query_string_is_refused(server):
    _, tokens = server.tokens()
    message = INITIALIZE
    alone = server.post_mcp(None, message, params={"access_token": tokens["access_token"]})
    assert alone.status_code == 400
    assert challenge_of(alone)["error"] == "invalid_request"
    # Even with the header as well: a token that was put in a URL is refused, not ignored.
    both = server.post_mcp(
        tokens["access_token"], message, params={"access_token": tokens["access_token"]}
    )
    assert both.status_code == 400
    assert server.post_mcp(tokens["access_token"], message).status_code == 200  # the header works


# -- PKCE --------------------------------------------------------------------------------------


def test_a_wrong_pkce_verifier_is_refused(server):
    client = server.register()
    _, challenge = pkce()
    code = server.authorize(client, challenge)
    other_verifier, _ = pkce()
    response = server.exchange(client, code, other_verifier)
    assert response.status_code == 400
    assert response.json()["error"] == "invalid_grant"


def test_a_missing_code_challenge_is_refused(server):
    client, _ = server.tokens()  # approved before: errors go back to it
    response = server.http.get(
        server.base + "/authorize", params=server.authorize_params(client, None)
    )
    assert response.status_code == 302
    back = query_of(response.headers["location"])
    assert response.headers["location"].startswith(REDIRECT)
    assert back["error"] == "invalid_request" and "code" not in back
    assert "/consent" not in response.headers["location"]


def test_the_plain_pkce_method_is_refused(server):
    client, _ = server.tokens()  # approved before: errors go back to it
    verifier, _ = pkce()
    params = server.authorize_params(client, verifier)
    params["code_challenge_method"] = "plain"
    response = server.http.get(server.base + "/authorize", params=params)
    assert response.status_code == 302
    back = query_of(response.headers["location"])
    assert back["error"] == "invalid_request" and "code" not in back


def test_a_challenge_that_is_not_s256_is_refused(server):
    client, _ = server.tokens()  # approved before: errors go back to it
    params = server.authorize_params(client, "too-short")
    response = server.http.get(server.base + "/authorize", params=params)
    back = query_of(response.headers["location"])
    assert back["error"] == "invalid_request" and "S256" in back["error_description"]


# -- codes and refresh tokens used twice -------------------------------------------------------


def test_an_authorization_code_used_twice_is_refused_and_its_tokens_revoked(server):
    client = server.register()
    verifier, challenge = pkce()
    code = server.authorize(client, challenge)
    first = server.exchange(client, code, verifier)
    assert first.status_code == 200
    tokens = first.json()
    assert initialize(server, tokens["access_token"]).status_code == 200
    second = server.exchange(client, code, verifier)
    assert second.status_code == 400
    assert second.json()["error"] == "invalid_grant"
    assert "used already" in second.json()["error_description"]
    # What the first exchange gave is revoked: the access token and the refresh token.
    assert initialize(server, tokens["access_token"]).status_code == 401
    refreshed = server.refresh(client, tokens["refresh_token"])
    assert refreshed.status_code == 400 and refreshed.json()["error"] == "invalid_grant"


def test_a_reused_refresh_token_revokes_its_whole_family(server):
    client, tokens = server.tokens()
    rotated = server.refresh(client, tokens["refresh_token"])
    assert rotated.status_code == 200
    new = rotated.json()
    assert new["refresh_token"] != tokens["refresh_token"]
    assert initialize(server, new["access_token"]).status_code == 200
    # The old access token stopped working when it was replaced.
    assert initialize(server, tokens["access_token"]).status_code == 401
    reused = server.refresh(client, tokens["refresh_token"])
    assert reused.status_code == 400 and reused.json()["error"] == "invalid_grant"
    # The whole family is gone: the new access token and the new refresh token.
    assert initialize(server, new["access_token"]).status_code == 401
    assert server.refresh(client, new["refresh_token"]).status_code == 400
    assert any(e.action == "refresh" and e.outcome == "denied" for e in server.recorder.events)


def test_a_refresh_token_of_another_client_is_refused(server):
    _, tokens = server.tokens()
    other = server.register()
    response = server.refresh(other, tokens["refresh_token"])
    assert response.status_code == 400 and response.json()["error"] == "invalid_grant"


# -- redirect URIs -----------------------------------------------------------------------------


def test_a_redirect_uri_not_registered_is_refused_without_redirecting(shared_server):
    client = shared_server.register()
    _, challenge = pkce()
    params = shared_server.authorize_params(client, challenge)
    params["redirect_uri"] = "http://localhost:3030/elsewhere"
    response = shared_server.http.get(shared_server.base + "/authorize", params=params)
    assert response.status_code == 400
    assert "location" not in response.headers
    assert "not registered" in response.json()["error_description"]


@pytest.mark.parametrize(
    "uri",
    [
        "http://example.com/callback",  # http, not on this machine
        "http://localhost.example.com/callback",
        "myapp://callback",
        "https://example.com/callback#fragment",
        "https://user:pw@example.com/callback",
    ],
)
def test_a_redirect_uri_that_is_not_https_or_localhost_is_refused_at_registration(
    shared_server, uri
):
    response = shared_server.http.post(
        shared_server.base + "/register", json={"redirect_uris": [uri], "client_name": "x"}
    )
    assert response.status_code == 400
    assert response.json()["error"] == "invalid_redirect_uri"


@pytest.mark.parametrize(
    "uri",
    [
        "http://localhost:3030/cb",
        "http://127.0.0.1/cb",
        "http://[::1]:9/cb",
        "https://example.com/cb",
    ],
)
def test_localhost_and_https_redirect_uris_are_accepted(shared_server, uri):
    assert shared_server.register([uri]).client_id


# -- scopes: 403 insufficient_scope --------------------------------------------------------------


def test_a_tool_outside_the_tokens_scopes_is_403(server):
    _, tokens = server.tokens(granted=["read"])
    assert tokens["scope"] == "read"
    session = server.session(tokens["access_token"])
    response = server.call(tokens["access_token"], session, "build_site")
    assert response.status_code == 403
    challenge = challenge_of(response)
    assert challenge["error"] == "insufficient_scope"
    assert challenge["scope"] == "draft-write"
    assert response.json()["error"] == "insufficient_scope"
    # A tool the scope covers still works in the same session.
    assert not result_of(server.call(tokens["access_token"], session, "list_posts"))["isError"]


def test_publishing_needs_the_publish_scope_as_well(server):
    _, tokens = server.tokens(granted=["read", "draft-write"])
    session = server.session(tokens["access_token"])
    response = server.call(tokens["access_token"], session, "push_drafts", {"publish": True})
    assert response.status_code == 403
    assert challenge_of(response)["scope"] == "draft-write publish"


def test_reading_posts_as_resources_needs_read(server):
    _, tokens = server.tokens(granted=["draft-write"])
    session = server.session(tokens["access_token"])
    response = server.post_mcp(
        tokens["access_token"],
        {
            "jsonrpc": "2.0",
            "id": 3,
            "method": "resources/read",
            "params": {"uri": "toolkit://post/content/hello.md"},
        },
        session,
    )
    assert response.status_code == 403
    assert challenge_of(response)["scope"] == "read"


def test_the_screen_never_ticks_publish_by_itself(server):
    _, tokens = server.tokens()  # the client asks for every scope; the writer ticks nothing
    assert tokens["scope"] == "read draft-write logs"


# -- malformed requests: 400 -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "data,error",
    [
        ({}, "invalid_request"),  # no grant_type
        ({"grant_type": "password", "username": "a", "password": "b"}, "unsupported_grant_type"),
        ({"grant_type": "authorization_code"}, "invalid_request"),  # no code, no verifier
        ({"grant_type": "refresh_token"}, "invalid_request"),  # no refresh_token
    ],
)
def test_malformed_token_requests_are_400(shared_server, data, error):
    client = shared_server.register()
    response = shared_server.token(
        {**data, **client.form()}
        if data.get("grant_type") in ("authorization_code", "refresh_token")
        else data
    )
    assert response.status_code == 400, response.text
    assert response.json()["error"] == error


def test_a_token_request_that_is_not_a_form_is_400(shared_server):
    response = shared_server.http.post(
        shared_server.base + "/token", json={"grant_type": "client_credentials"}
    )
    assert response.status_code == 400
    assert response.json()["error"] == "invalid_request"


def test_a_token_request_with_a_repeated_parameter_is_400(shared_server):
    response = shared_server.http.post(
        shared_server.base + "/token",
        content=("grant_type=refresh_token&refresh_token=a&refresh_token=b"),
        headers={"Content-Type": "application/x-www-form-urlencoded"},
    )
    assert response.status_code == 400
    assert "more than once" in response.json()["error_description"]


def test_a_token_request_with_a_wrong_client_secret_is_401(shared_server):
    client = shared_server.register()
    response = shared_server.token(
        {
            "grant_type": "refresh_token",
            "refresh_token": "x",
            "client_id": client.client_id,
            "client_secret": "wrong",
        }
    )
    assert response.status_code == 401
    assert response.json()["error"] == "invalid_client"


@pytest.mark.parametrize(
    "body,headers",
    [
        (b"{not json", {"Content-Type": "application/json"}),
        (b"[]", {"Content-Type": "application/json"}),
        (b'{"client_name": "no redirect uris"}', {"Content-Type": "application/json"}),
        (b'{"redirect_uris": "http://localhost/cb"}', {"Content-Type": "application/json"}),
        (
            b"redirect_uris=http://localhost/cb",
            {"Content-Type": "application/x-www-form-urlencoded"},
        ),
        (
            b'{"redirect_uris": ["http://localhost/cb"], "scope": "read admin"}',
            {"Content-Type": "application/json"},
        ),
    ],
)
def test_malformed_registration_requests_are_400(shared_server, body, headers):
    response = shared_server.http.post(
        shared_server.base + "/register", content=body, headers=headers
    )
    assert response.status_code == 400, response.text
    assert response.json()["error"] == "invalid_client_metadata"


# -- metadata -------------------------------------------------------------------------------------


@pytest.mark.parametrize("version", ["2025-03-26", "2025-06-18", "2099-01-01", "not-a-date", None])
def test_metadata_answers_whatever_protocol_version_is_sent(shared_server, version):
    headers = {"MCP-Protocol-Version": version} if version else {}
    response = shared_server.http.get(
        shared_server.base + "/.well-known/oauth-authorization-server", headers=headers
    )
    assert response.status_code == 200
    metadata = response.json()
    assert metadata["issuer"].rstrip("/") == shared_server.base
    assert metadata["authorization_endpoint"] == shared_server.base + "/authorize"
    assert metadata["token_endpoint"] == shared_server.base + "/token"
    assert metadata["registration_endpoint"] == shared_server.base + "/register"
    assert metadata["code_challenge_methods_supported"] == ["S256"]
    assert set(metadata["grant_types_supported"]) == {
        "authorization_code",
        "refresh_token",
        "client_credentials",
    }
    assert metadata["scopes_supported"] == ["read", "draft-write", "publish", "logs"]


@pytest.mark.parametrize(
    "path", ["/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"]
)
def test_protected_resource_metadata(shared_server, path):
    response = shared_server.http.get(shared_server.base + path)
    assert response.status_code == 200
    document = response.json()
    assert document["resource"] == shared_server.url
    assert [s.rstrip("/") for s in document["authorization_servers"]] == [shared_server.base]
    assert document["bearer_methods_supported"] == ["header"]


# -- the authorization screen ------------------------------------------------------------------------


def start_authorization(server, client=None):
    client = client or server.register()
    verifier, challenge = pkce()
    response = server.http.get(
        server.base + "/authorize", params=server.authorize_params(client, challenge)
    )
    return client, verifier, response.headers["location"]


def test_a_wrong_operator_secret_gives_no_code(server):
    _, _, consent = start_authorization(server)
    answer = approve(server.http, consent, secret="not the secret at all")
    assert answer.status_code == 403
    assert "location" not in answer.headers
    assert "not the operator secret" in answer.text
    right = approve(server.http, consent)  # the same request, with the right secret
    assert right.status_code == 302 and "code" in query_of(right.headers["location"])


def test_three_wrong_secrets_end_the_request(server):
    _, _, consent = start_authorization(server)
    for _ in range(ATTEMPTS_PER_REQUEST - 1):
        assert approve(server.http, consent, secret="guess").status_code == 403
    last = approve(server.http, consent, secret="guess")
    assert last.status_code == 302
    assert query_of(last.headers["location"])["error"] == "access_denied"
    assert server.http.get(consent).status_code == 400  # the request is over


def compared(server) -> int:
    """Wrong operator secrets the server compared (each one is an event)."""
    return sum("wrong operator secret" in e.detail for e in server.recorder.events)


def code_of(line: str) -> str:
    return line.rsplit(" ", 1)[-1]


def test_wrong_secrets_are_bounded_in_all_and_the_writer_still_gets_in(server):
    """Six clients, each guessing until its request ends, from the writer's own address:
    at most GUESSES_IN_ALL secrets are compared; the writer's right secret then asks for
    the one-time code the server's terminal shows, and with it gets in."""
    for _ in range(6):
        _, _, consent = start_authorization(server)
        for _ in range(ATTEMPTS_PER_REQUEST):
            approve(server.http, consent, secret="guess", code="AAAA-BBBB-CCCC")
    assert compared(server) == GUESSES_IN_ALL
    (line,) = server.announced
    assert "one-time code" in line
    _, _, consent = start_authorization(server)  # the writer's fresh client
    asked = approve(server.http, consent)
    assert asked.status_code == 429 and 'name="code"' in asked.text
    answer = approve(server.http, consent, code=code_of(line).lower())  # typed loosely
    assert answer.status_code == 302 and "code" in query_of(answer.headers["location"])
    assert code_of(line) not in dumps(server.recorder.events)
    # Used once: the next request needs the next code, shown when it is asked for.
    _, _, again = start_authorization(server)
    assert approve(server.http, again, code=code_of(line)).status_code == 403
    assert len(server.announced) == 2


def test_a_wrong_one_time_code_tests_no_secret_and_ends_the_request(server):
    for _ in range(GUESSES_IN_ALL):
        _, _, consent = start_authorization(server)
        approve(server.http, consent, secret="guess")
    _, _, consent = start_authorization(server)
    for _ in range(ATTEMPTS_PER_REQUEST - 1):
        answer = approve(server.http, consent, secret=SECRET, code="2222-3333-4444")
        assert answer.status_code == 403 and "one-time code" in answer.text
    last = approve(server.http, consent, secret=SECRET, code="2222-3333-4444")
    assert last.status_code == 302 and query_of(last.headers["location"])["error"]
    assert compared(server) == GUESSES_IN_ALL  # the right secret was never compared alone


def test_the_window_frees_the_screen_from_the_code(server):
    for _ in range(GUESSES_IN_ALL):
        _, _, consent = start_authorization(server)
        approve(server.http, consent, secret="guess")
    server.clock.advance(GUESS_WINDOW + 1)
    _, _, consent = start_authorization(server)
    assert approve(server.http, consent).status_code == 302


def test_the_writer_can_deny(server):
    _, _, consent = start_authorization(server)
    answer = approve(server.http, consent, decision="deny")
    assert answer.status_code == 302
    back = query_of(answer.headers["location"])
    assert back["error"] == "access_denied" and back["state"] == "s-123"


def test_the_screen_is_not_framed_or_cached(server):
    _, _, consent = start_authorization(server)
    page = server.http.get(consent)
    assert page.headers["x-frame-options"] == "DENY"
    assert "frame-ancestors 'none'" in page.headers["content-security-policy"]
    assert page.headers["cache-control"] == "no-store"


def test_an_authorization_for_another_resource_is_refused(server):
    client, _ = server.tokens()  # approved before: errors go back to it
    _, challenge = pkce()
    params = server.authorize_params(client, challenge, resource="https://elsewhere.example/mcp")
    response = server.http.get(server.base + "/authorize", params=params)
    assert query_of(response.headers["location"])["error"] == "invalid_request"


# -- secrets stay secret ------------------------------------------------------------------------


def test_no_token_code_or_secret_reaches_an_event_or_the_log(server, caplog):
    caplog.set_level("DEBUG")
    client = server.register()
    verifier, challenge = pkce()
    code = server.authorize(client, challenge)
    tokens = server.exchange(client, code, verifier).json()
    server.refresh(client, tokens["refresh_token"])
    server.exchange(client, code, verifier)  # a reuse, refused
    initialize(server, "tka_bogus")
    # What the server logs (the test's own HTTP client logs its requests: not the server's).
    logged = "\n".join(
        r.getMessage() for r in caplog.records if not r.name.startswith(("httpx", "httpcore"))
    )
    text = dumps(server.recorder.events) + logged
    for value in (
        SECRET,
        code,
        verifier,
        tokens["access_token"],
        tokens["refresh_token"],
        client.client_secret or "-",
        "tka_bogus",
    ):
        assert value not in text
    actions = {(e.action, e.outcome) for e in server.recorder.events}
    assert {
        ("register", "ok"),
        ("consent", "ok"),
        ("token", "ok"),
        ("refresh", "ok"),
        ("token", "denied"),
        ("request", "denied"),
    } <= actions


def test_the_store_keeps_no_token_or_secret_as_it_is(server, mcp_project):
    client, tokens = server.tokens()
    raw = b"".join(p.read_bytes() for p in (mcp_project.root / ".toolkit").glob("mcp.db*"))
    for value in (tokens["access_token"], tokens["refresh_token"], client.client_secret):
        assert value.encode() not in raw
    assert oct((mcp_project.root / ".toolkit" / "mcp.db").stat().st_mode & 0o777) == "0o600"


def test_refusals_of_the_sdks_own_checks_are_events_too(server):
    client = server.register()
    server.http.get(server.base + "/authorize", params=server.authorize_params(client, None))
    params = server.authorize_params(client, pkce()[1])
    params["redirect_uri"] = "http://localhost:3030/elsewhere"
    server.http.get(server.base + "/authorize", params=params)
    server.http.post(server.base + "/register", json={"client_name": "no redirect uris"})
    denied = [
        (e.action, e.status, e.client_id) for e in server.recorder.events if e.outcome == "denied"
    ]
    assert denied == [
        ("authorize", 302, client.client_id),
        ("authorize", 400, client.client_id),
        ("register", 400, None),
    ]
    assert "code_challenge" in server.recorder.events[-3].detail


def test_a_malformed_mcp_request_is_400(server):
    _, tokens = server.tokens()
    response = server.http.post(
        server.url,
        content=b"{not json",
        headers={
            "Authorization": f"Bearer {tokens['access_token']}",
            "Accept": "application/json, text/event-stream",
            "Content-Type": "application/json",
        },
    )
    assert response.status_code == 400
