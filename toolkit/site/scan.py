"""One pass over the content folder: posts, files to copy, and the mirror, with their stats.

This is all a build with nothing to do reads from disk (besides its manifest), so it uses
`os.scandir`, whose entries carry their stat, and it parses nothing. The rules are those of
`toolkit.content.discover`: names starting with `_` or `.` are skipped (files and folders),
except the mirror in `_mirror/`, read for comments and the reading list.

Only regular files are taken, and symlinks to files inside the project (`localfiles`); a
symlink that leads outside, a symlinked folder, a FIFO or a device is never opened. Those
leading outside or that are not files are listed in `skipped` with the reason, for the
build to report; a symlinked folder inside the project is left alone, as a walk of
`toolkit.content.discover` leaves it.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from toolkit import localfiles
from toolkit.mirror_layout import PODCASTS
from toolkit.site.mirror_files import COMMENTS, MIRROR, READING_LIST

Stat = tuple[str, int, int]  # absolute path, mtime_ns, size


@dataclass
class ContentScan:
    posts: dict[str, Stat] = field(default_factory=dict)  # post key -> stat
    assets: dict[str, Stat] = field(default_factory=dict)  # content-relative path -> stat
    comments: dict[str, Stat] = field(default_factory=dict)  # file name -> stat
    reading_list: Stat | None = None
    # A team's repository: each writer's reading list (`_mirror/<writer>/readinglist.json`).
    writer_reading_lists: dict[str, Stat] = field(default_factory=dict)  # writer -> stat
    skipped: dict[str, str] = field(default_factory=dict)  # project-relative path -> why


def key_prefix(content_dir: Path, root: Path) -> str:
    """What goes before a content-relative path to make a post key (`config.relative`)."""
    try:
        relative = content_dir.relative_to(root).as_posix()
    except ValueError:
        relative = content_dir.as_posix()
    return "" if relative == "." else relative + "/"


def _file(
    entry: os.DirEntry[str], folders: tuple[str, ...], shown: str, scan: ContentScan
) -> Stat | None:
    """The stat of a directory entry to read as a file, or None (listed in `skipped` when
    it leads outside the project or is not a file)."""
    kind, st, reason = localfiles.classify_entry(entry, folders)
    if kind == localfiles.FILE and st is not None:
        return entry.path, st.st_mtime_ns, st.st_size
    if reason:
        scan.skipped[shown] = reason
    return None


def scan_content(
    content_dir: Path,
    prefix: str,
    folders: tuple[str, ...] = (),
    excluded: Callable[[str], bool] | None = None,
    suffixes: tuple[str, ...] = (".md",),
) -> ContentScan:
    """Every post, file and mirror file of `content_dir`. `folders` are the real paths a
    symlink may lead into (`localfiles.config_folders`); by default the content folder.
    A `.md` file that `excluded` (`[content] exclude`) names is not a post: a file like
    any other, copied only when a post refers to it. `suffixes`: the endings of post files
    (`discover.post_suffixes`: `.mdx` and `.markdown` too for another generator's posts)."""
    folders = folders or localfiles.project_folders(content_dir)
    scan = ContentScan()
    stack = [(str(content_dir), "")]
    while stack:
        folder, relative = stack.pop()
        with os.scandir(folder) as entries:
            for entry in entries:
                name = entry.name
                if name.startswith(("_", ".")):
                    continue
                if entry.is_dir(follow_symlinks=False):
                    stack.append((entry.path, f"{relative}{name}/"))
                    continue
                shown = prefix + relative + name
                found: Stat | None
                if entry.is_file(follow_symlinks=False):  # the common case, inline
                    st = entry.stat(follow_symlinks=False)
                    found = (entry.path, st.st_mtime_ns, st.st_size)
                else:
                    found = _file(entry, folders, shown, scan)
                    if found is None:
                        continue
                if name.endswith(suffixes) and not (excluded and excluded(relative + name)):
                    scan.posts[shown] = found
                else:
                    scan.assets[relative + name] = found
    _scan_mirror(content_dir / MIRROR, f"{prefix}{MIRROR}/", folders, scan)
    scan.posts = dict(sorted(scan.posts.items()))
    scan.assets = dict(sorted(scan.assets.items()))
    return scan


def _folder(path: Path, folders: tuple[str, ...], shown: str, scan: ContentScan) -> bool:
    """Whether `path` is a folder to look into (itself, or a symlink inside the project)."""
    kind, _, reason = localfiles.classify_path(path, folders)
    if reason:
        scan.skipped[shown] = reason
    return kind == localfiles.FOLDER


def _scan_comments(mirror: Path, shown: str, folders: tuple[str, ...], scan: ContentScan) -> None:
    comments = mirror / COMMENTS
    if _folder(comments, folders, shown + COMMENTS, scan):
        with os.scandir(comments) as entries:
            for entry in entries:
                if entry.name.endswith(".json"):
                    found = _file(entry, folders, f"{shown}{COMMENTS}/{entry.name}", scan)
                    if found is not None:
                        scan.comments.setdefault(entry.name, found)


def _scan_mirror(mirror: Path, shown: str, folders: tuple[str, ...], scan: ContentScan) -> None:
    if not _folder(mirror, folders, shown.rstrip("/"), scan):
        return
    _scan_comments(mirror, shown, folders, scan)
    # A team's repository: each writer's threads in `_mirror/<writer>/comments/`.
    with os.scandir(mirror) as entries:
        writers = sorted(
            e.name for e in entries if e.is_dir() and e.name not in (COMMENTS, PODCASTS)
        )
    for writer in writers:
        if _folder(mirror / writer, folders, shown + writer, scan):
            _scan_comments(mirror / writer, f"{shown}{writer}/", folders, scan)
            found = _reading_list(mirror / writer, f"{shown}{writer}/", folders, scan)
            if found is not None:
                scan.writer_reading_lists[writer] = found
    scan.reading_list = _reading_list(mirror, shown, folders, scan)


def _reading_list(
    folder: Path, shown: str, folders: tuple[str, ...], scan: ContentScan
) -> Stat | None:
    reading_list = folder / READING_LIST
    kind, st, reason = localfiles.classify_path(reading_list, folders)
    if kind == localfiles.FILE and st is not None:
        return (str(reading_list), st.st_mtime_ns, st.st_size)
    if reason:
        scan.skipped[shown + READING_LIST] = reason
    return None
