"""Rate limits: 10 creates and 30 updates per sliding window per API key, 429 with
`Retry-After`; the exact counting rule the client schedules against."""

from __future__ import annotations

import time

import pytest
from sandbox_client import Api

from toolkit.sandbox.forem.ratelimit import RateLimiter


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_limiter_slides_and_says_when_to_retry() -> None:
    clock = Clock()
    limiter = RateLimiter(window=30, clock=clock)
    for second in range(10):  # one create a second
        clock.now = 1000.0 + second
        assert limiter.hit("create", 1) is None
    clock.now = 1009.5
    assert limiter.hit("create", 1) == 21  # the first leaves the window at 1030: ceil(20.5)
    clock.now = 1029.99
    assert limiter.hit("create", 1) == 1  # never below 1
    clock.now = 1030.0
    assert limiter.hit("create", 1) is None  # the first left; a refused request was not counted
    assert limiter.hit("create", 1) == 1  # the second (at 1001) leaves in one second
    assert limiter.hit("create", 2) is None  # per key
    assert limiter.hit("update", 1) is None  # per kind


def test_limiter_update_limit_and_switch() -> None:
    clock = Clock()
    limiter = RateLimiter(window=30, clock=clock)
    assert all(limiter.hit("update", 7) is None for _ in range(30))
    assert limiter.hit("update", 7) == 30
    limiter.enabled = False
    assert limiter.hit("update", 7) is None
    limiter.reset()
    assert limiter.enabled and limiter.hit("update", 7) is None
    with pytest.raises(ValueError):
        RateLimiter(window=0)


@pytest.fixture
def limited(make_sandbox, make_api) -> Api:
    """A private sandbox with a 2-second window: fast, and long enough to be exact."""
    return make_api(make_sandbox(rate_window=2.0))


def create(api: Api, title: str, user: str = "demo", **fields):
    return api.post("/api/articles", user=user,
                    json={"article": {"title": title, "body_markdown": "x", **fields}})


def test_eleventh_create_in_a_window_is_429_and_succeeds_after_it(limited: Api) -> None:
    started = time.monotonic()
    for number in range(10):
        assert create(limited, f"Post {number}").status_code == 201
    refused = create(limited, "Post 10")
    assert refused.status_code == 429
    retry_after = int(refused.headers["Retry-After"])
    assert 1 <= retry_after <= 2
    assert refused.json() == {"error": f"Rate limit reached, try again in {retry_after} seconds",
                              "status": 429}
    assert create(limited, "Post 10", user="sam").status_code == 201  # another key
    time.sleep(max(0.0, started + 2.05 - time.monotonic()))
    assert create(limited, "Post 10").status_code == 201
    assert limited.server.count("POST", "/api/articles", 429) == 1


def test_refused_writes_still_count_but_429s_do_not(limited: Api) -> None:
    for _ in range(10):
        assert create(limited, "").status_code == 422  # counted: it reached the handler
    assert create(limited, "Valid").status_code == 429
    assert create(limited, "Valid").status_code == 429  # not counted either
    time.sleep(2.05)
    assert all(create(limited, f"Again {n}").status_code == 201 for n in range(10))
    assert create(limited, "One too many").status_code == 429


def test_thirty_updates_then_429(limited: Api) -> None:
    for number in range(30):
        response = limited.put("/api/articles/1003", user="demo",
                               json={"article": {"description": f"v{number}"}})
        assert response.status_code == 200
    refused = limited.put("/api/articles/1003", user="demo", json={"article": {"description": "x"}})
    assert refused.status_code == 429 and int(refused.headers["Retry-After"]) >= 1
    # A 404 (someone else's article) counts too, and creates have their own budget.
    assert limited.put("/api/articles/1007", user="demo", json={"article": {}}).status_code == 429
    assert create(limited, "A create").status_code == 201


def test_unauthenticated_writes_are_401_not_counted(limited: Api) -> None:
    for _ in range(15):
        assert limited.post("/api/articles", json={"article": {"title": "x"}}).status_code == 401
    assert create(limited, "Still allowed").status_code == 201


def test_rate_limits_can_be_switched_off_and_reset_turns_them_on(limited: Api) -> None:
    assert limited.ok("POST", "/__sandbox/rate-limits", json={"enabled": False})["enabled"] is False
    assert all(create(limited, f"Free {n}").status_code == 201 for n in range(15))
    state = limited.ok("GET", "/__sandbox/rate-limits")
    assert state == {"enabled": False, "window": 2.0, "limits": {"create": 10, "update": 30}}
    limited.server.reset()
    assert limited.ok("GET", "/__sandbox/rate-limits")["enabled"] is True
    assert limited.post("/__sandbox/rate-limits", json={"enabled": "no"}).status_code == 422
