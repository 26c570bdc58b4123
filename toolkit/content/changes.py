"""What a change set touches in the content folder: `toolkit check --changed-from REF`,
as a team's pull request is checked.

The changed files are git's: those that differ from REF (committed or not) and the new
ones not ignored, relative to the project. A file in a folder directly under the content
folder (a writer's folder, `posts/<login>/`) brings in that whole folder, so that its
posts are checked together with their images; a post at the top is checked alone.

`--own-folder LOGIN` (a team that wants each writer to edit only their own posts):
a changed file in another writer's folder is an error at that file. Folders are
compared with the login without regard to case, as GitHub compares logins.
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING

from toolkit.content import CheckReport, check
from toolkit.content.problems import Problem
from toolkit.errors import ContentError
from toolkit.redact import quoted

if TYPE_CHECKING:  # pragma: no cover
    from toolkit.config import Config

GIT_TIMEOUT = 60  # seconds one git command may take
SHOWN = 80


@dataclass(frozen=True)
class Scope:
    """The part of the content folder a change set touches."""

    paths: tuple[str, ...]  # what to check: writers' folders and posts at the top
    folders: tuple[str, ...]  # the writers' folders touched (their names)
    changed: tuple[str, ...]  # every changed file under the content folder, project-relative


def _git(root: Path, *args: str) -> list[str]:
    """The NUL-separated output of a git command run in `root`; `ContentError` when git
    cannot answer."""
    try:
        done = subprocess.run(
            ["git", "-c", "core.quotePath=false", "-C", str(root), *args],
            capture_output=True,
            timeout=GIT_TIMEOUT,
            check=False,
            env={**os.environ, "GIT_OPTIONAL_LOCKS": "0", "LC_ALL": "C"},
        )
    except (OSError, subprocess.SubprocessError) as exc:
        raise ContentError(
            f"--changed-from: git could not be run ({exc.__class__.__name__})"
        ) from None
    if done.returncode != 0:
        reason = done.stderr.decode("utf-8", "replace").strip().splitlines()
        shown = quoted(reason[-1], SHOWN) if reason else f"exit {done.returncode}"
        raise ContentError(f"--changed-from: git failed: {shown}")
    return [name for name in done.stdout.decode("utf-8", "replace").split("\0") if name]


def changed_files(root: Path, ref: str) -> list[str]:
    """The files under `root` that differ from `ref` or are new (not ignored), relative to
    `root`, POSIX."""
    if not ref or ref.startswith("-") or any(c.isspace() or not c.isprintable() for c in ref):
        raise ContentError(f"--changed-from: {quoted(ref, SHOWN)} is not a git revision")
    try:
        _git(root, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}")
    except ContentError:
        raise ContentError(
            f"--changed-from: {quoted(ref, SHOWN)} is no commit of this repository "
            "(in CI, check out its history: fetch-depth: 0)"
        ) from None
    diff = _git(root, "diff", "--name-only", "--no-renames", "-z", "--relative", ref, "--")
    new = _git(root, "ls-files", "--others", "--exclude-standard", "-z")
    return sorted(set(diff) | set(new))


def scope(changed: list[str], content: str) -> Scope:
    """What `changed` (project-relative files) touches of the content folder `content`
    (project-relative, POSIX): the writers' folders, and the posts at its top."""
    prefix = PurePosixPath(content).parts if content not in ("", ".") else ()
    paths: dict[str, None] = {}
    folders: dict[str, None] = {}
    inside: list[str] = []
    for name in changed:
        parts = PurePosixPath(name).parts
        if parts[: len(prefix)] != prefix or len(parts) <= len(prefix):
            continue
        inside.append(name)
        rest = parts[len(prefix) :]
        if rest[0].startswith((".", "_")):
            continue  # not posts (toolkit's mirror, hidden files)
        if len(rest) == 1:  # a file at the top of the content folder
            if name.endswith(".md"):
                paths[name] = None
            continue
        folders[rest[0]] = None
        paths[str(PurePosixPath(*prefix, rest[0]))] = None
    return Scope(tuple(paths), tuple(folders), tuple(inside))


def foreign_edits(found: Scope, content: str, login: str) -> list[Problem]:
    """An error at each changed file in a writer's folder that is not `login`'s."""
    own = login.strip().lower()
    prefix = len(PurePosixPath(content).parts) if content not in ("", ".") else 0
    problems = []
    for name in found.changed:
        parts = PurePosixPath(name).parts
        if len(parts) <= prefix + 1 or parts[prefix].startswith((".", "_")):
            continue
        folder = parts[prefix]
        if folder.lower() != own:
            problems.append(
                Problem(
                    name if name.isprintable() else quoted(name, len(name), marks=False),
                    1,
                    f"{quoted(folder, SHOWN, marks=False)}/ is another writer's folder than "
                    f"{quoted(login, SHOWN, marks=False)}'s (--own-folder): each writer "
                    "changes only their own posts",
                )
            )
    return problems


def check_changed(config: Config, ref: str, own_folder: str | None = None) -> CheckReport:
    """`check` of what changed since `ref` (`scope`), with, given `own_folder` (a login),
    an error at each change in another writer's folder (`foreign_edits`)."""
    content = config.relative(config.site.content_dir)
    found = scope(changed_files(config.root, ref), content)
    present = [path for path in found.paths if os.path.lexists(config.root / path)]  # not deleted
    report = check(config, present) if present else CheckReport()
    if own_folder is not None:
        report.problems = sorted(report.problems + foreign_edits(found, content, own_folder))
    return report
