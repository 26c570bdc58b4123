"""The publishing API client: every endpoint against the sandbox, tolerant reading, pacing
and retries (the last two through an injected transport, where the server's answers must be
scripted exactly)."""

from __future__ import annotations

import json
import threading

import httpx
import pytest

from toolkit import USER_AGENT
from toolkit.clients import Clients
from toolkit.clients.base import RetryPolicy
from toolkit.clients.forem import ForemClient
from toolkit.clients.forem_models import Article, Comment, Listing, User, read_tags
from toolkit.clients.ratelimit import SlidingWindowLimiter
from toolkit.config import Secret, load_config
from toolkit.errors import (
    ConfigError,
    NoAnswerError,
    NotFound,
    RateLimited,
    ServerError,
    Unauthorized,
)
from toolkit.sync.engine import SyncEngine


@pytest.fixture
def client(sandbox):
    sandbox.reset()
    with ForemClient(sandbox.base_url, Secret(sandbox.demo_api_key)) as forem:
        yield forem


def test_article_endpoints(client):
    assert all(isinstance(a, Article) and a.id and a.path for a in client.articles(per_page=5))
    assert client.articles(tag="docs") and all(
        "docs" in a.tags for a in client.articles(tag="docs")
    )
    assert client.latest_articles(per_page=3)
    mine = list(client.iter_my_articles("all", per_page=2))  # several pages
    assert len(mine) == len(client.my_articles("all", per_page=1000)) > 2
    assert {a.published for a in mine} == {True, False}
    assert all(a.body_markdown is not None for a in mine)
    assert all(a.published for a in client.my_articles("published"))
    assert not any(a.published for a in client.my_articles("unpublished"))
    one = next(a for a in mine if a.published)
    assert client.article(one.id).body_html
    username, slug = one.path.strip("/").split("/")
    assert client.article_by_path(username, slug).id == one.id
    assert client.videos(per_page=2)[0].video_duration_in_minutes


def test_writes_and_their_refusals(client, sandbox):
    created = client.create_article(
        {
            "article": {
                "title": "Client test",
                "body_markdown": "Hi",
                "published": False,
                "tags": ["testing"],
            }
        }
    )
    assert created.id and created.published is False
    updated = client.update_article(created.id, {"article": {"body_markdown": "Hi again"}})
    assert updated.body_markdown == "Hi again"
    with pytest.raises(NotFound):
        client.article(999_999)
    listing = client.create_listing(
        {
            "title": "Client listing",
            "body_markdown": "x",
            "category": "misc",
            "tags": ["misc"],
            "action": "draft",
        }
    )
    assert isinstance(listing, Listing) and listing.published is False
    client.update_listing(listing.id, {"action": "publish"})
    assert client.listing(listing.id).published is True
    with pytest.raises(Unauthorized):
        client.invite_user("someone@example.com")
    with ForemClient(sandbox.base_url, Secret(sandbox.api_key("admin"))) as admin:
        admin.invite_user("someone@example.com", "Someone")


def test_community_endpoints(client):
    threads = client.comments(
        article_id=next(a.id for a in client.my_articles("published") if a.comments_count)
    )
    assert threads and isinstance(threads[0], Comment)
    assert client.comment(threads[0].id_code).id_code == threads[0].id_code
    assert client.followers(per_page=2) and client.followed_tags()
    assert client.readinglist(per_page=2)[0].article.title
    jobs = client.listings(category="jobs")
    assert jobs and all(item.category == "jobs" for item in jobs)
    cfp = client.listings_by_category("cfp")
    assert cfp and all(item.category == "cfp" and item.published for item in cfp)
    org = client.organization("acme")
    assert org.name and client.organization_users("acme") and client.organization_articles("acme")
    assert [item.title for item in client.organization_listings("acme")] == [
        "Technical writer at Acme"
    ]
    episodes = client.podcast_episodes(username="docstalk")
    assert episodes and episodes[0].podcast_slug == "docstalk"
    me = client.me()
    assert isinstance(me, User) and me.username == "demo"
    assert client.user(me.id).username == "demo" == client.user_by_username("demo").username
    assert client.profile_image("demo").image_of == "user"
    assert client.tags(per_page=3)


