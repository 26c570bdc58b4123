"""The document of `toolkit build` (the MCP tool `build_site` too)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import Field

from toolkit.commands.results import Document, ProblemJson

if TYPE_CHECKING:  # pragma: no cover
    from toolkit.site import BuildReport


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
