"""Planning a publish: what each post needs, decided without writing anything.

One paginated read of `/api/articles/me/all` gives the remote state; every decision is
made from it, the posts and `toolkit.lock` (see `plan.decide`, the rules this module
gathers the inputs of). The writes are `engine.SyncEngine`'s, a `Planner` that writes.
"""

from __future__ import annotations

from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path

from toolkit.clients.forem import ForemClient
from toolkit.config import Config
from toolkit.content import CheckReport, Payload, Post, Problem, check, load_posts, payload_for
from toolkit.content.accounts import Account
from toolkit.content.dates import project_dates
from toolkit.content.hosting import canonical_url
from toolkit.sync.adoption import adopted_on, not_bound_and_old, resolve_ref
from toolkit.sync.devtogit import read_map
from toolkit.sync.identity import bind_posts
from toolkit.sync.ledger import NOT_IN_PROJECT, Ledger, project_key
from toolkit.sync.plan import Action, PostPlan, decide
from toolkit.sync.remote import Gone, RemoteState
from toolkit.sync.stray import not_a_post


@dataclass(frozen=True)
class HomeOrganization:
    """The organisation `[forem] organization` names, as the API gave it."""

    id: int
    username: str


class Planner:
    """Plans the posts of `config` from what `client` reads.

    `toolkit.lock` is read on first use, so a planner made once the run lock is held
    starts from what the previous run left.
    """

    def __init__(
        self,
        config: Config,
        client: ForemClient,
        *,
        ledger: Ledger | None = None,
        account: Account | None = None,
        organization: HomeOrganization | None = None,
    ):
        self.config = config
        self.client = client
        self._ledger: Ledger | None = ledger
        # In a team's repository: the account the posts are published with; only its posts
        # are planned, and their lock entries record it.
        self.account = account
        self.organization = organization

    @property
    def ledger(self) -> Ledger:
        if self._ledger is None:
            self._ledger = Ledger.of(self.config)
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
