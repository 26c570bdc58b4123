"""The ledger, `toolkit.lock`: which remote article each post is, what was last sent and seen.

JSON with sorted keys, one entry per post path, meant to be committed. Each save is
atomic. During a publish's writes, `record()` asks a background thread to save
(`background_saves`), which folds the records that come while it writes into its next
save; so a crash can lose the records of the last few writes. Losing them, or the whole
file, costs nothing but a list read, because identity falls back to `canonical_url` and
title (see `remote.py`).

A save merges with what is on disk: it re-reads the file and applies this run's own
changes (entries set, entries removed) on top, so two runs that somehow both write it
(the run lock normally prevents that) lose nothing of each other's.

The file keeps one section per server of the publishing API, named by its base URL (as
`FOREM_BASE_URL` or `[forem] base_url` give it, credentials left out): `server` and
`posts` are the section of the server of the last run, `other_servers` holds the others
as they were. A run reads and writes only its own server's section, so trying the sandbox
(or a staging Forem) in a project never passes the sandbox's article ids off as dev.to's,
and going back finds the sandbox's section as it was. A server with no section yet
starts empty: its posts are found by identity (canonical_url, title) or created, and one
warning says so. A lock written before servers were recorded (version 1: no `server`) is
read as the configured server's.

Before an update is sent, its entry records what is being sent (`pending_digest`,
`pending_body_digest`), saved before the request goes out: if the run is killed after the
API took the update but before the lock said so, the next run recognises the remote body
as its own and does not call it a conflict. A pending body replaced by a newer one before
its own success was seen stays in `unconfirmed` (the body digests sent and never seen
landed, the last `MAX_UNCONFIRMED`): a server may still commit it late, over the newer
body, and a body found there that is one of them is ours, sent again, not a website edit.

In a team's repository (`[writers]`), an entry records the account that holds its article
(`account`: the writer's folder); a lock without it reads as before.

Every key is a post's path in the project, relative and plain (`content/a.md`): never an
absolute path, nor one that climbs out with `..` (`project_key`). A file that holds
another is refused whole, and no such key is ever recorded.

An entry also keeps the article's `published_at` as the API last gave it (a publish, an
unchanged post's check, a pull): the site dates a post without `date:` by it
(`content.dates`, through `toolkit.ledgerfile`).

The ledger alone writes the file; the file is read (bounded, the server's section picked
out) by `toolkit/ledgerfile.py`, which the ledger builds its entries from and the site asks
for the publication times.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from toolkit import ledgerfile
from toolkit.errors import SyncError
from toolkit.fsutil import stable_json, write_if_changed
from toolkit.ledgerfile import server_key
from toolkit.redact import quoted

if TYPE_CHECKING:  # pragma: no cover
    from toolkit.config import Config

log = logging.getLogger(__name__)

LOCK_VERSION = 2
MAX_UNCONFIRMED = 16  # body digests kept of updates sent and never seen landed
_warned: set[tuple[Path, str]] = set()  # (lock, server) said to have no section yet


NOT_IN_PROJECT = "not a path in the project (toolkit.lock names each post by its path there)"


def project_key(key: object) -> bool:
    """Whether `key` is a post's path as the lock names it: relative to the project,
    POSIX, every part a plain name (no `..`, `.`, empty part, backslash, NUL or drive)."""
    if not isinstance(key, str) or not key or "\\" in key or "\x00" in key:
        return False
    parts = key.split("/")
    return ":" not in parts[0] and all(part not in ("", ".", "..") for part in parts)


@dataclass(frozen=True)
class LedgerEntry:
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
    # The remote `published_at` (ISO 8601) last seen: the site's date of a post without
    # `date:`. Absent from entries written before it was recorded.
    published_at: str | None = None
    # In a team's repository, the writer whose account holds the article (their folder);
    # absent from the entries of one account and from those written before it was recorded.
    account: str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.unconfirmed, tuple):  # a JSON list, from the file
            if not isinstance(self.unconfirmed, list) or not all(
                isinstance(d, str) for d in self.unconfirmed
            ):
                raise TypeError("unconfirmed: not a list of digests")
            object.__setattr__(self, "unconfirmed", tuple(self.unconfirmed))

    def sending(self, digest: str, body_digest: str) -> LedgerEntry:
        """The entry as an update of these digests is about to be sent: a pending body
        that was never seen landed joins `unconfirmed`."""
        earlier = self.unconfirmed
        if self.pending_body_digest and self.pending_body_digest != body_digest:
            earlier += (self.pending_body_digest,)
        earlier = tuple(d for d in earlier if d != body_digest)[-MAX_UNCONFIRMED:]
        return replace(
            self, pending_digest=digest, pending_body_digest=body_digest, unconfirmed=earlier
        )

    def as_json(self) -> dict[str, Any]:
        data = asdict(self)
        for key in ("pending_digest", "pending_body_digest", "published_at", "account"):
            if data[key] is None:
                del data[key]  # absent rather than null: no lock diff for unchanged entries
        if self.unconfirmed:
            data["unconfirmed"] = list(self.unconfirmed)
        else:
            del data["unconfirmed"]
        return data


class _Saver(threading.Thread):
    """Saves the lock whenever asked, coalescing requests, off the caller's thread."""

    def __init__(self, ledger: Ledger):
        super().__init__(name="lock-saver", daemon=True)
        self.ledger = ledger
        self.wanted = threading.Event()
        self.closing = False
        self.error: BaseException | None = None

    def run(self) -> None:
        while True:
            self.wanted.wait()
            self.wanted.clear()
            try:
                self.ledger.save()
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


