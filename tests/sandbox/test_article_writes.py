"""Article writes: front-matter precedence, validation messages, slugs, dates, defaults."""

from __future__ import annotations

import datetime as dt
import re

import pytest

from tests.support.sandbox_client import Api


def put(api: Api, article_id: int, user: str = "demo", **article):
    return api.put(f"/api/articles/{article_id}", user=user, json={"article": article})


def refused(response) -> str:
    assert response.status_code == 422, response.text
    body = response.json()
    assert body["status"] == 422
    return body["error"]


def test_create_answers_the_article_with_its_location(api: Api) -> None:
    words = " ".join(["word"] * 600)
    response = api.post(
        "/api/articles",
        user="demo",
        json={
            "article": {
                "title": "Hello, World! Ça va?",
                "body_markdown": words,
                "published": True,
                "tags": ["Python", "docs"],
                "series": "Greetings",
            }
        },
    )
    assert response.status_code == 201
    article = response.json()
    assert response.headers["Location"] == article["url"]
    assert re.fullmatch(r"hello-world-ca-va-[0-9a-p]+", article["slug"])
    assert article["path"] == f"/demo/{article['slug']}"
    assert article["url"] == api.base_url + article["path"] == article["canonical_url"]
    assert article["tags"] == ["python", "docs"] and article["tag_list"] == "python, docs"
    assert article["reading_time_minutes"] == 3  # ceil(600 / 275)
    assert article["description"] == ("word " * 20).strip() + "..."  # first 100 characters
    assert article["collection_id"] is not None and article["edited_at"] is None
    published = dt.datetime.fromisoformat(article["published_at"])
    assert abs(published - dt.datetime.now(dt.UTC)) < dt.timedelta(minutes=1)
    assert article["published_timestamp"] == article["published_at"]
    assert article["readable_publish_date"] == f"{published:%b} {published.day:>2}"
    assert api.ok("GET", f"/api/articles/{article['id']}") == article


def test_a_draft_gets_a_temporary_slug_until_first_published(api: Api) -> None:
    draft = api.create(title="Slow cooking", body_markdown="Soon.")
    assert "-temp-slug-" in draft["slug"]
    assert draft["published_at"] is None and draft["published_timestamp"] == ""
    assert api.get(f"/api/articles/{draft['id']}").status_code == 404
    renamed = put(api, draft["id"], title="Slow cooking, renamed").json()
    assert renamed["slug"] == draft["slug"] and renamed["edited_at"] is None  # a draft edit
    published = put(api, draft["id"], published=True).json()
    assert re.fullmatch(r"slow-cooking-renamed-[0-9a-p]+", published["slug"])
    assert published["published_at"] is not None and published["edited_at"] is None
    edited = put(api, draft["id"], title="Slow cooking, final").json()
    assert edited["slug"] == published["slug"]  # a published slug never changes
    assert edited["published_at"] == published["published_at"]
    assert edited["edited_at"] is not None


def test_published_at_is_set_once(api: Api) -> None:
    article = api.create(title="Once", body_markdown="x", published=True)
    put(api, article["id"], published=False)
    again = put(api, article["id"], published=True).json()
    assert again["published_at"] == article["published_at"]


def test_front_matter_overrides_the_json_fields(api: Api) -> None:
    body = (
        "---\ntitle: From the front matter: yes\npublished: false\ntags: yaml, Docs\n"
        "description: Said in the front matter\ncanonical_url: https://example.com/fm\n---\n\nBody."
    )
    article = api.create(
        title="From JSON",
        body_markdown=body,
        published=True,
        tags=["json"],
        description="Said in JSON",
    )
    assert article["title"] == "From the front matter: yes"  # an unquoted colon is fine
    assert article["tags"] == ["yaml", "docs"]
    assert article["published_at"] is None  # front matter said false
    assert article["description"] == "Said in the front matter"
    assert article["canonical_url"] == "https://example.com/fm"
    # An update must change the front matter: a JSON title alone loses to it.
    assert put(api, article["id"], title="Another title").json()["title"] == article["title"]
    changed = put(api, article["id"], body_markdown=body.replace("yes", "changed")).json()
    assert changed["title"] == "From the front matter: changed"


