"""The files of an export: every regular file under the source folder, by its path
relative to that folder (`posts/hello/index.html`), the name it gets in the archive.

Files from the writer's own folder, but still checked: a symlink that leads outside
the project is not followed, a symlinked folder is not entered (no loops), anything
that is not a regular file is left out, and a name an archive cannot carry faithfully
(not UTF-8, control characters, a backslash or a double quote) is left out. Each file
left out is reported with why; the others go on.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

_REFUSED = set('\\"') | {chr(code) for code in range(32)} | {chr(127)}


@dataclass(frozen=True)
class SourceFile:
    name: str  # relative POSIX path: the entry's name in the archive
    path: Path
    size: int


@dataclass
class Collected:
    files: list[SourceFile] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (relative path, why)

    @property
    def size(self) -> int:
        return sum(file.size for file in self.files)


def _bad_name(name: str) -> str | None:
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return "its name is not valid UTF-8"
    if _REFUSED & set(name):
        return "its name holds a control character, a backslash or a double quote"
    return None


def collect(folder: Path, root: Path, *, skip_hidden: bool) -> Collected:
    """Every file under `folder`, sorted by name; `skip_hidden` leaves out names that
    start with a dot (`.DS_Store`, `.git/`)."""
    found = Collected()
    root = root.resolve()
    for current, dirs, files in os.walk(folder, followlinks=False):
        here = Path(current)
        relative = here.relative_to(folder)
        kept = []
        for name in sorted(dirs):
            shown = (relative / name).as_posix()
            if skip_hidden and name.startswith("."):
                continue
            if (here / name).is_symlink():
                found.skipped.append((shown, "a symlinked folder is not followed"))
                continue
            problem = _bad_name(name)
            if problem:
                found.skipped.append((shown, problem))
                continue
            kept.append(name)
        dirs[:] = kept
        for name in sorted(files):
            if skip_hidden and name.startswith("."):
                continue
            shown = (relative / name).as_posix()
            problem = _bad_name(name) or _problem(here / name, root)
            if problem:
                found.skipped.append((shown, problem))
                continue
            found.files.append(SourceFile(shown, here / name, (here / name).stat().st_size))
    found.files.sort(key=lambda file: file.name)
    return found


def _problem(path: Path, root: Path) -> str | None:
    """Why `path` is left out, or None."""
    try:
        if path.is_symlink():
            target = path.resolve(strict=True)
            if not target.is_relative_to(root):
                return "a symlink that leads outside the project is not followed"
        mode = path.stat().st_mode
    except (OSError, RuntimeError):
        return "it cannot be read (a broken symlink?)"
    if not stat.S_ISREG(mode):
        return "not a regular file"
    if not os.access(path, os.R_OK):
        return "it cannot be read"
    return None
