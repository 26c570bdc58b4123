"""Writing the output folder: a file is written only when its bytes change.

Writes go through `toolkit.fsutil` (`quick_write`: a reader, the watch server or a
browser, never sees half a page). What was written is recorded as
a `manifest.OutputRecord`; a file whose stat still matches its record is trusted without
being read again.

The output folder is toolkit's own, and a repository can commit a symlink in it: before a
file is written, a folder on its way that is a symlink is removed (the link, never what
it leads to) and made again as a folder, so nothing is written through it; a stale file
under such a link is not removed.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import stat
from pathlib import Path
from typing import NamedTuple

from toolkit.fsutil import naming, quick_write
from toolkit.fsutil import write_if_changed as fsutil_write_if_changed
from toolkit.localfiles import read_regular
from toolkit.site.manifest import OutputRecord


class Written(NamedTuple):
    """A file of the output folder as it is after a write: its digest and stat."""

    digest: str
    mtime_ns: int
    size: int
    written: bool  # whether it was written now


def digest_bytes(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def stat_of(path: Path) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_mtime_ns, st.st_size


def _written(path: Path, digest: str, written: bool) -> Written:
    st = os.stat(path)
    return Written(digest, st.st_mtime_ns, st.st_size, written)


def _link_on_the_way(root: Path, path: Path) -> str | None:
    """The first folder between `root` and the file `path` that is a symlink, if any (one
    `lstat` per folder of its name, on writes only)."""
    top, folder = str(root), str(path.parent)
    if not folder.startswith(top):
        return None
    current = top
    for part in folder[len(top) :].split(os.sep):
        if not part:
            continue
        current = os.path.join(current, part)
        try:
            if stat.S_ISLNK(os.lstat(current).st_mode):
                return current
        except OSError:  # not there yet: the write makes it
            return None
    return None


def _unlinked_on_the_way(root: Path | None, path: Path) -> None:
    """Remove a symlink standing where a folder of `path` goes (see the module's text)."""
    if root is not None:
        link = _link_on_the_way(root, path)
        if link is not None:
            with naming(link):
                os.unlink(link)


def write_if_changed(
    path: Path, data: bytes, record: OutputRecord | None, force: bool, root: Path | None = None
) -> Written:
    """`toolkit.fsutil.write_if_changed` for the output folder, with its manifest record.

    `record` is that of the last write (or None): a file whose stat still matches it is
    trusted without being read. `force` writes whatever is there (`--clean`). `root`: the
    output folder, in which no symlinked folder is written through.
    """
    digest = digest_bytes(data)
    if not force and record is not None and record.digest == digest:
        current = stat_of(path)
        if current == (record.mtime_ns, record.size):
            return Written(digest, record.mtime_ns, record.size, False)
    _unlinked_on_the_way(root, path)
    if record is None:  # never written by a build: mostly nothing there (a cold build)
        created = _create(path, data)
        if created is not None:
            return Written(digest, created[0], created[1], True)
    if force:
        quick_write(path, data)
        return _written(path, digest, True)
    return _written(path, digest, fsutil_write_if_changed(path, data, durable=False))


def _create(path: Path, data: bytes) -> tuple[int, int] | None:
    """Write `data` to a new file at `path` (and its folder, when missing): the file's
    (mtime_ns, size), or None when there is a file there already. Five system calls for a
    page of a cold build, where looking first (stat, lstat, a failed open) took eight."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
    try:  # the folder first: a new page is mostly in a new folder (a post's)
        os.mkdir(path.parent)
    except FileExistsError:
        pass
    except FileNotFoundError:
        path.parent.mkdir(parents=True, exist_ok=True)
    try:
        fd = os.open(path, flags, 0o666)
    except FileExistsError:
        return None
    try:
        with naming(path):  # a failed write (a full disk) names the page
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            st = os.fstat(fd)
    except BaseException:
        os.close(fd)
        with contextlib.suppress(OSError):
            os.unlink(path)  # no half-written page is left for the next build to trust
        raise
    os.close(fd)
    return st.st_mtime_ns, st.st_size


class UnreadableSource(OSError):
    """The file to copy cannot be read (gone, not allowed, no longer a regular file)."""


def copy_if_changed(
    source: str,
    path: Path,
    record: OutputRecord | None,
    key: str,
    force: bool,
    root: Path | None = None,
) -> Written:
    """Copy a file unless the copy is already there (same source stat, untouched copy);
    `root` as for `write_if_changed`."""
    if not force and record is not None and record.key == key:
        current = stat_of(path)
        if current == (record.mtime_ns, record.size):
            return Written(record.digest, record.mtime_ns, record.size, False)
    try:
        _, data = read_regular(source)  # never waits on a FIFO put in a file's place
    except OSError as exc:
        raise UnreadableSource(exc.strerror or str(exc)) from None
    _unlinked_on_the_way(root, path)
    quick_write(path, data)
    return _written(path, key, True)


def remove_outputs(output_dir: Path, names: list[str]) -> list[str]:
    """Remove files a build no longer makes, and the folders that they leave empty."""
    removed = []
    folders: set[Path] = set()
    for name in names:
        path = output_dir / name
        if _link_on_the_way(output_dir, path) is not None:
            continue  # what lies there is not the build's
        try:
            path.unlink()
        except FileNotFoundError:
            pass
        except OSError:
            continue
        removed.append(name)
        folders.update(p for p in path.parents if output_dir in p.parents)
    for folder in sorted(folders, key=lambda p: len(p.parts), reverse=True):
        try:
            folder.rmdir()  # only when empty: files we did not write stay
        except OSError:
            pass
    return removed
