"""A team's writers on the sandbox: users added with keys, organisation members or not,
and how the API treats a non-member's `organization_id` (as Forem does: dropped)."""

from __future__ import annotations

from tests.support.sandbox_client import Api
from toolkit_sandbox.forem.seed import api_key_for


def test_an_added_user_has_a_key_a_membership_and_goes_at_reset(api: Api) -> None:
    added = api.ok(
        "POST", "/__sandbox/forem/users", json={"username": "jane", "organizations": ["acme"]}
    )
    assert added["username"] == "jane" and added["api_key"] == api_key_for("jane")
    me = api.ok("GET", "/api/users/me", headers={"api-key": added["api_key"]})
    assert me["username"] == "jane"
    members = api.ok("GET", "/api/organizations/acme/users", params={"per_page": 100})
    assert "jane" in [u["username"] for u in members]
    seen = api.server.requests()
    api.get("/api/users/me", headers={"api-key": added["api_key"]})
    [record] = api.server.requests(seen[-1]["seq"] if seen else 0)
    assert record["caller"] == added["key_id"]

    api.ok("POST", "/__sandbox/reset")
    assert api.get("/api/users/me", headers={"api-key": added["api_key"]}).status_code == 401


def test_an_added_user_is_refused_a_taken_name_a_bad_name_an_unknown_organisation(
    api: Api,
) -> None:
    for body, message in (
        ({"username": "demo"}, "username 'demo' is taken"),
        ({"username": "Not OK"}, "username must be 1 to 30 of a-z, 0-9 and _"),
        ({"username": "solo", "organizations": ["nowhere"]}, "no organisation 'nowhere'"),
    ):
        response = api.post("/__sandbox/forem/users", json=body)
        assert response.status_code == 422
        assert response.json() == {"error": message, "status": 422}
    accounts = api.ok("GET", "/__sandbox/forem/accounts")
    assert [a["username"] for a in accounts] == ["demo", "sam", "admin"]


def test_a_non_members_organization_id_is_dropped_a_members_kept(api: Api) -> None:
    member = api.ok(
        "POST", "/__sandbox/forem/users", json={"username": "jane", "organizations": ["acme"]}
    )
    outsider = api.ok("POST", "/__sandbox/forem/users", json={"username": "solo"})
    for user, expected in ((member, "acme"), (outsider, None)):
        response = api.post(
            "/api/articles",
            headers={"api-key": user["api_key"]},
            json={"article": {"title": "T", "body_markdown": "x", "organization_id": 1}},
        )
        assert response.status_code == 201
        org = response.json().get("organization")
        assert (org["username"] if org else None) == expected
