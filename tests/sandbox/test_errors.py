"""Error statuses and bodies: 400, 401, 404, 422 - and never a 500."""

from __future__ import annotations

import pytest

from tests.support.sandbox_client import Api

AUTHENTICATED = [
    ("GET", "/api/articles/me"),
    ("GET", "/api/articles/me/published"),
    ("GET", "/api/articles/me/unpublished"),
    ("GET", "/api/articles/me/all"),
    ("POST", "/api/articles"),
    ("PUT", "/api/articles/1001"),
    ("GET", "/api/follows/tags"),
    ("GET", "/api/followers/users"),
    ("POST", "/api/listings"),
    ("PUT", "/api/listings/501"),
    ("GET", "/api/readinglist"),
    ("GET", "/api/users/me"),
    ("POST", "/api/admin/users"),
]
WRITES = [
    ("POST", "/api/articles"),
    ("PUT", "/api/articles/1001"),
    ("POST", "/api/listings"),
    ("PUT", "/api/listings/501"),
    ("POST", "/api/admin/users"),
]


@pytest.mark.parametrize(("method", "path"), AUTHENTICATED)
@pytest.mark.parametrize("key", [None, "not-a-key", ""])
def test_authenticated_endpoints_answer_401(api: Api, method, path, key) -> None:
    headers = {} if key is None else {"api-key": key}
    response = api.request(method, path, headers=headers, json={"article": {"title": "x"}})
    assert response.status_code == 401
    assert response.json() == {"error": "unauthorized", "status": 401}
    assert response.headers["Cache-Control"] == "no-store"


def test_only_a_super_admin_invites(api: Api) -> None:
    body = {"email": "someone@example.com", "name": "Some One"}
    refused = api.post("/api/admin/users", user="demo", json=body)
    assert refused.json() == {"error": "unauthorized", "status": 401}
    assert refused.headers["Cache-Control"] == "no-store"
    invited = api.post("/api/admin/users", user="admin", json=body)
    assert invited.status_code == 200 and invited.content == b""


MISSING_EMAIL = {"error": "param is missing or the value is empty: email", "status": 422}


@pytest.mark.parametrize(
    ("params", "body"),
    [
        ({}, {"name": "No mail"}),
        ({}, {"email": ""}),
        ({}, {"email": "   "}),
        ({}, {"email": None}),
        ({"email": ""}, {"email": "body@example.com"}),
        ({}, ["email", "x@example.com"]),
        ({}, None),
    ],
)
def test_an_invitation_without_an_email_is_422(api: Api, params, body) -> None:
    response = api.post("/api/admin/users", user="admin", params=params, json=body)
    assert (response.status_code, response.json()) == (422, MISSING_EMAIL)


def test_an_invitation_reads_the_query_string_and_a_flat_body(api: Api) -> None:
    """Rails' merged params, the query winning; 200 with an empty body whenever an email is
    given, never a 422 for an invalid or taken address (Forem:
    app/controllers/concerns/api/admin/users_controller.rb)."""

    def invite(params=None, **body):
        response = api.post("/api/admin/users", user="admin", params=params or {}, json=body)
        assert (response.status_code, response.content) == (200, b""), response.text

    invite(
        {"email": "q@example.com", "name": "From the query"},
        name="From the body",
        custom_invite_subject="Join us",
        custom_invite_message="Welcome",
        custom_invite_footnote="Bye",
    )
    invite({"email": "query@example.com"}, email="body@example.com")
    invite(email="nope")  # not an address: accepted, nothing sent
    invite(email="demo@example.com")  # a user already: accepted, nothing sent
    invite(email="q@example.com")  # invited again: sent again
    form = api.post(
        "/api/admin/users",
        user="admin",
        content=b"email=form%40example.com",
        headers={"Content-Type": "application/x-www-form-urlencoded"},
    )
    assert form.status_code == 200
    sent = {row["email"]: row for row in api.ok("GET", "/__sandbox/forem/invitations")}
    assert set(sent) == {"q@example.com", "query@example.com", "form@example.com"}
    assert sent["q@example.com"] == {
        "email": "q@example.com",
        "name": "From the query",
        "custom_invite_subject": "Join us",
        "custom_invite_message": "Welcome",
        "custom_invite_footnote": "Bye",
        "sent_count": 2,
    }


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("GET", "/api/nothing"),
        ("GET", "/api/articles/abc"),
        ("DELETE", "/api/articles/1001"),
        ("POST", "/api/articles/1001"),
        ("PATCH", "/api/listings/501"),
        ("GET", "/api/articles/-1"),
        ("GET", "/api/listings/category"),
        ("GET", "/__sandbox/nothing"),
    ],
)
def test_unknown_paths_and_methods_are_404_with_the_error_body(api: Api, method, path) -> None:
    response = api.request(method, path)
    assert response.status_code == 404
    assert response.json() == {"error": "not found", "status": 404}


