"""Writing the output folder: a file is written only when its bytes change.

Each write goes to a temporary file beside the target and is renamed over it, so a reader
(the watch server, a browser) never sees half a page. What was written is recorded as
`[digest, mtime_ns, size]`; a file whose stat still matches its record is trusted without
being read again.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from toolkit.localfiles import read_regular

Written = tuple[str, int, int, bool]  # digest, mtime_ns, size, whether it was written now


def digest_bytes(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def stat_of(path: Path) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_mtime_ns, st.st_size


def _write_new(path: Path, data: bytes) -> tuple[int, int]:
    """Write a file that does not exist yet, making its folder when needed."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags, 0o666)
    except FileNotFoundError:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, flags, 0o666)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
        st = os.fstat(fd)
    finally:
        os.close(fd)
    return st.st_mtime_ns, st.st_size


def _write(path: Path, data: bytes, exists: bool) -> tuple[int, int]:
    """Write `data` to `path`: in place when the file is new (nothing can be reading it),
    else through a temporary file renamed over it, so a reader sees the old or the new."""
    if not exists:
        return _write_new(path, data)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    mtime_size = _write_new(temporary, data)
    os.replace(temporary, path)
    return mtime_size


def write_if_changed(path: Path, data: bytes, record: list | None, force: bool) -> Written:
    """Write `data` to `path` unless the file already holds exactly these bytes.

    `record` is `[key, digest, mtime_ns, size]` of the last write (or None); `force`
    writes whatever is there (`--clean`).
    """
    digest = digest_bytes(data)
    current = stat_of(path)
    if not force:
        if current is not None and current[1] == len(data):
            if record is not None and record[1] == digest and list(current) == record[2:4]:
                return digest, current[0], current[1], False
            try:
                if path.read_bytes() == data:  # same bytes from another run: keep the file
                    return digest, current[0], current[1], False
            except OSError:
                pass
    mtime, size = _write(path, data, exists=current is not None)
    return digest, mtime, size, True


class UnreadableSource(OSError):
    """The file to copy cannot be read (gone, not allowed, no longer a regular file)."""


def copy_if_changed(source: str, path: Path, record: list | None, key: str,
                    force: bool) -> Written:
    """Copy a file unless the copy is already there (same source stat, untouched copy)."""
    if not force and record is not None and record[0] == key:
        current = stat_of(path)
        if current is not None and list(current) == record[2:4]:
            return record[1], current[0], current[1], False
    try:
        _, data = read_regular(source)  # never waits on a FIFO put in a file's place
    except OSError as exc:
        raise UnreadableSource(exc.strerror or str(exc)) from None
    mtime, size = _write(path, data, exists=stat_of(path) is not None)
    return key, mtime, size, True


def remove_outputs(output_dir: Path, names: list[str]) -> list[str]:
    """Remove files a build no longer makes, and the folders that they leave empty."""
    removed = []
    folders: set[Path] = set()
    for name in names:
        path = output_dir / name
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

