"""The document of `toolkit mirror`: what each part fetched and wrote, and the files
that changed."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pydantic import Field

from toolkit.commands.results import Document

if TYPE_CHECKING:  # pragma: no cover
    from toolkit.mirror import MirrorResult
    from toolkit.mirror.comments import MirrorReport


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
        fields: dict[str, Any] = {
            "ok": not result.missing_keys,  # only a team's has writers without a key
            "comments": MirrorReportJson.of(result.comments),
            "podcast": MirrorReportJson.of(result.podcast),
            "readinglist_items": result.readinglist_items,
            "readinglist_written": result.readinglist_written,
            "requests": result.requests,
            "changed": [
                MirroredFileJson(path=p, change=result.change_of(p)) for p in result.changed
            ],
        }
        if result.team:
            return TeamMirrorJson(
                **fields,
                missing_keys=[
                    MissingWriterJson(writer=m.writer, variable=m.variable)
                    for m in result.missing_keys
                ],
            )
        return cls(**fields)


class MissingWriterJson(Document):
    writer: str = Field(description="the writer whose key is not set (their folder)")
    variable: str = Field(description="the environment variable to set")


class TeamMirrorJson(MirrorJson):
    """mirror in a team's repository: each writer's files under content/_mirror/<writer>/."""

    missing_keys: list[MissingWriterJson] = Field(description="writers not mirrored: no key")
