"""`toolkit.lock`: which remote article each post is, and what was last sent and seen.

JSON with sorted keys, one entry per post path, meant to be committed. It is rewritten
atomically after every successful write, so a crash loses at most the write in flight;
and even losing the whole file costs nothing but a list read, because identity falls back
to `canonical_url` and title (see `identity.py`).
"""

from __future__ import annotations

import json
import threading
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


class Lock:
    def __init__(self, path: Path, entries: dict[str, LockEntry] | None = None):
        self.path = path
        self.entries: dict[str, LockEntry] = dict(entries or {})
        self._mutex = threading.Lock()

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

    def key_of(self, article_id: int) -> str | None:
        return next((k for k, e in self.entries.items() if e.article_id == article_id), None)

    def record(self, key: str, entry: LockEntry, *, save: bool = True) -> None:
        """Set a post's entry (moving the article away from a path whose file is gone)."""
        with self._mutex:
            for other, old in list(self.entries.items()):
                if other != key and old.article_id == entry.article_id:
                    if not (self.path.parent / other).exists():
                        del self.entries[other]
            self.entries[key] = entry
            if save:
                self._save()

    def save(self) -> None:
        with self._mutex:
            self._save()

    def to_bytes(self) -> bytes:
        return stable_json(
            {"version": LOCK_VERSION, "posts": {k: asdict(v) for k, v in self.entries.items()}}
        )

    def _save(self) -> None:
        write_if_changed(self.path, self.to_bytes())
