"""Ordering, filters, pagination and field forms of the read endpoints (seed spec rules)."""

from __future__ import annotations

import datetime as dt

from tests.support.sandbox_client import Api

# Seeded featured published articles by descending hotness (the "popularity").
POPULAR = [1012, 1001, 1013, 1007, 1015, 1002, 1004, 1009, 1003, 1017, 1014, 1008, 1016]


def ids(items: list[dict]) -> list[int]:
    return [item["id"] for item in items]


def ago(**delta: float) -> str:
    return (dt.datetime.now(dt.UTC) - dt.timedelta(**delta)).strftime("%Y-%m-%dT%H:%M:%SZ")


def test_default_list_is_featured_published_by_popularity(api: Api) -> None:
    articles = api.ok("GET", "/api/articles")
    assert ids(articles) == POPULAR  # no drafts (1005, 1006, 1010), not the unfeatured 1011


def test_tag_filters_select_any_article_by_popularity(api: Api) -> None:
    assert ids(api.ok("GET", "/api/articles", params={"tag": "discuss"})) == [1012, 1001, 1011]
    assert ids(api.ok("GET", "/api/articles", params={"tags": "git, markdown"})) == [
        1007,
        1003,
        1008,
    ]
    excluded = api.ok("GET", "/api/articles", params={"tags_exclude": "docs,writing,discuss"})
    assert excluded and all(
        {"docs", "writing", "discuss"}.isdisjoint(a["tag_list"]) for a in excluded
    )
    assert ids(excluded) == [1007, 1015, 1009, 1014, 1008]
    both = api.ok("GET", "/api/articles", params={"tags": "docs", "tags_exclude": "git,devops"})
    assert ids(both) == [1001, 1002, 1017]


def test_username_gives_a_user_or_organisation_by_publication_date(api: Api) -> None:
    assert ids(api.ok("GET", "/api/articles", params={"username": "demo"})) == [
        1004,
        1003,
        1002,
        1001,
    ]
    assert ids(api.ok("GET", "/api/articles", params={"username": "acme"})) == [1017, 1004]
    assert api.ok("GET", "/api/articles", params={"username": "nobody"}) == []


def test_username_with_state_all_pages_by_a_thousand(api: Api) -> None:
    api.bulk([{"title": f"Bulk {n}", "body_markdown": "x", "published": True} for n in range(35)])
    assert len(api.ok("GET", "/api/articles", params={"username": "demo"})) == 30
    assert len(api.ok("GET", "/api/articles", params={"username": "demo", "state": "all"})) == 39


def test_collection_is_in_ascending_publication_order(api: Api) -> None:
    series = api.ok("GET", "/api/articles/1002")["collection_id"]
    assert series == api.ok("GET", "/api/articles/1001")["collection_id"]
    assert ids(api.ok("GET", "/api/articles", params={"collection_id": series})) == [1001, 1002]


def test_top_keeps_recent_articles_most_reactions_first(api: Api) -> None:
    recent, older = api.bulk(
        [
            {
                "title": "Recent",
                "body_markdown": "x",
                "published": True,
                "published_at": ago(days=1),
                "public_reactions_count": 5,
            },
            {
                "title": "Older",
                "body_markdown": "x",
                "published": True,
                "published_at": ago(days=10),
                "public_reactions_count": 50,
            },
        ]
    )
    assert ids(api.ok("GET", "/api/articles", params={"top": 3})) == [recent]
    assert ids(api.ok("GET", "/api/articles", params={"top": 30})) == [older, recent]
    tagged = api.ok("GET", "/api/articles", params={"top": 3650, "tag": "discuss"})
    assert ids(tagged) == [1012, 1001, 1011]  # by reactions: 99, 42, 3


def test_fresh_and_rising(api: Api) -> None:
    fresh, rising, too_popular = api.bulk(
        [
            {"title": "Fresh", "body_markdown": "x", "published": True},
            {
                "title": "Rising",
                "body_markdown": "x",
                "published": True,
                "published_at": ago(days=1),
                "public_reactions_count": 25,
            },
            {
                "title": "Popular",
                "body_markdown": "x",
                "published": True,
                "published_at": ago(days=1),
                "public_reactions_count": 40,
            },
        ]
    )
    assert ids(api.ok("GET", "/api/articles", params={"state": "fresh"})) == [fresh]
    assert ids(api.ok("GET", "/api/articles", params={"state": "rising"})) == [rising]
    assert too_popular in ids(api.ok("GET", "/api/articles", params={"top": 2}))


def test_latest_is_every_published_article_newest_first(api: Api) -> None:
    latest = api.ok("GET", "/api/articles/latest", params={"per_page": 100})
    dates = [article["published_at"] for article in latest]
    assert dates == sorted(dates, reverse=True)
    assert 1011 in ids(latest) and 1005 not in ids(latest)
    assert ids(latest)[0] == 1016


