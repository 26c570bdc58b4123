"""Keeping remote drafts up to date while the writer saves.

Saves are queued; a push starts once they have settled for `settle` seconds and carries
the latest text of every post saved meanwhile, so five quick saves make one update. A
failed post is pushed again with the next save.

What a push does is the `DraftPublisher`'s business (`toolkit.commands.watch` gives one
that publishes drafts only, through one client for the whole session, holding the run
lock): this module only decides when, and hands the result to the session.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Protocol

from toolkit.config import Config
from toolkit.errors import ToolkitError
from toolkit.sync.engine import Outcome, PublishResult

log = logging.getLogger(__name__)

SETTLE = 0.3


class DraftPublisher(Protocol):
    def publish(self, config: Config, paths: list[Path]) -> PublishResult | None:
        """Push the drafts among `paths`; None when `cancel` ended it half-way."""

    def cancel(self) -> None:
        """End a push in progress as soon as it waits (the watch is stopping)."""

    def close(self) -> None:
        """Release what it holds (its client); no push follows."""


class DraftPusher:
    def __init__(
        self,
        config: Config,
        publisher: DraftPublisher,
        on_result: Callable[[list[Outcome]], None],
        on_error: Callable[[str], None],
        *,
        settle: float = SETTLE,
    ):
        self.config = config  # the session replaces it when toolkit.toml is reloaded
        self.publisher = publisher
        self.on_result = on_result
        self.on_error = on_error
        self.settle = settle
        self._stop = threading.Event()
        self._pending: set[Path] = set()
        self._failed: set[Path] = set()
        self._last_request = 0.0
        self._cond = threading.Condition()
        self._thread = threading.Thread(target=self._run, name="watch-push", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def request(self, paths: set[Path]) -> None:
        with self._cond:
            self._pending |= paths
            self._last_request = time.monotonic()
            self._cond.notify()

    def stop(self) -> None:
        self._stop.set()
        self.publisher.cancel()
        with self._cond:
            self._cond.notify()
        if self._thread.is_alive():
            self._thread.join(5)
        self.publisher.close()

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
            result = self.publisher.publish(self.config, paths)
        except ToolkitError as exc:
            self._failed |= set(paths)
            self.on_error(exc.message)
            return
        if result is None:  # cancelled: the watch is stopping
            return
        self._failed |= {self.config.root / o.key for o in result.failed if o.plan.needs_write}
        self.on_result(result.outcomes)