def test_published_must_be_exactly_true_or_false(api: Api) -> None:
    article = api.create(
        title="Maybe", body_markdown="---\npublished: maybe\n---\nx", published=True
    )
    assert article["published_at"] is not None  # "maybe" ignored, the JSON field stands
    article = api.create(title="Quoted", body_markdown="---\npublished: 'true'\n---\nx")
    assert article["published_at"] is not None


def test_front_matter_date_applies_on_first_publish_only(api: Api) -> None:
    body = "---\ntitle: Dated\npublished: true\ndate: '2021-03-04T05:06:07Z'\n---\nx"
    article = api.create(body_markdown=body)
    assert article["published_at"] == "2021-03-04T05:06:07Z"
    assert article["readable_publish_date"] == "Mar  4 '21"
    moved = put(api, article["id"], body_markdown=body.replace("2021", "2020")).json()
    assert moved["published_at"] == "2021-03-04T05:06:07Z"
    basic = api.create(
        body_markdown="---\ntitle: Basic\npublished: true\ndate: 20190701T10:00Z\n---\nx"
    )
    assert basic["published_at"] == "2019-07-01T10:00:00Z"
    future = (
        f"---\ntitle: Future\npublished: true\ndate: '{dt.date.today().year + 2}-01-01'\n---\nx"
    )
    assert "current or past date" in refused(
        api.post("/api/articles", user="demo", json={"article": {"body_markdown": future}})
    )


@pytest.mark.parametrize(
    ("front_matter", "message"),
    [
        ("date: 2021-01-01", "Tried to load unspecified class: Date"),
        ("date: 2021-01-01 10:00:00", "Tried to load unspecified class: Time"),
        ("tags: [a, b\nseries: x", "(<unknown>): "),
        ("title: a\n  bad: indent: here", "(<unknown>): "),
        ("base: &a x\nalias: *a", "Alias parsing was not enabled"),
    ],
)
def test_unreadable_front_matter_is_a_422_with_the_parser_message(api: Api, front_matter, message):
    body = f"---\ntitle: Broken\n{front_matter}\n---\nBody"
    error = refused(
        api.post("/api/articles", user="demo", json={"article": {"body_markdown": body}})
    )
    assert error.startswith(message) or message in error


@pytest.mark.parametrize(
    ("tags", "message"),
    [
        (["a", "b", "c", "d", "e"], "Tag list exceed the maximum of 4 tags"),
        (["web-dev"], 'Tag "web-dev" contains non-alphanumeric or prohibited unicode characters'),
        (["x" * 31], f'Tag "{"x" * 31}" is too long (maximum is 30 characters)'),
    ],
)
def test_tag_rules(api: Api, tags, message) -> None:
    assert (
        refused(
            api.post(
                "/api/articles",
                user="demo",
                json={"article": {"title": "Tags", "body_markdown": "x", "tags": tags}},
            )
        )
        == message
    )


def test_title_rules(api: Api) -> None:
    def create(title):
        return api.post(
            "/api/articles", user="demo", json={"article": {"title": title, "body_markdown": "x"}}
        )

    assert refused(create("")) == "Title can't be blank"
    assert refused(create("t" * 129)) == "Title is too long (maximum is 128 characters)"
    error = refused(
        api.post(
            "/api/articles",
            user="demo",
            json={"article": {"title": "", "body_markdown": "x", "tags": ["a-b"]}},
        )
    )
    assert (
        error
        == 'Title can\'t be blank and Tag "a-b" contains non-alphanumeric or prohibited unicode characters'
    )


def test_the_same_title_and_body_once_per_user(api: Api) -> None:
    """`validates :body_markdown, uniqueness: { scope: %i[user_id title] }`; a repeated
    title alone is fine (Forem: app/models/article.rb)."""

    def create(title, body, user="demo"):
        return api.post(
            "/api/articles",
            user=user,
            json={"article": {"title": title, "body_markdown": body, "published": True}},
        )

    first = create("Twice", "Same body.").json()
    assert refused(create("Twice", "Same body.")) == "Body markdown has already been taken"
    second = create("Twice", "Another body.").json()
    assert second["slug"] != first["slug"] and second["title"] == first["title"]
    assert create("Twice", "Same body.", user="sam").status_code == 201  # another user
    # An update may keep its own title and body; it may not take another article's.
    assert put(api, first["id"], title="Twice", body_markdown="Same body.").status_code == 200
    assert (
        refused(put(api, second["id"], body_markdown="Same body."))
        == "Body markdown has already been taken"
    )


