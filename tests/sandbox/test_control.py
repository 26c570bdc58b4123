"""The control API under /__sandbox: accounts, stats, reset, faults, edits, comments,
bulk articles, reading list, request records, the user-agent check."""

from __future__ import annotations

import logging
import time

import httpx
import pytest

from tests.support.sandbox_client import Api
from tests.support.waiting import until
from toolkit.tls import shared_context
from toolkit_sandbox.forem.seed import api_key_for


def test_accounts_are_the_seeded_ones_with_fixed_keys(api: Api) -> None:
    accounts = api.ok("GET", "/__sandbox/forem/accounts")
    assert [(a["username"], a["role"]) for a in accounts] == [
        ("demo", "user"),
        ("sam", "user"),
        ("admin", "super_admin"),
    ]
    assert all(a["api_key"] == api_key_for(a["username"]) for a in accounts)
    assert api.server.demo_api_key == accounts[0]["api_key"]
    assert set(accounts[0]) == {"username", "api_key", "role"}


def test_stats_count_by_route_template_and_skip_control_requests(api: Api) -> None:
    api.get("/api/articles/1001")
    api.get("/api/articles/1002")
    api.get("/api/articles/999999")
    api.get("/api/nowhere")
    api.get("/__sandbox/forem/accounts")
    api.get("/nowhere")
    assert api.ok("GET", "/__sandbox/stats") == {
        "requests": [
            {
                "interface": "forem",
                "method": "GET",
                "route": "/api/articles/{id}",
                "status": 200,
                "count": 2,
            },
            {
                "interface": "forem",
                "method": "GET",
                "route": "/api/articles/{id}",
                "status": 404,
                "count": 1,
            },
            {"interface": None, "method": "GET", "route": "<unmatched>", "status": 404, "count": 1},
            {
                "interface": "forem",
                "method": "GET",
                "route": "<unmatched>",
                "status": 404,
                "count": 1,
            },
        ]
    }
    assert api.server.count(route="/api/articles/{id}") == 3
    assert api.ok("POST", "/__sandbox/stats/reset") == {"reset": True}
    assert api.server.stats() == []


def test_the_record_is_read_to_its_end_a_page_at_a_time(api: Api) -> None:
    """`requests()` pages through the control route: with pages of two, five requests
    come back whole and in order (a long run keeps more than one page of records)."""
    last = api.ok("GET", "/__sandbox/requests", params={"limit": 1})["last_seq"]
    for article in (1001, 1002, 1001, 1002, 999999):
        api.get(f"/api/articles/{article}")
    records = api.server.requests(after=last, page=2)
    assert [r["path"] for r in records] == [
        "/api/articles/1001",
        "/api/articles/1002",
        "/api/articles/1001",
        "/api/articles/1002",
        "/api/articles/999999",
    ]
    assert [r["seq"] for r in records] == sorted(r["seq"] for r in records)


def test_reset_goes_back_to_the_seed(api: Api) -> None:
    created = api.create(title="Temporary", body_markdown="x", published=True)
    api.put("/api/articles/1001", user="demo", json={"article": {"body_markdown": "gone"}})
    api.ok("POST", "/__sandbox/faults", json={"method": "GET", "route": "/api/tags", "status": 500})
    seeded = api.ok("GET", "/api/articles/1002")
    assert api.ok("POST", "/__sandbox/reset") == {"reset": True}
    assert api.get(f"/api/articles/{created['id']}").status_code == 404
    assert "gone" not in api.ok("GET", "/api/articles/1001")["body_markdown"]
    assert api.ok("GET", "/api/articles/1002") == seeded
    assert api.get("/api/tags").status_code == 200  # faults are cleared too
    # The same seed gives the same data, ids included: a new article gets the same id again.
    assert api.create(title="Temporary", body_markdown="x", published=True)["id"] == created["id"]


