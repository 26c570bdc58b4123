"""The sync engine: plan what each post needs, then do it inside the API's rate limits.

One paginated read of `/api/articles/me/all` gives the remote state; every decision is
made from it, the posts and `toolkit.lock` (see `plan.decide`). Creates and updates have
separate rate limits, so they run in two lanes at once and a mixed publish takes only as
long as the slower lane.

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
from toolkit.content import CheckReport, Payload, Post, Problem, check, load_posts, payload_for
from toolkit.content.accounts import Account
from toolkit.content.hosting import canonical_url
from toolkit.content.payload import body_digest
from toolkit.errors import ApiError, NoAnswerError, ServerError
from toolkit.sync import sent
from toolkit.sync.adoption import adopted_on, not_bound_and_old, resolve_ref
from toolkit.sync.devtogit import read_map
from toolkit.sync.ledger import NOT_IN_PROJECT, Ledger, LedgerEntry, project_key
from toolkit.sync.plan import Action, PostPlan, decide
from toolkit.sync.remote import Gone, RemoteState, bind_posts
from toolkit.sync.stray import not_a_post

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
class HomeOrganization:
    """The organisation `[forem] organization` names, as the API gave it."""

    id: int
    username: str


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


class SyncEngine:
    """Plans and publishes the posts of `config` through `client`.

    `toolkit.lock` is read on first use, so an engine made once the run lock is held
    starts from what the previous run left.
    """

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
        self.config = config
        self.client = client
        self.progress = progress or Silent()
        self._ledger: Ledger | None = ledger
        # In a team's repository: the account this engine publishes with; only its posts
        # are planned, and their lock entries record it.
        self.account = account
        self.organization = organization
        self._landed: dict[str, Article] = {}  # post key -> the article a write returned

    @property
    def ledger(self) -> Ledger:
        if self._ledger is None:
            self._ledger = Ledger.load(self.config.lock_path, self.config.forem.base_url)
        return self._ledger

    # -- reading ---------------------------------------------------------------------------

    def read_remote(self) -> RemoteState:
        return RemoteState(self.client.iter_my_articles("all"))

    def canonical_of(self, post: Post) -> str | None:
        return canonical_url(post, self.config.site.url)

    def plan(
        self,
        paths: Iterable[str | Path] = (),
        *,
        force: bool = False,
        recreate: bool = False,
        drafts_only: bool = False,
        checked: CheckReport | None = None,
    ) -> list[PostPlan]:
        """What publishing `paths` (default: every post) would do; makes no writes.
        `checked`: the posts of `paths` already checked (a team's accounts share one check).

        `drafts_only` (watch) writes drafts only: a post that says `published: true` is
        left for `toolkit publish`, so saving a file never publishes anything.
        """
        paths = list(paths)
        adopted = adopted_on(self.config.source)
        mapped = read_map(self.config.root)  # before any request: a broken map stops here
        # Lock entries whose file is gone are said on a run over every post.
        report_gone = not paths and not drafts_only
        account = self.account
        folder = (
            self.config.site.content_dir / account.writer if account and account.writer else None
        )
        if folder is not None and not paths and folder.is_dir() and checked is None:
            paths = [folder]  # a writer's posts: their folder (gone: every post, none theirs)
        with ThreadPoolExecutor(1, thread_name_prefix="remote-read") as reader:
            # The list read mostly waits on the network: it runs while the posts are read.
            remote_read = reader.submit(self.read_remote)
            if checked is None:
                checked = check(self.config, paths)
            plans, sendable = self._local_plans(checked)
            if account is not None:  # a team's: this account's posts only
                plans = [p for p in plans if account.owns(self.config, p.key)]
                sendable = [p for p in sendable if account.owns(self.config, p.key)]
            gone_possible = report_gone and bool(self.ledger.entries)
            # An adopted blog's failing post may be one not on dev.to: the list says.
            old_possible = adopted is not None and any(p.action is Action.ERROR for p in plans)
            remote = remote_read.result() if sendable or gone_possible or old_possible else None
        if remote is not None:
            # What the server already counts against the create limit (other runs).
            self.client.count_published(remote.articles, since="published_at")
            sendable = self._bind_refs(sendable, remote, plans)
            payloads = {post.key: self._payload(post) for post in sendable}
            # Every post of the project is bound, so that which article a post is depends
            # on what the others claim; a post that fails `check` may be one not on dev.to
            # (older than the adoption, bound to nothing). A `dev_to:` naming no article of
            # the account claims nothing.
            resolved = {post.key: post for post in sendable}
            every = [
                resolved.get(post.key) or resolve_ref(post, remote.articles)[0]
                for post in self._every_post(checked.posts, paths)
            ]
            bound = bind_posts(
                remote,
                [
                    p
                    for p in every
                    if p.reading is None or p.reading.article_ref is None or p.article_id
                ],
                self.ledger,
                self.canonical_of,
                mapped=mapped,
                holder=account.writer if account is not None else None,
                body_of=lambda post: (
                    (
                        payloads[post.key]
                        if post.key in payloads
                        else payload_for(post, self.config)
                    ).body_markdown
                ),
            )
            for index, failed in enumerate(plans):
                match = bound.matches.get(failed.key)
                if failed.post is not None and failed.action is Action.ERROR and match is not None:
                    why = not_bound_and_old(match, failed.post, adopted, self._first_dated)
                    if why is not None:
                        plans[index] = replace(failed, action=Action.SKIP, reason=why, problems=[])
            matches = bound.matches
            if report_gone:
                plans.extend(
                    gone_plan(gone)
                    for gone in bound.gone
                    if account is None or account.owns(self.config, gone.key)
                )
                planned = {plan.key for plan in plans}
                plans.extend(
                    stray_plan(self.config, stray)
                    for stray in bound.strays
                    if stray.key not in planned
                    and (account is None or account.owns(self.config, stray.key))
                )
            for post in sendable:
                match = matches[post.key]
                plan = decide(
                    post,
                    payloads[post.key],
                    match,
                    match.entry,
                    force=force,
                    recreate=recreate,
                    drafts_only=drafts_only,
                )
                if plan.action is Action.CREATE:
                    why = not_bound_and_old(match, post, adopted, self._first_dated)
                    if why is not None:
                        plan = replace(plan, action=Action.SKIP, reason=why)
                if self.organization is not None:
                    plan = into_organization(plan, self.organization)
                plans.append(plan)
        plans.sort(key=lambda p: p.key)
        return plans

    def _payload(self, post: Post) -> Payload:
        """What the API receives for `post`: with `[forem] organization`, the
        organisation's id too (unless the post names its own). The digest stays that of
        the post without it, so the offline state, `diff` and `pull` (which do not look
        the organisation up) agree with it; whether an article is in the organisation is
        read from the article itself (`into_organization`)."""
        payload = payload_for(post, self.config)
        article = payload.data.get("article")
        if self.organization is None or not isinstance(article, dict):
            return payload
        if "organization_id" in article:
            return payload
        data = {**payload.data, "article": {**article, "organization_id": self.organization.id}}
        return replace(payload, data=data)

    def _first_dated(self, post: Post) -> str | None:
        """An undated post's date: its first commit's."""
        from toolkit.content.dates import project_dates

        return project_dates(self.config, [post.key]).get(post.key)

    @staticmethod
    def _bind_refs(posts: list[Post], remote: RemoteState, plans: list[PostPlan]) -> list[Post]:
        """The posts, each named by a `dev_to:` slug or address bound to its article; one
        naming an article the account does not hold is an error plan, never sent."""
        bound: list[Post] = []
        for post in posts:
            post, problem = resolve_ref(post, remote.articles)
            if problem is None:
                bound.append(post)
                continue
            line = post.line_of("id")
            plans.append(
                PostPlan(
                    post.key,
                    Action.ERROR,
                    problem,
                    title=post.title,
                    post=post,
                    problems=[Problem(post.key, line, problem)],
                )
            )
        return bound

    def _every_post(self, posts: list[Post], paths: list[str | Path]) -> list[Post]:
        """`posts` (those named) and every other post of the project: which article a post
        is depends on what the others claim."""
        account = self.account
        posts = [post for post in posts if project_key(post.key)]
        if paths:
            named = {post.key for post in posts}
            others, _ = load_posts(self.config)
            posts += [post for post in others if post.key not in named]
        # A team's account: its writer's posts only (the others claim other accounts').
        return [p for p in posts if account is None or account.owns(self.config, p.key)]

    @staticmethod
    def _local_plans(report: CheckReport) -> tuple[list[PostPlan], list[Post]]:
        """Plans decided without the remote (errors, premium) and the posts left to send."""
        errors: dict[str, list[Problem]] = {}
        for problem in report.errors:
            errors.setdefault(problem.path, []).append(problem)
        parsed = {post.key for post in report.posts}
        plans = [
            PostPlan(key, Action.ERROR, problems[0].message, problems=problems)
            for key, problems in errors.items()
            if key not in parsed
        ]
        sendable: list[Post] = []
        for post in report.posts:
            if not project_key(post.key):  # named outright, outside the project
                plans.append(
                    PostPlan(post.key, Action.ERROR, NOT_IN_PROJECT, title=post.title, post=post)
                )
            elif post.held:  # kept off dev.to by the writer: its problems are the site's
                plans.append(
                    PostPlan(
                        post.key,
                        Action.SKIP,
                        # A post waiting for its date is sent by the first publish after it.
                        post.held
                        if post.reading is not None and post.reading.waits
                        else f"{post.held}; never sent",
                        title=post.title,
                        post=post,
                    )
                )
            elif post.key in errors:
                problems = errors[post.key]
                plans.append(
                    PostPlan(
                        post.key,
                        Action.ERROR,
                        problems[0].message,
                        title=post.title,
                        post=post,
                        problems=problems,
                    )
                )
            elif post.premium:
                plans.append(
                    PostPlan(
                        post.key,
                        Action.SKIP,
                        "premium post: never sent to the publishing API",
                        title=post.title,
                        post=post,
                    )
                )
            else:
                sendable.append(post)
        return plans, sendable

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


def gone_plan(gone: Gone) -> PostPlan:
    """What plan and publish say of a lock entry whose file is gone."""
    article = gone.article
    article_id = gone.entry.article_id
    if article is None:
        reason = f"article {article_id} is gone from the website too; toolkit forget {gone.key}"
    elif article.published is False:
        reason = f"article {article_id} stays on the website as a draft; toolkit forget {gone.key}"
    else:
        reason = (
            f"article {article_id} stays on the website; toolkit unpublish {gone.key} or forget it"
        )
    return PostPlan(gone.key, Action.GONE, reason, article=article, entry=gone.entry)


def stray_plan(config: Config, stray: Gone) -> PostPlan:
    """What plan and publish say of a lock entry whose file is there but is no post now."""
    reason = (
        f"was published as article {stray.entry.article_id} (toolkit.lock) but is no post "
        f"now: {not_a_post(config, stray.key)}; make it a post again, or `toolkit "
        f"unpublish {stray.key}` or `toolkit forget {stray.key}`"
    )
    return PostPlan(
        stray.key,
        Action.ERROR,
        reason,
        article=stray.article,
        entry=stray.entry,
        problems=[Problem(stray.key, 1, reason)],
    )


def into_organization(plan: PostPlan, org: HomeOrganization) -> PostPlan:
    """The plan of a post published into `org`: it says so, and an article outside the
    organisation is moved into it (an update) even when nothing else changed."""
    payload = plan.payload
    wanted = (
        payload is not None and payload.data.get("article", {}).get("organization_id") == org.id
    )
    if not wanted:
        return plan  # the post names an organisation of its own (`organization_id:`)
    article = plan.article
    if plan.action is Action.CREATE:
        return replace(plan, reason=f"{plan.reason}, into the organisation {org.username}")
    if article is None or article.organization == org.username:
        return plan
    if plan.action is Action.UNCHANGED:
        return replace(
            plan,
            action=Action.UPDATE,
            reason=f"article {article.id}: moves it into the organisation {org.username}",
        )
    if plan.action is Action.UPDATE:
        return replace(plan, reason=f"{plan.reason}; moves it into the organisation {org.username}")
    return plan


def _then(write: Callable[[], Outcome], finish: Callable[[Outcome], None]) -> None:
    finish(write())


def _maybe_still_running(exc: ApiError) -> bool:
    """True when a failed request may still be at work on the server: no answer came after
    it was sent (a timeout, a dropped connection), or a gateway gave up waiting (504)."""
    if isinstance(exc, NoAnswerError):
        return exc.maybe_sent
    return exc.status == 504
