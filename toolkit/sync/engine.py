"""The sync engine: a publish's plan (`planner.Planner`) carried out inside the API's rate
limits.

Creates and updates have separate rate limits, so they run in two lanes at once and a
mixed publish takes only as long as the slower lane.

A publish that writes runs with the project's run lock held by its caller
(`toolkit.commands`), from before the engine reads `toolkit.lock` and the remote list to
its end, so two runs never work from the same stale picture. Before the updates start,
each one is recorded in the lock as pending (what is about to be sent) and the lock is
saved: a run killed between the API taking an update and the lock recording it is
recognised by the next run, which converges instead of reporting a conflict (see
`plan.decide`). During the writes, each success asks for a save, and a background thread
saves (coalescing the requests that come while it writes), so that a request never
waits for the disk; the run waits for the last save before it returns.

A create that fails is never simply sent again. When the server answered (a 5xx), the
engine re-reads the remote list and tries once more only if the article is not there.
When there was no answer (a timeout, a connection dropped after sending), the request
may still be running on the server: the engine re-reads the list, and if the article is
not there yet it reports the post as failed rather than risk a second article; the next
publish finds the first one by canonical_url or title. So no run, interrupted anywhere,
can leave a duplicate behind.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import Protocol

from toolkit.clients.forem import ForemClient
from toolkit.clients.forem_models import Article
from toolkit.config import Config
from toolkit.content.accounts import Account
from toolkit.content.payload import body_digest
from toolkit.errors import ApiError, NoAnswerError, ServerError
from toolkit.sync import sent
from toolkit.sync.ledger import Ledger, LedgerEntry
from toolkit.sync.plan import Action, PostPlan
from toolkit.sync.planner import HomeOrganization, Planner

log = logging.getLogger(__name__)

CREATE_ATTEMPTS = 3  # each after a reconcile that proved the previous one did not land
LANE_WIDTH = 3  # requests of one kind in flight at once
MAYBE_PENDING = (
    "the create may still be pending on the server; the next publish checks before sending again"
)


class PublishProgress(Protocol):
    """What a publish tells its caller while it works (the CLI draws progress from it).
    Everything it is told is in the `PublishResult` too."""

    def planned(self, plans: list[PostPlan]) -> None:
        """The plan is made; the writes start."""

    def done(self, outcome: Outcome) -> None:
        """One post is finished (written, failed, or nothing to do)."""

    def waiting(self, seconds: float, reason: str) -> None:
        """A pause: a rate limit, a 429's Retry-After, a retry's backoff."""

    def blocked(self, message: str) -> None:
        """Another toolkit run holds the run lock; this one waits for it."""


class Silent:
    """A `PublishProgress` that listens to nothing."""

    def planned(self, plans: list[PostPlan]) -> None:
        pass

    def done(self, outcome: Outcome) -> None:
        pass

    def waiting(self, seconds: float, reason: str) -> None:
        pass

    def blocked(self, message: str) -> None:
        pass


@dataclass(frozen=True)
class Outcome:
    plan: PostPlan
    ok: bool
    message: str  # what happened, for the per-post line
    article_id: int | None = None
    url: str | None = None
    writer: str | None = None  # in a team's repository: the account's writer (folder)

    @property
    def key(self) -> str:
        return self.plan.key

    @property
    def action(self) -> Action:
        return self.plan.action

    @property
    def canonical_url(self) -> str | None:
        """The canonical_url the post sends (None: none, or nothing to send)."""
        return self.plan.payload.canonical_url if self.plan.payload is not None else None

    @property
    def published(self) -> bool | None:
        """What the post's front matter says (None: the file could not be read as a post)."""
        return self.plan.post.published if self.plan.post is not None else None


@dataclass(frozen=True)
class MissingKey:
    """A writer whose key is not set: their posts are skipped, the others go."""

    writer: str  # the writer's folder, or how the posts outside them are named
    variable: str  # the environment variable to set
    posts: int  # how many of their posts were skipped

    @property
    def message(self) -> str:
        return f"{self.writer}: {self.variable} is not set; {self.posts} post(s) skipped"


@dataclass(frozen=True)
class PublishResult:
    """A publish or a plan, built once, complete, when its run ends."""

    outcomes: list[Outcome] = field(default_factory=list)
    dry_run: bool = False
    waits: list[tuple[float, str]] = field(default_factory=list)  # rate-limit and retry pauses
    requests: int = 0
    lock_wait: str | None = None  # said while another run held the run lock
    # A team's repository (`[writers]`): its writers without a key, whose posts were skipped.
    team: bool = False
    missing_keys: list[MissingKey] = field(default_factory=list)

    @property
    def failed(self) -> list[Outcome]:
        return [o for o in self.outcomes if not o.ok]

    @property
    def ok(self) -> bool:
        return not self.failed and not self.missing_keys

    def count(self, action: Action, *, ok: bool | None = None) -> int:
        return sum(1 for o in self.outcomes if o.action is action and (ok is None or o.ok is ok))


