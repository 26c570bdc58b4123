"""Shipping the run log to the log service, every event exactly once.

A run ships at its end the events its project's log holds that the service has not
acknowledged yet, oldest first, as JSON arrays of at most `MAX_BATCH_EVENTS` events and
`MAX_BATCH_BYTES` bytes (`POST /api/v1/ingest`, `X-P-Stream: <stream>`).

What was shipped is kept in `.toolkit/events.cursor.json`, one position per log service
and stream: the last acknowledged event (its run id and number) and the offset just after
its line. Rotation only renames files and drops the oldest one, so the position is found
again by looking for that event at that offset in each file; when the oldest file holding
it has been dropped, everything still in the log is newer and is shipped (what was
rotated away unshipped is lost, and the shipment says so).

Before a batch leaves, the cursor records it as pending (its last event and when it was
sent); once the service acknowledges it, the cursor moves past it. A run that fails or is
killed between the two leaves the mark behind, and the next run asks the service
(`SELECT COUNT(*) ... WHERE run_id = ... AND seq = ...`) whether the batch arrived before
sending it again: a batch the service stored is never sent twice, even when its
acknowledgement was lost. A batch is sent again only when the service says it does not
hold it.

Shipping never fails a run: every problem ends the shipment with a one-line reason in its
`ShipReport`, and the next run carries on from the cursor. One run ships at a time
(`.toolkit/ship.lock`); a run that finds another one shipping leaves its events to the
next run.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from toolkit.errors import ApiError, ToolkitError
from toolkit.fsutil import atomic_write
from toolkit.runlog.events import EventLog, complete_lines, utc_text

if TYPE_CHECKING:  # pragma: no cover
    from toolkit.clients.logs import LogsClient

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: shipments are not kept apart
    fcntl = None  # type: ignore[assignment]

log = logging.getLogger(__name__)

CURSOR_NAME = "events.cursor.json"
SHIP_LOCK_NAME = "ship.lock"
MAX_BATCH_EVENTS = 10_000
MAX_BATCH_BYTES = 2 * 1024 * 1024
MAX_LINE = 64 * 1024  # no event line is longer (the writer bounds every text)
SHIP_LOCK_WAIT = 2.0  # seconds a run waits for another run's shipment


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
        if (isinstance(run_id, str) and isinstance(seq, int) and isinstance(offset, int)
                and not isinstance(seq, bool) and offset > 0):
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


@dataclass
class Mark:
    """The cursor of one target (a log service and a stream)."""

    position: Position | None = None
    pending: Pending | None = None
    shipped: int = 0  # events acknowledged in all


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
        return Mark(Position.of(entry.get("position")), Pending.of(entry.get("pending")),
                    shipped if isinstance(shipped, int) and not isinstance(shipped, bool) else 0)

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
        }
        atomic_write(self.path, (json.dumps({"version": 1, "targets": targets}, indent=2,
                                            sort_keys=True) + "\n").encode("utf-8"))


@dataclass
class ShipReport:
    """What a shipment did: events acknowledged, and why it stopped early (None: it
    shipped everything it found)."""

    shipped: int = 0
    batches: int = 0
    problem: str | None = None
    lost: bool = False  # the last shipped event had been rotated out of the log
    skipped: int = 0  # lines of the log that are not events (never shipped)

    @property
    def ok(self) -> bool:
        return self.problem is None


@dataclass
class _Batch:
    lines: list[bytes] = field(default_factory=list)
    size: int = 2  # the brackets
    last: Position | None = None

    def body(self) -> bytes:
        return b"[" + b",".join(self.lines) + b"]"


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


def unshipped(files: list[Path], position: Position | None) -> tuple[list[tuple[bytes, Position]], int, bool]:
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
                data = complete_lines(handle.read())
        except OSError:
            continue
        cursor = 0
        while cursor < len(data):
            end = data.index(b"\n", cursor) + 1
            line = data[cursor:end].strip()
            cursor = end
            if not line:
                continue
            ident = _event_id(line)
            if ident is None:
                skipped += 1
            else:
                lines.append((line, Position(ident[0], ident[1], offset + end)))
    return lines, skipped, lost


def batches(lines: list[tuple[bytes, Position]], *, max_events: int = MAX_BATCH_EVENTS,
            max_bytes: int = MAX_BATCH_BYTES) -> Iterator[_Batch]:
    batch = _Batch()
    for line, after in lines:
        if batch.lines and (len(batch.lines) >= max_events
                            or batch.size + len(line) + 1 > max_bytes):
            yield batch
            batch = _Batch()
        batch.lines.append(line)
        batch.size += len(line) + 1
        batch.last = after
    if batch.lines:
        yield batch


def quoted(name: str) -> str:
    """A stream's name as a SQL identifier: quoted, so that it is not folded to lower case
    (Parseable looks streams up by their exact name; every query the toolkit writes names
    its stream this way)."""
    return '"' + name.replace('"', '""') + '"'


class Shipper:
    """Ships one project's run log to one stream of one log service."""

    def __init__(self, files: EventLog, cursor: Cursor, client: LogsClient, stream: str,
                 target: str, *, max_events: int = MAX_BATCH_EVENTS,
                 max_bytes: int = MAX_BATCH_BYTES, lock_wait: float = SHIP_LOCK_WAIT,
                 clock: Callable[[], dt.datetime] | None = None):
        self.files = files
        self.cursor = cursor
        self.client = client
        self.stream = stream
        self.target = target
        self.max_events = max_events
        self.max_bytes = max_bytes
        self.lock_wait = lock_wait
        self._now = clock or (lambda: dt.datetime.now(dt.UTC))

    def ship(self) -> ShipReport:
        report = ShipReport()
        with self._alone() as alone:
            if not alone:
                report.problem = ("another toolkit run is shipping the run log; these events "
                                  "go with the next run")
                return report
            try:
                self._ship(report)
            except ToolkitError as exc:
                report.problem = exc.message
            except OSError as exc:
                report.problem = ("the run log or its cursor cannot be read or written: "
                                  f"{exc.strerror or exc}")
        return report

    def _ship(self, report: ShipReport) -> None:
        mark = self.cursor.load(self.target)
        if mark.pending is not None:
            if self._arrived(mark.pending):
                mark.position, mark.pending = mark.pending.last, None
                self.cursor.save(self.target, mark)
            else:
                mark.pending = None  # not there: it is sent again below
        with self.files.reading() as files:
            lines, report.skipped, report.lost = unshipped(files, mark.position)
        for batch in batches(lines, max_events=self.max_events, max_bytes=self.max_bytes):
            assert batch.last is not None  # a batch holds at least one event
            mark.pending = Pending(batch.last, utc_text(self._now()))
            self.cursor.save(self.target, mark)
            self.client.ingest(self.stream, batch.body())
            report.batches += 1
            report.shipped += len(batch.lines)
            mark.shipped += len(batch.lines)
            mark.position, mark.pending = batch.last, None
            self.cursor.save(self.target, mark)

    def _arrived(self, pending: Pending) -> bool:
        """Whether the service holds the pending batch (its last event)."""
        try:
            sent = dt.datetime.fromisoformat(pending.sent_at)
        except ValueError:
            sent = self._now() - dt.timedelta(days=1)
        start = (sent - dt.timedelta(minutes=2)).astimezone(dt.UTC)
        end = self._now().astimezone(dt.UTC) + dt.timedelta(minutes=2)
        run_id = pending.last.run_id.replace("'", "''")
        sql = (f"SELECT COUNT(*) AS n FROM {quoted(self.stream)} "
               f"WHERE run_id = '{run_id}' AND seq = {int(pending.last.seq)}")
        try:
            answer = self.client.query(sql, start.strftime("%Y-%m-%dT%H:%M:%SZ"),
                                       end.strftime("%Y-%m-%dT%H:%M:%SZ"))
        except ApiError as exc:
            if exc.status == 400:  # no such stream (or no such column): nothing arrived
                return False
            raise
        count = answer.records[0].get("n") if answer.records else 0
        return isinstance(count, int | float) and count > 0

    @contextmanager
    def _alone(self) -> Iterator[bool]:
        """Hold `.toolkit/ship.lock` (waiting a little for another run's shipment)."""
        if fcntl is None:  # pragma: no cover - Windows
            yield True
            return
        self.files.folder.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.files.folder / SHIP_LOCK_NAME, os.O_RDWR | os.O_CREAT, 0o666)
        try:
            deadline = time.monotonic() + self.lock_wait
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except OSError:
                    if time.monotonic() >= deadline:
                        yield False
                        return
                    time.sleep(0.05)
            try:
                yield True
            finally:
                fcntl.flock(fd, fcntl.LOCK_UN)
        finally:
            os.close(fd)
