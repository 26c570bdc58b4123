"""How file events become batches: a save's last event ends the wait early, a write still
under way keeps it, a folder's own change is no event; what the OS does not report is
found by looking (`toolkit.watch.changes`)."""

from __future__ import annotations

import errno
import shutil
import threading
from pathlib import Path

from watchdog.events import DirModifiedEvent, FileClosedEvent, FileModifiedEvent, FileMovedEvent
from watchdog.observers import Observer

from toolkit.watch.changes import Coalescer, FolderWatch, Sweep, _Forward

LONG = 30.0  # a quiet time no test waits for


class Batches:
    def __init__(self) -> None:
        self.got: list[set[Path]] = []
        self.event = threading.Event()

    def __call__(self, batch: set[Path]) -> None:
        self.got.append(batch)
        self.event.set()


def test_a_closed_file_ends_the_wait_early():
    batches = Batches()
    coalescer = Coalescer(batches, quiet=LONG, settled=0.01, max_wait=LONG)
    coalescer.start()
    try:
        coalescer.add([Path("a.md")])
        coalescer.add([Path("a.md")], saved=True)
        assert batches.event.wait(5)
        assert batches.got == [{Path("a.md")}]
    finally:
        coalescer.stop()


def test_a_write_after_the_close_brings_back_the_quiet_wait():
    batches = Batches()
    coalescer = Coalescer(batches, quiet=LONG, settled=0.01, max_wait=LONG)
    coalescer.start()
    try:
        coalescer.add([Path("a.md")], saved=True)
        coalescer.add([Path("b.md")])  # the next file of the burst, still being written
        assert not batches.event.wait(0.3)
    finally:
        coalescer.stop()
    assert batches.got == []


def test_events_end_a_save_when_a_file_is_closed_or_renamed_into_place():
    seen: list[tuple[list[Path], bool]] = []
    forward = _Forward(lambda path: True, lambda paths, saved: seen.append((paths, saved)))
    forward.on_any_event(FileModifiedEvent("/p/a.md"))
    forward.on_any_event(FileClosedEvent("/p/a.md"))
    forward.on_any_event(FileMovedEvent("/p/.a.md.swp", "/p/a.md"))
    forward.on_any_event(DirModifiedEvent("/p"))  # an entry of /p changed: it has its own
    assert seen == [
        ([Path("/p/a.md")], False),
        ([Path("/p/a.md")], True),
        ([Path("/p/.a.md.swp"), Path("/p/a.md")], True),
    ]


class Paths:
    """A sink: the paths handed on, and an event for each hand-over."""

    def __init__(self) -> None:
        self.got: set[Path] = set()
        self.event = threading.Event()

    def __call__(self, paths: list[Path], *, saved: bool = False) -> None:
        self.got.update(paths)
        self.event.set()

    def wait_for(self, *paths: Path) -> None:
        while not set(paths) <= self.got:
            assert self.event.wait(10), f"not handed on: {set(paths) - self.got}"
            self.event.clear()


def test_the_sweep_finds_what_no_notification_said(tmp_path):
    """A change the OS never reported (here no observer runs at all) is found by looking,
    and a folder made again comes with itself and its files."""
    content = tmp_path / "content"
    content.mkdir()
    (content / "a.md").write_text("one")
    sink = Paths()
    sweep = Sweep(
        lambda: [content], lambda path: not path.name.startswith("."), sink, interval=0.01
    )
    sweep.mark()
    sweep.start()
    try:
        (content / "a.md").write_text("one, edited")
        (content / ".a.md.swp").write_text("swap")  # not wanted: never handed on
        sink.wait_for(content / "a.md")
        shutil.rmtree(content)
        sink.wait_for(content)
        content.mkdir()
        (content / "b.md").write_text("two")
        sink.wait_for(content / "b.md")
    finally:
        sweep.stop()
    assert content / ".a.md.swp" not in sink.got


def test_the_sweep_reports_nothing_the_last_build_already_read(tmp_path):
    (tmp_path / "a.md").write_text("one")
    sink = Paths()
    sweep = Sweep(lambda: [tmp_path], lambda path: True, sink, interval=0.01)
    sweep.mark()
    sweep.start()
    try:
        (tmp_path / "a.md").write_text("one, edited")
        sink.wait_for(tmp_path / "a.md")
        sink.got.clear()
        sweep.mark()  # a build began: it reads the edit
        (tmp_path / "b.md").write_text("two")
        sink.wait_for(tmp_path / "b.md")
    finally:
        sweep.stop()
    assert tmp_path / "a.md" not in sink.got


class RefusingObserver(Observer):  # type: ignore[misc,valid-type]
    """The OS's observer when its watch limit is reached: it cannot start."""

    def start(self) -> None:
        raise OSError(errno.EMFILE, "inotify instance limit reached")


def test_a_folder_the_os_will_not_watch_is_polled_and_said_why(tmp_path):
    sink = Paths()
    refused: list[tuple[Path, str]] = []
    folders = FolderWatch(
        lambda path: True,
        sink,
        lambda folder, exc: refused.append((folder, exc.strerror or "")),
        observer=RefusingObserver,
    )
    assert folders.add(tmp_path)
    folders.start()  # refused at the start: polled instead
    try:
        (tmp_path / "a.md").write_text("one")
        sink.wait_for(tmp_path / "a.md")
        later = tmp_path / "later"
        later.mkdir()
        assert folders.add(later)  # refused while running: polled instead
        (later / "b.md").write_text("two")
        sink.wait_for(later / "b.md")
    finally:
        folders.stop()
    assert refused == [
        (tmp_path, "inotify instance limit reached"),
        (later, "inotify instance limit reached"),
    ]
