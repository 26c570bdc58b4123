"""One run of a command, recorded: the one place a command opens its event writer.

    with recorded(config, "publish") as run:
        client = forem_client(config, on_wait=run.wait, on_request=run.request)
        ...
        run.outcome = "failed" if result.failed else "ok"

The run writes a `run`/`start` event, then whatever the command reports (`run.event`,
the client's requests through `run.request`, pauses through `run.wait`), then a
`run`/`end` event with its outcome and duration: `ok`, `failed` (the command ran and
something failed: exit 1), or `error` (an exception ended it; an `error` event says
which). When `[logs] base_url` is set, the run then ships the project's unshipped events
(`shipping.Shipper`); what the shipment did is itself an event, shipped by the next run.
A shipment that fails is reported in one line (a warning in the log) and never fails the
run; events the service refused are said once, in the run that set them aside. Without a log service, the run only appends to `.toolkit/events.jsonl`.

Commands that live longer than one call (a watch session) use `Run.start()` and
`Run.finish()` themselves.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING

from toolkit import __version__
from toolkit.config import Config, Secret
from toolkit.errors import ToolkitError
from toolkit.redact import redact_url
from toolkit.runlog.events import EventLog, EventWriter, Scrubber, Value

if TYPE_CHECKING:  # pragma: no cover
    from toolkit.clients.base import RequestReport
    from toolkit.runlog.shipping import ShipReport

log = logging.getLogger(__name__)

# Seconds a shipment waits for the log service (to connect, and for each answer): an
# unreachable service costs the end of a run at most twice this (one retry of a
# connection that never opened), never a hung CI job.
SHIP_TIMEOUT = 5.0


def config_secrets(config: Config) -> list[str]:
    """Every secret of the configuration, for the writer to keep out of events."""
    found = []
    for section in (config.forem, config.archive, config.license, config.logs):
        for value in vars(section).values():
            if isinstance(value, Secret):
                found.append(value.reveal())
    return found


def target_of(config: Config) -> str:
    """The cursor's name for where this project ships: the service (without credentials)
    and the stream."""
    return f"{redact_url(config.logs.base_url or '')} {config.logs.stream}"


@dataclass
class RunSummary:
    """How a run ended, for its `run`/`end` event."""

    outcome: str
    duration_ms: float


class Run:
    """The events of one command run, written as they happen."""

    def __init__(self, config: Config, command: str, *, files: EventLog | None = None):
        self.config = config
        self.command = command
        # `secrets.token_hex(8)` without importing `secrets` (and `hmac`, `random`, `base64`)
        # on every command: the same 8 bytes of os.urandom.
        self.id = os.urandom(8).hex()
        self.files = files or EventLog(config.state_dir)
        self.writer = EventWriter(
            self.files, self.id, command, __version__, scrub=Scrubber(config_secrets(config))
        )
        self.outcome = "ok"  # the command sets "failed" when it ran and something failed
        self.shipment: ShipReport | None = None
        self._started = time.perf_counter()
        self._finished = False

    # -- what a command reports ------------------------------------------------------------

    def event(self, event: str, **fields: Value) -> None:
        self.writer.emit(event, **fields)

    def request(self, report: RequestReport, *, writer: str | None = None) -> None:
        """The request listener of the run's clients: one event per attempt (`writer`:
        in a team's repository, whose key the client holds)."""
        self.writer.emit(
            "request",
            method=report.method,
            route=report.route,
            status=report.status,
            duration_ms=report.duration_ms,
            retries=report.retries,
            message=report.error,
            writer=writer,
        )

    def wait(self, seconds: float, reason: str, *, writer: str | None = None) -> None:
        """The wait listener of the run's clients: one event per pause."""
        self.writer.emit("wait", wait_ms=round(seconds * 1000, 3), reason=reason, writer=writer)

    def listeners_of(
        self, writer: str | None
    ) -> tuple[Callable[[float, str], None], Callable[[RequestReport], None]]:
        """The wait and request listeners of a team's writer's client (their events name
        them); with `writer` None, `wait` and `request` as they are."""
        if writer is None:
            return self.wait, self.request
        return (
            lambda seconds, reason: self.wait(seconds, reason, writer=writer),
            lambda report: self.request(report, writer=writer),
        )

    # -- its life ---------------------------------------------------------------------------

    def start(self) -> Run:
        self._started = time.perf_counter()
        self.writer.emit("run", action="start")
        return self

    def finish(self, error: BaseException | None = None) -> RunSummary:
        """Record how the run ended (`error`: what ended it), then ship when a log service
        is configured. Only the first call counts."""
        if self._finished:
            return RunSummary(self.outcome, 0.0)
        self._finished = True
        if error is not None:
            self.outcome = "error"
            if isinstance(error, ToolkitError):
                self.writer.emit("error", error=type(error).__name__, message=error.message)
            elif isinstance(error, KeyboardInterrupt):
                self.outcome = "interrupted"
            else:  # an unexpected exception's text is not known to be safe: its kind only
                self.writer.emit("error", error=type(error).__name__)
        summary = RunSummary(self.outcome, round((time.perf_counter() - self._started) * 1000, 3))
        self.writer.emit(
            "run", action="end", outcome=summary.outcome, duration_ms=summary.duration_ms
        )
        if self.config.logs.base_url is not None:
            self.ship()
        self.files.close()
        return summary

    def ship(self) -> ShipReport:
        """Ship the project's unshipped events; a failure is a warning, never an error."""
        from toolkit.clients import logs_client
        from toolkit.clients.base import RetryPolicy
        from toolkit.runlog.backlog import CURSOR_NAME, Cursor
        from toolkit.runlog.shipping import Shipper, ShipReport

        try:
            client = logs_client(
                self.config,
                on_request=self.request,
                retry=RetryPolicy(attempts=2, backoff=0.2),
                timeout=SHIP_TIMEOUT,
            )
        except ToolkitError as exc:
            report = ShipReport(problem=exc.message)
        else:
            with client:
                shipper = Shipper(
                    self.files,
                    Cursor(self.config.state_dir / CURSOR_NAME),
                    client,
                    self.config.logs.stream,
                    target_of(self.config),
                )
                try:
                    report = shipper.ship()
                except Exception as exc:  # a fault of shipping never fails the run
                    log.debug("shipping the run log failed", exc_info=True)
                    report = ShipReport(
                        problem=f"shipping failed unexpectedly ({type(exc).__name__})"
                    )
        self.shipment = report
        if report.problem is not None:
            log.warning("the run log was not shipped: %s", report.problem)
        if report.skipped:
            log.warning(
                "%d line(s) of the run log are not events and were not shipped", report.skipped
            )
        if report.set_aside:
            from toolkit.runlog.shipping import REFUSED_NAME

            log.warning(
                "the log service refused %d event(s) of the run log (%s): they are kept "
                "in %s and not sent again; the others were shipped",
                report.set_aside,
                report.refusal or "no reason given",
                self.config.relative(self.config.state_dir / REFUSED_NAME),
            )
        if report.lost:
            log.warning(
                "the run log was rotated before all of its events were shipped: "
                "the oldest unshipped ones are lost"
            )
        aside = (
            f"{report.set_aside} refused event(s) set aside ({report.refusal})"
            if report.set_aside
            else None
        )
        self.writer.emit(
            "ship",
            action="ship",
            outcome="ok" if report.ok else "failed",
            shipped=report.shipped,
            stream=self.config.logs.stream,
            message="; ".join(text for text in (report.problem, aside) if text) or None,
        )
        return report


@contextmanager
def recorded(config: Config, command: str, *, files: EventLog | None = None) -> Iterator[Run]:
    """A recorded run of `command` for the block (see the module's docstring)."""
    run = Run(config, command, files=files).start()
    try:
        yield run
    except BaseException as exc:
        run.finish(exc)
        raise
    run.finish()
