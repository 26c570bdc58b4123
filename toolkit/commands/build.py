"""`build`: the static site."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from toolkit.config import Config
from toolkit.runlog import results
from toolkit.runlog.run import recorded
from toolkit.site import BuildReport, SiteBuilder

BuildProgress = Callable[[int, int], None]  # (pages in all, pages done)


def build(config: Config, *, clean: bool = False, drafts: bool = False,
          out: str | Path | None = None, progress: BuildProgress | None = None) -> BuildReport:
    """Build the site incrementally (`clean`: everything again) into `out` (default:
    `[site] output_dir`); `drafts` includes unpublished posts, marked as drafts."""
    with recorded(config, "build") as run:
        report = SiteBuilder(config, drafts=drafts, out=out).build(clean=clean, progress=progress)
        results.build(run, report)
    return report
