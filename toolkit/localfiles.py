"""Which local files toolkit may read: regular files, and symlinks that stay in the project.

A content or templates folder may hold files from someone else (a pull request, an
unpacked archive), so a walk never follows a symlink whose target lies outside the
project: the folder of `toolkit.toml`, plus the content and templates folders it names.
It never opens anything that is not a regular file either: opening a FIFO blocks until a
writer comes, and a device never ends. Each refusal is a one-line reason, reported by the
caller as a warning; the walk carries on.

The type of an entry comes from `os.scandir` for free, so plain files and folders cost no
extra system call; only a symlink's target is looked at (its real path and its stat).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    from toolkit.config import Config

FILE = "file"
FOLDER = "folder"

_KINDS = (
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
)


def project_folders(*folders: str | Path) -> tuple[str, ...]:
    """The real paths of the folders whose files may be read, without repeats."""
    return tuple(dict.fromkeys(os.path.realpath(folder) for folder in folders))


def config_folders(config: Config) -> tuple[str, ...]:
    """The folders of a project: its root and the content and templates folders it names
    (the templates may lie elsewhere when `toolkit.toml` names that place outright: the
    writer chose it; a folder named inside the project never leads out of it, as loading
    the configuration checks, and the posts' folder is always in the project). The
    configuration holds them resolved already, so this costs no system call."""
    site = config.site
    return tuple(
        dict.fromkeys(str(path) for path in (config.root, site.content_dir, site.templates_dir))
    )


def within(real: str, folders: tuple[str, ...]) -> bool:
    """Whether the real path `real` is one of `folders` or lies under one of them."""
    return any(
        real == folder or real.startswith(folder.rstrip(os.sep) + os.sep) for folder in folders
    )


def leads_out(root: str | Path, path: str | Path) -> bool:
    """Whether `path` (under `root`, or named as if it were) lies outside `root` once its
    symlinks are followed: a folder of the project that is a link to elsewhere, or lies
    under one. What does not exist yet is judged by the folders on its way that do."""
    return not within(os.path.realpath(path), (os.path.realpath(root),))


def kind_of(mode: int) -> str:
    for test, name in _KINDS:
        if test(mode):
            return name
    return "not a file or folder"


def not_regular(mode: int) -> str:
    return f"not a regular file ({kind_of(mode)}), skipped"


def outside_message(path: str) -> str:
    what = FOLDER if os.path.isdir(path) else FILE
    return f"symlink to a {what} outside the project, not followed"


def follow_symlink(path: str, folders: tuple[str, ...]) -> tuple[os.stat_result | None, str]:
    """The stat of what the symlink `path` names, when it may be followed; else why not."""
    real = os.path.realpath(path)
    if not within(real, folders):
        return None, outside_message(path)
    try:
        return os.stat(real), ""
    except OSError:
        return None, "symlink to nothing, skipped"


def classify(
    path: str, lstat: os.stat_result, folders: tuple[str, ...]
) -> tuple[str | None, os.stat_result | None, str]:
    """`(FILE or FOLDER, stat of what it names, "")` for a path that may be used, or
    `(None, None, reason)` for one to skip. `lstat` is the path's own stat."""
    st = lstat
    if stat.S_ISLNK(lstat.st_mode):
        target, reason = follow_symlink(path, folders)
        if target is None:
            return None, None, reason
        st = target
    if stat.S_ISREG(st.st_mode):
        return FILE, st, ""
    if stat.S_ISDIR(st.st_mode):
        return FOLDER, st, ""
    return None, None, not_regular(st.st_mode)


def classify_entry(
    entry: os.DirEntry[str], folders: tuple[str, ...]
) -> tuple[str | None, os.stat_result | None, str]:
    """`classify` for a directory entry; plain files and folders need no system call
    beyond the stat of a file, which the caller needs anyway."""
    if entry.is_dir(follow_symlinks=False):
        return FOLDER, None, ""
    return classify(entry.path, entry.stat(follow_symlinks=False), folders)


def classify_path(
    path: str | Path, folders: tuple[str, ...]
) -> tuple[str | None, os.stat_result | None, str]:
    """`classify` for a path; a path that does not exist gives `(None, None, "")`."""
    try:
        lstat = os.lstat(path)
    except OSError:
        return None, None, ""
    return classify(str(path), lstat, folders)


def read_regular(path: str | Path, limit: int | None = None) -> tuple[os.stat_result, bytes]:
    """The bytes of a regular file (of at most `limit` bytes, when given), with its stat.

    Opened without blocking and checked on the open descriptor, so a FIFO or device that
    took a file's place after a walk is refused rather than waited on. Raises `OSError`,
    `NotRegularFile` or `TooLarge`.
    """
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    fd = os.open(path, flags)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise NotRegularFile(kind_of(st.st_mode))
        if limit is not None and st.st_size > limit:
            raise TooLarge(st.st_size)
        data = _read_all(fd, st.st_size, limit)
    finally:
        os.close(fd)
    if limit is not None and len(data) > limit:  # it grew after the stat
        raise TooLarge(len(data))
    return st, data


def _read_all(fd: int, size: int, limit: int | None) -> bytes:
    """Read a regular file to its end (or to `limit` + 1 bytes), expected to hold `size`
    bytes: one read() asking for one byte more, as a short read of a regular file means
    its end (no buffer of the io module: no seek, no tty check, no 8 MB buffer)."""
    most = -1 if limit is None else limit + 1
    want = size + 1 if most < 0 else min(size + 1, most)
    data = os.read(fd, want)
    if len(data) < want or len(data) == most:
        return data
    chunks = [data]  # it grew since the stat: read on to its end, or past the limit
    total = len(data)
    while most < 0 or total < most:
        chunk = os.read(fd, 1 << 20 if most < 0 else min(1 << 20, most - total))
        if not chunk:
            break
        chunks.append(chunk)
        total += len(chunk)
    return b"".join(chunks)


class NotRegularFile(OSError):
    """The path names a FIFO, socket or device; `kind` says which."""

    def __init__(self, kind: str):
        super().__init__(f"not a regular file ({kind})")
        self.kind = kind


class TooLarge(OSError):
    """The file holds more bytes than the caller accepts; `size` is how many."""

    def __init__(self, size: int):
        super().__init__(f"{size} bytes")
        self.size = size
