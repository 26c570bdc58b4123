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
sent); once the service acknowledges it, the cursor moves past it. A clear refusal (a
4xx, or a 503: the service did not take the request) clears the mark; any other failure
(no answer, a 500, 502 or 504) leaves it, as does a run killed meanwhile, and the next run
asks the service (`SELECT COUNT(*) FROM "<stream>" WHERE run_id = ... AND seq = ...`)
whether the batch arrived before sending anything. The answer is one of three:

* there: the cursor moves past the batch (its acknowledgement was lost);
* clearly absent: the count is 0 (or the stream, or its `run_id`/`seq` fields, do not
  exist) and the batch left more than `SETTLE` seconds ago, so a request the client gave
  up on can no longer be stored late: the batch is sent again;
* unknown: anything else (an error, a 0 while the batch may still be stored): nothing is
  sent, the shipment ends saying so, and a later run asks again.

So a batch the service stored is never sent twice, even when its acknowledgement was
lost, the service stored it after the client gave up, or the query for it failed.

A batch the service refuses for its content (a 400 `Invalid Request: ...`, e.g. a field
whose type differs from the stream's) is split in halves until the events it refuses
are alone; each of those is set aside in `.toolkit/refused-events.jsonl` (kept, never
sent again, said once in the shipment's report) and the rest ship. Once a shipment has
made progress, it spends at most `MAX_REFUSED` refused requests; the rest go with the
next run.

A batch the service keeps failing on (it answers 500, or another 5xx that is not a
gateway's or an outage's 502, 503 or 504) would otherwise be asked about and sent again
by every run, and nothing after it would ever ship. The cursor counts those failures of
the batch (`Stuck`, with its last event, so later events are never sent with it again);
after `MAX_FAILED_SENDS` of them, each sent only once its absence is settled, its events
are set aside like refused ones (kept, never sent again, said once) and the rest ship.
An outage (no answer, 502, 503, 504) or a refusal of the request counts nothing: it is
not the batch's fault.

Shipping never fails a run: every problem ends the shipment with a one-line reason in its
`ShipReport`, and the next run carries on from the cursor. One run ships at a time
(`.toolkit/ship.lock`); a run that finds another one shipping leaves its events to the
next run.
"""

from __future__ import annotations

import datetime as dt
import logging
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING

from toolkit import oslock
from toolkit.errors import ApiError, NoAnswerError, StatusError, ToolkitError
from toolkit.redact import clipped
from toolkit.runlog.backlog import (
    MAX_BATCH_BYTES,
    MAX_BATCH_EVENTS,
    Batch,
    Cursor,
    Entry,
    Mark,
    Pending,
    Stuck,
    batches,
    body_of,
    unshipped,
)
from toolkit.runlog.events import EventLog, utc_text

if TYPE_CHECKING:  # pragma: no cover
    from toolkit.clients.logs import LogsClient

log = logging.getLogger(__name__)

REFUSED_NAME = "refused-events.jsonl"
SHIP_LOCK_NAME = "ship.lock"
SETTLE = 120.0  # seconds after which a batch the service does not hold will not arrive late
MAX_REFUSED = 100  # refused requests one shipment spends finding the events refused
MAX_FAILED_SENDS = 3  # sends of one batch the service fails on before it is set aside
OUTAGE = frozenset({502, 503, 504})  # 5xx of a gateway or a service that is down
# The beginnings of a 400 that refuses the events themselves (Parseable's `PostError`s for
# a body it cannot store), as opposed to the request (its stream name, its headers).
CONTENT_REFUSALS = ("Invalid Request", "Json deserialize error", "Could not deserialize")
SHIP_LOCK_WAIT = 2.0  # seconds a run waits for another run's shipment


@dataclass
class ShipReport:
    """What a shipment did: events acknowledged, and why it stopped early (None: it
    shipped everything it found)."""

    shipped: int = 0
    batches: int = 0
    problem: str | None = None
    lost: bool = False  # the last shipped event had been rotated out of the log
    skipped: int = 0  # lines of the log that are not events (never shipped)
    set_aside: int = 0  # events the service refused, kept in refused-events.jsonl
    refusal: str | None = None  # why the service refused the first of them

    @property
    def ok(self) -> bool:
        return self.problem is None


def _answer_text(exc: StatusError) -> str:
    try:
        return exc.response.text.strip() if exc.response is not None else ""
    except Exception:  # an answer whose body cannot be read says nothing more
        return ""


def refuses_content(exc: ApiError) -> bool:
    """Whether an ingest failure refuses the events sent (not the request): a 400 in
    Parseable's words for a body it cannot store."""
    return (
        isinstance(exc, StatusError)
        and exc.status == 400
        and _answer_text(exc).startswith(CONTENT_REFUSALS)
    )


def failed_on_batch(exc: ApiError) -> bool:
    """Whether the service answered an ingest with a failure of its own while handling
    it (a 5xx that is not a gateway's or an outage's): the batch may be what it fails on."""
    status = exc.status
    return (
        isinstance(exc, StatusError)
        and status is not None
        and status >= 500
        and status not in OUTAGE
    )


def certainly_not_stored(exc: ApiError) -> bool:
    """Whether a failed ingest certainly stored nothing: a 4xx refuses the request before
    anything is written, and a 503 comes before the request is handled (Parseable's
    shutdown and resource checks, a proxy with no server behind it)."""
    if isinstance(exc, NoAnswerError):
        return not exc.maybe_sent
    status = exc.status
    return status is not None and (400 <= status < 500 or status == 503)


def quoted(name: str) -> str:
    """A stream's name as a SQL identifier: quoted, so that it is not folded to lower case
    (Parseable looks streams up by their exact name; every query the toolkit writes names
    its stream this way)."""
    return '"' + name.replace('"', '""') + '"'


class Shipper:
    """Ships one project's run log to one stream of one log service."""

    def __init__(
        self,
        files: EventLog,
        cursor: Cursor,
        client: LogsClient,
        stream: str,
        target: str,
        *,
        max_events: int = MAX_BATCH_EVENTS,
        max_bytes: int = MAX_BATCH_BYTES,
        lock_wait: float = SHIP_LOCK_WAIT,
        clock: Callable[[], dt.datetime] | None = None,
        settle: float = SETTLE,
        max_refused: int = MAX_REFUSED,
    ):
        self.files = files
        self.cursor = cursor
        self.client = client
        self.stream = stream
        self.target = target
        self.max_events = max_events
        self.max_bytes = max_bytes
        self.lock_wait = lock_wait
        self.settle = settle
        self.max_refused = max_refused
        self.refused_path = files.folder / REFUSED_NAME
        self._now = clock or (lambda: dt.datetime.now(dt.UTC))

    def ship(self) -> ShipReport:
        report = ShipReport()
        with self._alone() as alone:
            if not alone:
                report.problem = (
                    "another toolkit run is shipping the run log; these events go with the next run"
                )
                return report
            try:
                self._ship(report)
            except ToolkitError as exc:
                report.problem = exc.message
            except OSError as exc:
                report.problem = (
                    f"the run log or its cursor cannot be read or written: {exc.strerror or exc}"
                )
        return report

    def _ship(self, report: ShipReport) -> None:
        mark = self.cursor.load(self.target)
        if mark.pending is not None:
            arrived, why = self._arrived(mark.pending)
            if arrived is None:
                report.problem = (
                    f"whether the batch sent at {mark.pending.sent_at} reached "
                    f"the log service is not known yet ({why}); nothing is sent "
                    "again until it is (a later run asks again)"
                )
                return
            if arrived:
                mark.position = mark.pending.last
                mark.stuck = None
            mark.pending = None  # clearly absent: it is sent again below
            self.cursor.save(self.target, mark)
        with self.files.reading() as files:
            lines, report.skipped, report.lost = unshipped(files, mark.position)
        lines = self._unstick(lines, mark, report)
        refused = 0
        for batch in self._batches(lines, mark.stuck):
            parts = [batch.entries]  # a stack: the part to send next is last
            while parts:
                part = parts.pop()
                last = part[-1][1]
                mark.pending = Pending(last, utc_text(self._now()))
                self.cursor.save(self.target, mark)
                try:
                    self.client.ingest(self.stream, body_of(part))
                except ApiError as exc:
                    if failed_on_batch(exc):
                        self._failed(mark, part, exc)
                    if not certainly_not_stored(exc):
                        raise  # the mark stays: the next run asks before sending again
                    mark.pending = None
                    self.cursor.save(self.target, mark)
                    if not refuses_content(exc):
                        raise
                    refused += 1
                    if len(part) == 1:
                        self._set_aside(part[0][0], exc, report)
                        mark.position = last
                        self.cursor.save(self.target, mark)
                        continue
                    if refused >= self.max_refused and (report.set_aside or report.shipped):
                        report.problem = (
                            f"the log service refused {refused} requests of "
                            "events it cannot store; the rest go with the "
                            "next run"
                        )
                        return
                    half = len(part) // 2
                    parts += [part[half:], part[:half]]
                    continue
                report.batches += 1
                report.shipped += len(part)
                mark.shipped += len(part)
                mark.position, mark.pending, mark.stuck = last, None, None
                self.cursor.save(self.target, mark)

    def _batches(self, lines: list[Entry], stuck: Stuck | None) -> Iterator[Batch]:
        """The batches of `lines`; with a stuck batch, its events alone come first (no
        later event is sent with them again)."""
        if stuck is not None:
            ends = next(
                (
                    index
                    for index, (_, after) in enumerate(lines)
                    if (after.run_id, after.seq) == (stuck.last.run_id, stuck.last.seq)
                ),
                None,
            )
            if ends is not None:
                yield Batch(lines[: ends + 1])
                lines = lines[ends + 1 :]
        yield from batches(lines, max_events=self.max_events, max_bytes=self.max_bytes)

    def _failed(self, mark: Mark, part: list[Entry], exc: ApiError) -> None:
        """Count a failure of the service on `part` (the cursor is saved by the caller's
        next step, or here when the shipment ends with it)."""
        last = part[-1][1]
        same = mark.stuck is not None and mark.stuck.last == last
        failures = mark.stuck.failures + 1 if same and mark.stuck is not None else 1
        answer = (
            clipped(exc.message.splitlines()[0], 200) if exc.message else f"status {exc.status}"
        )
        mark.stuck = Stuck(last, failures, answer)
        self.cursor.save(self.target, mark)

    def _unstick(self, lines: list[Entry], mark: Mark, report: ShipReport) -> list[Entry]:
        """`lines` without the stuck batch once the service failed on it
        `MAX_FAILED_SENDS` times: its events are set aside and the cursor moves past them."""
        stuck = mark.stuck
        if stuck is None or stuck.failures < MAX_FAILED_SENDS:
            return lines
        ends = next(
            (
                index
                for index, (_, after) in enumerate(lines)
                if (after.run_id, after.seq) == (stuck.last.run_id, stuck.last.seq)
            ),
            None,
        )
        if ends is None:  # not in the log any more (rotated away, or shipped meanwhile)
            mark.stuck = None
            self.cursor.save(self.target, mark)
            return lines
        reason = f"it failed {stuck.failures} times on them: {stuck.answer}"
        self._set_aside_lines([line for line, _ in lines[: ends + 1]], reason, report)
        mark.position, mark.stuck = stuck.last, None
        self.cursor.save(self.target, mark)
        return lines[ends + 1 :]

    def _set_aside(self, line: bytes, exc: ApiError, report: ShipReport) -> None:
        """Keep an event the service refused in `refused-events.jsonl` (before the cursor
        moves past it, so it is never lost)."""
        text = _answer_text(exc) if isinstance(exc, StatusError) else ""
        self._set_aside_lines([line], clipped(text.splitlines()[0], 200) if text else None, report)

    def _set_aside_lines(self, lines: list[bytes], reason: str | None, report: ShipReport) -> None:
        """Keep events in `refused-events.jsonl` (fsynced before the cursor moves past
        them, so none is lost), and say so in `report`."""
        self.refused_path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.refused_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o666)
        try:
            view = memoryview(b"".join(line + b"\n" for line in lines))
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        finally:
            os.close(fd)
        report.set_aside += len(lines)
        if report.refusal is None:
            report.refusal = reason

    def _arrived(self, pending: Pending) -> tuple[bool | None, str]:
        """Whether the service holds the pending batch (its last event): True, False
        (clearly absent), or None (unknown), with why when it is not known."""
        now = self._now()
        try:
            sent = dt.datetime.fromisoformat(pending.sent_at)
        except ValueError:
            sent = now - dt.timedelta(days=1)
        if sent.tzinfo is None:
            sent = sent.replace(tzinfo=dt.UTC)
        settled = (now - sent).total_seconds() >= self.settle
        start = (sent - dt.timedelta(minutes=10)).astimezone(dt.UTC)
        end = now.astimezone(dt.UTC) + dt.timedelta(minutes=10)
        run_id = pending.last.run_id.replace("'", "''")
        sql = (
            f"SELECT COUNT(*) AS n FROM {quoted(self.stream)} "
            f"WHERE run_id = '{run_id}' AND seq = {int(pending.last.seq)}"
        )
        try:
            answer = self.client.query(
                sql, start.strftime("%Y-%m-%dT%H:%M:%SZ"), end.strftime("%Y-%m-%dT%H:%M:%SZ")
            )
        except ApiError as exc:
            if exc.status != 400:
                return None, exc.message
            # The stream, or the fields of the toolkit's events, may not exist (yet).
            if self._could_hold_events():
                return None, exc.message
            absent = "the stream does not hold the toolkit's events"
        else:
            count = answer.records[0].get("n") if len(answer.records) == 1 else None
            if not isinstance(count, int | float) or isinstance(count, bool):
                return None, "the service's count is not a number"
            if count > 0:
                return True, ""
            absent = "the service does not hold it"
        if not settled:
            return (
                None,
                f"{absent} yet, and it may still be stored: it left less than "
                f"{self.settle:g} s ago",
            )
        return False, ""

    def _could_hold_events(self) -> bool:
        """Whether the stream exists with the fields every event has (`run_id`, `seq`)."""
        if self.stream not in self.client.streams():
            return False
        fields = self.client.schema(self.stream).get("fields")
        names = {item.get("name") for item in fields or [] if isinstance(item, dict)}
        return {"run_id", "seq"} <= names

    @contextmanager
    def _alone(self) -> Iterator[bool]:
        """Hold `.toolkit/ship.lock` (waiting a little for another run's shipment)."""
        self.files.folder.mkdir(parents=True, exist_ok=True)
        fd = oslock.open_lock_file(self.files.folder / SHIP_LOCK_NAME)
        try:
            if not oslock.lock_within(fd, self.lock_wait, poll=0.05):
                yield False
                return
            try:
                yield True
            finally:
                oslock.unlock(fd)
        finally:
            os.close(fd)
