"""A problem found in a post: where it is, what it is, and whether it fails the run."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class Severity(StrEnum):
    ERROR = "error"
    WARNING = "warning"
    NOTE = "note"  # said, never a failure (not even with `check --strict`)


class Kind(StrEnum):
    """What a problem concerns: the post itself (its page cannot be made either, so the
    site leaves it out), or a rule only the publishing API has (the API would answer 422;
    the site builds the post all the same). Either kind of error fails `check` and keeps
    `publish` from sending the post."""

    POST = "post"
    API = "api"


@dataclass(frozen=True, order=True)
class Problem:
    path: str  # project-relative POSIX path, as the user sees it
    line: int  # 1-based line in the file
    message: str
    severity: Severity = Severity.ERROR
    kind: Kind = Kind.POST

    @property
    def is_error(self) -> bool:
        return self.severity is Severity.ERROR

    @property
    def is_note(self) -> bool:
        return self.severity is Severity.NOTE

    def __str__(self) -> str:
        prefix = "" if self.is_error else f"{self.severity.value}: "
        return f"{self.path}:{self.line}: {prefix}{self.message}"


class ProblemList:
    """For reports that carry `problems`: which of them fail the run, which only warn."""

    problems: list[Problem]

    @property
    def errors(self) -> list[Problem]:
        return [p for p in self.problems if p.is_error]

    @property
    def warnings(self) -> list[Problem]:
        return [p for p in self.problems if p.severity is Severity.WARNING]

    @property
    def notes(self) -> list[Problem]:
        return [p for p in self.problems if p.is_note]


class PostError(Exception):
    """A post that cannot be used at all (unreadable, bad YAML); carries its problem."""

    def __init__(self, problem: Problem):
        super().__init__(str(problem))
        self.problem = problem
