"""`check`: validate posts offline."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from toolkit.config import Config
from toolkit.content import CheckReport
from toolkit.content import check as check_posts


@dataclass(frozen=True)
class CheckResult:
    report: CheckReport  # every problem, as `path:line: message`
    strict: bool = False  # warnings fail too

    @property
    def ok(self) -> bool:
        return not self.report.errors and not (self.strict and self.report.warnings)


def check(config: Config, paths: Iterable[str | Path] = (), *, strict: bool = False) -> CheckResult:
    """Every problem of the posts named (all of `content/` by default)."""
    return CheckResult(check_posts(config, paths), strict)
