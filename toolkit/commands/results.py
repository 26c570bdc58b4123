"""One result document per command, the same for every reader: the CLI's `--json` and
the MCP server's structured results (the tools' `outputSchema` and `structuredContent`).
"The CLI and the assistant read the same thing" is a property of `to_json`.

`to_json(result)` reads a command's result itself: its dataclass through a pydantic
`TypeAdapter` (records of the clients under their aliases, paths as text, a field's format
as a `PlainSerializer` on the field): `ExportResult`, `LicenseStatus`, `ConfigKey`,
`LogQuery`, `PostDiff` (`toolkit diff`), `RetireResult`, `toolkit.mcp.service.McpClient`.
Where the document counts or reshapes what the command returned, it is a `Document` here,
built with `of` (posts are `PostSummary` as they are). The run log keeps events, not
documents: `records.py` writes them from the same results, apart from this module because
every run records and pydantic costs a command that prints no document.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field, TypeAdapter

from toolkit.commands.posts import MirroredComment, PostSummary, SyncState
from toolkit.sync.plan import Action

if TYPE_CHECKING:  # pragma: no cover
    from toolkit.commands.check import CheckResult
    from toolkit.commands.new import NewPost
    from toolkit.commands.posts import PostComments, PostDocument, PostList
    from toolkit.content import Problem
    from toolkit.mirror import MirrorResult
    from toolkit.mirror.comments import MirrorReport
    from toolkit.site import BuildReport
    from toolkit.sync.engine import Outcome, PublishResult
    from toolkit.sync.pull import PullResult


_ADAPTERS: dict[type[Any], TypeAdapter[Any]] = {}


def to_json(result: object) -> Any:
    """The JSON document of a result (or of a list of them), the one every reader gets:
    a `Document` below, or a dataclass result read field by field through pydantic (its
    records under their aliases, paths as text, a field's `PlainSerializer` where it has
    one), or what the few results with a hand-written `to_json()` write."""
    if isinstance(result, list):
        return [to_json(item) for item in result]
    own = getattr(result, "to_json", None)
    if callable(own):
        return own()
    if isinstance(result, BaseModel):
        return result.model_dump(mode="json", by_alias=True)
    kind = type(result)
    adapter = _ADAPTERS.get(kind) or _ADAPTERS.setdefault(kind, TypeAdapter(kind))
    return adapter.dump_python(result, mode="json", by_alias=True)


class Document(BaseModel):
    """A command's result document, written by `to_json`."""


class ProblemJson(Document):
    path: str
    line: int
    severity: str = Field(description="error, warning or note")
    message: str
    text: str = Field(description="the problem as the CLI prints it: path:line: message")

    @classmethod
    def of(cls, problem: Problem) -> ProblemJson:
        return cls(
            path=problem.path,
            line=problem.line,
            severity=problem.severity.value,
            message=problem.message,
            text=str(problem),
        )


class PostListJson(Document):
    posts: list[PostSummary]
    counts: dict[str, int] = Field(description="posts per sync state")
    problems: list[ProblemJson] = Field(description="files that are not usable posts")

    @classmethod
    def of(cls, result: PostList) -> PostListJson:
        return cls(
            posts=result.posts,
            counts={state.value: result.count(state) for state in SyncState},
            problems=[ProblemJson.of(p) for p in result.problems],
        )


class PostTextJson(Document):
    post: PostSummary
    front_matter: dict[str, Any]
    body: str = Field(description="the Markdown after the front matter")

    @classmethod
    def of(cls, document: PostDocument) -> PostTextJson:
        return cls(
            post=document.summary,
            front_matter=document.front_matter,
            body=document.body,
        )


class CheckJson(Document):
    ok: bool = Field(description="false when a post has an error (or a warning, with strict)")
    files: int
    errors: int
    warnings: int
    notes: int = Field(description="files said once not to be posts (no front matter)")
    problems: list[ProblemJson]

    @classmethod
    def of(cls, result: CheckResult) -> CheckJson:
        report = result.report
        return cls(
            ok=result.ok,
            files=report.files,
            errors=len(report.errors),
            warnings=len(report.warnings),
            notes=len(report.notes),
            problems=[ProblemJson.of(p) for p in report.problems],
        )


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
        return cls(
            dry_run=result.dry_run,
            published_allowed=published_allowed,
            ok=result.ok,
            summary={a.value: result.count(a) for a in Action},
            failed=len(result.failed),
            requests=result.requests,
            waits=[WaitJson(seconds=round(s, 3), reason=r) for s, r in result.waits],
            posts=[OutcomeJson.of(o) for o in result.outcomes],
        )