def test_status_faults_fail_the_next_matching_requests(api: Api) -> None:
    fault = api.ok(
        "POST",
        "/__sandbox/faults",
        json={"method": "GET", "route": "/api/articles/{id}", "count": 2, "status": 503},
    )
    assert fault["count"] == 2 and fault["status"] == 503
    assert api.get("/api/articles/1001").status_code == 503
    assert api.get("/api/articles/1002").json() == {"error": "Service Unavailable", "status": 503}
    assert api.get("/api/articles/1001").status_code == 200
    api.ok(
        "POST",
        "/__sandbox/faults",
        json={"method": "POST", "route": "/api/articles", "status": 429, "retry_after": 7},
    )
    limited = api.post("/api/articles", user="demo", json={"article": {"title": "x"}})
    assert limited.status_code == 429 and limited.headers["Retry-After"] == "7"
    assert limited.json()["error"] == "Rate limit reached, try again in 7 seconds"
    assert api.ok("GET", "/api/articles/me/all", user="demo")[0]["title"] != "x"  # nothing written
    at_once = api.server.fault("POST", "/api/articles", status=429, retry_after=0)
    assert at_once["retry_after"] == 0
    limited = api.post("/api/articles", user="demo", json={"article": {"title": "x"}})
    assert limited.status_code == 429 and limited.headers["Retry-After"] == "0"


def test_faults_match_a_concrete_path_and_any_method(api: Api) -> None:
    api.ok(
        "POST",
        "/__sandbox/faults",
        json={"method": "*", "route": "/api/articles/1002", "status": 500},
    )
    assert api.get("/api/articles/1001").status_code == 200
    assert api.get("/api/articles/1002").status_code == 500
    assert api.ok("GET", "/__sandbox/faults") == {"faults": []}


def test_delay_faults(api: Api) -> None:
    api.server.fault("GET", "/api/tags", delay_ms=300)
    started = time.monotonic()
    assert api.get("/api/tags").status_code == 200
    assert time.monotonic() - started >= 0.3


def test_a_fault_is_released_once_and_only_a_delay_waits_for_a_release(api: Api) -> None:
    fault = api.server.fault("GET", "/api/tags", delay_ms=60_000, until_released=True)
    api.server.release(fault)  # before any request: the one it takes is not held
    assert api.get("/api/tags").status_code == 200
    again = api.post(f"/__sandbox/faults/{fault['id']}/release")
    assert again.status_code == 404 and "holds requests until released" in again.text
    refused = api.post(
        "/__sandbox/faults",
        json={"method": "GET", "route": "/api/tags", "status": 500, "until_released": True},
    )
    assert refused.status_code == 422 and "goes with delay_ms" in refused.text
    # Clearing the faults ends their holds too: nothing stays held, nothing to release.
    cleared = api.server.fault("GET", "/api/tags", delay_ms=60_000, until_released=True)
    api.server.clear_faults()
    assert api.post(f"/__sandbox/faults/{cleared['id']}/release").status_code == 404


def _titles(api: Api) -> list[str]:
    return [
        a["title"]
        for a in api.ok("GET", "/api/articles/me/all", user="demo", params={"per_page": 1000})
    ]


@pytest.mark.socket
def test_a_delayed_request_is_handled_late_when_its_client_gave_up(api: Api, caplog) -> None:
    """The body is read before the delay: a client that stops waiting does not turn the
    request into an error; it is handled and committed late, quietly. (Held until the
    fault is released, so that "still held" does not depend on the machine's speed.)"""
    caplog.set_level(logging.INFO, logger="toolkit_sandbox")
    fault = api.server.fault("POST", "/api/articles", delay_ms=60_000, until_released=True)
    assert fault["until_released"] is True
    with pytest.raises(httpx.ReadTimeout):
        api.post(
            "/api/articles",
            user="demo",
            timeout=0.2,
            json={"article": {"title": "Committed late", "body_markdown": "x"}},
        )
    assert "Committed late" not in _titles(api)  # still held
    api.server.release(fault)
    until(lambda: api.server.count("POST", "/api/articles", 201))
    assert "Committed late" in _titles(api)
    assert api.server.count("POST", "/api/articles") == 1
    assert any("client left while a delay fault held" in r.getMessage() for r in caplog.records)
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING or r.exc_info]


