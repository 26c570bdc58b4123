"""Client-side scheduling for the API's sliding-window rate limits.

The API allows N requests of a kind per window, per key, sliding. Waiting *before* a
request that would exceed it means a large first publish never sees a 429 and still
finishes in the least time the limit allows. A request is recorded when its response
arrives: that moment is never earlier than when the server counted it, so the client's
view of the window can only be more cautious than the server's.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable

# Clocks on both sides of a loopback connection agree, but the server may count a request
# a little after the client's "response arrived" stamp for a pipelined write; a small
# margin keeps the next request clear of the edge of the window.
MARGIN = 0.005


class SlidingWindowLimiter:
    def __init__(
        self,
        limit: int,
        window: float,
        *,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ):
        if limit < 1 or window <= 0:
            raise ValueError("a rate limit needs a positive limit and window")
        self.limit = limit
        self.window = window
        self._clock = clock
        self._sleep = sleep
        self._sent: deque[float] = deque()
        self._lock = threading.Lock()

    def _expire(self, now: float) -> None:
        while self._sent and self._sent[0] <= now - self.window:
            self._sent.popleft()

    def delay(self) -> float:
        """Seconds until one more request fits in the window (0 when it fits now)."""
        with self._lock:
            now = self._clock()
            self._expire(now)
            if len(self._sent) < self.limit:
                return 0.0
            return self._sent[0] + self.window - now + MARGIN

    def acquire(self) -> float:
        """Block until a request may be sent; returns the seconds waited."""
        waited = 0.0
        while (pause := self.delay()) > 0:
            self._sleep(pause)
            waited += pause
        return waited

    def record(self) -> None:
        with self._lock:
            self._sent.append(self._clock())

    def hold(self, seconds: float) -> None:
        """The server said to wait (429 + Retry-After): treat the window as full until then."""
        with self._lock:
            until = self._clock() + seconds - self.window
            self._sent = deque([until] * self.limit)
