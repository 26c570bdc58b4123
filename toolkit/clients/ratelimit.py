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
from collections.abc import Callable, Iterable

# Clocks on both sides of a loopback connection agree, but the server may count a request
# a little after the client's "response arrived" stamp for a pipelined write; a small
# margin keeps the next request clear of the edge of the window.
MARGIN = 0.005
HELD = "rate limited by the server (429): waiting as its Retry-After says"


class SlidingWindowLimiter:
    """At most `limit` requests in any `window` seconds, for callers on several threads.

    `acquire()` reserves a slot (waiting if the window is full), and the slot becomes a
    timestamp when `record()` says the response arrived; `release()` gives back a slot
    whose request never reached the server, or that the server checks against the limit
    without counting it: Forem counts the *published* articles created in the window
    (`RateLimitChecker#check_published_article_creation_limit`), so a draft create is
    refused while the window is full but never counted, and a create or update it
    refused (4xx) stored nothing and is not counted either. Requests in flight count as taken, so
    concurrent senders can never exceed the limit between them - nor fill the window
    while an uncounted request is on its way to be checked against it.
    """

    def __init__(
        self,
        limit: int,
        window: float,
        *,
        what: str = "requests",
        clock: Callable[[], float] = time.monotonic,
    ):
        if limit < 1 or window <= 0:
            raise ValueError("a rate limit needs a positive limit and window")
        self.limit = limit
        self.window = window
        self.what = what  # what it counts, for the reason of a wait: "creates"
        self._held_until = float("-inf")  # the end of the last hold a 429 asked for
        self._clock = clock
        self._sent: deque[float] = deque()
        self._in_flight = 0
        self._cond = threading.Condition()

    @property
    def reason(self) -> str:
        """Why a request waits for this limiter now: the server's 429, or the limit."""
        if self._clock() < self._held_until:
            return HELD
        return f"rate limit: {self.limit} {self.what} per {self.window:g} s"

    def _expire(self, now: float) -> None:
        while self._sent and self._sent[0] <= now - self.window:
            self._sent.popleft()

    def _pause(self) -> float | None:
        """Reserve a slot and return 0, or the seconds until one frees (None: only when a
        request in flight answers). Called with the condition held."""
        now = self._clock()
        self._expire(now)
        # Answers never free a slot (they become timestamps); only expiry does. So the
        # next slot frees when the k-th oldest timestamp leaves the window.
        k = len(self._sent) + self._in_flight - self.limit + 1
        if k <= 0:
            self._in_flight += 1
            return 0.0
        if k > len(self._sent):
            return None
        return self._sent[k - 1] + self.window - now + MARGIN

    def acquire(self, sleep: Callable[[float], None] = time.sleep) -> float:
        """Block until a request may be sent and reserve its slot; returns seconds waited.
        `sleep` does the waiting (so that a caller can report or cancel it)."""
        waited = 0.0
        while True:
            with self._cond:
                pause = self._pause()
                while pause is None:
                    self._cond.wait(1.0)
                    pause = self._pause()
            if pause <= 0:
                return waited
            sleep(pause)
            waited += pause

    def record(self) -> None:
        """The reserved request was answered: it counts from now."""
        with self._cond:
            self._in_flight = max(self._in_flight - 1, 0)
            self._sent.append(self._clock())
            self._cond.notify_all()

    def release(self) -> None:
        """The reserved request never reached the server, or was not counted there."""
        with self._cond:
            self._in_flight = max(self._in_flight - 1, 0)
            self._cond.notify_all()

    def reserve(self) -> None:
        """Take a slot without waiting, for a request that is not itself limited but may be
        counted (an update publishing a draft); `record()` or `release()` settles it."""
        with self._cond:
            self._in_flight += 1

    def count_past(self, ages: Iterable[float]) -> None:
        """Requests the server counted before this limiter knew of them (another run's,
        the website's), each by its age in seconds; those older than the window are gone."""
        with self._cond:
            now = self._clock()
            past = [now - age for age in ages if 0 <= age < self.window]
            if past:
                self._sent = deque(sorted([*self._sent, *past]))
                self._cond.notify_all()

    def hold(self, seconds: float) -> None:
        """The server said to wait (429 + Retry-After): treat the window as full until then.
        The refused request's slot is given back."""
        with self._cond:
            self._in_flight = max(self._in_flight - 1, 0)
            self._held_until = self._clock() + seconds
            self._sent = deque([self._held_until - self.window] * self.limit)
            self._cond.notify_all()