@pytest.mark.socket
def test_delay_response_commits_at_once_and_answers_late(api: Api) -> None:
    api.server.fault("POST", "/api/articles", delay_response_ms=800)
    with pytest.raises(httpx.ReadTimeout):
        api.post(
            "/api/articles",
            user="demo",
            timeout=0.3,
            json={"article": {"title": "Answered late", "body_markdown": "x"}},
        )
    assert "Answered late" in _titles(api)  # committed before the answer was due
    fault = api.server.fault("GET", "/api/tags", delay_response_ms=300)
    assert fault["delay_response_ms"] == 300 and fault["interface"] == "forem"
    started = time.monotonic()
    assert api.get("/api/tags").status_code == 200
    assert time.monotonic() - started >= 0.3


@pytest.mark.socket
def test_drop_after_commit_writes_then_drops_the_connection(api: Api) -> None:
    api.server.fault("POST", "/api/articles", drop_after_commit=True)
    with pytest.raises(httpx.RemoteProtocolError):
        api.post(
            "/api/articles",
            user="demo",
            json={"article": {"title": "Did it happen?", "body_markdown": "x"}},
        )
    titles = [a["title"] for a in api.ok("GET", "/api/articles/me/all", user="demo")]
    assert "Did it happen?" in titles
    assert api.server.count("POST", "/api/articles", 201) == 1
    # Found by its route: the list read above may be recorded before the dropped request.
    record = [
        r for r in api.server.requests() if r["method"] == "POST" and r["path"] == "/api/articles"
    ][-1]
    assert record["dropped"] is True and record["status"] == 201
    assert (
        api.post(
            "/api/articles",
            user="demo",
            json={"article": {"title": "Next one", "body_markdown": "x"}},
        ).status_code
        == 201
    )


@pytest.mark.socket
def test_reads_and_resets_wait_for_the_requests_in_flight(api: Api) -> None:
    """A client that gave up leaves its request running: the stats and the records wait
    for it (it is counted, committed), and a reset waits too, so its record never lands
    after the reset, in the next test's counts."""
    last = api.ok("GET", "/__sandbox/requests", params={"limit": 1})["last_seq"]
    api.server.fault("POST", "/api/articles", delay_ms=600)
    with pytest.raises(httpx.ReadTimeout):
        api.post(
            "/api/articles",
            user="demo",
            timeout=0.1,
            json={"article": {"title": "Still running", "body_markdown": "x"}},
        )
    assert api.server.count("POST", "/api/articles", 201) == 1
    assert [(r["method"], r["path"], r["status"]) for r in api.server.requests(after=last)] == [
        ("POST", "/api/articles", 201)
    ]

    api.server.fault("GET", "/api/tags", delay_ms=600)
    with pytest.raises(httpx.ReadTimeout):
        api.get("/api/tags", timeout=0.1)
    api.server.reset_stats()
    assert api.server.count(route="/api/tags") == 0
    # A write still in flight commits before the reset, never after it.
    api.server.fault("POST", "/api/articles", delay_ms=600)
    with pytest.raises(httpx.ReadTimeout):
        api.post(
            "/api/articles",
            user="demo",
            timeout=0.1,
            json={"article": {"title": "Before the reset", "body_markdown": "x"}},
        )
    api.server.reset()
    assert api.server.count("POST", "/api/articles", 201) == 1  # done: it is recorded
    assert "Before the reset" not in _titles(api)


