"""File events from watchdog, coalesced into batches of changed paths.

Editors save in bursts (write a temporary file, rename it over the old one, touch a
backup): each burst should cause one rebuild. A batch is handed on once no new event has
come for `quiet` seconds, or `max_wait` after its first event when events keep coming.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable
from pathlib import Path

from watchdog.events import FileSystemEvent, FileSystemEventHandler
from watchdog.observers import Observer

QUIET = 0.05  # an editor's save burst takes a few ms; a typist's saves come seconds apart
MAX_WAIT = 1.0


class Coalescer:
    """Collects paths; calls `handle(batch)` on its own thread once they settle."""

    def __init__(self, handle: Callable[[set[Path]], None], *, quiet: float = QUIET,
                 max_wait: float = MAX_WAIT):
        self.handle = handle
        self.quiet = quiet
        self.max_wait = max_wait
        self._pending: set[Path] = set()
        self._first = 0.0
        self._last = 0.0
        self._cond = threading.Condition()
        self._stopped = False
        self._thread = threading.Thread(target=self._run, name="watch-coalescer", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def add(self, paths: Iterable[Path]) -> None:
        with self._cond:
            now = time.monotonic()
            if not self._pending:
                self._first = now
            self._pending.update(paths)
            self._last = now
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
                due = min(self._last + self.quiet, self._first + self.max_wait)
                if now < due:
                    self._cond.wait(due - now)
                    continue
                batch, self._pending = self._pending, set()
            self.handle(batch)


class _Forward(FileSystemEventHandler):
    def __init__(self, accept: Callable[[Path], bool], sink: Callable[[Iterable[Path]], None]):
        self.accept = accept
        self.sink = sink

    def on_any_event(self, event: FileSystemEvent) -> None:
        if event.event_type in ("opened", "closed_no_write"):
            return  # reading a file changes nothing
        paths = [Path(str(event.src_path))]
        if getattr(event, "dest_path", ""):
            paths.append(Path(str(event.dest_path)))
        wanted = [p for p in paths if self.accept(p)]
        if wanted:
            self.sink(wanted)


class FolderWatch:
    """A watchdog observer on some folders; more can be added while it runs (a folder that
    did not exist at the start, like a new `templates/`)."""

    def __init__(self, accept: Callable[[Path], bool], sink: Callable[[Iterable[Path]], None]):
        self._handler = _Forward(accept, sink)
        self._observer = Observer()
        self._observer.daemon = True
        self._watched: set[Path] = set()

    def add(self, folder: Path, *, recursive: bool = True) -> bool:
        """Watch `folder` if it exists and is not watched yet; True when newly added."""
        if folder in self._watched or not folder.is_dir():
            return False
        self._observer.schedule(self._handler, str(folder), recursive=recursive)
        self._watched.add(folder)
        return True

    def start(self) -> None:
        self._observer.start()

    def stop(self) -> None:
        self._observer.stop()
        if self._observer.is_alive():
            self._observer.join(2)
