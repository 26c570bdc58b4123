"""`watch`: a live-preview session that keeps the remote drafts of saved posts up to date.

`watch()` returns the session unstarted: the caller starts it, waits (for Ctrl-C), and
stops it. Pushes go through `DraftsToRemote`: one client, and so one pair of rate
limiters, for the whole session; each push holds the run lock like `toolkit publish`,
waits a few seconds for another run that holds it, then gives up (the pusher says so and
tries again with the next save).
"""

from __future__ import annotations

import threading
from pathlib import Path

from toolkit.clients import forem_client
from toolkit.config import Config
from toolkit.sync.engine import PublishResult, SyncEngine
from toolkit.sync.runlock import writer_run
from toolkit.watch import WatchOptions, WatchReporter, WatchSession

__all__ = ["PUSH_LOCK_TIMEOUT", "DraftsToRemote", "WatchReporter", "WatchSession", "watch"]

PUSH_LOCK_TIMEOUT = 5.0  # seconds a push waits for another toolkit run
NO_KEY = ("remote drafts are not updated: FOREM_API_KEY is not set "
          "(--no-push silences this)")


class Cancelled(Exception):
    """Raised inside a push, from a pause, when the watch is stopping."""


class DraftsToRemote:
    """Publishes the drafts among the saved posts (never a published post), holding the
    run lock for each push. Every pause (rate limit, retry, the run lock) ends early when
    the watch stops."""

    def __init__(self, config: Config, *, lock_timeout: float = PUSH_LOCK_TIMEOUT):
        self.lock_timeout = lock_timeout
        self._cancelled = threading.Event()
        self._client = forem_client(config, sleep=self._sleep)

    def _sleep(self, seconds: float) -> None:
        if self._cancelled.wait(seconds):
            raise Cancelled()

    def publish(self, config: Config, paths: list[Path]) -> PublishResult | None:
        try:
            with writer_run(config, "watch (draft push)", timeout=self.lock_timeout,
                            sleep=self._sleep):
                return SyncEngine(config, self._client).publish(paths, drafts_only=True)
        except Cancelled:
            return None

    def cancel(self) -> None:
        self._cancelled.set()

    def close(self) -> None:
        self._cancelled.set()
        self._client.close()


def watch(config: Config, reporter: WatchReporter, *, host: str = "127.0.0.1",
          port: int = 8000, push: bool = True, drafts: bool = True,
          lock_timeout: float = PUSH_LOCK_TIMEOUT) -> WatchSession:
    """A session serving the preview on `host:port` (loopback only), with drafts shown
    unless `drafts` is false, pushing saved drafts unless `push` is false or no API key
    is set (then `notices` says so)."""
    options = WatchOptions(host=host, port=port, drafts=drafts)
    if push and config.forem.api_key is None:
        return WatchSession(config, options, reporter, notices=(NO_KEY,))
    publisher = DraftsToRemote(config, lock_timeout=lock_timeout) if push else None
    try:
        return WatchSession(config, options, reporter, publisher=publisher)
    except BaseException:
        if publisher is not None:
            publisher.close()
        raise
