"""`watch`: a live-preview session that keeps the remote drafts of saved posts up to date.

`watch()` returns the session unstarted: the caller starts it, waits (for Ctrl-C), and
stops it. Pushes go through `DraftsToRemote`: one client, and so one pair of rate
limiters, for the whole session (in a team's repository, one per writer's key); each push holds the run lock like `toolkit publish`,
waits a few seconds for another run that holds it, then gives up (the pusher says so and
tries again with the next save).

The whole session is one recorded run (`toolkit.runlog`): it starts with the session,
records each rebuild, each push's post outcomes and requests, and ends (and ships) when
the session stops.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import TYPE_CHECKING

from toolkit.clients import Clients
from toolkit.commands import records
from toolkit.config import Config
from toolkit.content.accounts import Account
from toolkit.license.gate import RECHECK_SECONDS, PremiumGate
from toolkit.runlog.run import Run
from toolkit.site import BuildReport
from toolkit.sync.engine import Outcome, PublishResult, SyncEngine
from toolkit.sync.runlock import writer_run
from toolkit.sync.team import push_team_drafts
from toolkit.watch import WatchOptions, WatchReporter, WatchSession

if TYPE_CHECKING:  # pragma: no cover
    from toolkit.clients.forem import ForemClient

__all__ = ["PUSH_LOCK_TIMEOUT", "DraftsToRemote", "WatchReporter", "WatchSession", "watch"]

PUSH_LOCK_TIMEOUT = 5.0  # seconds a push waits for another toolkit run
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
        self._run = run
        # A team's repository: one client per writer's key, made on the first push of
        # one of their posts; otherwise one client for the session.
        self._team = config.writers is not None
        self._clients: dict[Account, ForemClient] = {}
        self._client = None if self._team else self._client_of(config, None)

    def _client_of(self, config: Config, account: Account | None) -> ForemClient:
        clients = Clients.of(config, self._run, sleep=self._sleep)
        return clients.forem() if account is None else clients.forem_of(account)

    def _sleep(self, seconds: float) -> None:
        if self._cancelled.wait(seconds):
            raise Cancelled()

    def publish(self, config: Config, paths: list[Path]) -> PublishResult | None:
        try:
            with writer_run(
                config, "watch (draft push)", timeout=self.lock_timeout, sleep=self._sleep
            ):
                if self._client is not None:
                    return SyncEngine(config, self._client).publish(paths, drafts_only=True)
                return push_team_drafts(
                    config, paths, lambda account: self._writer_client(config, account)
                )
        except Cancelled:
            return None

    def _writer_client(self, config: Config, account: Account) -> ForemClient:
        """The writer's client, made on the first push of one of their posts."""
        if account not in self._clients:
            self._clients[account] = self._client_of(config, account)
        return self._clients[account]

    def cancel(self) -> None:
        self._cancelled.set()

    def close(self) -> None:
        self._cancelled.set()
        if self._client is not None:
            self._client.close()
        for client in self._clients.values():
            client.close()


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
        records.outcomes(self.run, outcomes)
        self.reporter.pushed(outcomes)

    def push_failed(self, message: str) -> None:
        self.run.event("error", action="push", message=message)
        self.reporter.push_failed(message)

    def config_problem(self, message: str) -> None:
        self.run.event("error", action="rebuild", message=message)
        self.reporter.config_problem(message)

    def notice(self, message: str) -> None:
        self.reporter.notice(message)


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
    site: bool = True,
) -> WatchSession:
    """A session serving the preview on `host:port` (loopback only), with drafts shown
    unless `drafts` is false, pushing saved drafts unless `push` is false or no API key
    is set (then `notices` says so). `premium`: the premium site, asking the licensing
    service (`gate`, default one that asks again at most once a minute) before a rebuild.
    `site` false: no build and no preview, the saved drafts pushed only."""
    options = WatchOptions(host=host, port=port, drafts=drafts, site=site)
    run = Run(config, "watch").start()
    recording = RecordingReporter(run, reporter)
    publisher = None
    try:
        if premium:
            gate = gate or PremiumGate(config, max_age=RECHECK_SECONDS, on_request=run.request)
        else:
            gate = None
        notices: tuple[str, ...] = ()
        if push and config.forem.api_key is None and config.writers is None:
            notices, push = (NO_KEY,), False
        publisher = DraftsToRemote(config, lock_timeout=lock_timeout, run=run) if push else None
        return WatchSession(
            config,
            options,
            recording,
            publisher=publisher,
            notices=notices,
            gate=gate,
            on_end=run.finish,
        )
    except BaseException as exc:
        if publisher is not None:
            publisher.close()
        run.finish(exc)
        raise
