"""Writing an archive from files on disk, streamed: each file is read in chunks and
written into the archive file as it goes, so memory does not grow with the files' size.

zip with `zipfile` (deflate), tar, tar.gz and tar.bz2 with `tarfile`, 7z with `py7zr`
(LZMA2). RAR is not here: only the proprietary `rar` tool writes it. `stopped()` is
asked before every chunk; when it says so, `Stopped` is raised and the caller removes
the half-written file.
"""

from __future__ import annotations

import io
import tarfile
import time
import zipfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

CHUNK = 1024 * 1024
WRITABLE = ("zip", "7z", "tar", "tar.gz", "tar.bz2")
TAR_MODES = {"tar": "w", "tar.gz": "w:gz", "tar.bz2": "w:bz2"}


class Stopped(Exception):
    """The task was cancelled or timed out while its archive was being written."""


@dataclass(frozen=True)
class Entry:
    name: str  # the path inside the archive
    path: Path  # the file on disk
    size: int
    mtime: float


class _Source(io.FileIO):
    """A file read in chunks, asking `stopped()` before each one."""

    def __init__(self, path: Path, stopped: Callable[[], bool]):
        super().__init__(path, "r")
        self._stopped = stopped

    def read(self, size: int | None = -1) -> bytes:
        if self._stopped():
            raise Stopped
        return super().read(CHUNK if size is None or size < 0 else size)

    def readinto(self, buffer: Any) -> int:
        if self._stopped():
            raise Stopped
        return super().readinto(buffer)


def build(fmt: str, out: Path, entries: Sequence[Entry], stopped: Callable[[], bool]) -> None:
    """Write `entries` into a new archive `out` of format `fmt` (one of WRITABLE)."""
    if fmt == "zip":
        _zip(out, entries, stopped)
    elif fmt == "7z":
        _seven_zip(out, entries, stopped)
    elif fmt in TAR_MODES:
        _tar(out, TAR_MODES[fmt], entries, stopped)
    else:
        raise ValueError(f"cannot write {fmt}")


def _zip(out: Path, entries: Sequence[Entry], stopped: Callable[[], bool]) -> None:
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED, allowZip64=True) as archive:
        for entry in entries:
            info = zipfile.ZipInfo(entry.name, date_time=_zip_time(entry.mtime))
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o100644 << 16
            info.file_size = entry.size
            large = entry.size >= zipfile.ZIP64_LIMIT
            with (
                _Source(entry.path, stopped) as source,
                archive.open(info, "w", force_zip64=large) as target,
            ):
                while chunk := source.read(CHUNK):
                    target.write(chunk)


def _zip_time(mtime: float) -> tuple[int, int, int, int, int, int]:
    year, month, day, hour, minute, second = time.gmtime(max(mtime, 315532800))[:6]
    return year, month, day, hour, minute, second


def _tar(out: Path, mode: str, entries: Sequence[Entry], stopped: Callable[[], bool]) -> None:
    options: dict[str, Any] = {"compresslevel": 6} if mode == "w:gz" else {}
    with tarfile.open(out, mode, format=tarfile.PAX_FORMAT, **options) as archive:  # type: ignore[call-overload]
        for entry in entries:
            info = tarfile.TarInfo(entry.name)
            info.size = entry.size
            info.mtime = int(entry.mtime)
            info.mode = 0o644
            with _Source(entry.path, stopped) as source:
                archive.addfile(info, source)


def _seven_zip(out: Path, entries: Sequence[Entry], stopped: Callable[[], bool]) -> None:
    import py7zr

    with py7zr.SevenZipFile(out, "w") as archive:
        for entry in entries:
            with io.BufferedReader(_Source(entry.path, stopped), CHUNK) as source:
                archive.writef(source, entry.name)
