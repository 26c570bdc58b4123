"""`watch`: a live-preview session that keeps the remote drafts of saved posts up to date.

`watch()` returns the session unstarted: the caller starts it, waits (for Ctrl-C), and
stops it. Pushes go through `DraftsToRemote`: one client, and so one pair of rate
limiters, for the whole session; each push holds the run lock like `toolkit publish`,
waits a few seconds for another run that holds it, then gives up (the pusher says so and
tries again with the next save).

The whole session is one recorded run (`toolkit.runlog`): it starts with the session,
records each rebuild, each push's post outcomes and requests, and ends (and ships) when
the session stops.
"""

from __future__ import annotations

import threading
from pathlib import Path

from toolkit.clients import forem_client
from toolkit.commands import records
from toolkit.config import Config
from toolkit.runlog.run import Run
from toolkit.site import BuildReport, SiteBuilder
from toolkit.site.buildrun import Progress
from toolkit.site.premium import RECHECK_SECONDS, PremiumGate
from toolkit.sync.engine import Outcome, PublishResult, SyncEngine
from toolkit.sync.runlock import writer_run
from toolkit.watch import WatchOptions, WatchReporter, WatchSession
from toolkit.watch.push import DraftPublisher

__all__ = ["PUSH_LOCK_TIMEOUT", "DraftsToRemote", "WatchReporter", "WatchSession", "watch"]

PUSH_LOCK_TIMEOUT = 5.0  # seconds a push waits for another toolkit run
PREMIUM_PREVIEW = "preview-premium"  # under .toolkit/: the premium preview's folder
NO_KEY = "remote drafts are not updated: FOREM_API_KEY is not set (--no-push silences this)"


class Cancelled(Exception):
    """Raised inside a push, from a pause, when the watch is stopping."""


class DraftsToRemote:
    """Publishes the drafts among the saved posts (never a published post), holding the
    run lock for each push. Every pause (rate limit, retry, the run lock) ends early when
    the watch stops."""

    def __init__(
        self, config: Config, *, lock_timeout: float = PUSH_LOCK_TIMEOUT, run: Run | None = None
    ):
        self.lock_timeout = lock_timeout
        self._cancelled = threading.Event()
        self._client = forem_client(
            config,
            sleep=self._sleep,
            on_wait=run.wait if run is not None else None,
            on_request=run.request if run is not None else None,
        )

    def _sleep(self, seconds: float) -> None:
        if self._cancelled.wait(seconds):
            raise Cancelled()

    def publish(self, config: Config, paths: list[Path]) -> PublishResult | None:
        try:
            with writer_run(
                config, "watch (draft push)", timeout=self.lock_timeout, sleep=self._sleep
            ):
                return SyncEngine(config, self._client).publish(paths, drafts_only=True)
        except Cancelled:
            return None

    def cancel(self) -> None:
        self._cancelled.set()

    def close(self) -> None:
        self._cancelled.set()
        self._client.close()


class GatedSiteBuilder(SiteBuilder):
    """A premium build that asks `gate` before each build (the gate keeps its answer for
    a minute); a refusal raises `PremiumRefused` before anything is written."""

    def __init__(self, config: Config, gate: PremiumGate, *, drafts: bool, out: Path):
        super().__init__(config, drafts=drafts, out=out, premium=True)
        self.gate = gate

    def build(self, clean: bool = False, progress: Progress | None = None) -> BuildReport:
        self.gate.check()
        return super().build(clean=clean, progress=progress)


class RecordingReporter:
    """A `WatchReporter` that records rebuilds and pushes in the run, then tells the
    caller's reporter."""

    def __init__(self, run: Run, reporter: WatchReporter):
        self.run = run
        self.reporter = reporter

    def built(self, report: BuildReport, changed: list[str], seconds: float) -> None:
        records.build(self.run, report, decides=False)
        self.reporter.built(report, changed, seconds)

    def problems(self, new: list[str], fixed: list[str]) -> None:
        self.reporter.problems(new, fixed)

    def pushed(self, outcomes: list[Outcome]) -> None:
        for outcome in outcomes:
            self.run.event(
                "post",
                post=outcome.key,
                action=outcome.action.value,
                outcome="ok" if outcome.ok else "failed",
                message=outcome.message,
                article_id=outcome.article_id,
            )
        self.reporter.pushed(outcomes)

    def push_failed(self, message: str) -> None:
        self.run.event("error", action="push", message=message)
        self.reporter.push_failed(message)

    def config_problem(self, message: str) -> None:
        self.run.event("error", action="rebuild", message=message)
        self.reporter.config_problem(message)

    def notice(self, message: str) -> None:
        self.reporter.notice(message)


class RecordedWatchSession(WatchSession):
    """A watch session that is one recorded run, from `watch()` to `stop()`.

    With a `gate` it is `toolkit watch --premium`: the premium site in
    `.toolkit/preview-premium/` (never the public preview's folder), each rebuild behind
    the licence gate. A refusal at the start stops the session from starting; a later one
    is reported like a bad save and the preview stays as it was until a rebuild is allowed
    again."""

    def __init__(
        self,
        run: Run,
        config: Config,
        options: WatchOptions,
        reporter: WatchReporter,
        *,
        gate: PremiumGate | None = None,
        publisher: DraftPublisher | None = None,
        notices: tuple[str, ...] = (),
    ):
        self.run = run
        self.gate = gate  # set before the base class makes its builder
        super().__init__(config, options, reporter, publisher=publisher, notices=notices)

    def _builder(self, config: Config) -> SiteBuilder:
        if self.gate is None:
            return super()._builder(config)
        self.gate.use(config)
        self.output_dir = config.state_dir / PREMIUM_PREVIEW
        return GatedSiteBuilder(config, self.gate, drafts=self.options.drafts, out=self.output_dir)

    def start(self) -> None:
        try:
            if self.gate is not None:
                self.gate.check()  # a refusal at the start: the session does not start
            super().start()
        except BaseException as exc:
            self.run.finish(exc)
            raise

    def stop(self) -> None:
        try:
            super().stop()
        finally:
            self.run.finish()


def watch(
    config: Config,
    reporter: WatchReporter,
    *,
    host: str = "127.0.0.1",
    port: int = 8000,
    push: bool = True,
    drafts: bool = True,
    lock_timeout: float = PUSH_LOCK_TIMEOUT,
    premium: bool = False,
    gate: PremiumGate | None = None,
) -> WatchSession:
    """A session serving the preview on `host:port` (loopback only), with drafts shown
    unless `drafts` is false, pushing saved drafts unless `push` is false or no API key
    is set (then `notices` says so). `premium`: the premium site, asking the licensing
    service (`gate`, default one that asks again at most once a minute) before a rebuild."""
    options = WatchOptions(host=host, port=port, drafts=drafts)
    run = Run(config, "watch").start()
    recording = RecordingReporter(run, reporter)
    publisher = None
    try:
        if premium:
            gate = gate or PremiumGate(config, max_age=RECHECK_SECONDS, on_request=run.request)
        else:
            gate = None
        notices: tuple[str, ...] = ()
        if push and config.forem.api_key is None:
            notices, push = (NO_KEY,), False
        publisher = DraftsToRemote(config, lock_timeout=lock_timeout, run=run) if push else None
        return RecordedWatchSession(
            run, config, options, recording, gate=gate, publisher=publisher, notices=notices
        )
    except BaseException as exc:
        if publisher is not None:
            publisher.close()
        run.finish(exc)
        raise
