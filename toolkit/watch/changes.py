"""File events from watchdog, coalesced into batches of changed paths.

Editors save in bursts (write a temporary file, rename it over the old one, touch a
backup): each burst should cause one rebuild. A batch is handed on once no new event has
come for `quiet` seconds, or `max_wait` after its first event when events keep coming.

A save ends with the file closed after writing, or renamed into place: after such an event
the batch waits only `settled` seconds for the rest of the burst, not `quiet`, so the page
reloads sooner; any other event (a write still under way) brings back the longer wait.

The OS's notifications can be lost: its event queue fills up, its watch limit is reached,
a folder is made again under a watched name, a network drive sends none. `Sweep` looks at
the folders' stats every `SWEEP_SECONDS` and hands on what changed since the last build
began, so such a change is built at most that much later, never missed.
"""

from __future__ import annotations

import contextlib
import os
import stat
import threading
import time
from collections.abc import Callable, Iterable
from pathlib import Path

from watchdog.events import FileSystemEvent, FileSystemEventHandler
from watchdog.observers import Observer
from watchdog.observers.api import BaseObserver
from watchdog.observers.polling import PollingObserver
from watchdog.utils.dirsnapshot import (
    DirectorySnapshot,
    DirectorySnapshotDiff,
    EmptyDirectorySnapshot,
)

QUIET = 0.05  # an editor's save burst takes a few ms; a typist's saves come seconds apart
SETTLED = 0.02  # after a file was closed or renamed into place: the end of a save
MAX_WAIT = 1.0
SAVED = ("closed", "moved")  # watchdog's event types that end a save
POLL_SECONDS = 0.25  # how often a folder made anew is looked at (see `FolderWatch`)
SWEEP_SECONDS = 1.0  # how often every watched folder's stats are looked at (see `Sweep`)


