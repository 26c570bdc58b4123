"""Is a downloaded archive the one asked for? It opens as its format, every entry's name
is a safe relative path (nothing absolute, no `..`, no backslash, no drive), its files
are exactly the files sent with their sizes, and (zip, 7z) every entry's checksum holds.

A tar's entries are read through to its end, which decompresses it: a truncated tar.gz
or tar.bz2 fails there. RAR can only be listed by the proprietary unrar: a RAR archive
is checked for its signature only, and the caller says so.

Entries that are folders (a name ending in `/`, or a tar directory) are allowed when
they hold sent files; links, devices and the like are not.
"""

from __future__ import annotations

import tarfile
import zipfile
from collections.abc import Iterator, Mapping
from pathlib import Path

from toolkit.errors import BrokenDownload

RAR_SIGNATURES = (b"Rar!\x1a\x07\x00", b"Rar!\x1a\x07\x01\x00")
TAR_READ = {"tar": "r:", "tar.gz": "r:gz", "tar.bz2": "r:bz2"}
LISTED = 3  # names shown in a message


def unsafe(name: str) -> bool:
    """A name that could lead out of the folder it is extracted into."""
    if not name or name.startswith(("/", "\\")) or "\\" in name:
        return True
    if len(name) > 1 and name[1] == ":":  # a drive: C:...
        return True
    parts = name.rstrip("/").split("/")
    return any(part in ("", ".", "..") for part in parts) or any(
        ord(c) < 32 or ord(c) == 127 for c in name)


def verify(path: Path, fmt: str, expected: Mapping[str, int]) -> int:
    """Check the archive at `path` against `expected` ({name: size}); the number of file
    entries, or `BrokenDownload` saying what is wrong."""
    if fmt == "rar":
        with path.open("rb") as archive:
            head = archive.read(8)
        if not head.startswith(RAR_SIGNATURES):
            raise BrokenDownload("the download is not a RAR archive")
        return len(expected)
    try:
        if fmt == "zip":
            entries = dict(_zip(path))
        elif fmt == "7z":
            entries = dict(_seven_zip(path))
        elif fmt in TAR_READ:
            entries = dict(_tar(path, TAR_READ[fmt]))
        else:
            raise BrokenDownload(f"cannot check a {fmt} archive")
    except BrokenDownload:
        raise
    except Exception as exc:  # every library has its own errors for a broken archive
        raise BrokenDownload(f"the downloaded {fmt} archive does not open: "
                             f"{type(exc).__name__}: {exc}") from None
    return _compare(entries, expected)


def _zip(path: Path) -> Iterator[tuple[str, int | None]]:
    with zipfile.ZipFile(path) as archive:
        infos = archive.infolist()
        for info in infos:
            yield _entry(info.filename, None if info.is_dir() else info.file_size)
        bad = archive.testzip()
        if bad is not None:
            raise BrokenDownload(f"the downloaded zip archive is damaged: entry {bad!r}")


def _tar(path: Path, mode: str) -> Iterator[tuple[str, int | None]]:
    with tarfile.open(path, mode) as archive:  # type: ignore[call-overload]
        for member in archive:
            if member.isdir():
                yield _entry(member.name, None)
            elif member.isreg():
                yield _entry(member.name, member.size)
            else:
                raise BrokenDownload(f"the archive holds {member.name!r}, which is not a file")


def _seven_zip(path: Path) -> Iterator[tuple[str, int | None]]:
    import py7zr

    with py7zr.SevenZipFile(path, "r") as archive:
        for info in archive.list():
            yield _entry(info.filename, None if info.is_directory else info.uncompressed)
        bad = archive.testzip()
        if bad is not None:
            raise BrokenDownload(f"the downloaded 7z archive is damaged: entry {bad!r}")


def _entry(name: str, size: int | None) -> tuple[str, int | None]:
    if unsafe(name):
        raise BrokenDownload(f"the archive holds an unsafe entry name: {name!r}")
    return (name.rstrip("/") + "/" if size is None else name), size


def _compare(entries: Mapping[str, int | None], expected: Mapping[str, int]) -> int:
    """The number of file entries, once they are exactly the files expected."""
    files = {name: size for name, size in entries.items() if size is not None}
    folders = {name for name, size in entries.items() if size is None}
    missing = sorted(set(expected) - set(files))
    extra = sorted(set(files) - set(expected))
    if missing or extra:
        parts = []
        if missing:
            parts.append(f"{len(missing)} missing ({_names(missing)})")
        if extra:
            parts.append(f"{len(extra)} not sent ({_names(extra)})")
        raise BrokenDownload("the archive's files are not the files sent: " + "; ".join(parts))
    wrong = sorted(name for name, size in files.items() if size != expected[name])
    if wrong:
        raise BrokenDownload(f"the archive's files differ in size from the files sent: "
                             f"{_names(wrong)}")
    parents = {"/".join(name.split("/")[:depth]) + "/" for name in expected
               for depth in range(1, name.count("/") + 1)}
    stray = sorted(folders - parents)
    if stray:
        raise BrokenDownload(f"the archive holds folders that no file sent is in: {_names(stray)}")
    return len(files)


def _names(names: list[str]) -> str:
    shown = ", ".join(repr(name) for name in names[:LISTED])
    return shown + (f" and {len(names) - LISTED} more" if len(names) > LISTED else "")