@pytest.mark.parametrize(
    "spec",
    [
        {},
        {"method": "GET"},
        {"method": "GET", "route": "api/x", "status": 500},
        {"method": "GET", "route": "/api/tags"},
        {"method": "GET", "route": "/api/tags", "status": 200},
        {"method": "GET", "route": "/api/tags", "status": 500, "delay_ms": 5},
        {"method": "GET", "route": "/api/tags", "delay_ms": 5, "delay_response_ms": 5},
        {"method": "GET", "route": "/api/tags", "delay_response_ms": 60_001},
        {"method": "GET", "route": "/nowhere", "status": 500},
        {"interface": "other", "method": "GET", "route": "/api/tags", "status": 500},
        {"method": "GET", "route": "/api/tags", "count": 0, "status": 500},
        {"method": "GET", "route": "/api/tags", "status": "500"},
    ],
)
def test_bad_fault_specs_are_422(api: Api, spec) -> None:
    response = api.post("/__sandbox/faults", json=spec)
    assert response.status_code == 422 and response.json()["status"] == 422


def test_faults_can_be_listed_and_cleared(api: Api) -> None:
    api.server.fault("GET", "/api/tags", count=3, status=500)
    assert api.ok("GET", "/__sandbox/faults")["faults"][0]["count"] == 3
    api.server.clear_faults()
    assert api.get("/api/tags").status_code == 200


def test_website_edit_sets_edited_at_and_applies_front_matter(api: Api) -> None:
    before = api.ok("GET", "/api/articles/1003")
    assert before["edited_at"] is None
    body = before["body_markdown"].replace(
        "title: Keeping a changelog in git", "title: Keeping a changelog, edited online"
    )
    edited = api.ok("POST", "/__sandbox/forem/articles/1003/edit", json={"body_markdown": body})
    assert (
        edited["edited_at"] is not None and edited["title"] == "Keeping a changelog, edited online"
    )
    assert api.ok("GET", "/api/articles/1003") == edited
    assert api.server.stats() == [
        {
            "interface": "forem",
            "method": "GET",
            "route": "/api/articles/{id}",
            "status": 200,
            "count": 2,
        }
    ]  # no API write was counted
    assert (
        api.post("/__sandbox/forem/articles/999999/edit", json={"body_markdown": "x"}).status_code
        == 404
    )
    assert api.post("/__sandbox/forem/articles/1003/edit", json={}).status_code == 422


def test_comments_added_and_deleted(api: Api) -> None:
    before = api.ok("GET", "/api/articles/1003")
    root = api.ok(
        "POST", "/__sandbox/forem/comments", json={"article_id": 1003, "body_markdown": "*Hi*"}
    )
    assert root["user"]["username"] == "sam" and "<em>Hi</em>" in root["body_html"]
    assert root == api.ok("GET", f"/api/comments/{root['id_code']}")
    hostile = '<p>x</p><script>alert(1)</script><img src=x onerror="alert(2)">'
    reply = api.ok(
        "POST",
        "/__sandbox/forem/comments",
        json={
            "article_id": 1003,
            "parent_id_code": root["id_code"],
            "username": "kim",
            "body_html": hostile,
        },
    )
    assert reply["body_html"] == hostile  # stored verbatim, as remote HTML is untrusted
    after = api.ok("GET", "/api/articles/1003")
    assert after["comments_count"] == before["comments_count"] + 2
    assert after["last_comment_at"] > before["last_comment_at"]
    thread = api.ok("GET", f"/api/comments/{root['id_code']}")
    assert [child["id_code"] for child in thread["children"]] == [reply["id_code"]]

    # A comment with replies stays as a placeholder; a leaf is gone.
    assert api.request("DELETE", f"/__sandbox/forem/comments/{root['id_code']}").status_code == 204
    placeholder = api.ok("GET", f"/api/comments/{root['id_code']}")
    assert placeholder["body_html"] == "<p>[deleted]</p>" and placeholder["user"] == {}
    assert api.request("DELETE", f"/__sandbox/forem/comments/{reply['id_code']}").status_code == 204
    assert api.get(f"/api/comments/{reply['id_code']}").status_code == 404
    assert api.get(f"/api/comments/{root['id_code']}").status_code == 404  # nothing left under it
    assert api.ok("GET", "/api/articles/1003")["comments_count"] == before["comments_count"]
    codes = str(api.ok("GET", "/api/comments", params={"a_id": 1003}))
    assert root["id_code"] not in codes and reply["id_code"] not in codes
    assert api.request("DELETE", f"/__sandbox/forem/comments/{root['id_code']}").status_code == 404


