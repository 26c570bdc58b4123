"""`toolkit.lock`: which remote article each post is, and what was last sent and seen.

JSON with sorted keys, one entry per post path, meant to be committed. Each save is
atomic. During a publish's writes, `record()` asks a background thread to save
(`background_saves`), which folds the records that come while it writes into its next
save; so a crash can lose the records of the last few writes. Losing them, or the whole
file, costs nothing but a list read, because identity falls back to `canonical_url` and
title (see `remote.py`).

A save merges with what is on disk: it re-reads the file and applies this run's own
changes (entries set, entries removed) on top, so two runs that somehow both write it
(the run lock normally prevents that) lose nothing of each other's.

Before an update is sent, its entry records what is being sent (`pending_digest`,
`pending_body_digest`), saved before the request goes out: if the run is killed after the
API took the update but before the lock said so, the next run recognises the remote body
as its own and does not call it a conflict. A pending body replaced by a newer one before
its own success was seen stays in `unconfirmed` (the body digests sent and never seen
landed, the last `MAX_UNCONFIRMED`): a server may still commit it late, over the newer
body, and a body found there that is one of them is ours, sent again, not a website edit.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from toolkit.errors import SyncError
from toolkit.fsutil import stable_json, write_if_changed

log = logging.getLogger(__name__)

LOCK_VERSION = 1
MAX_UNCONFIRMED = 16  # body digests kept of updates sent and never seen landed


@dataclass(frozen=True)
class LockEntry:
    article_id: int
    url: str | None
    sent_digest: str  # digest of the payload last sent (or found already in place)
    remote_digest: str  # digest of the remote body_markdown right after that write
    remote_edited_at: str | None = None
    published: bool = False
    # Set before an update is sent, cleared by the record of its success: the payload
    # digest and the body digest of what is being sent.
    pending_digest: str | None = None
    pending_body_digest: str | None = None
    # Body digests of earlier updates sent and never seen landed (oldest first): the
    # server may still commit one of them, late.
    unconfirmed: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if not isinstance(self.unconfirmed, tuple):  # a JSON list, from the file
            if not isinstance(self.unconfirmed, list) \
                    or not all(isinstance(d, str) for d in self.unconfirmed):
                raise TypeError("unconfirmed: not a list of digests")
            object.__setattr__(self, "unconfirmed", tuple(self.unconfirmed))

    def sending(self, digest: str, body_digest: str) -> LockEntry:
        """The entry as an update of these digests is about to be sent: a pending body
        that was never seen landed joins `unconfirmed`."""
        earlier = self.unconfirmed
        if self.pending_body_digest and self.pending_body_digest != body_digest:
            earlier += (self.pending_body_digest,)
        earlier = tuple(d for d in earlier if d != body_digest)[-MAX_UNCONFIRMED:]
        return replace(self, pending_digest=digest, pending_body_digest=body_digest,
                       unconfirmed=earlier)

    def as_json(self) -> dict[str, Any]:
        data = asdict(self)
        for key in ("pending_digest", "pending_body_digest"):
            if data[key] is None:
                del data[key]  # absent rather than null: no lock diff for unchanged entries
        if self.unconfirmed:
            data["unconfirmed"] = list(self.unconfirmed)
        else:
            del data["unconfirmed"]
        return data


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
        # This run's own changes, applied on top of the file as it is when saving.
        self._set: dict[str, LockEntry] = {}
        self._removed: set[str] = set()

    @classmethod
    def load(cls, path: Path) -> Lock:
        entries = cls._read(path)
        return cls(path, entries or {})

    @staticmethod
    def _read(path: Path) -> dict[str, LockEntry] | None:
        """The entries in the file; None when there is no file; SyncError when unusable."""
        name = path.name
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None
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
        return entries

    def get(self, key: str) -> LockEntry | None:
        with self._mutex:
            return self.entries.get(key)

    def claimed(self, except_key: str | None = None) -> set[int]:
        """Article ids the lock gives to posts (other than `except_key`)."""
        with self._mutex:
            return {e.article_id for k, e in self.entries.items() if k != except_key}

    def record(self, key: str, entry: LockEntry, *, save: bool = True) -> None:
        """Set a post's entry (moving the article away from a path whose file is gone)."""
        with self._mutex:
            other = self._by_article.get(entry.article_id)
            if other is not None and other != key and not (self.path.parent / other).exists():
                self._remove(other)
            previous = self.entries.get(key)
            if previous is not None and self._by_article.get(previous.article_id) == key:
                del self._by_article[previous.article_id]
            self.entries[key] = entry
            self._by_article[entry.article_id] = key
            self._set[key] = entry
            self._removed.discard(key)
        if save:
            if self._saver is not None:
                self._saver.wanted.set()
            else:
                self.save()

    def _remove(self, key: str) -> None:
        entry = self.entries.pop(key)
        if self._by_article.get(entry.article_id) == key:
            del self._by_article[entry.article_id]
        self._set.pop(key, None)
        self._removed.add(key)

    @contextmanager
    def background_saves(self) -> Iterator[None]:
        """Within this block `record()` saves on a background thread, so a write's fsync
        does not hold up the next request; leaving the block waits for the last save.
        A crash can then lose the entries of the last few writes: the next run finds
        those articles again by canonical_url or title (and knows its own bodies by the
        pending digests saved before sending), so nothing is duplicated or conflicted."""
        self._saver = _Saver(self)
        self._saver.start()
        try:
            yield
        finally:
            saver, self._saver = self._saver, None
            saver.close()

    def save(self) -> None:
        with self._mutex:
            self._merge_from_disk()
            write_if_changed(self.path, self.to_bytes())

    def _merge_from_disk(self) -> None:
        """Take the file as it is now and put this run's changes on top of it."""
        try:
            on_disk = self._read(self.path)
        except SyncError as exc:  # unreadable now: keep what this run holds
            log.warning("%s; it is rewritten from this run's entries", exc.message)
            return
        merged = {k: v for k, v in (on_disk or {}).items() if k not in self._removed}
        merged.update(self._set)
        self.entries = merged
        self._by_article = {e.article_id: k for k, e in merged.items()}

    def to_bytes(self) -> bytes:
        return stable_json(
            {"version": LOCK_VERSION, "posts": {k: v.as_json() for k, v in self.entries.items()}}
        )
