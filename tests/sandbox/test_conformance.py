"""Conformance: every operation of the published OpenAPI (api_v0.yml), called over real
HTTP against a running sandbox, each answer checked against the document's schema.

Each case names its operation and the status it must produce; a coverage test makes
sure every operation and every documented status is exercised (403 excepted: the real
service sends it from its edge with an empty body, which the sandbox only emulates on
request - see test_control.py).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest

from tests.support.sandbox_client import Api
from tests.support.sandbox_openapi import operations, validate_answer


@dataclass(frozen=True)
class Case:
    name: str
    operation: str
    status: int
    call: Callable[[Api], httpx.Response]
    draft: bool = False  # the answer is an unpublished article (relaxed published_* fields)


def _get(path: str, user: str | None = None, **params: Any) -> Callable[[Api], httpx.Response]:
    return lambda api: api.get(path, user=user, params=params)


def _send(
    method: str, path: str, body: Any = None, user: str | None = "demo", raw: bytes | None = None
) -> Callable[[Api], httpx.Response]:
    def call(api: Api) -> httpx.Response:
        if raw is not None:
            return api.request(
                method, path, user=user, content=raw, headers={"Content-Type": "application/json"}
            )
        return api.request(method, path, user=user, json=body)

    return call


ARTICLE = {
    "title": "Conformance article",
    "body_markdown": "Hello **there**.",
    "published": True,
    "tags": ["testing", "docs"],
    "series": "Conformance",
}
FRONT_MATTER = (
    "---\ntitle: Hello, World!\npublished: true\ntags: discuss, help\n"
    "date: 20190701T10:00Z\nseries: Hello series\n---\n\nHello DEV, this is my first post"
)


def _creates_until_limited(api: Api) -> httpx.Response:
    for number in range(10):  # published creates count; drafts would not
        api.create(title=f"Limit {number}", body_markdown="x", published=True)
    return api.post(
        "/api/articles", user="demo", json={"article": {"title": "Eleventh", "body_markdown": "x"}}
    )


def _updates_until_limited(api: Api) -> httpx.Response:
    for number in range(30):
        response = api.put(
            "/api/articles/1003", user="demo", json={"article": {"description": f"Update {number}"}}
        )
        assert response.status_code == 200, response.text
    return api.put("/api/articles/1003", user="demo", json={"article": {"description": "31st"}})


def _comment_id(api: Api) -> str:
    return api.ok("GET", "/api/comments", params={"a_id": 1001})[0]["id_code"]


CASES = [
    # GET /articles and friends
    Case("articles", "getArticles", 200, _get("/api/articles")),
    Case("articles page 2", "getArticles", 200, _get("/api/articles", per_page=2, page=2)),
    Case("articles by tag", "getArticles", 200, _get("/api/articles", tag="docs")),
    Case("articles by tag, top", "getArticles", 200, _get("/api/articles", tag="docs", top=3650)),
    Case("articles by tags", "getArticles", 200, _get("/api/articles", tags="git, markdown")),
    Case(
        "articles without tags", "getArticles", 200, _get("/api/articles", tags_exclude="discuss")
    ),
    Case("articles by user", "getArticles", 200, _get("/api/articles", username="demo")),
    Case(
        "articles by org, all",
        "getArticles",
        200,
        _get("/api/articles", username="acme", state="all"),
    ),
    Case("articles fresh", "getArticles", 200, _get("/api/articles", state="fresh")),
    Case("articles rising", "getArticles", 200, _get("/api/articles", state="rising")),
    Case("articles top", "getArticles", 200, _get("/api/articles", top=3650)),
    Case(
        "articles of a series",
        "getArticles",
        200,
        lambda api: api.get(
            "/api/articles",
            params={"collection_id": api.ok("GET", "/api/articles/1001")["collection_id"]},
        ),
    ),
    Case("latest", "getLatestArticles", 200, _get("/api/articles/latest")),
    Case("article", "getArticleById", 200, _get("/api/articles/1001")),
    Case("org article", "getArticleById", 200, _get("/api/articles/1004")),
    Case("article missing", "getArticleById", 404, _get("/api/articles/999999")),
    Case("draft is not public", "getArticleById", 404, _get("/api/articles/1005")),
    Case(
        "article by path",
        "getArticleByPath",
        200,
        lambda api: api.get("/api/articles" + api.ok("GET", "/api/articles/1001")["path"]),
    ),
    Case(
        "org article by path",
        "getArticleByPath",
        200,
        lambda api: api.get("/api/articles" + api.ok("GET", "/api/articles/1004")["path"]),
    ),
    Case("article by path missing", "getArticleByPath", 404, _get("/api/articles/demo/nope-1")),
    # writes
    Case("create", "createArticle", 201, _send("POST", "/api/articles", {"article": ARTICLE})),
    Case(
        "create draft",
        "createArticle",
        201,
        _send("POST", "/api/articles", {"article": {**ARTICLE, "published": False}}),
        draft=True,
    ),
    Case(
        "create with front matter",
        "createArticle",
        201,
        _send("POST", "/api/articles", {"article": {"body_markdown": FRONT_MATTER}}),
    ),
    Case(
        "create for an org",
        "createArticle",
        201,
        _send("POST", "/api/articles", {"article": {**ARTICLE, "organization_id": 1}}),
    ),
    Case("create malformed", "createArticle", 400, _send("POST", "/api/articles", raw=b"{nope")),
    Case(
        "create anonymous",
        "createArticle",
        401,
        _send("POST", "/api/articles", {"article": ARTICLE}, user=None),
    ),
    Case("create empty", "createArticle", 422, _send("POST", "/api/articles", {})),
    Case(
        "create bad tags",
        "createArticle",
        422,
        _send("POST", "/api/articles", {"article": {**ARTICLE, "tags": ["a-b"]}}),
    ),
    Case("create limited", "createArticle", 429, _creates_until_limited),
    Case(
        "update",
        "updateArticle",
        200,
        _send("PUT", "/api/articles/1001", {"article": {"title": "Docs as code, renamed"}}),
    ),
    Case(
        "update to draft",
        "updateArticle",
        200,
        _send("PUT", "/api/articles/1004", {"article": {"published": False}}),
        draft=True,
    ),
    Case("update malformed", "updateArticle", 400, _send("PUT", "/api/articles/1001", raw=b"[1,")),
    Case(
        "update anonymous",
        "updateArticle",
        401,
        _send("PUT", "/api/articles/1001", {"article": {"title": "x"}}, user=None),
    ),
    Case(
        "update another's",
        "updateArticle",
        404,
        _send("PUT", "/api/articles/1007", {"article": {"title": "Mine now"}}),
    ),
    Case(
        "update invalid",
        "updateArticle",
        422,
        _send("PUT", "/api/articles/1004", {"article": {"title": ""}}),
    ),
    Case("update limited", "updateArticle", 429, _updates_until_limited),
    # the caller's own
    *[
        Case(f"me {suffix or 'default'}", operation, 200, _get(f"/api/articles/me{suffix}", "demo"))
        for suffix, operation in (
            ("", "getUserArticles"),
            ("/published", "getUserPublishedArticles"),
            ("/unpublished", "getUserUnpublishedArticles"),
            ("/all", "getUserAllArticles"),
        )
    ],
    *[
        Case(
            f"me {suffix or 'default'} anonymous", operation, 401, _get(f"/api/articles/me{suffix}")
        )
        for suffix, operation in (
            ("", "getUserArticles"),
            ("/published", "getUserPublishedArticles"),
            ("/unpublished", "getUserUnpublishedArticles"),
            ("/all", "getUserAllArticles"),
        )
    ],
    # comments
    Case("comments of article", "getCommentsByArticleId", 200, _get("/api/comments", a_id=1001)),
    Case("comments of episode", "getCommentsByArticleId", 200, _get("/api/comments", p_id=301)),
    Case("comments missing", "getCommentsByArticleId", 404, _get("/api/comments", a_id=999999)),
    Case(
        "comment", "getCommentById", 200, lambda api: api.get(f"/api/comments/{_comment_id(api)}")
    ),
    Case("comment missing", "getCommentById", 404, _get("/api/comments/zzzz")),
    # followers, follows
    Case("followers", "getFollowers", 200, _get("/api/followers/users", "demo")),
    Case(
        "followers newest",
        "getFollowers",
        200,
        _get("/api/followers/users", "demo", sort="-created_at"),
    ),
    Case("followers anonymous", "getFollowers", 401, _get("/api/followers/users")),
    Case("followed tags", "getFollowedTags", 200, _get("/api/follows/tags", "demo")),
    Case("followed tags anonymous", "getFollowedTags", 401, _get("/api/follows/tags")),
    # listings
    Case("listings", "getListings", 200, _get("/api/listings")),
    Case("listings of a category", "getListings", 200, _get("/api/listings", category="cfp")),
    Case(
        "create listing",
        "createListing",
        201,
        _send(
            "POST",
            "/api/listings",
            {
                "listing": {
                    "title": "ACME Conference",
                    "body_markdown": "Awesome conference",
                    "category": "cfp",
                    "tags": ["events"],
                }
            },
        ),
    ),
    Case(
        "create listing for org",
        "createListing",
        201,
        _send(
            "POST",
            "/api/listings",
            {
                "listing": {
                    "title": "ACME Jobs",
                    "body_markdown": "Hiring",
                    "category": "jobs",
                    "organization_id": 1,
                }
            },
        ),
    ),
    Case(
        "create draft listing",
        "createListing",
        201,
        _send(
            "POST",
            "/api/listings",
            {
                "listing": {
                    "title": "Draft",
                    "body_markdown": "Later",
                    "category": "misc",
                    "action": "draft",
                }
            },
        ),
    ),
    Case(
        "create listing malformed", "createListing", 400, _send("POST", "/api/listings", raw=b"{")
    ),
    Case(
        "create listing anonymous",
        "createListing",
        401,
        _send("POST", "/api/listings", {"listing": {"title": "x"}}, user=None),
    ),
    Case(
        "create listing broke",
        "createListing",
        402,
        _send(
            "POST",
            "/api/listings",
            {"listing": {"title": "Linter", "body_markdown": "Buy", "category": "products"}},
            user="sam",
        ),
    ),
    Case(
        "create listing invalid",
        "createListing",
        422,
        _send(
            "POST", "/api/listings", {"listing": {"body_markdown": "No title", "category": "cfp"}}
        ),
    ),
    Case("listings by category", "getListingsByCategory", 200, _get("/api/listings/category/jobs")),
    Case("listing", "getListingById", 200, _get("/api/listings/501")),
    Case("own draft listing", "getListingById", 200, _get("/api/listings/503", "demo")),
    Case("draft listing anonymous", "getListingById", 404, _get("/api/listings/503")),
    Case(
        "bump listing",
        "updateListing",
        200,
        _send("PUT", "/api/listings/501", {"listing": {"action": "bump"}}),
    ),
    Case(
        "publish listing",
        "updateListing",
        200,
        _send("PUT", "/api/listings/503", {"listing": {"action": "publish"}}),
    ),
    Case(
        "unpublish listing",
        "updateListing",
        200,
        _send("PUT", "/api/listings/501", {"listing": {"action": "unpublish"}}),
    ),
    Case(
        "edit draft listing",
        "updateListing",
        200,
        _send("PUT", "/api/listings/503", {"listing": {"title": "Mentoring, v2"}}),
    ),
    Case(
        "update listing malformed",
        "updateListing",
        400,
        _send("PUT", "/api/listings/501", raw=b"x"),
    ),
    Case(
        "update listing anonymous",
        "updateListing",
        401,
        _send("PUT", "/api/listings/501", {"listing": {"action": "bump"}}, user=None),
    ),
    Case(
        "bump listing broke",
        "updateListing",
        402,
        _send("PUT", "/api/listings/504", {"listing": {"action": "bump"}}, user="sam"),
    ),
    Case(
        "update listing invalid",
        "updateListing",
        422,
        _send("PUT", "/api/listings/503", {"listing": {"title": ""}}),
    ),
    # reading list, organisations, podcasts, tags, users, images, videos, invitations
    Case("reading list", "getReadinglist", 200, _get("/api/readinglist", "demo")),
    Case("reading list anonymous", "getReadinglist", 401, _get("/api/readinglist")),
    Case("organization", "getOrganization", 200, _get("/api/organizations/acme")),
    Case("organization missing", "getOrganization", 404, _get("/api/organizations/nope")),
    Case("org users", "getOrgUsers", 200, _get("/api/organizations/acme/users")),
    Case("org users missing", "getOrgUsers", 404, _get("/api/organizations/nope/users")),
    Case("org listings", "getOrgListings", 200, _get("/api/organizations/acme/listings")),
    Case("org listings missing", "getOrgListings", 404, _get("/api/organizations/nope/listings")),
    Case("org articles", "getOrgArticles", 200, _get("/api/organizations/acme/articles")),
    Case("org articles missing", "getOrgArticles", 404, _get("/api/organizations/nope/articles")),
    Case("episodes", "getPodcastEpisodes", 200, _get("/api/podcast_episodes")),
    Case(
        "episodes of a podcast",
        "getPodcastEpisodes",
        200,
        _get("/api/podcast_episodes", username="docstalk"),
    ),
    Case(
        "episodes missing",
        "getPodcastEpisodes",
        404,
        _get("/api/podcast_episodes", username="nope"),
    ),
    Case("tags", "getTags", 200, _get("/api/tags")),
    Case("user", "getUser", 200, _get("/api/users/1")),
    Case("user by username", "getUser", 200, _get("/api/users/by_username", url="sam")),
    Case("user missing", "getUser", 404, _get("/api/users/999")),
    Case("me", "getUserMe", 200, _get("/api/users/me", "demo")),
    Case("me anonymous", "getUserMe", 401, _get("/api/users/me")),
    Case("profile image", "getProfileImage", 200, _get("/api/profile_images/demo")),
    Case("org profile image", "getProfileImage", 200, _get("/api/profile_images/acme")),
    Case("profile image missing", "getProfileImage", 404, _get("/api/profile_images/nope")),
    Case("videos", "getArticlesWithVideo", 200, _get("/api/videos")),
    Case(
        "invite",
        "postAdminUsersCreate",
        200,
        _send(
            "POST",
            "/api/admin/users",
            {"email": "new@example.com", "name": "New Person"},
            user="admin",
        ),
    ),
    Case(
        "invite as a user",
        "postAdminUsersCreate",
        401,
        _send("POST", "/api/admin/users", {"email": "new@example.com"}, user="demo"),
    ),
    Case(
        "invite anonymous",
        "postAdminUsersCreate",
        401,
        _send("POST", "/api/admin/users", {"email": "new@example.com"}, user=None),
    ),
]


@pytest.fixture(scope="module")
def conformance_sandbox() -> Iterator[Any]:
    """A private sandbox with the real 30-second window, so the rate-limit cases are exact."""
    from tests.support.forem_sandbox import ForemSandbox

    with ForemSandbox(rate_window=30.0) as server:
        yield server


@pytest.fixture
def capi(conformance_sandbox) -> Iterator[Api]:
    """The private sandbox back at its seed; requests handed to it in-process (what it
    answers is what it answers over loopback HTTP)."""
    conformance_sandbox.reset()
    client = Api(conformance_sandbox, in_process=True)
    yield client
    client.close()


@pytest.mark.e2e
@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
def test_answer_fits_the_published_schema(capi: Api, case: Case) -> None:
    response = case.call(capi)
    assert response.status_code == case.status, response.text
    if not response.content:
        assert (case.operation, case.status) == ("postAdminUsersCreate", 200)
        return
    assert response.headers["content-type"].startswith("application/json")
    validate_answer(case.operation, case.status, response.json(), draft=case.draft)
    if case.status == 429:
        assert int(response.headers["Retry-After"]) >= 1


def test_every_operation_and_documented_status_is_exercised() -> None:
    covered = {(case.operation, case.status) for case in CASES}
    documented = {
        (operation_id, int(status))
        for operation_id, (_, _, operation) in operations().items()
        for status in operation["responses"]
        if status != "403"
    }
    assert len(operations()) == 31  # the 30 endpoints of the seed spec plus GET /api/tags
    assert documented - covered == set()


def test_lists_are_not_empty_where_the_seed_has_data(capi: Api) -> None:
    """A schema accepts an empty list; make sure the cases above validated real records."""
    for path, user in [
        ("/api/articles", None),
        ("/api/videos", None),
        ("/api/listings", None),
        ("/api/tags", None),
        ("/api/podcast_episodes", None),
        ("/api/organizations/acme/users", None),
        ("/api/readinglist", "demo"),
        ("/api/followers/users", "demo"),
        ("/api/follows/tags", "demo"),
        ("/api/articles/me/all", "demo"),
        ("/api/comments?a_id=1001", None),
    ]:
        assert capi.ok("GET", path, user=user), path


def test_the_validator_is_not_vacuous(capi: Api) -> None:
    """The checks above would catch a wrong field name, a missing field, a wrong type."""
    from jsonschema.exceptions import ValidationError

    user = capi.ok("GET", "/api/users/1")
    validate_answer("getUser", 200, user)
    renamed = {("twitter_username" if k == "microblog_username" else k): v for k, v in user.items()}
    for broken in (
        renamed,
        {k: v for k, v in user.items() if k != "joined_at"},
        {**user, "id": "1"},
    ):
        with pytest.raises(ValidationError):
            validate_answer("getUser", 200, broken)
    article = capi.ok("GET", "/api/articles/1001")
    with pytest.raises(ValidationError):  # a draft's null published_at is refused when strict
        validate_answer("getArticleById", 200, {**article, "published_at": None})
    with pytest.raises(ValidationError):
        validate_answer("getArticleById", 200, {**article, "created_at": "yesterday"})
