"""Listings: credits, the state table of the update actions, restrictions, visibility."""

from __future__ import annotations

import pytest

from tests.support.sandbox_client import Api


def credits(api: Api) -> tuple[int, int]:
    """(demo's credits, acme's credits)."""
    body = api.ok("GET", "/__sandbox/forem/credits")
    return body["users"]["demo"], body["organizations"]["acme"]


def create(api: Api, user: str = "demo", **listing):
    listing = {"title": "A listing", "body_markdown": "Details.", "category": "misc", **listing}
    return api.post("/api/listings", user=user, json={"listing": listing})


def update(api: Api, listing_id: int, user: str = "demo", **listing):
    return api.put(f"/api/listings/{listing_id}", user=user, json={"listing": listing})


def test_categories_cost_their_price_from_the_user(api: Api) -> None:
    assert credits(api) == (10, 30)
    response = create(api, category="cfp", tags=["events"])
    assert response.status_code == 201
    listing = response.json()
    assert listing["published"] is True and "created_at" not in listing
    assert listing["tag_list"] == "events" and listing["tags"] == ["events"]
    assert credits(api) == (9, 30)
    assert create(api, category="products", title="P").status_code == 201
    assert credits(api) == (4, 30)
    refused = create(api, category="products", title="P2")
    assert refused.status_code == 402
    assert refused.json() == {"error": "Not enough available credits", "status": 402}
    assert credits(api) == (4, 30)


def test_organisation_credits_are_spent_first(api: Api) -> None:
    first = create(api, category="jobs", title="Job 1", organization_id=1)
    assert first.status_code == 201 and first.json()["organization"]["slug"] == "acme"
    assert credits(api) == (10, 5)
    # The org cannot pay 25 any more and neither can demo: 402, nothing spent.
    assert create(api, category="jobs", title="Job 2", organization_id=1).status_code == 402
    assert credits(api) == (10, 5)
    # A cheap one still comes from the organisation.
    assert create(api, category="cfp", title="Cfp", organization_id=1).status_code == 201
    assert credits(api) == (10, 4)
    # Not a member of that organisation: 401.
    assert create(api, user="sam", category="cfp", organization_id=2).status_code == 401


def test_a_draft_is_free_and_its_first_publish_pays(api: Api) -> None:
    draft = create(api, category="products", title="Draft product", action="draft").json()
    assert draft["published"] is False and credits(api) == (10, 30)
    assert draft["id"] not in [item["id"] for item in api.ok("GET", "/api/listings")]
    published = update(api, draft["id"], action="publish")
    assert published.status_code == 200 and published.json()["published"] is True
    assert credits(api) == (5, 30)
    assert update(api, draft["id"], action="unpublish").json()["published"] is False
    assert update(api, draft["id"], action="publish").json()["published"] is True
    assert credits(api) == (5, 30)  # published before: no second charge


def test_first_publish_without_credits_is_402(api: Api) -> None:
    assert update(api, 506, user="sam", action="publish").status_code == 402  # sam has none
    assert api.ok("GET", "/api/listings/506", user="sam")["published"] is False


def test_bump_pays_again_and_moves_the_listing_to_the_top(api: Api) -> None:
    assert api.ok("GET", "/api/listings")[0]["id"] == 505
    bumped = update(api, 501, action="bump")
    assert bumped.status_code == 200 and bumped.json()["id"] == 501
    assert credits(api) == (9, 30)
    assert api.ok("GET", "/api/listings")[0]["id"] == 501
    assert update(api, 504, user="sam", action="bump").status_code == 402


def test_updates_of_a_published_listing_need_a_bump_in_the_last_day(api: Api) -> None:
    stale = update(api, 501, title="New title")
    assert stale.status_code == 200 and stale.json()["title"] == "DocsConf call for papers"
    update(api, 501, action="bump")
    fresh = update(api, 501, title="New title", tags=["events", "python"])
    assert fresh.json()["title"] == "New title" and fresh.json()["tags"] == ["events", "python"]
    assert update(api, 501, tag_list="a, b").json()["tags"] == ["a", "b"]


def test_updates_need_a_content_field_and_actions_come_first(api: Api) -> None:
    update(api, 501, action="bump")
    unchanged = update(api, 501, location="Berlin")
    assert unchanged.status_code == 200 and unchanged.json()["title"] == "DocsConf call for papers"
    mixed = update(api, 501, action="unpublish", title="Ignored").json()
    assert mixed["published"] is False and mixed["title"] == "DocsConf call for papers"


def test_an_unpublished_listing_can_be_edited_any_time(api: Api) -> None:
    edited = update(api, 503, title="Mentoring, v2", body_markdown="New *body*")
    assert edited.status_code == 200
    assert edited.json()["title"] == "Mentoring, v2"
    assert edited.json()["processed_html"] == "<p>New <em>body</em></p>\n"


def test_visibility_of_unpublished_listings(api: Api) -> None:
    assert api.get("/api/listings/506").status_code == 404
    assert api.get("/api/listings/506", user="demo").status_code == 404
    assert api.ok("GET", "/api/listings/506", user="sam")["title"] == "Available for docs contracts"
    assert api.get("/api/listings/506", headers={"api-key": "wrong"}).status_code == 404
    assert api.ok("GET", "/api/listings/501")["published"] is True
    everywhere = [
        item["id"]
        for path in (
            "/api/listings",
            "/api/listings/category/forhire",
            "/api/organizations/acme/listings",
        )
        for item in api.ok("GET", path)
    ]
    assert 506 not in everywhere and 503 not in everywhere


def test_only_the_owner_or_an_org_admin_updates(api: Api) -> None:
    assert update(api, 504, user="demo", action="bump").status_code == 401
    assert update(api, 999, action="bump").status_code == 404
    assert api.put("/api/listings/501", json={"listing": {"action": "bump"}}).status_code == 401


@pytest.mark.parametrize(
    ("listing", "field"),
    [
        ({"title": "", "body_markdown": "x", "category": "cfp"}, "title"),
        ({"title": "t" * 129, "body_markdown": "x", "category": "cfp"}, "title"),
        ({"title": "t", "body_markdown": "", "category": "cfp"}, "body_markdown"),
        ({"title": "t", "body_markdown": "x" * 401, "category": "cfp"}, "body_markdown"),
        ({"title": "t", "body_markdown": "x", "category": "nope"}, "listing_category"),
        (
            {"title": "t", "body_markdown": "x", "category": "cfp", "tags": list("abcdefghi")},
            "tag_list",
        ),
    ],
)
def test_validation_answers_the_errors_object(api: Api, listing, field) -> None:
    response = api.post("/api/listings", user="demo", json={"listing": listing})
    assert response.status_code == 422
    body = response.json()
    assert field in body["errors"] and body["status"] == 422 and body["error"]
    assert credits(api) == (10, 30)


def test_missing_listing_object(api: Api) -> None:
    response = api.post("/api/listings", user="demo", json={"title": "flat"})
    assert response.json() == {
        "error": "param is missing or the value is empty: listing",
        "status": 422,
    }
