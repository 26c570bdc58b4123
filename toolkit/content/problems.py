"""A problem found in a post: where it is, what it is, and whether it fails the run."""

from __future__ import annotations

import re
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


# What differs from one warning of a kind to the next: a front matter key or label before
# the first ": ", a quoted value, a Liquid tag, a path or URL, a number.
_VARIABLE = re.compile(r"'[^']*'|\"[^\"]*\"|`[^`]*`|\{%.*?%\}|[^\s;,()]*[/.\\][^\s;,()]*|\d+")
_LABEL = re.compile(r"^[\w.-]{1,80}: ")


def kind_of(message: str) -> str:
    """A warning's kind: its message without what names one instance of it (`foo: unknown
    front matter key...` and `bar: unknown front matter key...` are one kind)."""
    text = _LABEL.sub("", message, count=1).replace("dev.to", "\0")  # not a path
    return _VARIABLE.sub("…", text).replace("\0", "dev.to").strip()


@dataclass(frozen=True)
class WarningGroup:
    """The warnings of one kind: how many, in how many posts, and the first of them."""

    kind: str
    first: Problem
    count: int
    posts: int

    def __str__(self) -> str:
        if self.count == 1:
            return str(self.first)
        noun = "post" if self.first.path.endswith((".md", ".markdown")) else "file"
        many = f"{self.posts} {noun}{'s' if self.posts != 1 else ''}"
        if self.count != self.posts:
            many += f", {self.count} times"
        return f"warning: {many}: {self.kind} (toolkit check lists them)"


def group_warnings(problems: list[Problem]) -> list[WarningGroup]:
    """The warnings of `problems` by kind, in the order each kind first appears."""
    groups: dict[str, tuple[Problem, int, set[str]]] = {}
    for problem in problems:
        if problem.is_error:
            continue
        kind = kind_of(problem.message)
        first, count, paths = groups.get(kind, (problem, 0, set()))
        paths.add(problem.path)
        groups[kind] = (first, count + 1, paths)
    return [
        WarningGroup(kind, first, count, len(paths))
        for kind, (first, count, paths) in groups.items()
    ]


class PostError(Exception):
    """A post that cannot be used at all (unreadable, bad YAML); carries its problem."""

    def __init__(self, problem: Problem):
        super().__init__(str(problem))
        self.problem = problem
