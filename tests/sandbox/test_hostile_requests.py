"""Hostile requests: numbers beyond 64 bits, deep or huge bodies, foreign Host headers and
cross-site writes to the control API. Each gets a 4xx with the API's error body, never a 500."""

from __future__ import annotations

import json
import re

import httpx
import pytest

from tests.support.sandbox_client import Api
from toolkit import USER_AGENT

# Beyond SQLite's signed 64-bit integer, on both sides.
HUGE = [2**63, -(2**63) - 1, 10**30]

# The control API keeps a safety net: an integer beyond 64 bits anywhere in its body is a
# 422 naming the field.
CONTROL_BODIES = [
    ("POST", "/__sandbox/forem/comments", lambda n: {"article_id": n}),
    (
        "POST",
        "/__sandbox/forem/articles",
        lambda n: {"articles": [{"title": "Huge", "body_markdown": "x", "organization_id": n}]},
    ),
    ("POST", "/__sandbox/faults", lambda n: {"method": "GET", "route": "/api/tags", "count": n}),
]


@pytest.mark.parametrize("number", HUGE)
@pytest.mark.parametrize(("method", "path", "body"), CONTROL_BODIES)
def test_integers_beyond_64_bits_in_a_control_body_are_422(
    api: Api, method, path, body, number
) -> None:
    response = api.request(method, path, json=body(number))
    assert response.status_code == 422, response.text
    error = response.json()
    assert error["status"] == 422 and "out of range" in error["error"]


@pytest.mark.parametrize("number", HUGE)
def test_an_organization_id_beyond_64_bits_is_no_organisation(api: Api, number) -> None:
    """Forem: `allowed_to_change_org_id?` finds no membership (Rails' `exists?` with an
    out-of-range id is `WHERE 1=0`), so the key is dropped; a listing names an unknown
    organisation (401)."""
    created = api.post(
        "/api/articles",
        user="demo",
        json={
            "article": {
                "title": "Huge org",
                "body_markdown": f"x {number}",
                "organization_id": number,
            }
        },
    )
    assert created.status_code == 201 and "organization" not in created.json()
    updated = api.put(
        "/api/articles/1004", user="demo", json={"article": {"organization_id": number}}
    )
    assert updated.status_code == 200 and updated.json()["organization"]["username"] == "acme"
    listing = api.post(
        "/api/listings",
        user="demo",
        json={
            "listing": {
                "title": "Huge",
                "body_markdown": "x",
                "category": "cfp",
                "organization_id": number,
            }
        },
    )
    assert (listing.status_code, listing.json()["error"]) == (401, "unauthorized")
    assert (
        api.put(
            "/api/listings/503",
            user="demo",
            json={"listing": {"title": "Still fine", "organization_id": number}},
        ).status_code
        == 200
    )
    invited = api.post(
        "/api/admin/users", user="admin", json={"email": "huge@example.com", "name": number}
    )
    assert invited.status_code == 200


@pytest.mark.parametrize("number", HUGE)
def test_integers_beyond_64_bits_in_every_write_field(api: Api, number) -> None:
    fields = (
        "title",
        "body_markdown",
        "published",
        "series",
        "main_image",
        "canonical_url",
        "description",
        "organization_id",
    )
    article = {key: number for key in fields} | {"tags": [number]}
    for method, path in (("POST", "/api/articles"), ("PUT", "/api/articles/1001")):
        response = api.request(method, path, user="demo", json={"article": article})
        assert response.status_code in (200, 201, 422), response.text
    listing = {
        key: number
        for key in (
            "title",
            "body_markdown",
            "category",
            "expires_at",
            "location",
            "contact_via_connect",
            "action",
        )
    }
    for method, path in (("POST", "/api/listings"), ("PUT", "/api/listings/503")):
        response = api.request(
            method,
            path,
            user="demo",
            json={"listing": listing | {"tags": [number], "tag_list": number}},
        )
        assert response.status_code in (200, 201, 422), response.text


def test_the_largest_64_bit_integer_is_an_ordinary_unknown_id(api: Api) -> None:
    body = {"article": {"title": "Edge", "body_markdown": "x", "organization_id": 2**63 - 1}}
    assert api.post("/api/articles", user="demo", json=body).status_code == 201


def _forem_get_routes() -> list[str]:
    from starlette.routing import Route

    from toolkit_sandbox.forem import interface

    return [
        route.path
        for route in interface().routes
        if isinstance(route, Route) and "GET" in (route.methods or ())
    ]


