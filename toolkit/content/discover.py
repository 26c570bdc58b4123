"""Which files are posts: `.md` files under the content folder, skipping `_` and `.` names."""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from toolkit.errors import ContentError


def _hidden(name: str) -> bool:
    return name.startswith(("_", "."))


def walk_posts(folder: Path) -> list[Path]:
    """Every post under `folder`, sorted, so that every run sees them in the same order."""
    found: list[Path] = []
    for current, dirs, files in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if not _hidden(d))
        found.extend(Path(current, f) for f in files if f.endswith(".md") and not _hidden(f))
    return sorted(found)


def is_post_path(path: Path, content_dir: Path) -> bool:
    """Whether `path` (absolute) would be a post of `content_dir`."""
    try:
        parts = path.relative_to(content_dir).parts
    except ValueError:
        return False
    return path.suffix == ".md" and not any(_hidden(part) for part in parts)


def find_posts(content_dir: Path, paths: Iterable[str | Path] = ()) -> list[Path]:
    """The posts named by `paths` (files or folders), or all of `content_dir` when none."""
    paths = list(paths)
    if not paths:
        if not content_dir.is_dir():
            raise ContentError(f"{content_dir}: the content folder does not exist")
        return walk_posts(content_dir)
    found: set[Path] = set()
    for given in paths:
        path = Path(given).resolve()
        if path.is_dir():
            found.update(walk_posts(path))
        elif path.is_file():
            found.add(path)
        else:
            raise ContentError(f"{given}: no such file or folder")
    return sorted(found)