TAKEN = "Canonical url has already been taken. Email sandbox@example.com for further details."


def test_canonical_url_must_be_http_and_unique_among_published(api: Api) -> None:
    def create(title, url, published=True):
        return api.post(
            "/api/articles",
            user="demo",
            json={
                "article": {
                    "title": title,
                    "body_markdown": "x",
                    "canonical_url": url,
                    "published": published,
                }
            },
        )

    assert refused(create("Ftp", "ftp://example.com/a")) == "Canonical url is not a valid URL"
    assert (
        refused(create("Spaces", "https://example.com/a b")) == "Canonical url must not have spaces"
    )
    taken = api.ok("GET", "/api/articles/1003")["canonical_url"]
    assert refused(create("Taken", taken)) == TAKEN
    assert (
        create("Fine", "https://example.com/fine").json()["canonical_url"]
        == "https://example.com/fine"
    )
    # Only published articles hold a canonical URL, and only a published one is checked.
    draft = create("A draft may share it", taken, published=False)
    assert draft.status_code == 201
    assert refused(put(api, draft.json()["id"], published=True)) == TAKEN
    held = create("Held by a draft", "https://example.com/held", published=False).json()
    assert create("Published first", "https://example.com/held").status_code == 201
    assert refused(put(api, held["id"], published=True)) == TAKEN


def test_body_limit(api: Api) -> None:
    body = "x" * (800 * 1024 + 1)
    error = refused(
        api.post(
            "/api/articles", user="demo", json={"article": {"title": "Big", "body_markdown": body}}
        )
    )
    assert error == "Body markdown is too long."


def test_cover_image_from_front_matter_and_clearing_it(api: Api) -> None:
    body = "---\ntitle: Covered\ncover_image: https://example.com/c.png\n---\nx"
    article = api.create(body_markdown=body, published=True)
    assert article["cover_image"] == article["social_image"] == "https://example.com/c.png"
    cleared = put(
        api, article["id"], body_markdown=body.replace(" https://example.com/c.png", "")
    ).json()
    assert cleared["cover_image"] is None
    main = api.create(title="Main image", body_markdown="x", main_image="https://example.com/m.png")
    assert main["cover_image"] == "https://example.com/m.png"


def test_series_from_front_matter_and_leaving_it(api: Api) -> None:
    article = api.create(
        body_markdown="---\ntitle: In a series\nseries: Docs as Code\n---\nx", published=True
    )
    assert article["collection_id"] == api.ok("GET", "/api/articles/1001")["collection_id"]
    left = put(api, article["id"], body_markdown="---\ntitle: In a series\n---\nx").json()
    assert left["collection_id"] is None
    # A front matter title without a series keeps the article out of any series...
    assert put(api, article["id"], series="Docs as Code").json()["collection_id"] is None
    # ...while without front matter the JSON field decides.
    again = put(api, article["id"], series="Docs as Code", body_markdown="x").json()
    assert again["collection_id"] == article["collection_id"]
    assert put(api, article["id"], series=None).json()["collection_id"] is None


def test_organisation_articles(api: Api) -> None:
    article = api.create(title="For the org", body_markdown="x", published=True, organization_id=1)
    assert article["path"].startswith("/acme/") and article["organization"]["username"] == "acme"
    foreign = api.create(user="sam", title="Not my org", body_markdown="x", organization_id=99)
    assert "organization" not in foreign


def test_description_rules(api: Api) -> None:
    assert (
        api.create(title="D1", body_markdown="Short.", description="Given")["description"]
        == "Given"
    )
    assert api.create(title="D2", body_markdown="")["description"] == "A post by Demo Writer"
    assert api.create(title="D3", body_markdown="Short body.")["description"] == "Short body."