def test_comment_errors_and_episode_comments(api: Api) -> None:
    episode = api.post("/__sandbox/forem/comments", json={"podcast_episode_id": 302})
    assert episode.status_code == 201
    assert len(api.ok("GET", "/api/comments", params={"p_id": 302})) == 1
    for body, status in [
        ({}, 422),
        ({"article_id": 1, "podcast_episode_id": 301}, 422),
        ({"article_id": 999999}, 404),
        ({"article_id": 1001, "username": "ghost"}, 422),
        ({"article_id": 1001, "parent_id_code": "zzz"}, 422),
        ({"article_id": 1002, "parent_id_code": "274d"}, 422),
        ({"article_id": 1001, "body_html": 5}, 422),
    ]:
        assert api.post("/__sandbox/forem/comments", json=body).status_code == status, body


def test_bulk_articles_skip_rate_limits_and_fail_as_a_whole(api: Api) -> None:
    ids = api.bulk(
        [
            {"title": f"Bulk {n}", "body_markdown": "x", "published": n % 2 == 0, "tags": ["bulk"]}
            for n in range(25)
        ]
    )
    assert len(ids) == 25 and ids == sorted(ids)
    assert len(api.ok("GET", "/api/articles", params={"tag": "bulk"})) == 13
    assert api.server.count() == 1  # only the list read; bulk writes are not API requests
    response = api.post(
        "/__sandbox/forem/articles",
        json={
            "articles": [
                {"title": "Fine", "body_markdown": "x"},
                {"title": "", "body_markdown": "x"},
            ]
        },
    )
    assert response.json() == {"error": "articles[1]: Title can't be blank", "status": 422}
    assert "Fine" not in [a["title"] for a in api.ok("GET", "/api/articles/me/all", user="demo")]
    by_sam = api.bulk([{"title": "Sam's", "body_markdown": "x", "published": True}], username="sam")
    assert api.ok("GET", f"/api/articles/{by_sam[0]}")["user"]["username"] == "sam"


def test_reading_list_entries(api: Api) -> None:
    assert api.ok("POST", "/__sandbox/forem/readinglist", json={"count": 20}) == {"added": 20}
    items = api.ok("GET", "/api/readinglist", user="demo", params={"per_page": 100})
    assert len(items) == 24 and len({item["article"]["id"] for item in items}) == 24
    titles = {item["article"]["title"] for item in items}
    assert {"Reading list pick 1", "Reading list pick 2"} <= titles
    assert all(item["article"]["user"]["username"] != "demo" for item in items)
    api.ok("POST", "/__sandbox/forem/readinglist", json={"username": "sam", "count": 2})
    assert len(api.ok("GET", "/api/readinglist", user="sam")) == 3
    assert api.post("/__sandbox/forem/readinglist", json={"count": 0}).status_code == 422


def test_request_records_name_the_key_by_id_only(api: Api) -> None:
    # Read from a sequence number on, and by route: a request of an earlier test of this
    # worker (a process it started) may still be recorded in between.
    start = api.ok("GET", "/__sandbox/requests", params={"limit": 1})["last_seq"]
    api.get("/api/users/me", user="demo")
    api.get("/api/tags")
    ours = {"/api/users/me", "/api/tags"}
    records = [
        r
        for r in api.ok("GET", "/__sandbox/requests", params={"after": start})["requests"]
        if r["route"] in ours
    ]
    assert [(r["interface"], r["method"], r["route"], r["status"]) for r in records] == [
        ("forem", "GET", "/api/users/me", 200),
        ("forem", "GET", "/api/tags", 200),
    ]
    assert isinstance(records[0]["caller"], int) and records[1]["caller"] is None
    assert all(r["duration_ms"] >= 0 and r["time"] > 0 for r in records)
    everything = api.get("/__sandbox/requests").text
    assert api.keys["demo"] not in everything
    last = records[-1]["seq"]
    later = api.ok("GET", "/__sandbox/requests", params={"after": last})["requests"]
    assert [r for r in later if r["route"] in ours] == []