def test_a_missing_key_is_refused_before_any_request(sandbox):
    with ForemClient(sandbox.base_url) as anonymous:
        with pytest.raises(Unauthorized, match="FOREM_API_KEY"):
            anonymous.create_article({"article": {"title": "x"}})
        assert anonymous.requests_made == 0


# -- reading dev.to's own shapes ------------------------------------------------------------


def test_tags_in_every_form():
    assert read_tags({"tag_list": ["a", "b"], "tags": "a, b"}) == ["a", "b"]
    assert read_tags({"tag_list": "a, b", "tags": ["a", "b"]}) == ["a", "b"]
    assert read_tags({"tag_list": "a,b"}) == ["a", "b"]
    assert read_tags({}) == []


def test_a_hostile_record_reads_as_empty_fields_never_as_other_types():
    article = Article.from_json(
        {
            "id": "7",
            "title": ["not", "text"],
            "slug": 5,
            "url": {"x": 1},
            "tag_list": "a, b",
            "published_at": "2024-05-01T00:00:00Z",
            "comments_count": None,
            "user": "not an object",
            "unknown": "ignored",
        }
    )
    assert (article.id, article.title, article.slug, article.url) == (7, "", "", None)
    assert article.tags == ["a", "b"] and article.published is True
    assert article.comments_count == 0 and article.user is None
    assert not hasattr(article, "unknown") and article.raw["unknown"] == "ignored"
    comment = Comment.from_json({"id_code": 12, "user": None, "children": [{"id_code": "c"}]})
    assert comment.id_code == "12" and comment.user.username == ""
    assert [child.id_code for child in comment.children] == ["c"]
    user = User.from_json({"id": 3, "microblog_username": "seed", "twitter_username": "devto"})
    assert user.microblog_username == "seed" and user.codehost_username is None
    assert Listing.from_json({"id": 1, "published": 1}).published is True
    with pytest.raises(ValueError):
        Article.from_json({"title": "no id"})


def scripted(*answers: httpx.Response | Exception, seen: list | None = None) -> httpx.MockTransport:
    """A transport that gives these answers in turn and keeps the requests in `seen`."""
    queue = list(answers)

    def handle(request: httpx.Request) -> httpx.Response:
        if seen is not None:
            seen.append(request)
        answer = queue.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer

    return httpx.MockTransport(handle)


def test_devto_field_names_are_read_as_the_seed_names():
    article = {
        "type_of": "article",
        "id": 7,
        "title": "T",
        "slug": "t",
        "path": "/u/t",
        "tag_list": "python, web",
        "tags": ["python", "web"],
        "user": {"name": "U", "username": "u", "twitter_username": "tw", "github_username": "gh"},
    }
    seen: list = []
    with ForemClient(
        "https://dev.example",
        Secret("k3y"),
        transport=scripted(httpx.Response(200, json=article), seen=seen),
    ) as forem:
        read = forem.article(7)
    assert read.tags == ["python", "web"]
    assert read.user is not None
    assert read.user.microblog_username == "tw" and read.user.codehost_username == "gh"
    assert seen[0].headers["user-agent"] == USER_AGENT
    assert seen[0].headers["api-key"] == "k3y"
    assert "k3y" not in str(seen[0].url)


# -- retries ---------------------------------------------------------------------------


def fast(**kwargs) -> tuple[dict, list[float]]:
    """Client options with a fake clock whose sleep only moves it on, and the sleeps made."""
    clock = Clock()
    slept: list[float] = []

    def sleep(seconds: float) -> None:
        slept.append(seconds)
        clock.sleep(seconds)

    return {"retry": RetryPolicy(backoff=0.01), "sleep": sleep, "clock": clock, **kwargs}, slept


def test_reads_and_updates_are_retried_on_5xx_and_connection_errors():
    options, slept = fast()
    seen: list = []
    transport = scripted(
        httpx.Response(502),
        httpx.ConnectError("refused"),
        httpx.ReadError("reset"),
        httpx.Response(200, json={"id": 1, "title": "x"}),
        seen=seen,
    )
    with ForemClient("https://dev.example", Secret("k"), transport=transport, **options) as forem:
        assert forem.update_article(1, {"article": {}}).id == 1
    assert len(seen) == 4 and len(slept) == 3


