"""Interface A's article rate limits, counted the way Forem's `RateLimitChecker` counts
them (app/services/rate_limit_checker.rb, app/services/articles/creator.rb and
updater.rb), with the seed's figures: 10 creates and 30 updates per window.

* Create: before saving, the user's *published* articles created in the last `window`
  seconds are counted from the store. At 10 or more the create is refused - a draft
  create too, while the published count is at the limit. Drafts, failed creates and
  429s never count (nothing published was stored); a draft created inside the window
  and published inside it does. (Forem: `published_article_creation` 9, tested with `>`:
  the same 10.)
* Update: a counter per user in a fixed window that opens at the first *successful*
  update and lasts `window` seconds (Forem increments a cache key with `expires_in`, and
  Redis sets the expiry only when the key has none). Only a successful update adds to it
  (`track_limit_by_action` runs `if success`); at 30 an update is refused. (Forem's
  `article_update` 30 with `>` allows 31; the seed's 30 is kept.)
* Both are keyed by user, and checked where Forem checks them: after authentication,
  after the 422s for the `article` param and, for an update, after its 404 - so a 400,
  401, 404 or 422 is never a 429 first and never counts.
* A 429 says `Retry-After: N` and `Rate limit reached, try again in N seconds`, N being
  the window length rounded up (30 by default): the action's fixed constant, as Forem
  sends it, not the time left.

A client that keeps to at most 10 creates and 30 updates in any sliding window, timing
each from its answer, never sees a 429: every window the server counts in is covered by
one of its own. `window` defaults to the real 30 s; `--rate-window` scales it for tests
and keeps the logic.
"""

from __future__ import annotations

import datetime as dt
import math
import sqlite3
import threading
import time
from collections.abc import Callable

from toolkit_sandbox.forem import text

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
        self._updates: dict[int, tuple[float, int]] = {}  # user id -> (opened at, count)
        self._lock = threading.Lock()

    @property
    def retry_after(self) -> int:
        """The window length in whole seconds, as `Retry-After` says it."""
        return max(1, math.ceil(self.window))

    def create_refused(self, db: sqlite3.Connection, user_id: int) -> int | None:
        """Retry-After when the user's published creates in the window are at the limit,
        else None. Call inside the write's transaction, before saving."""
        if not self.enabled:
            return None
        horizon = text.stored(text.now() - dt.timedelta(seconds=self.window))
        count = db.execute(
            "SELECT COUNT(*) FROM articles WHERE user_id = ? AND published = 1 AND created_at > ?",
            (user_id, horizon),
        ).fetchone()[0]
        return self.retry_after if count >= self.limits["create"] else None

    def update_refused(self, user_id: int) -> int | None:
        """Retry-After when the user's successful updates in their window are at the
        limit, else None."""
        if not self.enabled:
            return None
        with self._lock:
            count = self._current(user_id, self._clock())[1]
        return self.retry_after if count >= self.limits["update"] else None

    def count_update(self, user_id: int) -> None:
        """One successful update: opens the user's window when none is open."""
        now = self._clock()
        with self._lock:
            opened, count = self._current(user_id, now)
            self._updates[user_id] = (now if count == 0 else opened, count + 1)

    def _current(self, user_id: int, now: float) -> tuple[float, int]:
        opened, count = self._updates.get(user_id, (now, 0))
        if now - opened >= self.window:  # the window expired: the counter is gone
            return now, 0
        return opened, count

    def reset(self) -> None:
        with self._lock:
            self._updates.clear()
        self.enabled = True


def message(retry_after: int) -> str:
    """`RateLimitChecker::LimitReached#message`."""
    return f"Rate limit reached, try again in {retry_after} seconds"
