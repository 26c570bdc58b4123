"""A post's date when its front matter has none: the publication time the lock recorded
from the API, else the time of the commit that added its file to git.

Posts kept the way dev-to-git keeps them have no `date:`; dev.to orders them by their
publication time, which `toolkit.lock` records (`published_at`, from the API's answer to a
publish or a pull). A post never published has its first commit's author time instead
(`git log --diff-filter=A`, one run for every post, kept in the state folder by the commit
it was read at); without git, or before the file is committed, it has no date. A file's
modification time is never used: a clone or a checkout sets it.

The lock's times are asked of `toolkit/ledgerfile.py`, the one reader of the file the ledger
writes (`toolkit/sync/ledger.py`, a layer above this one): the section of the configured
server, or the lock's only section when it names no server (a lock of version 1).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from toolkit import ledgerfile
from toolkit.content.problems import Problem, Severity
from toolkit.fsutil import quick_write

if TYPE_CHECKING:  # pragma: no cover
    from toolkit.config import Config
    from toolkit.content.post import Post

GIT_TIMEOUT = 30.0  # seconds for one `git log` of the content folder


def iso(value: object) -> str | None:
    """`value` as an ISO 8601 time with its offset, or None when it is not one."""
    if not isinstance(value, str) or not value or len(value) > 64:
        return None
    try:
        parsed = dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=dt.UTC)
    return parsed.isoformat()


def lock_dates(lock_path: Path, base_url: str) -> dict[str, str]:
    """Post key -> the publication time the lock recorded for it (none when the lock is
    missing or unreadable: the dates are a help, never a reason to fail)."""
    found: dict[str, str] = {}
    for key, value in ledgerfile.published_times(lock_path, base_url).items():
        if (when := iso(value)) is not None:
            found[key] = when
    return found


def _git(root: Path, *args: str) -> str | None:
    import subprocess  # only when git is to be asked

    try:
        done = subprocess.run(
            ["git", "-c", "core.quotePath=false", "-C", str(root), *args],
            capture_output=True,
            text=True,
            encoding="utf-8",
            errors="replace",
            timeout=GIT_TIMEOUT,
            check=False,
            env={**os.environ, "GIT_OPTIONAL_LOCKS": "0", "LC_ALL": "C"},
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout if done.returncode == 0 else None


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return None


def git_head(root: Path) -> str | None:
    """The commit checked out in the repository holding `root`, read from its files (no
    process to start on a build with nothing to do); None outside a repository or when
    the files say something unusual (then `git rev-parse` is asked)."""
    for folder in (root, *root.parents):
        dot = folder / ".git"
        if dot.is_dir():
            git_dir = dot
        elif dot.is_file():
            text = _read(dot) or ""
            if not text.startswith("gitdir: "):
                return None
            git_dir = (folder / text[len("gitdir: ") :]).resolve()
        else:
            continue
        common = git_dir
        if (shared := _read(git_dir / "commondir")) is not None:
            common = (git_dir / shared).resolve()
        head = _read(git_dir / "HEAD")
        if head is None or not head.startswith("ref: "):
            return head or None  # detached: the commit itself
        ref = head[len("ref: ") :]
        for place in (git_dir, common):
            if (value := _read(place / ref)) is not None:
                return value
        for line in (_read(common / "packed-refs") or "").splitlines():
            if line.endswith(" " + ref):
                return line.split(" ", 1)[0]
        return "unborn " + ref  # no commit yet
    return None


def git_dates(root: Path, folder: Path, cache: Path | None = None) -> dict[str, str]:
    """Project-relative POSIX path -> the author time of the commit that added it, for
    every file under `folder` that git knows; {} without git. `cache`: a file keeping the
    answer by the commit it was read at."""
    head = git_head(root)
    if head is None:
        return {}
    if head.startswith("unborn "):
        return {}
    if cache is not None:
        with contextlib.suppress(OSError, ValueError, TypeError, KeyError):
            kept = json.loads(cache.read_text(encoding="utf-8"))
            if kept["head"] == head and kept["folder"] == str(folder):
                return {str(k): str(v) for k, v in kept["dates"].items()}
    try:
        relative = folder.relative_to(root).as_posix()
    except ValueError:
        return {}
    out = _git(
        root,
        "log",
        "--relative",
        "--no-renames",
        "--diff-filter=A",
        "--format=\x1e%aI",
        "--name-only",
        "--",
        relative or ".",
    )
    if out is None:
        return {}
    dates: dict[str, str] = {}
    for commit in out.split("\x1e")[1:]:  # newest first: the last one seen is the first
        lines = commit.strip("\n").split("\n")
        when = iso(lines[0].strip())
        if when is None:
            continue
        for name in lines[1:]:
            if name:
                dates[name] = when
    if cache is not None:
        with contextlib.suppress(OSError):
            data = {"head": head, "folder": str(folder), "dates": dates}
            quick_write(cache, json.dumps(data, sort_keys=True).encode("utf-8"))
    return dates


def fallback_dates(
    keys: Iterable[str],
    *,
    root: Path,
    content_dir: Path,
    lock_path: Path,
    base_url: str,
    cache: Path | None = None,
) -> dict[str, str]:
    """The date of each post of `keys` (project-relative paths of posts without `date:`)
    that has one: the lock's publication time, else its first commit's time."""
    wanted = list(keys)
    if not wanted:
        return {}
    found = lock_dates(lock_path, base_url)
    dates = {key: found[key] for key in wanted if key in found}
    rest = [key for key in wanted if key not in dates]
    if rest:
        committed = git_dates(root, content_dir, cache)
        dates.update({key: committed[key] for key in rest if key in committed})
    return dates


def project_dates(config: Config, keys: Iterable[str]) -> dict[str, str]:
    """`fallback_dates` of `keys` in the project `config` describes, its commits' dates
    kept in the build's state folder (by HEAD)."""
    return fallback_dates(
        keys,
        root=config.root,
        content_dir=config.site.content_dir,
        lock_path=config.lock_path,
        base_url=config.forem.base_url,
        cache=config.state_dir / "build" / "git-dates.json",
    )


def series_notes(posts: Iterable[Post], config: Config) -> list[Problem]:
    """One warning per series whose parts (some of them) have no date at all: the site
    lists those parts by their files' names."""
    series: dict[str, list[Post]] = {}
    for post in posts:
        if post.series and post.series.strip():
            series.setdefault(post.series.strip(), []).append(post)
    series = {name: parts for name, parts in series.items() if len(parts) > 1}
    undated = [post.key for parts in series.values() for post in parts if post.date is None]
    if not undated:
        return []
    found = project_dates(config, undated)
    notes = []
    for name, parts in sorted(series.items()):
        left = sorted(
            (p for p in parts if p.date is None and p.key not in found), key=lambda p: p.key
        )
        if left:
            notes.append(
                Problem(
                    left[0].key,
                    left[0].line_of("series"),
                    f'series "{name}": {len(left)} of its {len(parts)} parts have no date '
                    "(no date:, no publication recorded in toolkit.lock, no commit in git); "
                    "the site lists them in the order of their file names",
                    Severity.WARNING,
                )
            )
    return notes
