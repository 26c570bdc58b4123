"""`toolkit.lock`: which remote article each post is, and what was last sent and seen.

JSON with sorted keys, one entry per post path, meant to be committed. It is rewritten
atomically after every successful write, so a crash loses at most the write in flight;
and even losing the whole file costs nothing but a list read, because identity falls back
to `canonical_url` and title (see `identity.py`).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path

from toolkit.errors import SyncError
from toolkit.fsutil import stable_json, write_if_changed

LOCK_VERSION = 1


@dataclass(frozen=True)
class LockEntry:
    article_id: int
    url: str | None
    sent_digest: str  # digest of the payload last sent (or found already in place)
    remote_digest: str  # digest of the remote body_markdown right after that write
    remote_edited_at: str | None = None
    published: bool = False


class _Saver(threading.Thread):
    """Saves the lock whenever asked, coalescing requests, off the caller's thread."""

    def __init__(self, lock: Lock):
        super().__init__(name="lock-saver", daemon=True)
        self.lock = lock
        self.wanted = threading.Event()
        self.closing = False
        self.error: BaseException | None = None

    def run(self) -> None:
        while True:
            self.wanted.wait()
            self.wanted.clear()
            try:
                self.lock.save()
            except BaseException as exc:  # re-raised by close(), on the caller's thread
                self.error = exc
            if self.closing and not self.wanted.is_set():
                return

    def close(self) -> None:
        self.closing = True
        self.wanted.set()
        self.join()
        if self.error is not None:
            raise self.error


class Lock:
    def __init__(self, path: Path, entries: dict[str, LockEntry] | None = None):
        self.path = path
        self.entries: dict[str, LockEntry] = dict(entries or {})
        self._mutex = threading.Lock()
        self._saver: _Saver | None = None
        self._by_article = {e.article_id: k for k, e in self.entries.items()}

    @classmethod
    def load(cls, path: Path) -> Lock:
        if not path.exists():
            return cls(path)
        name = path.name
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise SyncError(
                f"{name}: cannot be read ({exc}); fix it, or delete it and publish again "
                "(toolkit finds your articles by canonical_url and title)"
            ) from None
        posts = data.get("posts") if isinstance(data, dict) else None
        if not isinstance(posts, dict):
            raise SyncError(f"{name}: has no \"posts\" table; delete it and publish again")
        entries = {}
        for key, value in posts.items():
            try:
                entries[key] = LockEntry(**value)
            except TypeError:
                raise SyncError(f"{name}: {key}: malformed entry; delete it and publish again") from None
        return cls(path, entries)

    def get(self, key: str) -> LockEntry | None:
        return self.entries.get(key)

    def record(self, key: str, entry: LockEntry, *, save: bool = True) -> None:
        """Set a post's entry (moving the article away from a path whose file is gone)."""
        with self._mutex:
            other = self._by_article.get(entry.article_id)
            if other is not None and other != key and not (self.path.parent / other).exists():
                del self.entries[other]
            previous = self.entries.get(key)
            if previous is not None and self._by_article.get(previous.article_id) == key:
                del self._by_article[previous.article_id]
            self.entries[key] = entry
            self._by_article[entry.article_id] = key
        if save:
            if self._saver is not None:
                self._saver.wanted.set()
            else:
                self.save()

    @contextmanager
    def background_saves(self) -> Iterator[None]:
        """Within this block `record()` saves on a background thread, so a write's fsync
        does not hold up the next request; leaving the block waits for the last save.
        A crash can then lose the entries of the last few writes: the next run finds
        those articles again by canonical_url or title, so nothing is duplicated."""
        self._saver = _Saver(self)
        self._saver.start()
        try:
            yield
        finally:
            saver, self._saver = self._saver, None
            saver.close()

    def save(self) -> None:
        with self._mutex:
            self._save()

    def to_bytes(self) -> bytes:
        return stable_json(
            {"version": LOCK_VERSION, "posts": {k: asdict(v) for k, v in self.entries.items()}}
        )

    def _save(self) -> None:
        write_if_changed(self.path, self.to_bytes())
