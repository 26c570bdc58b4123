"""Which files are posts: `.md` files under the content folder, skipping `_` and `.` names.

A post is a regular file, or a symlink to one inside the project (`toolkit.localfiles`).
A symlink leading outside the project, a FIFO or a device is skipped without being
opened, and returned with the reason for `toolkit check` to report, as the site's scan
reports it. A symlinked folder inside the project is not walked (nor by the scan).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from toolkit import localfiles
from toolkit.errors import ContentError

Skipped = list[tuple[Path, str]]  # (path, why it was not read)


def _hidden(name: str) -> bool:
    return name.startswith(("_", "."))


def walk_posts(
    folder: Path, folders: tuple[str, ...] = (), skipped: Skipped | None = None
) -> list[Path]:
    """Every post under `folder`, sorted, so that every run sees them in the same order.

    `folders`: where a symlink may lead (by default `folder` itself); what is refused is
    added to `skipped` when given.
    """
    folders = folders or localfiles.project_folders(folder)
    refused: Skipped = [] if skipped is None else skipped
    found: list[str] = []
    stack = [str(folder)]
    while stack:
        with os.scandir(stack.pop()) as entries:
            for entry in entries:
                if _hidden(entry.name):
                    continue
                if entry.is_dir(follow_symlinks=False):
                    stack.append(entry.path)
                    continue
                if entry.is_file(follow_symlinks=False):
                    if entry.name.endswith(".md"):
                        found.append(entry.path)
                    continue
                kind, _, reason = localfiles.classify_entry(entry, folders)
                if kind == localfiles.FILE and entry.name.endswith(".md"):
                    found.append(entry.path)
                elif reason:  # what the site's scan reports too
                    refused.append((Path(entry.path), reason))
    if os.name == "nt":  # pragma: no cover - parts compared without case there
        return sorted(Path(path) for path in found)
    # In the order of the paths' parts, as `sorted` orders POSIX `Path`s, on the strings:
    # sorting a thousand `Path`s costs more than making them.
    found.sort(key=lambda path: path.split(os.sep))
    return [Path(path) for path in found]


def is_post_path(path: Path, content_dir: Path) -> bool:
    """Whether `path` (absolute) would be a post of `content_dir`."""
    try:
        parts = path.relative_to(content_dir).parts
    except ValueError:
        return False
    return path.suffix == ".md" and not any(_hidden(part) for part in parts)


def find_posts(
    content_dir: Path,
    paths: Iterable[str | Path] = (),
    folders: tuple[str, ...] = (),
    skipped: Skipped | None = None,
) -> list[Path]:
    """The posts named by `paths` (files or folders), or all of `content_dir` when none.

    `folders` are the real paths a symlink may lead into (`localfiles.config_folders`;
    by default the content folder); what is refused goes to `skipped` when given. A path
    named outright is taken as named, unless it is a symlink from inside the project to
    outside it.
    """
    folders = folders or localfiles.project_folders(content_dir)
    refused: Skipped = [] if skipped is None else skipped
    paths = list(paths)
    if not paths:
        if not content_dir.is_dir():
            raise ContentError(f"{content_dir}: the content folder does not exist")
        return walk_posts(content_dir, folders, refused)
    found: set[Path] = set()
    for given in paths:
        named = Path(os.path.abspath(given))
        path = named.resolve()
        # Where the name itself lies (its folder resolved, not the name).
        place = os.path.join(os.path.realpath(named.parent), named.name)
        if localfiles.within(place, folders) and not localfiles.within(str(path), folders):
            refused.append((named, localfiles.outside_message(str(named))))
            continue
        kind, _, reason = localfiles.classify_path(path, folders)
        if kind == localfiles.FOLDER:
            found.update(walk_posts(path, folders, refused))
        elif kind == localfiles.FILE:
            found.add(path)
        elif reason:
            refused.append((named, reason))
        else:
            raise ContentError(f"{given}: no such file or folder")
    return sorted(found)