class Coalescer:
    """Collects paths; calls `handle(batch)` on its own thread once they settle."""

    def __init__(
        self,
        handle: Callable[[set[Path]], None],
        *,
        quiet: float = QUIET,
        settled: float = SETTLED,
        max_wait: float = MAX_WAIT,
    ):
        self.handle = handle
        self.quiet = quiet
        self.settled = settled
        self.max_wait = max_wait
        self._pending: set[Path] = set()
        self._first = 0.0
        self._last = 0.0
        self._wait = quiet  # after the last event: `settled` when it ended a save
        self._cond = threading.Condition()
        self._stopped = False
        self._thread = threading.Thread(target=self._run, name="watch-coalescer", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def add(self, paths: Iterable[Path], *, saved: bool = False) -> None:
        """Add changed paths; `saved` when the event ended a save (see the module)."""
        with self._cond:
            now = time.monotonic()
            if not self._pending:
                self._first = now
            self._pending.update(paths)
            self._last = now
            self._wait = self.settled if saved else self.quiet
            self._cond.notify()

    def stop(self) -> None:
        with self._cond:
            self._stopped = True
            self._cond.notify()
        if self._thread.is_alive() and self._thread is not threading.current_thread():
            self._thread.join(5)

    def _run(self) -> None:
        while True:
            with self._cond:
                while not self._pending and not self._stopped:
                    self._cond.wait()
                if self._stopped:
                    return
                now = time.monotonic()
                due = min(self._last + self._wait, self._first + self.max_wait)
                if now < due:
                    self._cond.wait(due - now)
                    continue
                batch, self._pending = self._pending, set()
            self.handle(batch)


Sink = Callable[..., None]  # Coalescer.add: (paths, *, saved)


class _Forward(FileSystemEventHandler):
    def __init__(self, accept: Callable[[Path], bool], sink: Sink):
        self.accept = accept
        self.sink = sink

    def on_any_event(self, event: FileSystemEvent) -> None:
        if event.event_type in ("opened", "closed_no_write"):
            return  # reading a file changes nothing
        if event.is_directory and event.event_type == "modified":
            return  # an entry came or went: that entry has an event of its own
        paths = [Path(str(event.src_path))]
        if getattr(event, "dest_path", ""):
            paths.append(Path(str(event.dest_path)))
        wanted = [p for p in paths if self.accept(p)]
        if wanted:
            self.sink(wanted, saved=event.event_type in SAVED)


class FolderWatch:
    """Watchdog observers on some folders; more can be added while they run (a folder that
    did not exist at the start, like a new `templates/`).

    A folder deleted and made again (or replaced by another of the same name) is another
    folder for the OS: the watch on the old one ends with it. `add` tells them apart by
    the folder's identity (device and inode), or is told (the folder's own event), and
    watches the new one in its place, by polling its files' stats (`POLL_SECONDS`), which
    does not depend on the OS's notifications for a name that had another folder. A folder
    the OS refuses to watch (its limit of watches reached) is polled too, and `polled` is
    told why. Each folder has an observer of its own."""

    def __init__(
        self,
        accept: Callable[[Path], bool],
        sink: Sink,
        polled: Callable[[Path, OSError], None] | None = None,
        *,
        observer: Callable[[], BaseObserver] = Observer,
    ):
        self._handler = _Forward(accept, sink)
        self._polled = polled
        self._os_observer = observer  # the OS's notifications (inotify on Linux)
        self._running = False
        self._mutex = threading.Lock()
        # folder -> (its observer, its identity when the watch was made, recursive)
        self._watched: dict[Path, tuple[BaseObserver, tuple[int, int], bool]] = {}

    def add(self, folder: Path, *, recursive: bool = True, renew: bool = False) -> bool:
        """Watch `folder` if it exists and is not watched yet, or is another folder than
        the one watched under that name (or `renew`: the caller saw it made anew, which a
        new folder given the old one's inode number would hide); True when a watch was
        made."""
        try:
            info = folder.stat()
        except OSError:
            return False
        if not stat.S_ISDIR(info.st_mode):
            return False
        identity = (info.st_dev, info.st_ino)
        with self._mutex:
            known = self._watched.get(folder)
            if known is not None:
                if known[1] == identity and not renew:
                    return False
                _end(known[0])
            # A folder watched anew (made again after its watch ended) is polled: inotify's
            # watch of such a folder has been seen to stay silent.
            observer = self._observe(folder, recursive, poll=known is not None)
            self._watched[folder] = (observer, identity, recursive)
        return True

    def _observe(self, folder: Path, recursive: bool, *, poll: bool) -> BaseObserver:
        """An observer of `folder`, started if the watch runs: the OS's own, or one that
        polls when `poll` or when the OS refuses another watch."""
        observer = PollingObserver(timeout=POLL_SECONDS) if poll else self._os_observer()
        observer.daemon = True
        try:
            observer.schedule(self._handler, str(folder), recursive=recursive)
            if self._running:
                observer.start()
        except OSError as exc:  # inotify's limits: instances or watches
            if poll:
                raise
            self._refused(observer, folder, exc)
            return self._observe(folder, recursive, poll=True)
        return observer

    def _refused(self, observer: BaseObserver, folder: Path, exc: OSError) -> None:
        _end(observer)
        if self._polled is not None:
            self._polled(folder, exc)

    def watching(self, folder: Path) -> bool:
        """Whether `folder` was watched at some point (it may be gone since)."""
        with self._mutex:
            return folder in self._watched

    def start(self) -> None:
        with self._mutex:
            self._running = True
            for folder, (observer, identity, recursive) in list(self._watched.items()):
                try:
                    observer.start()
                except OSError as exc:
                    self._refused(observer, folder, exc)
                    polling = self._observe(folder, recursive, poll=True)
                    self._watched[folder] = (polling, identity, recursive)

    def stop(self) -> None:
        with self._mutex:
            self._running = False
            for observer, _, _ in self._watched.values():
                _end(observer)


class Sweep:
    """Every `interval` seconds, the stats of some folders' files compared with those seen
    when the last build began (`mark`); what changed goes to `sink`, as events would
    (see the module). A folder missing is one with no files; one back has all its files
    new, and itself."""

    def __init__(
        self,
        folders: Callable[[], Iterable[Path]],
        accept: Callable[[Path], bool],
        sink: Sink,
        *,
        interval: float = SWEEP_SECONDS,
    ):
        self.folders = folders
        self.accept = accept
        self.sink = sink
        self.interval = interval
        self._lock = threading.Lock()
        self._seen: dict[Path, DirectorySnapshot] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="watch-sweep", daemon=True)

    def mark(self) -> None:
        """What the folders hold now is what a build is about to read."""
        with self._lock:
            self._seen = self._look()

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive() and self._thread is not threading.current_thread():
            self._thread.join(5)

    def _look(self) -> dict[Path, DirectorySnapshot]:
        seen: dict[Path, DirectorySnapshot] = {}
        for folder in self.folders():
            try:  # lstat: a symlink to a folder is not walked into (no loops)
                seen[folder] = DirectorySnapshot(str(folder), recursive=True, stat=os.lstat)
            except OSError:
                seen[folder] = EmptyDirectorySnapshot()
        return seen

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            with self._lock:
                now = self._look()
                changed = {
                    Path(str(path))
                    for folder, snapshot in now.items()
                    for path in _changed(self._seen.get(folder), snapshot)
                }
                self._seen = now
            wanted = [path for path in changed if self.accept(path)]
            if wanted:
                self.sink(wanted, saved=True)


def _changed(before: DirectorySnapshot | None, after: DirectorySnapshot) -> set[bytes | str]:
    if before is None:
        return set()
    diff = DirectorySnapshotDiff(before, after)
    paths: set[bytes | str] = set(diff.files_created) | set(diff.files_deleted)
    paths |= set(diff.files_modified) | set(diff.dirs_created) | set(diff.dirs_deleted)
    for moved in (*diff.files_moved, *diff.dirs_moved):
        paths |= set(moved)
    return paths


def _end(observer: BaseObserver) -> None:
    """Stop an observer, started or not (its inotify reader runs from its creation)."""
    with contextlib.suppress(OSError, RuntimeError):
        observer.stop()
    if observer.is_alive():
        observer.join(2)
