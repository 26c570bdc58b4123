"""Is a downloaded archive the one asked for? It opens as its format, every entry's name
is a safe relative path (nothing absolute, no `..`, no backslash, no drive), its files
are exactly the files sent with their sizes, and every file entry's bytes are the bytes
sent: each entry is read through and its SHA-256 compared with the one taken as the file
went up (zip and 7z check their own CRCs on the way too). A same-size archive with one
byte changed inside a file is refused, whatever the format.

Reading every entry decompresses the archive once: a truncated tar.gz or tar.bz2 fails
there. RAR can only be listed by the proprietary unrar: a RAR archive
is checked for its signature only, and the caller says so.

Entries that are folders (a name ending in `/`, or a tar directory) are allowed when
they hold sent files; links, devices and the like are not.

7z is read with py7zr, toolkit's optional `7z` extra: `require_reader` refuses a 7z export
without it before anything is sent.
"""

from __future__ import annotations

import hashlib
import tarfile
import zipfile
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import IO, NamedTuple

from toolkit.errors import BrokenDownload, ExportError

RAR_SIGNATURES = (b"Rar!\x1a\x07\x00", b"Rar!\x1a\x07\x01\x00")
TAR_READ = {"tar": "r:", "tar.gz": "r:gz", "tar.bz2": "r:bz2"}
LISTED = 3  # names shown in a message
NO_PY7ZR = (
    "export: a 7z archive is checked with py7zr, which is not installed (install "
    "toolkit with its 7z extra: pipx install --force "
    "'toolkit[7z] @ git+https://github.com/toolkit-docs/toolkit', or "
    "pip install -e '.[7z]' in a clone)"
)
CHUNK = 1024 * 1024


class Sent(NamedTuple):
    """A file as it went up: its size and the SHA-256 (hex) of its bytes."""

    size: int
    sha256: str


def _digest(source: IO[bytes]) -> str:
    digest = hashlib.sha256()
    while chunk := source.read(CHUNK):
        digest.update(chunk)
    return digest.hexdigest()


# An entry as read: (its size, the SHA-256 of its bytes); (None, None) for a folder.
Read = tuple[int | None, str | None]


def unsafe(name: str) -> bool:
    """A name that could lead out of the folder it is extracted into."""
    if not name or name.startswith(("/", "\\")) or "\\" in name:
        return True
    if len(name) > 1 and name[1] == ":":  # a drive: C:...
        return True
    parts = name.rstrip("/").split("/")
    return any(part in ("", ".", "..") for part in parts) or any(
        ord(c) < 32 or ord(c) == 127 for c in name
    )


def require_reader(fmt: str) -> None:
    """`ExportError` when an archive of `fmt` could not be checked once downloaded (7z
    without py7zr): said before anything is uploaded, so no task is paid for in vain."""
    if fmt == "7z":
        try:
            import py7zr.io  # noqa: F401
        except ImportError:
            raise ExportError(NO_PY7ZR) from None


def verify(path: Path, fmt: str, expected: Mapping[str, Sent]) -> int:
    """Check the archive at `path` against `expected` ({name: Sent}); the number of file
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
    except ExportError:  # BrokenDownload, or a reader missing
        raise
    except Exception as exc:  # every library has its own errors for a broken archive
        raise BrokenDownload(
            f"the downloaded {fmt} archive does not open: {type(exc).__name__}: {exc}"
        ) from None
    return _compare(entries, expected)


def _zip(path: Path) -> Iterator[tuple[str, Read]]:
    with zipfile.ZipFile(path) as archive:
        for info in archive.infolist():
            if info.is_dir():
                yield _entry(info.filename, None, None)
                continue
            try:
                with archive.open(info) as source:  # checks the entry's CRC at its end
                    digest = _digest(source)
            except zipfile.BadZipFile:
                raise BrokenDownload(
                    f"the downloaded zip archive is damaged: entry {info.filename!r}"
                ) from None
            yield _entry(info.filename, info.file_size, digest)


def _tar(path: Path, mode: str) -> Iterator[tuple[str, Read]]:
    with tarfile.open(path, mode) as archive:  # type: ignore[call-overload]
        for member in archive:
            if member.isdir():
                yield _entry(member.name, None, None)
            elif member.isreg():
                source = archive.extractfile(member)
                if source is None:
                    raise BrokenDownload(f"the archive's entry {member.name!r} cannot be read")
                with source:
                    yield _entry(member.name, member.size, _digest(source))
            else:
                raise BrokenDownload(f"the archive holds {member.name!r}, which is not a file")


def _seven_zip(path: Path) -> Iterator[tuple[str, Read]]:
    require_reader("7z")
    import py7zr
    import py7zr.io

    # Each file's SHA-256 as it is decompressed, in one read (its CRC is checked too).
    factory = py7zr.io.HashIOFactory()  # type: ignore[no-untyped-call]
    with py7zr.SevenZipFile(path, "r") as archive:
        infos = archive.list()
        archive.extractall(factory=factory)
    for info in infos:
        if info.is_directory:
            yield _entry(info.filename, None, None)
        else:
            made = factory.products.get(info.filename)
            yield _entry(
                info.filename,
                info.uncompressed,
                made.hash.hexdigest() if made is not None else None,
            )


def _entry(name: str, size: int | None, digest: str | None) -> tuple[str, Read]:
    if unsafe(name):
        raise BrokenDownload(f"the archive holds an unsafe entry name: {name!r}")
    return (name.rstrip("/") + "/" if size is None else name), (size, digest)


def _compare(entries: Mapping[str, Read], expected: Mapping[str, Sent]) -> int:
    """The number of file entries, once they are exactly the files expected."""
    files = {name: read for name, read in entries.items() if read[0] is not None}
    folders = {name for name, read in entries.items() if read[0] is None}
    missing = sorted(set(expected) - set(files))
    extra = sorted(set(files) - set(expected))
    if missing or extra:
        parts = []
        if missing:
            parts.append(f"{len(missing)} missing ({_names(missing)})")
        if extra:
            parts.append(f"{len(extra)} not sent ({_names(extra)})")
        raise BrokenDownload("the archive's files are not the files sent: " + "; ".join(parts))
    wrong = sorted(name for name, (size, _) in files.items() if size != expected[name].size)
    if wrong:
        raise BrokenDownload(
            f"the archive's files differ in size from the files sent: {_names(wrong)}"
        )
    changed = sorted(name for name, (_, digest) in files.items() if digest != expected[name].sha256)
    if changed:
        raise BrokenDownload(
            f"the archive's files differ in content from the files sent: {_names(changed)}"
        )
    parents = {
        "/".join(name.split("/")[:depth]) + "/"
        for name in expected
        for depth in range(1, name.count("/") + 1)
    }
    stray = sorted(folders - parents)
    if stray:
        raise BrokenDownload(f"the archive holds folders that no file sent is in: {_names(stray)}")
    return len(files)


def _names(names: list[str]) -> str:
    shown = ", ".join(repr(name) for name in names[:LISTED])
    return shown + (f" and {len(names) - LISTED} more" if len(names) > LISTED else "")