class CommentsJson(Document):
    path: str
    title: str
    mirror_file: str | None = Field(
        description="null: nothing mirrored for this post yet (toolkit mirror fetches comments)"
    )
    article_url: str | None
    total: int = Field(description="comments in the mirror, before `since` was applied")
    comments: list[MirroredComment] = Field(description="thread order, replies after their parent")

    @classmethod
    def of(cls, result: PostComments) -> CommentsJson:
        return cls(
            path=result.path,
            title=result.title,
            mirror_file=result.mirror_file,
            article_url=result.article_url,
            total=result.total,
            comments=result.comments,
        )


class BuildJson(Document):
    ok: bool = Field(description="false when a post has an error (left out of the site)")
    output_dir: str
    posts: int = Field(description="posts on the site")
    written: int
    unchanged: int
    removed: int
    seconds: float
    drafts_left_out: int = Field(0, description="drafts not on the site (built without drafts)")
    problems: list[ProblemJson]

    @classmethod
    def of(cls, report: BuildReport, output_dir: str) -> BuildJson:
        return cls(
            ok=report.ok,
            output_dir=output_dir,
            posts=report.posts,
            written=len(report.written),
            unchanged=len(report.unchanged),
            removed=len(report.removed),
            seconds=round(report.seconds, 3),
            drafts_left_out=report.drafts_left_out,
            problems=[ProblemJson.of(p) for p in report.problems],
        )


class PulledJson(Document):
    path: str
    action: str = Field(description="what pull did to the post: created, overwritten, ...")
    article_id: int
    message: str


class PullJson(Document):
    ok: bool = Field(description="false when a post failed or is left in conflict")
    summary: dict[str, int] = Field(description="posts per action")
    lock_wait: str | None = Field(description="said while another run held the run lock")
    dry_run: bool = Field(default=False, description="nothing was written (--dry-run)")
    posts: list[PulledJson]

    @classmethod
    def of(cls, result: PullResult) -> PullJson:
        actions = sorted({o.action.value for o in result.outcomes} | {"created", "unchanged"})
        return cls(
            ok=not (result.failed or result.in_conflict),
            summary={a: sum(1 for o in result.outcomes if o.action.value == a) for a in actions},
            lock_wait=result.lock_wait,
            dry_run=result.dry_run,
            posts=[
                PulledJson(
                    path=o.path, action=o.action.value, article_id=o.article_id, message=o.message
                )
                for o in result.outcomes
            ],
        )


class MirrorReportJson(Document):
    fetched: int = Field(description="threads fetched again")
    written: int = Field(description="files whose content changed")
    removed: int
    unchanged: int

    @classmethod
    def of(cls, report: MirrorReport | None) -> MirrorReportJson | None:
        if report is None:
            return None
        return cls(
            fetched=len(report.fetched),
            written=len(report.written),
            removed=len(report.removed),
            unchanged=report.unchanged,
        )


class MirroredFileJson(Document):
    path: str
    change: str = Field(description="created, updated or removed")


class MirrorJson(Document):
    ok: bool
    comments: MirrorReportJson | None = Field(description="null when not asked for")
    podcast: MirrorReportJson | None = Field(description="null without --podcast")
    readinglist_items: int | None = Field(description="null when not asked for")
    readinglist_written: bool
    requests: int = Field(description="HTTP requests made to the publishing API")
    changed: list[MirroredFileJson]

    @classmethod
    def of(cls, result: MirrorResult) -> MirrorJson:
        return cls(
            ok=True,
            comments=MirrorReportJson.of(result.comments),
            podcast=MirrorReportJson.of(result.podcast),
            readinglist_items=result.readinglist_items,
            readinglist_written=result.readinglist_written,
            requests=result.requests,
            changed=[MirroredFileJson(path=p, change=result.change_of(p)) for p in result.changed],
        )


class NewJson(Document):
    ok: bool
    path: str = Field(description="the file written, project-relative")
    title: str

    @classmethod
    def of(cls, created: NewPost) -> NewJson:
        return cls(ok=True, path=created.key, title=created.title)