class SyncEngine(Planner):
    """Plans (`Planner`) and publishes the posts of `config` through `client`."""

    def __init__(
        self,
        config: Config,
        client: ForemClient,
        *,
        progress: PublishProgress | None = None,
        ledger: Ledger | None = None,
        account: Account | None = None,
        organization: HomeOrganization | None = None,
    ):
        super().__init__(config, client, ledger=ledger, account=account, organization=organization)
        self.progress = progress or Silent()
        self._landed: dict[str, Article] = {}  # post key -> the article a write returned

    # -- writing ---------------------------------------------------------------------------

    def publish(
        self,
        paths: Iterable[str | Path] = (),
        *,
        force: bool = False,
        recreate: bool = False,
        dry_run: bool = False,
        drafts_only: bool = False,
        waits: Sequence[tuple[float, str]] = (),
        lock_wait: str | None = None,
    ) -> PublishResult:
        """Plan, then (unless `dry_run`) write; the caller holds the run lock to write.

        `force` overwrites articles edited on the website; `recreate` creates again the
        articles of toolkit.lock that are gone from the website. `waits` is where the
        client's wait listener keeps its pauses (complete once the writes are), and
        `lock_wait` what the caller was told while it waited for the run lock: both go
        into the result as they stand when the run ends.
        """
        requests_before = self.client.requests_made
        plans = self.plan(paths, force=force, recreate=recreate, drafts_only=drafts_only)
        self.progress.planned(plans)
        outcomes = self.execute(plans, dry_run=dry_run)
        return PublishResult(
            outcomes=outcomes,
            dry_run=dry_run,
            waits=list(waits),
            requests=self.client.requests_made - requests_before,
            lock_wait=lock_wait,
        )

    def execute(self, plans: list[PostPlan], *, dry_run: bool = False) -> list[Outcome]:
        """Carry out `plans` (made by `plan`; nothing is written when `dry_run`): their
        outcomes, in the plans' order."""
        outcomes: list[Outcome] = []
        outcomes_mutex = threading.Lock()
        writer = self.account.writer if self.account is not None else None

        def finish(outcome: Outcome) -> None:
            if writer is not None:
                outcome = replace(outcome, writer=writer)
            outcome = self._check_organization(outcome)
            with outcomes_mutex:
                outcomes.append(outcome)
            self.progress.done(outcome)

        for plan in plans:
            if not plan.needs_write or dry_run:
                finish(self._without_write(plan, dry_run))
        if not dry_run:
            self._write([p for p in plans if p.needs_write], finish)
        order = {p.key: i for i, p in enumerate(plans)}
        return sorted(outcomes, key=lambda o: order[o.key])

    def _check_organization(self, outcome: Outcome) -> Outcome:
        """A write into the organisation that the API left outside it: the account is not
        a member (Forem drops a non-member's `organization_id` without a word)."""
        org = self.organization
        if (
            org is None
            or not outcome.ok
            or outcome.plan.action not in (Action.CREATE, Action.UPDATE)
        ):
            return outcome
        if outcome.plan.payload is None or "organization_id" not in outcome.plan.payload.data.get(
            "article", {}
        ):
            return outcome
        landed = self._landed.get(outcome.key)
        if landed is None or landed.organization == org.username:
            return outcome
        who = f"{self.account.label}'s account" if self.account is not None else "the account"
        return replace(
            outcome,
            ok=False,
            message=f"{outcome.message}, but outside the organisation {org.username}: "
            f"{who} is not a member of it (the API left organization_id out)",
        )

    def _write(self, writes: list[PostPlan], finish: Callable[[Outcome], None]) -> None:
        creates = [p for p in writes if p.action is Action.CREATE]
        updates = [p for p in writes if p.action is Action.UPDATE]
        sending = {plan.key: self._mark_pending(plan) for plan in updates}
        for plan in updates:
            if self._publishes_draft(plan):
                self.client.expect_published_draft()
        # Entries adopted from the remote list and the pending updates, in one write,
        # durable before the first request goes out.
        self.ledger.save()
        # The two kinds have separate limits: run them side by side, a few requests of
        # each kind in flight at once (the limiters count those in flight as sent).
        with (
            self.ledger.background_saves(),
            ThreadPoolExecutor(LANE_WIDTH, thread_name_prefix="create") as create_lane,
            ThreadPoolExecutor(LANE_WIDTH, thread_name_prefix="update") as update_lane,
        ):
            futures = [
                create_lane.submit(_then, partial(self._create, plan), finish) for plan in creates
            ]
            futures += [
                update_lane.submit(_then, partial(self._update, plan, sending[plan.key]), finish)
                for plan in updates
            ]
            for future in futures:
                future.result()

    def _without_write(self, plan: PostPlan, dry_run: bool) -> Outcome:
        article = plan.article
        if plan.action is Action.UNCHANGED and not dry_run and article is not None:
            self._remember(plan, article, plan.entry, save=False)
        article_id = article.id if article else None
        if plan.action is Action.GONE and plan.entry is not None:
            article_id = plan.entry.article_id
        return Outcome(
            plan,
            not plan.failed,
            plan.reason,
            article_id,
            article.url if article else None,
        )

    def _remember(
        self, plan: PostPlan, article: Article, entry: LedgerEntry | None, *, save: bool = True
    ) -> None:
        """Record what was sent and what the remote holds now; `entry` is the post's lock
        entry as the write found it (`plan.entry`, or the pending one of an update)."""
        assert plan.payload is not None and plan.post is not None  # a plan from `decide`
        body = (
            article.body_markdown
            if article.body_markdown is not None
            else plan.payload.body_markdown
        )
        remote = body_digest(body)
        # Earlier updates never seen landed may still land: keep knowing them (not the
        # body now confirmed).
        earlier = entry.unconfirmed if entry is not None and entry.article_id == article.id else ()
        confirmed = (remote, body_digest(plan.payload.body_markdown)) if earlier else ()
        # The base of a later `pull --merge`.
        sent.keep(self.config.state_dir, body, entry.remote_digest if entry else None)
        self._landed[plan.key] = article
        self.ledger.record(
            plan.key,
            LedgerEntry(
                article_id=article.id,
                url=article.url or (entry.url if entry else None),
                sent_digest=plan.payload.digest,
                remote_digest=remote,
                remote_edited_at=article.edited_at,
                published=plan.post.published,
                unconfirmed=tuple(d for d in earlier if d not in confirmed),
                published_at=article.published_at
                or (entry.published_at if entry is not None else None),
                account=self.account.writer if self.account is not None else None,
            ),
            save=save,
            replaces=plan.moved_from,
        )

    def _mark_pending(self, plan: PostPlan) -> LedgerEntry | None:
        """Record in the lock what is about to be sent, so an interrupted run is recognised;
        the entry the update is sent with (the plan's, or the pending one recorded)."""
        entry, article, payload = plan.entry, plan.article, plan.payload
        if entry is None or article is None or payload is None or entry.article_id != article.id:
            return entry  # no entry: the next run finds the article by identity and compares
        pending = entry.sending(payload.digest, body_digest(payload.body_markdown))
        self.ledger.record(plan.key, pending, save=False, replaces=plan.moved_from)
        return pending

    @staticmethod
    def _publishes_draft(plan: PostPlan) -> bool:
        """Whether an update publishes a draft (Forem may then count it as a create)."""
        return (
            plan.article is not None
            and plan.article.published is False
            and plan.post is not None
            and plan.post.published
        )

    def _update(self, plan: PostPlan, entry: LedgerEntry | None) -> Outcome:
        assert plan.article is not None and plan.payload is not None
        try:
            article = self.client.update_article(
                plan.article.id, plan.payload.data, publishes_draft=self._publishes_draft(plan)
            )
        except ApiError as exc:
            return Outcome(plan, False, f"update failed: {exc.message}", plan.article.id)
        self._remember(plan, article, entry)
        return Outcome(plan, True, f"updated article {article.id}", article.id, article.url)

    def _create(self, plan: PostPlan) -> Outcome:
        assert plan.payload is not None and plan.post is not None
        for _ in range(CREATE_ATTEMPTS):
            try:
                article = self.client.create_article(plan.payload.data)
            except (NoAnswerError, ServerError) as exc:
                if isinstance(exc, NoAnswerError) and not exc.maybe_sent:
                    # It never reached the server (the client already tried again).
                    return Outcome(plan, False, f"create failed: {exc.message}")
                # It may have been committed before the failure: look before anything else.
                log.info("%s: create failed ambiguously (%s); reconciling", plan.key, exc.message)
                try:
                    landed = self._find_created(plan)
                except ApiError as reread:
                    return Outcome(
                        plan,
                        False,
                        f"create failed ({exc.message}) and the remote "
                        f"list could not be read to check it ({reread.message}); "
                        "the next publish checks again",
                    )
                if landed is not None:
                    self._remember(plan, landed, plan.entry)
                    return Outcome(
                        plan,
                        True,
                        f"created article {landed.id} (confirmed after: {exc.message})",
                        landed.id,
                        landed.url,
                    )
                if _maybe_still_running(exc):
                    # Not in the list yet, but the request may still be running on the
                    # server: sending it again could make a second article.
                    return Outcome(plan, False, f"create failed ({exc.message}): {MAYBE_PENDING}")
                last_error = exc
                continue
            except ApiError as exc:
                return Outcome(plan, False, f"create failed: {exc.message}")
            self._remember(plan, article, plan.entry)
            return Outcome(plan, True, f"created article {article.id}", article.id, article.url)
        return Outcome(plan, False, f"create failed: {last_error.message}")

    def _find_created(self, plan: PostPlan) -> Article | None:
        assert plan.post is not None
        remote = self.read_remote()
        claimed = self.ledger.claimed(except_key=plan.key)
        # The plan found no match before the create, so a match now is the article it made.
        return remote.identify(None, self.canonical_of(plan.post), plan.post.title, claimed).article


def _then(write: Callable[[], Outcome], finish: Callable[[Outcome], None]) -> None:
    finish(write())


def _maybe_still_running(exc: ApiError) -> bool:
    """True when a failed request may still be at work on the server: no answer came after
    it was sent (a timeout, a dropped connection), or a gateway gave up waiting (504)."""
    if isinstance(exc, NoAnswerError):
        return exc.maybe_sent
    return exc.status == 504
