"""The article write rate limits: 10 creates and 30 updates per window, per API key.

The rule the client schedules against (so keep it exact):

* every authenticated `POST /api/articles` (create) and `PUT /api/articles/{id}`
  (update) that reaches the handler is counted, whatever its outcome (201, 404, 422...);
  a request answered 429 is not counted;
* the window slides: a request is refused when the key already has `limit` counted
  requests of that kind in the last `window` seconds;
* `Retry-After` = ceil(seconds until the oldest counted request leaves the window),
  at least 1; the body says the same number.

`window` defaults to the real 30 s; tests shrink it (`--rate-window 1`) and keep the
logic. The real service counts slightly differently (only published creates, only
successful updates); the seed's simpler rule is the one emulated.
"""

from __future__ import annotations

import math
import threading
import time
from collections import deque
from collections.abc import Callable

LIMITS: dict[str, int] = {"create": 10, "update": 30}


class RateLimiter:
    def __init__(
        self,
        window: float = 30.0,
        limits: dict[str, int] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ):
        if window <= 0:
            raise ValueError("the rate-limit window must be positive")
        self.window = float(window)
        self.limits = dict(limits or LIMITS)
        self.enabled = True
        self._clock = clock
        self._hits: dict[tuple[str, int], deque[float]] = {}
        self._lock = threading.Lock()

    def hit(self, kind: str, key: int) -> int | None:
        """Count one request of `kind` for `key`; None when allowed, else the
        Retry-After in whole seconds (and nothing is counted)."""
        if not self.enabled:
            return None
        limit = self.limits[kind]
        now = self._clock()
        with self._lock:
            hits = self._hits.setdefault((kind, key), deque())
            horizon = now - self.window
            while hits and hits[0] <= horizon:
                hits.popleft()
            if len(hits) >= limit:
                return max(1, math.ceil(hits[0] + self.window - now))
            hits.append(now)
            return None

    def reset(self) -> None:
        with self._lock:
            self._hits.clear()
        self.enabled = True


def message(retry_after: int) -> str:
    return f"Rate limit reached, try again in {retry_after} seconds"
