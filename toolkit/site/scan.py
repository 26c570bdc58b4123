"""One pass over the content folder: posts, files to copy, and the mirror, with their stats.

This is all a build with nothing to do reads from disk (besides its manifest), so it uses
`os.scandir`, whose entries carry their stat, and it parses nothing. The rules are those of
`toolkit.content.discover`: names starting with `_` or `.` are skipped (files and folders),
except the mirror in `_mirror/`, read for comments and the reading list.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from toolkit.site.mirror import COMMENTS, MIRROR, READING_LIST

Stat = tuple[str, int, int]  # absolute path, mtime_ns, size


@dataclass
class ContentScan:
    posts: dict[str, Stat] = field(default_factory=dict)  # post key -> stat
    assets: dict[str, Stat] = field(default_factory=dict)  # content-relative path -> stat
    comments: dict[str, Stat] = field(default_factory=dict)  # file name -> stat
    reading_list: Stat | None = None


def key_prefix(content_dir: Path, root: Path) -> str:
    """What goes before a content-relative path to make a post key (`config.relative`)."""
    try:
        relative = content_dir.relative_to(root).as_posix()
    except ValueError:
        relative = content_dir.as_posix()
    return "" if relative == "." else relative + "/"


def _stat(entry: os.DirEntry) -> Stat:
    st = entry.stat()
    return entry.path, st.st_mtime_ns, st.st_size


def scan_content(content_dir: Path, prefix: str) -> ContentScan:
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
                elif entry.is_file():
                    if name.endswith(".md"):
                        scan.posts[prefix + relative + name] = _stat(entry)
                    else:
                        scan.assets[relative + name] = _stat(entry)
    mirror = content_dir / MIRROR
    if mirror.is_dir():
        comments = mirror / COMMENTS
        if comments.is_dir():
            with os.scandir(comments) as entries:
                for entry in entries:
                    if entry.name.endswith(".json") and entry.is_file():
                        scan.comments[entry.name] = _stat(entry)
        reading_list = mirror / READING_LIST
        try:
            st = reading_list.stat()
        except FileNotFoundError:
            pass
        else:
            scan.reading_list = (str(reading_list), st.st_mtime_ns, st.st_size)
    scan.posts = dict(sorted(scan.posts.items()))
    scan.assets = dict(sorted(scan.assets.items()))
    return scan