QUERY_INTEGERS = ("page", "per_page", "collection_id", "a_id", "p_id", "top", "username")


@pytest.mark.parametrize("number", HUGE)
@pytest.mark.parametrize("route", _forem_get_routes())
def test_every_read_with_integers_beyond_64_bits_is_never_a_500(api: Api, route, number) -> None:
    path = re.sub(r"\{(\w+)(:\w+)?\}", str(number), route)
    response = api.get(path, user="demo", params={name: number for name in QUERY_INTEGERS})
    assert response.status_code in (200, 404), (path, response.status_code, response.text)


def test_query_integers_beyond_64_bits_answer_as_forem_does(api: Api) -> None:
    for number in HUGE[::2]:  # 2^63 and 10^30
        # `where(collection_id: huge)`: nothing (Rails builds WHERE 1=0).
        assert api.ok("GET", "/api/articles", params={"collection_id": number}) == []
        assert (
            api.ok("GET", "/api/articles", params={"collection_id": number, "username": "demo"})
            == []
        )
        # `[per_page, 1000].min`: the largest page; a huge page is past the last one.
        everything = api.ok("GET", "/api/articles/latest", params={"per_page": 1000})
        assert api.ok("GET", "/api/articles/latest", params={"per_page": number}) == everything
        assert api.ok("GET", "/api/articles/latest", params={"page": number}) == []
        assert api.ok("GET", "/api/readinglist", user="demo", params={"page": number}) == []
        # `find(huge)`: RecordNotFound, a 404.
        for name in ("a_id", "p_id"):
            assert api.get("/api/comments", params={name: number}).json() == {
                "error": "not found",
                "status": 404,
            }
        assert api.get(f"/api/users/{number}").status_code == 404
        assert api.get("/__sandbox/requests", params={"after": number}).json()["requests"] == []
    assert api.ok("GET", "/api/articles/latest", params={"per_page": -(2**63) - 1})  # 1 a page
    assert len(api.ok("GET", "/api/articles/latest", params={"per_page": -(10**30)})) == 1


@pytest.mark.parametrize(
    "ident",
    [
        str(2**63),
        str(2**63 - 1),
        "9" * 40,
        "\u00b2",
        "\u0661",
        "\uff11",
        "1e3",
        "+1",
        "0x1",
        "-1",
    ],
)
def test_odd_user_ids_are_404(api: Api, ident) -> None:
    response = api.get(f"/api/users/{ident}")
    assert response.status_code == 404
    assert response.json() == {"error": "not found", "status": 404}


@pytest.mark.parametrize("path", ["/api/articles/", "/api/listings/", "/__sandbox/forem/articles/"])
def test_ids_beyond_64_bits_in_paths_are_404(api: Api, path) -> None:
    suffix = "/edit" if path.startswith("/__sandbox") else ""
    method = "POST" if suffix else "GET"
    response = api.request(method, f"{path}{2**63}{suffix}", json={"body_markdown": "x"})
    assert response.status_code == 404
    assert response.json() == {"error": "not found", "status": 404}


@pytest.mark.parametrize(
    "raw",
    [
        b"[" * 100_000,
        b'{"article": ' + b'{"a": ' * 50_000 + b"1" + b"}" * 50_001,
        b'{"article": {"title": ' + b"[" * 150 + b"]" * 150 + b"}}",  # deeper than Rails' 100
        b'{"article": {"title": NaN}}',
        b'{"article": {"title": "x", "main_image": Infinity}}',
        b'{"article": {"title": 1e999}}',
    ],
)
@pytest.mark.parametrize(
    ("method", "path"), [("POST", "/api/articles"), ("POST", "/__sandbox/faults")]
)
def test_deep_or_non_finite_json_is_400(api: Api, method, path, raw) -> None:
    response = api.request(
        method, path, user="demo", content=raw, headers={"Content-Type": "application/json"}
    )
    assert response.status_code == 400
    assert response.json() == {"error": "bad request", "status": 400}


def test_nesting_within_the_limit_is_parsed(api: Api) -> None:
    body = (
        '{"article": {"title": "Nested", "body_markdown": "x", "extra": '
        + "[" * 90
        + "]" * 90
        + "}}"
    )
    response = api.post(
        "/api/articles", user="demo", content=body, headers={"Content-Type": "application/json"}
    )
    assert response.status_code == 201, response.text