def test_body_html_is_rendered_and_cleaned(api: Api) -> None:
    article = api.create(
        title="Html",
        published=True,
        body_markdown=(
            "# Head\n\n| a | b |\n| - | - |\n| 1 | 2 |\n\n~~gone~~\n\n<script>alert(1)</script>"
            '<img src="x.png" onerror="alert(2)">'
        ),
    )
    html = article["body_html"]
    assert "<h1>" in html and "<table>" in html and "<s>gone</s>" in html
    assert "<script" not in html and "onerror" not in html


def test_update_errors(api: Api) -> None:
    assert put(api, 1007, title="Not yours").status_code == 404  # sam's article
    assert put(api, 999999, title="Nobody's").status_code == 404
    response = api.put("/api/articles/1001", user="demo", json={"title": "no wrapper"})
    assert refused(response) == (
        "article param must be a JSON object. You provided article as a NilClass"
    )
    assert api.ok("GET", "/api/articles/1001")["title"] == "Docs as code, the short version"


@pytest.mark.parametrize(
    ("payload", "given"),
    [
        ({"title": "no wrapper"}, "NilClass"),
        ({"article": None}, "NilClass"),
        ({"article": "text"}, "String"),
        ({"article": [1]}, "Array"),
        ({"article": 12}, "Integer"),
        ({"article": 1.5}, "Float"),
        ({"article": True}, "TrueClass"),
        ([1, 2], "NilClass"),
    ],
)
def test_an_article_that_is_not_an_object_is_named_by_its_ruby_class(
    api: Api, payload, given
) -> None:
    """`validate_article_param_is_hash` (Forem: api/v0/articles_controller.rb), which runs
    before the 404 of an update."""
    message = f"article param must be a JSON object. You provided article as a {given}"
    assert refused(api.post("/api/articles", user="demo", json=payload)) == message
    assert refused(api.put("/api/articles/999999", user="demo", json=payload)) == message


def test_an_empty_article_is_a_missing_param_after_the_404(api: Api) -> None:
    missing = "param is missing or the value is empty: article"
    assert refused(api.post("/api/articles", user="demo", json={"article": {}})) == missing
    assert refused(api.put("/api/articles/1001", user="demo", json={"article": {}})) == missing
    assert api.put("/api/articles/999999", user="demo", json={"article": {}}).status_code == 404


@pytest.mark.parametrize(
    "payload",
    [
        {"article": "text"},
        {"article": []},
        {"article": {"title": ["x"], "body_markdown": {"a": 1}}},
        {"article": {"title": 12, "body_markdown": 3.5, "published": "yes", "tags": "a, b"}},
        {"article": {"title": "Odd", "tags": [1, None, True]}},
        {"article": {"title": "Org", "organization_id": "1"}},
        [1, 2],
        "string",
        12,
        None,
    ],
)
def test_odd_payloads_never_cause_a_500(api: Api, payload) -> None:
    response = api.post("/api/articles", user="demo", json=payload)
    assert response.status_code in (201, 422), response.text
    assert set(response.json()) >= ({"error", "status"} if response.status_code == 422 else {"id"})


@pytest.mark.parametrize("tags", ["a, b", {"a": 1}, ["a", {"b": 1}], ["a", ["b"]], 7])
def test_tags_not_an_array_of_scalars_are_dropped(api: Api, tags) -> None:
    """Strong parameters permit `tags: []` only as an array of scalars; anything else is
    dropped without an error (Forem: api/v0/articles_controller.rb `article_params`)."""
    created = api.create(title="Dropped tags", body_markdown="x", tags=tags)
    assert created["tags"] == []
    kept = api.create(title="Kept tags", body_markdown="x", tags=["keep", "these"])
    updated = put(api, kept["id"], tags=tags, description="Changed").json()
    assert updated["tags"] == ["keep", "these"] and updated["description"] == "Changed"
    # Front matter tags still apply, whatever the JSON field was.
    body = "---\ntitle: Tagged in front matter\ntags: yaml, docs\n---\nx"
    assert api.create(body_markdown=body, tags=tags)["tags"] == ["yaml", "docs"]


def test_tags_as_an_array_of_scalars(api: Api) -> None:
    article = api.create(title="Scalars", body_markdown="x", tags=["One, two", 3, True, None])
    assert article["tags"] == ["one", "two", "3", "true"]
    assert put(api, article["id"], tags=[None]).json()["tags"] == []  # [null] is []: cleared
