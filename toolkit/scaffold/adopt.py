"""The posts already in a folder `toolkit init` runs in: the folder a `dev-to-git.json`
names its files in, else a folder of front-matter Markdown (`content/`, `blog-posts/`,
`articles/`, `posts/`, or any other one at the top).
"""

from __future__ import annotations

import os
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from toolkit import localfiles
from toolkit.config.sections import DEFAULT_CONFIG_NAME
from toolkit.content.discover import walk_posts
from toolkit.errors import SyncError
from toolkit.scaffold.files import DEV_TO_GIT, SAFE_NAME
from toolkit.sync.devtogit import read_map

# Folders writers' tools keep posts in, looked at first (dev-to-git: blog-posts/,
# devto-cli: posts/ or articles/, Jekyll: _posts/).
KNOWN_FOLDERS = ("content", "blog-posts", "articles", "posts", "_posts", "blog")
# Folders never taken for a blog's posts.
NOT_POSTS = {"node_modules", "vendor", "site", "site-premium", "templates", "docs", "dist"}


@dataclass(frozen=True)
class Adopted:
    """Posts found in the folder before init: where they are and what says so."""

    content_dir: str  # relative to the project's folder, POSIX
    posts: int  # front-matter posts under it
    with_id: int = 0  # of them, with an `id:` in the front matter (devto-cli)
    dev_to_git: int = 0  # entries of dev-to-git.json naming a file under it

    def describe(self) -> str:
        notes = []
        if self.dev_to_git:
            notes.append(f"{DEV_TO_GIT} names {self.dev_to_git}")
        if self.with_id:
            notes.append(f"{self.with_id} with an id:")
        extra = f" ({'; '.join(notes)})" if notes else ""
        plural = "" if self.posts == 1 else "s"
        return f"{self.content_dir}/: {self.posts} post{plural}{extra}"


def is_post(path: Path) -> tuple[bool, bool]:
    """Whether a file starts with a front matter, and whether that holds an `id:` key."""
    try:
        with path.open("rb") as handle:
            head = handle.read(8192)
    except OSError:
        return False, False
    text = head.decode("utf-8", errors="replace").lstrip("\ufeff")
    if not text.startswith("---"):
        return False, False
    lines = text.splitlines()
    if not lines or lines[0].strip() != "---":
        return False, False
    for line in lines[1:]:
        if line.strip() in ("---", "..."):
            break
        if re.match(r"id\s*:\s*\S", line):
            return True, True
    return True, False


def count_posts(folder: Path, project: Path | None = None) -> tuple[int, int]:
    """Front-matter posts under `folder`, and how many of them hold an `id:`; none when
    `folder` leads out of the `project` folder through a symlink (those are not its)."""
    if project is not None and localfiles.leads_out(project, folder):
        return 0, 0
    try:
        paths = walk_posts(folder) if folder.is_dir() else []
    except OSError:  # a folder that cannot be read: its posts, if any, are not known
        return 0, 0
    posts = with_id = 0
    for path in paths:
        found, has_id = is_post(path)
        posts += found
        with_id += has_id
    return posts, with_id


def _dev_to_git_folder(folder: Path) -> tuple[str, int] | None:
    """The folder holding the files `dev-to-git.json` names (their nearest common
    parent, inside the project), and how many entries name a file. A map toolkit cannot
    read adopts nothing here (`toolkit check` and `plan` say what is wrong with it)."""
    try:
        mapping = read_map(folder)
    except (SyncError, OSError):
        return None
    names = [
        PurePosixPath(key)
        for key in mapping
        if all(SAFE_NAME.fullmatch(part) for part in PurePosixPath(key).parts[:-1])
    ]
    if not names:
        return None
    common = list(names[0].parent.parts)
    for name in names[1:]:
        parent = name.parent.parts
        size = 0
        while size < min(len(common), len(parent)) and common[size] == parent[size]:
            size += 1
        common = common[:size]
    if not common:  # posts at the top, or in folders with nothing in common
        return None
    return "/".join(common), len(names)


def adopt(folder: Path) -> Adopted | None:
    """The posts already in `folder`, if any: the folder `dev-to-git.json` names, else the
    first of `KNOWN_FOLDERS` holding posts, else the top-level folder with the most
    front-matter posts."""
    if not folder.is_dir():
        return None
    mapped = _dev_to_git_folder(folder)
    if mapped is not None:
        where, named = mapped
        if localfiles.leads_out(folder, folder / where):  # through a symlink: not the project's
            return None
        posts, with_id = count_posts(folder / where, folder)
        return Adopted(where, posts, with_id, named)
    for name in KNOWN_FOLDERS:
        posts, with_id = count_posts(folder / name, folder)
        if posts:
            return Adopted(name, posts, with_id)
    best: Adopted | None = None
    try:
        entries = sorted(os.scandir(folder), key=lambda e: e.name)
    except OSError:
        return None
    for entry in entries:
        if entry.name.startswith((".", "_")) or entry.name in NOT_POSTS:
            continue
        if not SAFE_NAME.fullmatch(entry.name):
            continue
        if not entry.is_dir(follow_symlinks=False):
            continue
        posts, with_id = count_posts(Path(entry.path), folder)
        if posts and (best is None or posts > best.posts):
            best = Adopted(entry.name, posts, with_id)
    return best


def _plain_folder(name: str) -> bool:
    """A relative folder of plain names (no `..`, no newline): one the generated files
    may name as it is, and init may write in."""
    parts = PurePosixPath(name).parts
    return bool(parts) and all(SAFE_NAME.fullmatch(part) for part in parts)


def named_content_dir(folder: Path) -> str | None:
    """`[site] content_dir` of a `toolkit.toml` already there, as it is written (None: no
    such file, or it names none)."""
    try:
        data = tomllib.loads((folder / DEFAULT_CONFIG_NAME).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    site = data.get("site")
    value = site.get("content_dir") if isinstance(site, dict) else None
    return value if isinstance(value, str) else None


def configured_content_dir(folder: Path) -> str | None:
    """`[site] content_dir` of a `toolkit.toml` already there, when it says a plain
    folder inside the project, not through a symlink leading out of it (another one is
    left to `toolkit check` to report)."""
    value = named_content_dir(folder)
    if value is None or not _plain_folder(value):
        return None
    return None if localfiles.leads_out(folder, folder / value) else value.strip("/")