@pytest.mark.socket  # the 413 of a chunked body, answered while it is being sent
def test_a_body_over_the_limit_is_413(api: Api) -> None:
    from toolkit_sandbox.interface import MAX_BODY

    big = json.dumps({"article": {"title": "Big", "body_markdown": "x" * MAX_BODY}}).encode()
    response = api.post(
        "/api/articles", user="demo", content=big, headers={"Content-Type": "application/json"}
    )
    assert response.status_code == 413
    assert response.json() == {"error": "payload too large", "status": 413}

    def chunks():  # no Content-Length: the limit is counted while reading
        for start in range(0, len(big), 65536):
            yield big[start : start + 65536]

    response = api.post(
        "/api/articles", user="demo", content=chunks(), headers={"Content-Type": "application/json"}
    )
    assert response.status_code == 413
    assert (
        api.get("/api/articles/me/all", user="demo", params={"per_page": 1000}).status_code == 200
    )
    assert api.server.count("POST", "/api/articles", 201) == 0


# --- the control API and the Host / Origin of a request ----------------------------------


def _raw(api: Api, method: str, path: str, **headers: str) -> httpx.Response:
    return api.http.request(method, path, headers={"User-Agent": USER_AGENT, **headers})


def test_the_control_api_refuses_foreign_host_headers(api: Api) -> None:
    port = api.server.port
    for host in (
        "evil.example",
        f"evil.example:{port}",
        "127.0.0.1:1",
        f"127.0.0.2:{port}",
        f"localhost.evil.example:{port}",
        f"127.0.0.1:{port}@evil.example",
        "",
    ):
        response = _raw(api, "GET", "/__sandbox/forem/accounts", Host=host)
        assert response.status_code == 403, host
        assert response.json()["status"] == 403 and "api_key" not in response.text
        assert _raw(api, "POST", "/__sandbox/reset", Host=host).status_code == 403
    for host in (f"127.0.0.1:{port}", f"localhost:{port}", f"LOCALHOST:{port}", f"[::1]:{port}"):
        assert _raw(api, "GET", "/__sandbox/forem/accounts", Host=host).status_code == 200, host


def test_the_api_answers_any_host(api: Api) -> None:
    """Clients may reach the sandbox through a tunnel or another name."""
    response = _raw(api, "GET", "/api/articles", Host="tunnel.example")
    assert response.status_code == 200 and response.json()


def test_the_control_api_refuses_cross_site_writes(api: Api) -> None:
    own = api.server.base_url
    api.server.fault("GET", "/api/articles", count=5, status=503)
    for headers in (
        {"Origin": "https://evil.example"},
        {"Origin": "null"},
        {"Origin": own.replace("127.0.0.1", "localhost").rsplit(":", 1)[0] + ":1"},
        {"Sec-Fetch-Site": "cross-site"},
        {"Origin": own, "Sec-Fetch-Site": "cross-site"},
    ):
        for method, path in (("POST", "/__sandbox/reset"), ("DELETE", "/__sandbox/faults")):
            response = _raw(api, method, path, **headers)
            assert response.status_code == 403, (headers, method)
            assert response.json()["status"] == 403
    assert len(api.get("/__sandbox/faults").json()["faults"]) == 1  # nothing was cleared
    # Reads, and writes from the sandbox's own origin or with no Origin (scripts), pass.
    assert _raw(api, "GET", "/__sandbox/faults", Origin="https://evil.example").status_code == 200
    same = {"Origin": own, "Sec-Fetch-Site": "same-origin"}
    assert _raw(api, "DELETE", "/__sandbox/faults", **same).status_code == 204
    assert _raw(api, "POST", "/__sandbox/reset").status_code == 200
    localhost = own.replace("127.0.0.1", "localhost")
    assert (
        _raw(
            api, "POST", "/__sandbox/stats/reset", Origin=localhost, Host=localhost.split("//")[1]
        ).status_code
        == 200
    )


@pytest.mark.parametrize("date", ["0001-01-01T00:00+05:00", "9999-12-31T23:59-05:00"])
def test_a_front_matter_date_beyond_the_calendar_in_utc_is_ignored(api: Api, date) -> None:
    """As a date that names no day: the article is published now."""
    body = f"---\ntitle: Edge of time\npublished: true\ndate: '{date}'\n---\nText.\n"
    response = api.post("/api/articles", user="demo", json={"article": {"body_markdown": body}})
    assert response.status_code == 201, response.text
