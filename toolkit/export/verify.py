"""Is a downloaded archive the one asked for? It opens as its format, every entry's name
is a safe relative path (nothing absolute, no `..`, no backslash, no drive), its files
are exactly the files sent with their sizes, and every file entry's bytes are the bytes
sent: each entry is read through and its SHA-256 compared with the one taken as the file
went up (zip and 7z check their own CRCs on the way too). A same-size archive with one
byte changed inside a file is refused, whatever the format.

What the listing alone condemns is refused before a byte of an entry is read: a zip's
central directory and a 7z's header are checked whole (names, which files, sizes,
folders) first; a tar, a stream with no listing ahead, has each member's name and size
checked as it comes, before its bytes are read, and ends at the first that is not as
sent. So a hostile archive is never decompressed and hashed only to be refused for a
name or a size. A name twice among the files is refused: extractors differ on which copy
they keep.

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
from collections.abc import Collection, Mapping
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
            return _zip(path, expected)
        if fmt == "7z":
            return _seven_zip(path, expected)
        if fmt in TAR_READ:
            return _tar(path, TAR_READ[fmt], expected)
        raise BrokenDownload(f"cannot check a {fmt} archive")
    except ExportError:  # BrokenDownload, or a reader missing
        raise
    except Exception as exc:  # every library has its own errors for a broken archive
        raise BrokenDownload(
            f"the downloaded {fmt} archive does not open: {type(exc).__name__}: {exc}"
        ) from None


def _zip(path: Path, expected: Mapping[str, Sent]) -> int:
    with zipfile.ZipFile(path) as archive:  # reads the central directory only
        infos = archive.infolist()
        count = _check_listing(
            [(info.filename, None if info.is_dir() else info.file_size) for info in infos],
            expected,
        )
        for info in infos:
            if info.is_dir():
                continue
            try:
                with archive.open(info) as source:  # checks the entry's CRC at its end
                    digest = _digest(source)
            except zipfile.BadZipFile:
                raise BrokenDownload(
                    f"the downloaded zip archive is damaged: entry {info.filename!r}"
                ) from None
            _check_content(info.filename, digest, expected)
    return count


def _tar(path: Path, mode: str, expected: Mapping[str, Sent]) -> int:
    """A tar is a stream with no listing ahead: each member is checked as it comes, its
    name and size before its bytes are read, and the first that is not as sent ends it."""
    parents = _parents(expected)
    seen: set[str] = set()
    with tarfile.open(path, mode) as archive:  # type: ignore[call-overload]
        for member in archive:
            _check_name(member.name)
            if member.isdir():
                _check_folders([member.name], parents)
                continue
            if not member.isreg():
                raise BrokenDownload(f"the archive holds {member.name!r}, which is not a file")
            if member.name in seen:
                raise _twice([member.name])
            if member.name not in expected:
                raise BrokenDownload(
                    "the archive's files are not the files sent: it holds "
                    f"{member.name!r}, which was not sent"
                )
            _check_sizes({member.name: member.size}, expected)
            seen.add(member.name)
            source = archive.extractfile(member)
            if source is None:
                raise BrokenDownload(f"the archive's entry {member.name!r} cannot be read")
            with source:
                _check_content(member.name, _digest(source), expected)
    _check_files(seen, expected)
    return len(seen)


def _seven_zip(path: Path, expected: Mapping[str, Sent]) -> int:
    require_reader("7z")
    import py7zr
    import py7zr.io

    with py7zr.SevenZipFile(path, "r") as archive:
        infos = archive.list()  # from the header: no entry is decompressed yet
        count = _check_listing(
            [(info.filename, None if info.is_directory else info.uncompressed) for info in infos],
            expected,
        )
        # Each file's SHA-256 as it is decompressed, in one read (its CRC is checked too).
        factory = py7zr.io.HashIOFactory()  # type: ignore[no-untyped-call]
        archive.extractall(factory=factory)
    for info in infos:
        if not info.is_directory:
            made = factory.products.get(info.filename)
            _check_content(
                info.filename, made.hash.hexdigest() if made is not None else None, expected
            )
    return count


# An entry as listed: its name and its size, None for a folder.
Listed = tuple[str, int | None]


def _check_listing(listing: list[Listed], expected: Mapping[str, Sent]) -> int:
    """The number of file entries, once the listing alone (names, which files, their
    sizes, folders) is what was sent: said before any entry's bytes are read."""
    for name, _ in listing:
        _check_name(name)
    files: dict[str, int] = {}
    twice: set[str] = set()
    for name, size in listing:
        if size is not None:
            if name in files:
                twice.add(name)
            files[name] = size
    if twice:
        raise _twice(sorted(twice))
    _check_files(files, expected)
    _check_sizes(files, expected)
    _check_folders([name for name, size in listing if size is None], _parents(expected))
    return len(files)


def _check_name(name: str) -> None:
    if unsafe(name):
        raise BrokenDownload(f"the archive holds an unsafe entry name: {name!r}")


def _twice(names: list[str]) -> BrokenDownload:
    return BrokenDownload(f"the archive holds a file more than once: {_names(names)}")


def _check_files(files: Collection[str], expected: Mapping[str, Sent]) -> None:
    missing = sorted(set(expected) - set(files))
    extra = sorted(set(files) - set(expected))
    if missing or extra:
        parts = []
        if missing:
            parts.append(f"{len(missing)} missing ({_names(missing)})")
        if extra:
            parts.append(f"{len(extra)} not sent ({_names(extra)})")
        raise BrokenDownload("the archive's files are not the files sent: " + "; ".join(parts))


def _check_sizes(files: Mapping[str, int], expected: Mapping[str, Sent]) -> None:
    wrong = sorted(name for name, size in files.items() if size != expected[name].size)
    if wrong:
        raise BrokenDownload(
            f"the archive's files differ in size from the files sent: {_names(wrong)}"
        )


def _check_content(name: str, digest: str | None, expected: Mapping[str, Sent]) -> None:
    if digest != expected[name].sha256:
        raise BrokenDownload(
            f"the archive's files differ in content from the files sent: {_names([name])}"
        )


def _parents(expected: Mapping[str, Sent]) -> set[str]:
    """The folders the files sent are in, each as `a/b/`."""
    return {
        "/".join(name.split("/")[:depth]) + "/"
        for name in expected
        for depth in range(1, name.count("/") + 1)
    }


def _check_folders(folders: list[str], parents: set[str]) -> None:
    stray = sorted({name.rstrip("/") + "/" for name in folders} - parents)
    if stray:
        raise BrokenDownload(f"the archive holds folders that no file sent is in: {_names(stray)}")


def _names(names: list[str]) -> str:
    shown = ", ".join(repr(name) for name in names[:LISTED])
    return shown + (f" and {len(names) - LISTED} more" if len(names) > LISTED else "")
