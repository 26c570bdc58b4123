"""File events from watchdog, coalesced into batches of changed paths.

Editors save in bursts (write a temporary file, rename it over the old one, touch a
backup): each burst should cause one rebuild. A batch is handed on once no new event has
come for `quiet` seconds, or `max_wait` after its first event when events keep coming.

A save ends with the file closed after writing, or renamed into place: after such an event
the batch waits only `settled` seconds for the rest of the burst, not `quiet`, so the page
reloads sooner; any other event (a write still under way) brings back the longer wait.
"""

from __future__ import annotations

import contextlib
import stat
import threading
import time
from collections.abc import Callable, Iterable
from pathlib import Path

from watchdog.events import FileSystemEvent, FileSystemEventHandler
from watchdog.observers import Observer
from watchdog.observers.api import BaseObserver
from watchdog.observers.polling import PollingObserver

QUIET = 0.05  # an editor's save burst takes a few ms; a typist's saves come seconds apart
SETTLED = 0.02  # after a file was closed or renamed into place: the end of a save
MAX_WAIT = 1.0
SAVED = ("closed", "moved")  # watchdog's event types that end a save
POLL_SECONDS = 0.25  # how often a folder made anew is looked at (see `FolderWatch`)


class Coalescer:
    """Collects paths; calls `handle(batch)` on its own thread once they settle."""

    def __init__(self, handle: Callable[[set[Path]], None], *, quiet: float = QUIET,
                 settled: float = SETTLED, max_wait: float = MAX_WAIT):
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
    does not depend on the OS's notifications for a name that had another folder. Each
    folder has an observer of its own."""

    def __init__(self, accept: Callable[[Path], bool], sink: Sink):
        self._handler = _Forward(accept, sink)
        self._running = False
        self._mutex = threading.Lock()
        # folder -> (its observer, its identity when the watch was made)
        self._watched: dict[Path, tuple[BaseObserver, tuple[int, int]]] = {}

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
            observer = Observer() if known is None else PollingObserver(timeout=POLL_SECONDS)
            observer.daemon = True
            observer.schedule(self._handler, str(folder), recursive=recursive)
            if self._running:
                observer.start()
            self._watched[folder] = (observer, identity)
        return True

    def watching(self, folder: Path) -> bool:
        """Whether `folder` was watched at some point (it may be gone since)."""
        with self._mutex:
            return folder in self._watched

    def start(self) -> None:
        with self._mutex:
            self._running = True
            for observer, _ in self._watched.values():
                observer.start()

    def stop(self) -> None:
        with self._mutex:
            self._running = False
            for observer, _ in self._watched.values():
                _end(observer)


def _end(observer: BaseObserver) -> None:
    """Stop an observer, started or not (its inotify reader runs from its creation)."""
    with contextlib.suppress(OSError, RuntimeError):
        observer.stop()
    if observer.is_alive():
        observer.join(2)