def test_pagination_defaults_bounds_and_pages(api: Api) -> None:
    api.bulk([{"title": f"Page {n}", "body_markdown": "x", "published": True} for n in range(30)])
    assert len(api.ok("GET", "/api/articles")) == 30
    first = ids(api.ok("GET", "/api/articles", params={"per_page": 10}))
    second = ids(api.ok("GET", "/api/articles", params={"per_page": 10, "page": 2}))
    assert len(first) == len(second) == 10 and not set(first) & set(second)
    assert ids(api.ok("GET", "/api/articles", params={"per_page": 20})) == first + second
    assert len(api.ok("GET", "/api/articles", params={"per_page": 0})) == 1
    assert len(api.ok("GET", "/api/articles", params={"per_page": 5000})) == 43
    assert api.ok("GET", "/api/articles", params={"page": 0, "per_page": 3}) == api.ok(
        "GET", "/api/articles", params={"per_page": 3}
    )
    assert len(api.ok("GET", "/api/articles", params={"per_page": "many"})) == 30
    assert api.ok("GET", "/api/articles", params={"page": 99}) == []


def test_my_lists_order_and_split_by_state(api: Api) -> None:
    published = api.ok("GET", "/api/articles/me/published", user="demo")
    assert ids(published) == [1004, 1003, 1002, 1001]
    assert api.ok("GET", "/api/articles/me", user="demo") == published
    assert ids(api.ok("GET", "/api/articles/me/unpublished", user="demo")) == [1006, 1005]
    new_draft = api.create(title="A newer draft", body_markdown="x")["id"]
    everything = api.ok("GET", "/api/articles/me/all", user="demo")
    assert ids(everything) == [new_draft, 1006, 1005, 1004, 1003, 1002, 1001]
    assert [a["published"] for a in everything] == [False] * 3 + [True] * 4
    assert ids(api.ok("GET", "/api/articles/me/all", user="sam")) == [
        1010,
        1017,
        1011,
        1009,
        1008,
        1007,
    ]


def test_tag_fields_take_the_form_of_their_endpoint(api: Api) -> None:
    listed = next(a for a in api.ok("GET", "/api/articles") if a["id"] == 1001)
    assert (
        listed["tag_list"] == ["docs", "writing", "discuss"]
        and listed["tags"] == "docs, writing, discuss"
    )
    single = api.ok("GET", "/api/articles/1001")
    assert single["tag_list"] == "docs, writing, discuss" and single["tags"] == [
        "docs",
        "writing",
        "discuss",
    ]
    mine = next(a for a in api.ok("GET", "/api/articles/me", user="demo") if a["id"] == 1001)
    assert mine["tag_list"] == ["docs", "writing", "discuss"] and "tags" not in mine
    listing = api.ok("GET", "/api/listings/501")
    assert listing["tag_list"] == "events, docs" and listing["tags"] == ["events", "docs"]


def test_seed_names_for_the_company_handles(api: Api) -> None:
    article = api.ok("GET", "/api/articles/1001")
    assert article["user"]["microblog_username"] == "demo_writes"
    assert article["user"]["codehost_username"] == "demo-writer"
    text = api.get("/api/articles").text + api.get("/api/users/1").text
    assert "twitter_username" not in text and "github_username" not in text


def test_videos_are_published_video_articles_by_popularity(api: Api) -> None:
    videos = api.ok("GET", "/api/videos")
    assert ids(videos) == [1009, 1014]
    assert [v["video_duration_in_minutes"] for v in videos] == ["11:47", "1:02:03"]
    assert all(v["type_of"] == "video_article" for v in videos)


def test_podcast_episodes_are_active_ones_of_published_podcasts(api: Api) -> None:
    assert ids(api.ok("GET", "/api/podcast_episodes")) == [302, 301]
    assert ids(api.ok("GET", "/api/podcast_episodes", params={"username": "docstalk"})) == [
        302,
        301,
    ]
    assert api.get("/api/podcast_episodes", params={"username": "shelvedshow"}).status_code == 404


def test_listings_are_published_and_freshest_first(api: Api) -> None:
    assert ids(api.ok("GET", "/api/listings")) == [505, 502, 501, 504, 508, 507]
    assert ids(api.ok("GET", "/api/listings", params={"category": "cfp"})) == [501]
    assert ids(api.ok("GET", "/api/listings/category/jobs")) == [502]
    assert api.ok("GET", "/api/listings/category/mentors") == []  # 503 is a draft
    assert ids(api.ok("GET", "/api/organizations/acme/listings")) == [502]
    assert api.ok("GET", "/api/listings")[0]["created_at"].endswith(" UTC")


def test_reading_list_is_newest_first_and_pages_by_at_most_100(api: Api) -> None:
    items = api.ok("GET", "/api/readinglist", user="demo")
    assert [item["article"]["id"] for item in items] == [1012, 1015, 1013, 1007]
    assert all(item["status"] == "valid" and item["type_of"] == "readinglist" for item in items)
    assert api.ok("POST", "/__sandbox/forem/readinglist", json={"count": 150}) == {"added": 150}
    assert len(api.ok("GET", "/api/readinglist", user="demo")) == 30
    assert len(api.ok("GET", "/api/readinglist", user="demo", params={"per_page": 500})) == 100