def test_a_create_is_not_retried_after_an_ambiguous_failure():
    for failure in (httpx.Response(500), httpx.ReadError("reset after sending")):
        options, _ = fast()
        seen: list = []
        with ForemClient(
            "https://dev.example", Secret("k"), transport=scripted(failure, seen=seen), **options
        ) as forem:
            with pytest.raises((ServerError, NoAnswerError)):
                forem.create_article({"article": {"title": "x"}})
        assert len(seen) == 1


def test_a_create_that_never_left_is_retried():
    options, _ = fast()
    seen: list = []
    transport = scripted(
        httpx.ConnectError("refused"), httpx.Response(201, json={"id": 5, "title": "x"}), seen=seen
    )
    with ForemClient("https://dev.example", Secret("k"), transport=transport, **options) as forem:
        assert forem.create_article({"article": {"title": "x"}}).id == 5
    assert len(seen) == 2


def test_429_waits_as_long_as_retry_after_says():
    options, slept = fast()
    limited = httpx.Response(
        429,
        headers={"Retry-After": "7"},
        json={"error": "Rate limit reached, try again in 7 seconds", "status": 429},
    )
    transport = scripted(limited, httpx.Response(201, json={"id": 9, "title": "x"}))
    waits: list = []
    with ForemClient(
        "https://dev.example",
        Secret("k"),
        transport=transport,
        on_wait=lambda seconds, reason: waits.append(reason),
        **options,
    ) as forem:
        assert forem.create_article({"article": {"title": "x"}}).id == 9
    assert slept == [pytest.approx(7.0, abs=0.01)]
    assert waits == ["rate limited by the server (429): waiting as its Retry-After says"]


def test_retries_are_bounded_and_errors_carry_no_secret():
    options, _ = fast(retry=RetryPolicy(attempts=2, backoff=0.0))
    limited = httpx.Response(
        429, headers={"Retry-After": "1"}, json={"error": "slow down", "status": 429}
    )
    with ForemClient(
        "https://dev.example", Secret("sekrit-key"), transport=scripted(limited, limited), **options
    ) as forem:
        with pytest.raises(RateLimited) as caught:
            forem.update_article(3, {"article": {}})
    assert caught.value.retry_after == 1.0
    assert "sekrit-key" not in str(caught.value)
    assert str(caught.value) == "PUT /api/articles/3: 429 slow down"


# -- the client-side limiter -----------------------------------------------------------


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds


def test_limiter_allows_the_limit_then_waits_for_the_oldest_to_leave():
    clock = Clock()
    limiter = SlidingWindowLimiter(3, 10.0, clock=clock)
    for _ in range(3):
        assert limiter.acquire(clock.sleep) == 0
        clock.now += 1
        limiter.record()
    waited = limiter.acquire(clock.sleep)  # the first was answered at 101: free at 111
    assert waited == pytest.approx(111 - 103, abs=0.01)


def test_limiter_counts_requests_in_flight():
    clock = Clock()
    limiter = SlidingWindowLimiter(2, 10.0, clock=clock)
    limiter.acquire(clock.sleep)
    limiter.acquire(clock.sleep)  # two in flight, none answered yet
    limiter.release()  # one never reached the server
    assert limiter.acquire(clock.sleep) == 0
    limiter.record()
    limiter.record()
    assert limiter.acquire(clock.sleep) == pytest.approx(10.0, abs=0.01)


def test_an_uncounted_request_holds_its_slot_only_until_answered():
    clock = Clock()
    limiter = SlidingWindowLimiter(1, 10.0, clock=clock)
    for _ in range(5):  # uncounted requests (draft creates) never fill the window
        assert limiter.acquire(clock.sleep) == 0
        limiter.release()
    limiter.acquire(clock.sleep)  # a draft on its way, checked against the window there

    # No counted request may take the last slot while the draft is in flight: arriving
    # first, it would make the server refuse the draft.
    waited: list[float] = []
    waiter = threading.Thread(target=lambda: waited.append(limiter.acquire(clock.sleep)))
    waiter.start()
    waiter.join(0.05)
    assert waiter.is_alive()  # it waits for the draft's answer
    limiter.release()  # the draft is answered, and was not counted
    waiter.join(5)
    assert waited == [0]
    limiter.record()
    assert limiter.acquire(clock.sleep) == pytest.approx(10.0, abs=0.01)


