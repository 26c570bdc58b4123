"""`check`: validate posts offline."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from toolkit.commands import records
from toolkit.config import Config
from toolkit.content import CheckReport
from toolkit.content import check as check_posts
from toolkit.runlog.run import recorded


@dataclass(frozen=True)
class CheckResult:
    report: CheckReport  # every problem, as `path:line: message`
    strict: bool = False  # warnings fail too

    @property
    def ok(self) -> bool:
        return not self.report.errors and not (self.strict and self.report.warnings)


def check(
    config: Config,
    paths: Iterable[str | Path] = (),
    *,
    strict: bool = False,
    changed_from: str | None = None,
    own_folder: str | None = None,
) -> CheckResult:
    """Every problem of the posts named (all of `content/` by default); with
    `changed_from` (a git revision), of the writers' folders and posts changed since it,
    and with `own_folder` (a login), a change in another writer's folder is an error."""
    with recorded(config, "check") as run:
        if changed_from is not None:
            from toolkit.content.changes import check_changed

            report = check_changed(config, changed_from, own_folder)
        else:
            report = check_posts(config, paths)
        result = CheckResult(report, strict)
        records.problems(run, result.report.problems)
        run.event(
            "check",
            posts=result.report.files,
            errors=len(result.report.errors),
            warnings=len(result.report.warnings),
        )
        if not result.ok:
            run.outcome = "failed"
    return result
