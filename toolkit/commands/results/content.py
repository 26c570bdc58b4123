"""The documents of the content folder's posts: `list_posts`, `read_post` and
`post_comments` (the MCP tools), `toolkit check` and `toolkit new`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pydantic import Field

from toolkit.commands.posts import MirroredComment, PostSummary, SyncState
from toolkit.commands.results import Document, ProblemJson

if TYPE_CHECKING:  # pragma: no cover
    from toolkit.commands.check import CheckResult
    from toolkit.commands.posts import PostComments, PostDocument, PostList
    from toolkit.content.draft import NewPost


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


class NewJson(Document):
    ok: bool
    path: str = Field(description="the file written, project-relative")
    title: str

    @classmethod
    def of(cls, created: NewPost) -> NewJson:
        return cls(ok=True, path=created.key, title=created.title)
