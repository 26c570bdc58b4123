"""`export`: bundle the built site or the posts into one archive made by the archive-task
API, and keep it only once it is verified (the job: `toolkit.export.job`). The export is
one recorded run: its requests, pauses and archive go to the run log.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from toolkit.config import Config
from toolkit.export.job import ExportProgress, ExportResult, export_archive
from toolkit.runlog.run import recorded

if TYPE_CHECKING:  # pragma: no cover
    from toolkit.clients import Transport

__all__ = ["ExportProgress", "ExportResult", "export"]


def export(
    config: Config,
    *,
    source: str | None = None,
    fmt: str | None = None,
    output: str | Path | None = None,
    progress: ExportProgress | None = None,
    transport: Transport | None = None,
) -> ExportResult:
    """`toolkit.export.job.export_archive` (its arguments as there), as one recorded run."""
    with recorded(config, "export") as run:
        result = export_archive(
            config,
            run,
            source=source,
            fmt=fmt,
            output=output,
            progress=progress,
            transport=transport,
        )
        run.event(
            "export",
            action=result.format,
            items=result.entries,
            bytes=result.size,
            requests=result.requests,
            duration_ms=round(result.seconds * 1000, 3),
            message=config.relative(result.output),
        )
        return result