def test_followers_sort(api: Api) -> None:
    names = [f["username"] for f in api.ok("GET", "/api/followers/users", user="demo")]
    assert names == ["sam", "lee", "kim", "pat"]
    newest = api.ok("GET", "/api/followers/users", user="demo", params={"sort": "-created_at"})
    assert [f["username"] for f in newest] == ["pat", "kim", "lee", "sam"]
    by_name = api.ok("GET", "/api/followers/users", user="demo", params={"sort": "name"})
    assert [f["name"] for f in by_name] == sorted(f["name"] for f in by_name)
    assert newest[0]["path"] == "/pat" and newest[0]["type_of"] == "user_follower"


def test_followed_tags_and_tags_by_popularity(api: Api) -> None:
    followed = api.ok("GET", "/api/follows/tags", user="demo")
    assert [(t["name"], t["points"]) for t in followed] == [
        ("docs", 3.0),
        ("writing", 2.0),
        ("python", 1.0),
        ("git", 0.5),
    ]
    tags = api.ok("GET", "/api/tags")
    assert len(tags) == 10 and [t["name"] for t in tags[:2]] == ["docs", "writing"]
    assert len(api.ok("GET", "/api/tags", params={"per_page": 100})) > 10


def test_comment_threads_nest_oldest_first(api: Api) -> None:
    threads = api.ok("GET", "/api/comments", params={"a_id": 1001})
    assert [t["user"]["username"] for t in threads] == ["sam", "kim"]
    depth, node = 1, threads[0]
    while node["children"]:
        node, depth = node["children"][0], depth + 1
    assert depth == 4
    reply = threads[0]["children"][0]
    assert api.ok("GET", f"/api/comments/{reply['id_code']}") == reply
    assert reply["body_html"].startswith("<!DOCTYPE html")
    episode = api.ok("GET", "/api/comments", params={"p_id": 301})
    assert len(episode) == 1 and len(episode[0]["children"]) == 1
    assert api.get("/api/comments").status_code == 404
    assert api.get("/api/comments", params={"a_id": 1005}).status_code == 404  # a draft


def test_demo_account_has_what_the_demo_needs(api: Api) -> None:
    mine = api.ok("GET", "/api/articles/me/all", user="demo")
    published = [a for a in mine if a["published"]]
    assert len(published) >= 3 and any(not a["published"] for a in mine)
    assert sum(1 for a in published if a["comments_count"] > 0) >= 3
    assert api.ok("GET", "/api/readinglist", user="demo")


def test_articles_by_path_use_the_organisation_when_there_is_one(api: Api) -> None:
    org_article = api.ok("GET", "/api/articles/1004")
    assert (
        org_article["path"].startswith("/acme/") and org_article["organization"]["slug"] == "acme"
    )
    assert api.ok("GET", "/api/articles" + org_article["path"])["id"] == 1004
    slug = org_article["slug"]
    assert api.get(f"/api/articles/demo/{slug}").status_code == 404
    draft_slug = api.ok("GET", "/api/articles/me/unpublished", user="demo")[0]["slug"]
    assert api.get(f"/api/articles/demo/{draft_slug}").status_code == 404


def test_users_and_organisations(api: Api) -> None:
    assert api.ok("GET", "/api/users/by_username", params={"url": "demo"})["id"] == 1
    assert api.get("/api/users/by_username", params={"url": "nobody"}).status_code == 404
    assert api.get("/api/users/abc").status_code == 404
    assert api.ok("GET", "/api/users/me", user="sam")["username"] == "sam"
    assert [u["username"] for u in api.ok("GET", "/api/organizations/acme/users")] == [
        "demo",
        "sam",
    ]
    assert api.ok("GET", "/api/users/1")["joined_at"] == "Nov 13, 2021"
    assert api.ok("GET", "/api/profile_images/acme")["image_of"] == "organization"
    image = api.get(api.ok("GET", "/api/profile_images/demo")["profile_image"])
    assert image.status_code == 200 and image.headers["content-type"] == "image/png"


def test_fields_the_real_views_send(api: Api) -> None:
    """Forem: api/v0/podcast_episodes/index.json.jbuilder (`class_name`), shared/_listing
    (`listing_category_id`); v0 organisations carry no `id` (organizations/show)."""
    episode = api.ok("GET", "/api/podcast_episodes")[0]
    assert list(episode)[:3] == ["type_of", "class_name", "id"]
    assert episode["class_name"] == "PodcastEpisode"
    listings = api.ok("GET", "/api/listings", params={"per_page": 100})
    ids = {listing["category"]: listing["listing_category_id"] for listing in listings}
    assert ids["cfp"] == 1 and ids["jobs"] == 5 and len(set(ids.values())) == len(ids)
    one = api.ok("GET", "/api/listings/501")
    assert one["listing_category_id"] == ids[one["category"]]
    assert "id" not in api.ok("GET", "/api/organizations/acme")