class Ledger:
    def __init__(self, path: Path, entries: dict[str, LedgerEntry] | None = None, server: str = ""):
        self.path = path
        self.server = server_key(server) if server else ""
        # The sections of other servers, as the file holds them: kept, never read.
        self.others: dict[str, Any] = {}
        self.entries: dict[str, LedgerEntry] = dict(entries or {})
        self._mutex = threading.Lock()
        self._saver: _Saver | None = None
        self._by_article = {e.article_id: k for k, e in self.entries.items()}
        # This run's own changes, applied on top of the file as it is when saving.
        self._set: dict[str, LedgerEntry] = {}
        self._removed: set[str] = set()

    @classmethod
    def of(cls, config: Config) -> Ledger:
        """The project's lock (`toolkit.lock`), its section of the project's publishing
        API (`[forem] base_url`)."""
        return cls.load(config.lock_path, config.forem.base_url)

    @classmethod
    def load(cls, path: Path, server: str) -> Ledger:
        """The lock's section of `server` (the publishing API's base URL)."""
        ledger = cls(path, server=server)
        entries, ledger.others = ledger._read()
        ledger.entries = entries or {}
        ledger._by_article = {e.article_id: k for k, e in ledger.entries.items()}
        if entries is None and ledger.others and (path, ledger.server) not in _warned:
            _warned.add((path, ledger.server))
            log.warning(
                "%s has no record of %s yet (it holds %s's): its posts are matched "
                "there by canonical_url and title, as if never published there",
                path.name,
                ledger.server,
                ", ".join(sorted(ledger.others)),
            )
        return ledger

    def _read(self) -> tuple[dict[str, LedgerEntry] | None, dict[str, Any]]:
        """This server's entries in the file (None when the file or the section is not
        there) and the other servers' sections; SyncError when the file is unusable."""
        name = self.path.name
        try:
            posts, others = ledgerfile.read(self.path, self.server)
        except ledgerfile.Unusable as exc:
            raise SyncError(exc.message) from None
        if posts is None:
            return None, others
        entries = {}
        for key, value in posts.items():
            if not project_key(key):
                raise SyncError(
                    f"{name}: {quoted(key, 200)}: {NOT_IN_PROJECT}; "
                    "delete the entry, or the file, and publish again"
                )
            try:
                entries[key] = LedgerEntry(**value)
            except TypeError:
                raise SyncError(
                    f"{name}: {key}: malformed entry; delete it and publish again"
                ) from None
        return entries, others

    def get(self, key: str) -> LedgerEntry | None:
        with self._mutex:
            return self.entries.get(key)

    def claimed(self, except_key: str | None = None) -> set[int]:
        """Article ids the lock gives to posts (other than `except_key`)."""
        with self._mutex:
            return {e.article_id for k, e in self.entries.items() if k != except_key}

    def record(
        self, key: str, entry: LedgerEntry, *, save: bool = True, replaces: str | None = None
    ) -> None:
        """Set a post's entry (moving the article away from a path whose file is gone, or
        from `replaces`: the path whose entry the post took over). SyncError for a key
        that is not a post's path in the project."""
        if not project_key(key):
            raise SyncError(f"{quoted(key, 200)}: {NOT_IN_PROJECT}")
        with self._mutex:
            other = self._by_article.get(entry.article_id)
            if (
                other is not None
                and other != key
                and (other == replaces or not (self.path.parent / other).exists())
            ):
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

    def forget(self, key: str) -> LedgerEntry | None:
        """Drop a post's entry and save; the entry dropped (None: there was none)."""
        with self._mutex:
            entry = self.entries.get(key)
            if entry is not None:
                self._remove(key)
        if entry is not None:
            self.save()
        return entry

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
            on_disk, self.others = self._read()
        except SyncError as exc:  # unreadable now: keep what this run holds
            log.warning("%s; it is rewritten from this run's entries", exc.message)
            return
        merged = {k: v for k, v in (on_disk or {}).items() if k not in self._removed}
        merged.update(self._set)
        self.entries = merged
        self._by_article = {e.article_id: k for k, e in merged.items()}

    def to_bytes(self) -> bytes:
        data: dict[str, Any] = {
            "version": LOCK_VERSION,
            "server": self.server,
            "posts": {k: v.as_json() for k, v in self.entries.items()},
        }
        if self.others:
            data["other_servers"] = self.others
        return stable_json(data)
