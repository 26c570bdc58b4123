"""How file events become batches: a save's last event ends the wait early, a write still
under way keeps it, a folder's own change is no event (`toolkit.watch.changes`)."""

from __future__ import annotations

import threading
from pathlib import Path

from watchdog.events import DirModifiedEvent, FileClosedEvent, FileModifiedEvent, FileMovedEvent

from toolkit.watch.changes import Coalescer, _Forward

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
    assert seen == [([Path("/p/a.md")], False), ([Path("/p/a.md")], True),
                    ([Path("/p/.a.md.swp"), Path("/p/a.md")], True)]
