"""The documents of `toolkit plan`, `toolkit publish` (and watch's draft push) and
`toolkit pull`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pydantic import Field

from toolkit.commands.results import Document
from toolkit.sync.plan import Action
from toolkit.sync.pull import PullOutcome

if TYPE_CHECKING:  # pragma: no cover
    from collections.abc import Iterable

    from toolkit.sync.engine import MissingKey, Outcome, PublishResult
    from toolkit.sync.pull import PullResult


class OutcomeJson(Document):
    path: str
    title: str
    action: str = Field(
        description="create, update, unchanged, conflict, skip, error or gone (a lock "
        "entry whose file is gone: its article stays on the website)"
    )
    published: bool | None = Field(
        description="what the front matter says (null when the file could not be read as a post)"
    )
    ok: bool
    message: str
    article_id: int | None
    url: str | None
    canonical_url: str | None = Field(
        description="the canonical_url sent: the post's own, or its page on the site when "
        '[forem] canonical = "site" (null: none is sent)'
    )
    problems: list[str]
    moved_from: str | None = Field(
        default=None, description="the path toolkit.lock had for the post (a rename)"
    )

    @classmethod
    def of(cls, outcome: Outcome) -> OutcomeJson:
        return cls(
            path=outcome.key,
            title=outcome.plan.title,
            action=outcome.action.value,
            published=outcome.published,
            ok=outcome.ok,
            message=outcome.message,
            article_id=outcome.article_id,
            url=outcome.url,
            canonical_url=outcome.canonical_url,
            problems=[str(p) for p in outcome.plan.problems],
            moved_from=outcome.plan.moved_from,
        )


class WaitJson(Document):
    seconds: float
    reason: str


class PublishJson(Document):
    dry_run: bool = Field(description="true for plan: nothing was written")
    published_allowed: bool = Field(description="whether posts marked published were sent")
    ok: bool
    summary: dict[str, int] = Field(description="posts per action")
    failed: int
    requests: int = Field(description="HTTP requests made to the publishing API")
    waits: list[WaitJson] = Field(description="rate-limit and retry pauses")
    posts: list[OutcomeJson]

    @classmethod
    def of(cls, result: PublishResult, *, published_allowed: bool) -> PublishJson:
        fields: dict[str, Any] = {
            "dry_run": result.dry_run,
            "published_allowed": published_allowed,
            "ok": result.ok,
            "summary": {a.value: result.count(a) for a in Action},
            "failed": len(result.failed),
            "requests": result.requests,
            "waits": [WaitJson(seconds=round(s, 3), reason=r) for s, r in result.waits],
        }
        if result.team:
            return TeamPublishJson(
                **fields,
                posts=[TeamOutcomeJson.of_writer(o) for o in result.outcomes],
                missing_keys=MissingKeyJson.all(result.missing_keys),
            )
        return cls(**fields, posts=[OutcomeJson.of(o) for o in result.outcomes])


class TeamOutcomeJson(OutcomeJson):
    """A post of a team's repository (`[writers]`)."""

    writer: str | None = Field(
        description="the writer whose account publishes the post (their folder); null: "
        "a post outside every writer's folder, published with FOREM_API_KEY"
    )

    @classmethod
    def of_writer(cls, outcome: Outcome) -> TeamOutcomeJson:
        return cls(**OutcomeJson.of(outcome).model_dump(), writer=outcome.writer)


class MissingKeyJson(Document):
    writer: str = Field(description="the writer whose key is not set (their folder)")
    variable: str = Field(description="the environment variable to set")
    posts: int = Field(description="their posts, skipped")

    @classmethod
    def all(cls, missing: Iterable[MissingKey]) -> list[MissingKeyJson]:
        return [cls(writer=m.writer, variable=m.variable, posts=m.posts) for m in missing]


class TeamPublishJson(PublishJson):
    """plan and publish in a team's repository: each post's writer, and the writers
    skipped for want of a key."""

    posts: list[TeamOutcomeJson]  # type: ignore[assignment]
    missing_keys: list[MissingKeyJson]


class PullJson(Document):
    ok: bool = Field(description="false when a post failed or is left in conflict")
    summary: dict[str, int] = Field(description="posts per action")
    lock_wait: str | None = Field(description="said while another run held the run lock")
    dry_run: bool = Field(default=False, description="nothing was written (--dry-run)")
    posts: list[PullOutcome]

    @classmethod
    def of(cls, result: PullResult) -> PullJson:
        actions = sorted({o.action.value for o in result.outcomes} | {"created", "unchanged"})
        summary = {a: sum(1 for o in result.outcomes if o.action.value == a) for a in actions}
        fields: dict[str, Any] = {
            "ok": result.ok,
            "summary": summary,
            "lock_wait": result.lock_wait,
            "dry_run": result.dry_run,
        }
        if result.team:
            return TeamPullJson(
                **fields,
                posts=[TeamPullOutcomeJson.of_writer(o) for o in result.outcomes],
                missing_keys=MissingKeyJson.all(result.missing_keys),
            )
        return cls(**fields, posts=result.outcomes)


class TeamPullOutcomeJson(Document):
    """A post of a team's pull: its writer beside what was done."""

    path: str
    action: str
    article_id: int
    message: str
    writer: str | None = Field(
        description="the writer whose key pulled it (their folder); null: FOREM_API_KEY"
    )

    @classmethod
    def of_writer(cls, outcome: PullOutcome) -> TeamPullOutcomeJson:
        return cls(
            path=outcome.path,
            action=outcome.action.value,
            article_id=outcome.article_id,
            message=outcome.message,
            writer=outcome.writer,
        )


class TeamPullJson(PullJson):
    """pull in a team's repository: each post's writer, and the writers skipped for want
    of a key."""

    posts: list[TeamPullOutcomeJson]  # type: ignore[assignment]
    missing_keys: list[MissingKeyJson]
