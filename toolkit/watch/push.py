"""Keeping remote drafts up to date while the writer saves, through the publish engine.

Saves are queued; a push starts once they have settled for `settle` seconds and carries
the latest text of every post saved meanwhile, so five quick saves make one update. One
client (and so one pair of rate limiters) serves the whole session: a push that would
exceed the limit waits inside it, while further saves queue up behind it. Only drafts
are written (`drafts_only`); a failed post is pushed again with the next save.

Each push holds the project's run lock, like `toolkit publish`: while another run holds
it (a publish, a pull), the push waits a few seconds, then gives up, says so, and is
tried again with the next save.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from pathlib import Path

from toolkit.clients.forem import ForemClient
from toolkit.config import Config
from toolkit.errors import ToolkitError
from toolkit.sync.engine import Outcome, SyncEngine

log = logging.getLogger(__name__)

SETTLE = 0.3
PUSH_LOCK_TIMEOUT = 5.0  # seconds a push waits for another toolkit run


class Cancelled(Exception):
    """Raised inside a push when the watch is stopping."""


class DraftPusher:
    def __init__(
        self,
        config: Config,
        client_factory: Callable[..., ForemClient],
        on_result: Callable[[list[Outcome]], None],
        on_error: Callable[[str], None],
        *,
        settle: float = SETTLE,
        lock_timeout: float = PUSH_LOCK_TIMEOUT,
    ):
        self.config = config
        self.on_result = on_result
        self.on_error = on_error
        self.settle = settle
        self.lock_timeout = lock_timeout
        self._stop = threading.Event()
        self.client = client_factory(sleep=self._sleep)
        self._pending: set[Path] = set()
        self._failed: set[Path] = set()
        self._last_request = 0.0
        self._cond = threading.Condition()
        self._thread = threading.Thread(target=self._run, name="watch-push", daemon=True)
        self.pushes = 0  # pushes done (for tests and the benchmark)

    def _sleep(self, seconds: float) -> None:
        """Rate-limit and retry pauses end early, with `Cancelled`, when watch stops."""
        if self._stop.wait(seconds):
            raise Cancelled()

    def start(self) -> None:
        self._thread.start()

    def request(self, paths: set[Path]) -> None:
        with self._cond:
            self._pending |= paths
            self._last_request = time.monotonic()
            self._cond.notify()

    def stop(self) -> None:
        self._stop.set()
        with self._cond:
            self._cond.notify()
        if self._thread.is_alive():
            self._thread.join(5)
        self.client.close()

    def _run(self) -> None:
        while not self._stop.is_set():
            with self._cond:
                while not self._pending and not self._stop.is_set():
                    self._cond.wait()
                if self._stop.is_set():
                    return
                wait = self._last_request + self.settle - time.monotonic()
                if wait > 0:
                    self._cond.wait(wait)
                    continue
                batch = self._pending | self._failed
                self._pending, self._failed = set(), set()
            self._push(batch)

    def _push(self, batch: set[Path]) -> None:
        paths = sorted(p for p in batch if p.exists())
        if not paths:
            return
        try:
            engine = SyncEngine(self.config, self.client, command="watch (draft push)",
                                lock_timeout=self.lock_timeout, sleep=self._sleep)
            result = engine.publish(paths, drafts_only=True)
        except Cancelled:
            return
        except ToolkitError as exc:
            self._failed |= set(paths)
            self.on_error(exc.message)
            return
        self.pushes += 1
        self._failed |= {self.config.root / o.key for o in result.failed if o.plan.needs_write}
        self.on_result(result.outcomes)