@pytest.mark.parametrize("path", ["/nothing", "/apix", "/"])
def test_paths_no_interface_owns_get_a_neutral_404(api: Api, path) -> None:
    """Not Forem's body: a client of another interface must not mistake it for an answer."""
    response = api.get(path)
    assert response.status_code == 404
    assert response.headers["content-type"].startswith("text/plain")
    assert response.text == "Not Found"
    assert [(row["interface"], row["route"], row["status"]) for row in api.server.stats()] == [
        (None, "<unmatched>", 404)
    ]


@pytest.mark.parametrize(("method", "path"), WRITES)
@pytest.mark.parametrize("raw", [b"{", b"not json", b'{"article": }', b"\xff\xfe"])
def test_malformed_json_is_400(api: Api, method, path, raw) -> None:
    response = api.request(
        method,
        path,
        user="admin" if "admin" in path else "demo",
        content=raw,
        headers={"Content-Type": "application/json"},
    )
    assert response.status_code == 400
    assert response.json() == {"error": "bad request", "status": 400}


@pytest.mark.parametrize(
    "query",
    [
        {"page": "-1"},
        {"per_page": "abc"},
        {"top": "0"},
        {"top": "x"},
        {"collection_id": "x"},
        {"state": "sideways"},
        {"tags": ",,,"},
        {"tag": ""},
        {"username": "'; DROP TABLE articles; --"},
        {"per_page": "99999999999999999999"},
        {"page": "99999999999999"},
        {"top": "99999999999999"},
        {"collection_id": "99999999999999999999"},
        {"page": "99999999999999999999"},
    ],
)
def test_odd_queries_never_fail(api: Api, query) -> None:
    response = api.get("/api/articles", params=query)
    assert response.status_code == 200
    assert isinstance(response.json(), list)


@pytest.mark.parametrize(
    "path",
    [
        "/api/comments?a_id=x",
        "/api/comments?p_id=-3",
        "/api/comments/%20",
        "/api/comments/" + "z" * 40,
        "/api/users/by_username",
        "/api/podcast_episodes?username=",
        "/api/listings/99999999999999999999",
        "/api/articles/99999999999999999999",
        "/api/comments?a_id=99999999999999999999",
        "/api/comments/pppppppppppp",
        "/api/readinglist?page=99999999999999",
        "/api/followers/users?sort=-,,x",
        "/api/followers/users?page=99999999999999",
    ],
)
def test_odd_lookups_are_404_or_200_never_500(api: Api, path) -> None:
    assert api.get(path, user="demo").status_code in (200, 404)


def test_wrong_types_in_listing_payloads(api: Api) -> None:
    for body in (
        {"listing": {"title": ["x"], "body_markdown": {"a": 1}, "category": 5}},
        {
            "listing": {
                "title": "t",
                "body_markdown": "b",
                "category": "cfp",
                "organization_id": "1",
            }
        },
        {"listing": {"title": "t", "body_markdown": "b", "category": "cfp", "tags": "a,b"}},
        {"listing": "x"},
        [1],
    ):
        response = api.post("/api/listings", user="demo", json=body)
        assert response.status_code in (201, 401, 422), response.text
    for change in (
        {"listing": {"action": 3}},
        {"listing": {"title": None}},
        {"listing": {"tags": [None]}},
    ):
        assert api.put("/api/listings/503", user="demo", json=change).status_code in (200, 422)


def test_unauthenticated_reads_are_cors_enabled(api: Api) -> None:
    assert api.get("/api/articles").headers["Access-Control-Allow-Origin"] == "*"
    assert "Access-Control-Allow-Origin" not in api.get("/api/users/me", user="demo").headers