REFUSED_AGENTS = [
    "",
    "Python-urllib/3.12",
    "python-urllib3/2.2.1",
    "Java/17.0.2",
    "Java-http-client/21",
    "Jakarta Commons-HttpClient/3.1",
    "libwww-perl/6.77",
    "Fetch API Request",
    "Mozilla",
    "My http client",
    "Reader bots unite",
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:62.0) Gecko/20100101 Firefox/62.0",
    "AhrefsBot/7.0",
    "EmailSiphon",
]
SERVED_AGENTS = [
    "curl/8.4.0",
    "Wget/1.21.4",
    "python-requests/2.32.3",
    "python-httpx/0.28.1",
    "Python/3.12 aiohttp/3.9.5",
    "Go-http-client/1.1",
    "okhttp/4.12.0",
    "node-fetch/1.0 (+https://github.com/bitinn/node-fetch)",
    "java/17 (lower case)",
    "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0",
    "Ruby",
]


def test_user_agent_check_is_opt_in_and_refuses_what_the_edge_refuses(api: Api) -> None:
    """The edge's VCL (forem/forem config/fastly/snippets/bad_bot_detection.vcl)."""
    assert api.get("/api/articles", headers={"User-Agent": "Java/17.0.2"}).status_code == 200
    switched = api.ok("POST", "/__sandbox/forem/user-agent-check", json={"enabled": True})
    assert switched == {"enabled": True}
    for agent in REFUSED_AGENTS:
        blocked = api.get("/api/articles", headers={"User-Agent": agent})
        assert (blocked.status_code, blocked.content) == (403, b""), agent
    for agent in SERVED_AGENTS:
        assert api.get("/api/articles", headers={"User-Agent": agent}).status_code == 200, agent
    assert api.get("/api/articles").status_code == 200  # toolkit's own User-Agent
    with httpx.Client(base_url=api.base_url, verify=shared_context()) as bare:
        del bare.headers["User-Agent"]
        assert bare.get("/api/articles").status_code == 403  # no header at all
    # "Ruby" only outside /api; the rule is Forem's, not on paths it does not own.
    assert api.get("/images/users/1-90.png", headers={"User-Agent": "Ruby"}).status_code == 403
    # /api/v1 is the log service's (interface E): its own answer, not Forem's refusal.
    logs = api.post("/api/v1/query", json={}, headers={"User-Agent": "Java/17.0.2"})
    assert (logs.status_code, logs.text) == (401, "No authentication method supplied")
    assert api.server.count("GET", "/api/articles", 403) == len(REFUSED_AGENTS) + 1
    api.ok("POST", "/__sandbox/reset")
    assert api.get("/api/articles", headers={"User-Agent": "Java/17.0.2"}).status_code == 200


def test_control_index_lists_the_endpoints(api: Api) -> None:
    index = api.ok("GET", "/__sandbox")
    endpoints = index["endpoints"]
    assert "GET /__sandbox/forem/accounts" in endpoints and "POST /__sandbox/reset" in endpoints
    assert endpoints["POST /__sandbox/forem/comments"].startswith("add a comment")
    assert index["interfaces"]["forem"] == {
        "prefixes": ["/api", "/images"],
        "excludes": ["/api/v1"],
        "control": "/__sandbox/forem",
    }
    assert api.ok("GET", "/__sandbox/health") == {"ok": True}


def test_forem_control_routes_keep_their_old_paths(api: Api) -> None:
    assert api.ok("GET", "/__sandbox/accounts") == api.ok("GET", "/__sandbox/forem/accounts")
    assert api.ok("GET", "/__sandbox/credits") == api.ok("GET", "/__sandbox/forem/credits")
    assert api.post("/__sandbox/readinglist", json={"count": 1}).status_code == 201
