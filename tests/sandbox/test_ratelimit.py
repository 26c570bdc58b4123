"""Rate limits as Forem's RateLimitChecker counts them: published creates in the window
(10), successful updates in a fixed window per user (30), checked after the 401, 404 and
422s, a 429 with `Retry-After` = the window length."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest

from tests.support.forem_sandbox import ForemSandbox
from tests.support.sandbox_client import Api
from tests.support.waiting import until_time
from toolkit_sandbox.forem.ratelimit import RateLimiter


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_updates_count_in_a_fixed_window_opened_by_the_first_success() -> None:
    clock = Clock()
    limiter = RateLimiter(window=30, clock=clock)
    assert limiter.update_refused(7) is None  # nothing counted opens no window
    clock.now = 1010.0
    for _ in range(30):
        assert limiter.update_refused(7) is None
        limiter.count_update(7)
        clock.now += 0.5
    assert limiter.update_refused(7) == 30  # the window's length, not the time left
    assert limiter.update_refused(8) is None  # per user
    clock.now = 1039.99
    assert limiter.update_refused(7) == 30
    clock.now = 1040.0  # 30 s after the first success: the counter is gone
    assert limiter.update_refused(7) is None
    limiter.count_update(7)
    clock.now = 1069.0  # a new window opened at 1040
    assert limiter.update_refused(7) is None
    limiter.enabled = False
    limiter.reset()
    assert limiter.enabled
    with pytest.raises(ValueError):
        RateLimiter(window=0)
    assert RateLimiter(window=2.5).retry_after == 3


@pytest.fixture(scope="module")
def _limited_sandbox() -> Iterator[ForemSandbox]:
    with ForemSandbox(rate_window=2.0) as server:
        yield server


@pytest.fixture
def limited(_limited_sandbox, make_api) -> Api:
    """A private sandbox with a 2-second window: fast, and long enough to be exact. One
    for this module, back at its seed with zeroed counts before each test (a reset
    clears the rate-limit counters and switches the limits on); its requests handed to
    the application in-process."""
    _limited_sandbox.reset()
    _limited_sandbox.reset_stats()
    return make_api(_limited_sandbox, in_process=True)


@pytest.fixture(scope="module")
def _counting_sandbox() -> Iterator[ForemSandbox]:
    with ForemSandbox(rate_window=60.0) as server:
        yield server


@pytest.fixture
def counting(_counting_sandbox, make_api) -> Api:
    """As `limited`, with a window no busy machine outlasts: for the tests whose subject is
    what counts, not when the window ends."""
    _counting_sandbox.reset()
    _counting_sandbox.reset_stats()
    return make_api(_counting_sandbox, in_process=True)


def create(api: Api, title: str, user: str = "demo", published: bool = True, **fields):
    return api.post(
        "/api/articles",
        user=user,
        json={"article": {"title": title, "body_markdown": "x", "published": published, **fields}},
    )


def test_the_eleventh_published_create_in_a_window_is_429(limited: Api) -> None:
    started = time.monotonic()
    for number in range(10):
        assert create(limited, f"Post {number}").status_code == 201
    refused = create(limited, "Post 10")
    assert refused.status_code == 429 and refused.headers["Retry-After"] == "2"
    assert refused.json() == {"error": "Rate limit reached, try again in 2 seconds", "status": 429}
    # Checked before saving: a draft is refused too while the published count is full.
    assert create(limited, "A draft", published=False).status_code == 429
    assert create(limited, "Post 10", user="sam").status_code == 201  # per user
    until_time(started + 2.05)  # the window's end: the clock is the subject here
    assert create(limited, "Post 10").status_code == 201
    assert limited.server.count("POST", "/api/articles", 429) == 2


def test_drafts_and_failed_creates_never_count(limited: Api) -> None:
    for number in range(15):
        assert create(limited, f"Draft {number}", published=False).status_code == 201
    for _ in range(12):
        assert create(limited, "").status_code == 422  # failed: nothing stored
    assert all(create(limited, f"Published {n}").status_code == 201 for n in range(10))
    assert create(limited, "One too many").status_code == 429


def test_a_draft_published_inside_the_window_counts(limited: Api) -> None:
    draft = create(limited, "Drafted", published=False).json()
    assert all(create(limited, f"Published {n}").status_code == 201 for n in range(9))
    assert create(limited, "Still room").status_code == 201  # the draft does not count
    assert (
        limited.put(
            f"/api/articles/{draft['id']}", user="demo", json={"article": {"published": True}}
        ).status_code
        == 200
    )
    assert create(limited, "Now full", published=False).status_code == 429  # 11 published


def test_thirty_successful_updates_then_429(counting: Api) -> None:
    def update(article_id: int = 1003, **article):
        return counting.put(f"/api/articles/{article_id}", user="demo", json={"article": article})

    for _ in range(12):
        assert update(main_image="not a url").status_code == 422  # failures never count
    for number in range(30):
        assert update(description=f"v{number}").status_code == 200
    refused = update(description="x")
    assert refused.status_code == 429 and refused.headers["Retry-After"] == "60"
    # The limit is checked after the 404 and the 422s: those answers stay what they are.
    assert update(1007, title="Not mine").status_code == 404
    assert update(999999, title="Nobody's").status_code == 404
    assert counting.put("/api/articles/1003", user="demo", json={"article": {}}).status_code == 422
    assert counting.put("/api/articles/1003", user="demo", json={"article": "x"}).status_code == 422
    assert counting.put("/api/articles/1003", json={"article": {"title": "x"}}).status_code == 401
    assert (
        counting.put(
            "/api/articles/1008", user="sam", json={"article": {"description": "sam"}}
        ).status_code
        == 200
    )  # per user
    assert create(counting, "A create").status_code == 201  # creates have their own count


def test_missing_article_param_is_422_even_at_the_create_limit(limited: Api) -> None:
    assert all(create(limited, f"Published {n}").status_code == 201 for n in range(10))
    missing = limited.post("/api/articles", user="demo", json={"title": "no wrapper"})
    assert missing.status_code == 422
    assert limited.post("/api/articles", user="demo", json={"article": {}}).status_code == 422
    assert limited.post("/api/articles", json={"article": {"title": "x"}}).status_code == 401


def test_unauthenticated_writes_are_401_not_counted(limited: Api) -> None:
    for _ in range(15):
        assert limited.post("/api/articles", json={"article": {"title": "x"}}).status_code == 401
    assert create(limited, "Still allowed").status_code == 201


def test_rate_limits_can_be_switched_off_and_reset_turns_them_on(limited: Api) -> None:
    switched = limited.ok("POST", "/__sandbox/forem/rate-limits", json={"enabled": False})
    assert switched["enabled"] is False
    assert all(create(limited, f"Free {n}").status_code == 201 for n in range(15))
    state = limited.ok("GET", "/__sandbox/forem/rate-limits")
    assert state == {"enabled": False, "window": 2.0, "limits": {"create": 10, "update": 30}}
    limited.server.reset()
    assert limited.ok("GET", "/__sandbox/forem/rate-limits")["enabled"] is True
    assert limited.post("/__sandbox/forem/rate-limits", json={"enabled": "no"}).status_code == 422
