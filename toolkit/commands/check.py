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


def check(config: Config, paths: Iterable[str | Path] = (), *, strict: bool = False) -> CheckResult:
    """Every problem of the posts named (all of `content/` by default)."""
    with recorded(config, "check") as run:
        result = CheckResult(check_posts(config, paths), strict)
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
