"""What is left to ship of the run log: the cursor and the events after it.

`.toolkit/events.cursor.json` keeps, per log service and stream, a `Mark`: the last
event the service acknowledged (`Position`: its run id, its number and the offset just
after its line), a batch sent but not yet acknowledged (`Pending`), a batch the service
keeps failing on (`Stuck`) and how many events were shipped in all. `unshipped` reads the
events after a position from the log's files (oldest first, following rotation) and
`batches` cuts them into bodies the service takes. `toolkit.runlog.shipping` decides what
to send and when.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from toolkit.fsutil import atomic_write
from toolkit.runlog.events import split_lines

CURSOR_NAME = "events.cursor.json"
MAX_BATCH_EVENTS = 10_000
MAX_BATCH_BYTES = 2 * 1024 * 1024
MAX_LINE = 64 * 1024  # no event line is longer (the writer bounds every text)


@dataclass(frozen=True)
class Position:
    """Where shipping stands: the last acknowledged event and the offset after its line."""

    run_id: str
    seq: int
    offset: int

    def as_json(self) -> dict[str, Any]:
        return {"run_id": self.run_id, "seq": self.seq, "offset": self.offset}

    @classmethod
    def of(cls, data: Any) -> Position | None:
        if not isinstance(data, dict):
            return None
        run_id, seq, offset = data.get("run_id"), data.get("seq"), data.get("offset")
        if (
            isinstance(run_id, str)
            and isinstance(seq, int)
            and isinstance(offset, int)
            and not isinstance(seq, bool)
            and offset > 0
        ):
            return cls(run_id, seq, offset)
        return None


@dataclass(frozen=True)
class Pending:
    """A batch sent without an acknowledgement yet: its last event, when it left."""

    last: Position
    sent_at: str  # RFC 3339

    def as_json(self) -> dict[str, Any]:
        return {"last": self.last.as_json(), "sent_at": self.sent_at}

    @classmethod
    def of(cls, data: Any) -> Pending | None:
        if not isinstance(data, dict) or not isinstance(data.get("sent_at"), str):
            return None
        last = Position.of(data.get("last"))
        return cls(last, data["sent_at"]) if last is not None else None


@dataclass(frozen=True)
class Stuck:
    """A batch the service failed on: its last event, how many sends failed, and how the
    last one was answered."""

    last: Position
    failures: int
    answer: str

    def as_json(self) -> dict[str, Any]:
        return {"last": self.last.as_json(), "failures": self.failures, "answer": self.answer}

    @classmethod
    def of(cls, data: Any) -> Stuck | None:
        if not isinstance(data, dict):
            return None
        last, failures, answer = (
            Position.of(data.get("last")),
            data.get("failures"),
            data.get("answer"),
        )
        if last is None or not isinstance(failures, int) or isinstance(failures, bool):
            return None
        return cls(last, failures, answer if isinstance(answer, str) else "")


@dataclass
class Mark:
    """The cursor of one target (a log service and a stream)."""

    position: Position | None = None
    pending: Pending | None = None
    shipped: int = 0  # events acknowledged in all
    stuck: Stuck | None = None  # the batch after `position`, when the service fails on it


class Cursor:
    """`.toolkit/events.cursor.json`: a `Mark` per target, written atomically (fsync and
    rename) each time it changes."""

    def __init__(self, path: Path):
        self.path = path

    def load(self, target: str) -> Mark:
        try:
            data = json.loads(self.path.read_bytes())
            entry = data["targets"][target]
        except (OSError, ValueError, KeyError, TypeError):
            return Mark()
        if not isinstance(entry, dict):
            return Mark()
        shipped = entry.get("shipped")
        return Mark(
            Position.of(entry.get("position")),
            Pending.of(entry.get("pending")),
            shipped if isinstance(shipped, int) and not isinstance(shipped, bool) else 0,
            Stuck.of(entry.get("stuck")),
        )

    def save(self, target: str, mark: Mark) -> None:
        try:
            data = json.loads(self.path.read_bytes())
            targets = data["targets"] if isinstance(data.get("targets"), dict) else {}
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            targets = {}
        targets[target] = {
            "position": mark.position.as_json() if mark.position else None,
            "pending": mark.pending.as_json() if mark.pending else None,
            "shipped": mark.shipped,
            "stuck": mark.stuck.as_json() if mark.stuck else None,
        }
        atomic_write(
            self.path,
            (
                json.dumps({"version": 1, "targets": targets}, indent=2, sort_keys=True) + "\n"
            ).encode("utf-8"),
        )


Entry = tuple[bytes, Position]  # an event's line, and the position just after it


@dataclass
class Batch:
    entries: list[Entry] = field(default_factory=list)
    size: int = 2  # the brackets

    @property
    def lines(self) -> list[bytes]:
        return [line for line, _ in self.entries]

    @property
    def last(self) -> Position | None:
        return self.entries[-1][1] if self.entries else None

    def body(self) -> bytes:
        return body_of(self.entries)


def body_of(entries: list[Entry]) -> bytes:
    return b"[" + b",".join(line for line, _ in entries) + b"]"


def _event_id(line: bytes) -> tuple[str, int] | None:
    try:
        event = json.loads(line)
    except (ValueError, RecursionError):
        return None
    if not isinstance(event, dict):
        return None
    run_id, seq = event.get("run_id"), event.get("seq")
    if isinstance(run_id, str) and isinstance(seq, int) and not isinstance(seq, bool):
        return run_id, seq
    return None


def _line_before(path: Path, offset: int) -> bytes | None:
    """The line of `path` that ends just before `offset`, or None."""
    try:
        with open(path, "rb") as handle:
            start = max(0, offset - MAX_LINE)
            handle.seek(start)
            window = handle.read(offset - start)
    except OSError:
        return None
    if len(window) != offset - start or not window.endswith(b"\n"):
        return None
    line_start = window.rfind(b"\n", 0, len(window) - 1) + 1
    if line_start == 0 and start > 0:
        return None
    return window[line_start:-1]


def locate(files: list[Path], position: Position) -> int | None:
    """The index (in `files`, oldest first) of the file whose line ending at the
    position's offset is the position's event; None when no file holds it."""
    for index in range(len(files) - 1, -1, -1):
        line = _line_before(files[index], position.offset)
        if line is not None and _event_id(line) == (position.run_id, position.seq):
            return index
    return None


def unshipped(
    files: list[Path], position: Position | None
) -> tuple[list[tuple[bytes, Position]], int, bool]:
    """The events after `position`, oldest first, each with the position after it; how
    many lines were not events (left out: the service would refuse them); and whether the
    position was lost to rotation."""
    start_index, start_offset, lost = 0, 0, False
    if position is not None:
        found = locate(files, position)
        if found is None:
            lost = True
        else:
            start_index, start_offset = found, position.offset
    lines: list[tuple[bytes, Position]] = []
    skipped = 0
    for index in range(start_index, len(files)):
        offset = start_offset if index == start_index else 0
        try:
            with open(files[index], "rb") as handle:
                handle.seek(offset)
                data = handle.read()
        except OSError:
            continue
        for end, line in split_lines(data):
            ident = _event_id(line)
            if ident is None:
                skipped += 1
            else:
                lines.append((line, Position(ident[0], ident[1], offset + end)))
    return lines, skipped, lost


def batches(
    lines: list[Entry], *, max_events: int = MAX_BATCH_EVENTS, max_bytes: int = MAX_BATCH_BYTES
) -> Iterator[Batch]:
    batch = Batch()
    for line, after in lines:
        if batch.entries and (
            len(batch.entries) >= max_events or batch.size + len(line) + 1 > max_bytes
        ):
            yield batch
            batch = Batch()
        batch.entries.append((line, after))
        batch.size += len(line) + 1
    if batch.entries:
        yield batch