def test_limiter_holds_after_a_429():
    clock = Clock()
    limiter = SlidingWindowLimiter(10, 30.0, clock=clock)
    limiter.acquire(clock.sleep)
    limiter.hold(12.0)
    assert limiter.acquire(clock.sleep) == pytest.approx(12.0, abs=0.01)


# -- what leaves the client --------------------------------------------------------------


class RecordingApi:
    """A publishing API behind an injected transport: lists `articles`, answers creates and
    updates, and keeps the JSON body of every write."""

    def __init__(self, articles: list[dict] | None = None):
        self.articles = articles or []
        self.writes: list[tuple[str, dict]] = []

    def handle(self, request: httpx.Request) -> httpx.Response:
        if request.method == "GET":
            page = request.url.params.get("page", "1")
            return httpx.Response(200, json=self.articles if page == "1" else [])
        body = json.loads(request.content)
        self.writes.append((request.method, body))
        article = {
            "id": 41,
            "title": body["article"]["title"],
            "url": "https://dev.example/a",
            "published": body["article"].get("published"),
            "body_markdown": body["article"]["body_markdown"],
        }
        return httpx.Response(201 if request.method == "POST" else 200, json=article)


def test_tags_are_always_sent_as_an_array(project):
    """Forem drops `tags` given as a string: a post whose front matter has a comma string
    is sent with a JSON array, on create and on update."""
    project.post("tagged", "Tagged post", tags="a, b")
    config = load_config(project.root / "toolkit.toml", env={"FOREM_API_KEY": "k"})
    api = RecordingApi()
    with Clients(config, transport=httpx.MockTransport(api.handle)).forem() as client:
        SyncEngine(config, client).publish()
        api.articles = [
            {"id": 41, "title": "Tagged post", "published": False, "body_markdown": "an older body"}
        ]
        (project.root / "toolkit.lock").unlink()
        SyncEngine(config, client).publish()
    assert [method for method, _ in api.writes] == ["POST", "PUT"]
    for _, body in api.writes:
        assert body["article"]["tags"] == ["a", "b"]


def test_a_429_without_a_limiter_is_waited_out_by_the_client():
    options, slept = fast()
    limited = httpx.Response(
        429, headers={"Retry-After": "4"}, json={"error": "slow", "status": 429}
    )
    transport = scripted(limited, httpx.Response(200, json={"id": 1, "title": "x"}))
    waits: list = []
    with ForemClient(
        "https://dev.example",
        transport=transport,
        on_wait=lambda seconds, reason: waits.append((seconds, reason)),
        **options,
    ) as forem:
        assert forem.article(1).id == 1
    assert slept == [4.0]
    assert waits == [
        (
            4.0,
            "GET /api/articles/1: rate limited by the server (429): "
            "waiting as its Retry-After says",
        )
    ]


def test_a_429_with_a_limiter_holds_it_for_every_sender():
    options, slept = fast()
    limited = httpx.Response(
        429, headers={"Retry-After": "6"}, json={"error": "slow", "status": 429}
    )
    created = httpx.Response(201, json={"id": 2, "title": "x"})
    with ForemClient(
        "https://dev.example", Secret("k"), transport=scripted(limited, created, created), **options
    ) as forem:
        forem.create_article({"article": {"title": "x"}})
        assert slept == [pytest.approx(6.0, abs=0.01)]
        forem.create_article({"article": {"title": "y"}})  # the hold is over: no new wait
    assert len(slept) == 1


def test_the_factory_builds_the_client_from_the_config(project):
    config = load_config(
        project.root / "toolkit.toml",
        env={"FOREM_API_KEY": "k3y", "FOREM_BASE_URL": "https://forem.example"},
    )
    seen: list = []
    with Clients(
        config, transport=scripted(httpx.Response(200, json=[]), seen=seen)
    ).forem() as forem:
        assert forem.base_url == "https://forem.example"
        assert forem.create_limiter.window == config.forem.rate_window
        assert forem.my_articles() == []
        assert not hasattr(forem, "on_wait")  # given at construction, never swapped
    assert seen[0].headers["api-key"] == "k3y"
    with pytest.raises(ConfigError, match="FOREM_API_KEY is not set"):
        Clients(load_config(project.root / "toolkit.toml", env={})).forem()
