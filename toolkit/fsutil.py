"""File writes that never leave a half-written file behind, and tidying after those that
were interrupted; file names from outside made safe before anything is written under them.

`atomic_write` writes a temporary file `.<name>.<random>.tmp` beside its target and
renames it over the target. The temporary file holds an OS lock (`toolkit.oslock`) for as
long as it is being written, so `remove_stale_temp_files` can tell the file of a writer that is
still running (locked: left alone) from one that a crash left behind (removed).
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import re
import stat
import time
import unicodedata
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from toolkit import oslock
from toolkit.errors import UnsafeNameError
from toolkit.redact import quoted

TEMP_SUFFIX = ".tmp"
# Where a locked file cannot be renamed (Windows), a temporary file is not locked while it
# is written, and one younger than this may belong to a running writer.
UNLOCKED_TEMP_AGE = 3600.0


PATH_SHOWN = 4096  # characters of a path in an OS error's message (a path is shown whole)

# What to do about an OS error, by its errno: the hint of `describe_os_error`.
_HINTS = {
    errno.EACCES: "check the permissions of the file and of its folder",
    errno.EPERM: "the file or its folder may not be changed: check its permissions and attributes",
    errno.EROFS: "the file system is mounted read-only: write somewhere else, or remount it "
    "writable",
    errno.ENOSPC: "the disk is full: free some space, then run the command again",
    errno.EDQUOT: "the disk quota is used up: free some space, then run the command again",
    errno.ENOENT: "it does not exist",
    errno.ENOTDIR: "a file stands where a folder should be",
    errno.EISDIR: "a folder stands where a file should be",
    errno.EEXIST: "something else is already there",
    errno.ENAMETOOLONG: "the name is too long for the file system",
    errno.EMFILE: "too many files are open: close some programs, then run again",
    errno.ENFILE: "too many files are open: close some programs, then run again",
    errno.EIO: "the disk failed: check it",
    errno.ELOOP: "too many symbolic links on the way",
    errno.EBUSY: "the file is in use",
}


def describe_os_error(exc: OSError, *, cwd: Path | None = None) -> str:
    """An OS error in one line: `<path>: <what> (<hint>)`, the path shown relative to
    `cwd` (default: the working folder) when inside it; without a path, `<what> (<hint>)`."""
    what = (exc.strerror or str(exc) or type(exc).__name__).strip()
    what = what[:1].lower() + what[1:]
    hint = _HINTS.get(exc.errno or -1, "the operating system refused")
    line = f"{what} ({hint})"
    if exc.filename is None:
        return line
    name = os.fsdecode(exc.filename) if isinstance(exc.filename, str | bytes) else str(exc.filename)
    shown = Path(name)
    with contextlib.suppress(ValueError, OSError):
        shown = shown.relative_to(cwd or Path.cwd()) if shown.is_absolute() else shown
    return f"{quoted(str(shown), PATH_SHOWN, marks=False)}: {line}"


@contextlib.contextmanager
def naming(path: Path | str, *also: Path | str) -> Iterator[None]:
    """An OS error in the block names `path`: one that names no file (a write to an open
    file), or names one of `also` (a temporary file of `path`), is raised again naming
    `path`, so that the message says which file the user knows could not be written."""
    try:
        yield
    except OSError as exc:
        if exc.errno is None or (
            exc.filename is not None and not _is_temp_of(str(exc.filename), Path(path), also)
        ):
            raise
        raise OSError(exc.errno, exc.strerror or str(exc), os.fspath(path)) from exc


def _is_temp_of(name: str, path: Path, also: tuple[Path | str, ...]) -> bool:
    """Whether the file `name` is one of `also`, or a temporary file of `path`."""
    if name in {str(other) for other in also}:
        return True
    file = Path(name)
    return (
        file.parent == path.parent
        and file.name.startswith(f".{path.name}.")
        and file.name.endswith(TEMP_SUFFIX)
    )


def temp_name(path: Path) -> str:
    """The name of a temporary file for `path`: `.<name>.<random>.tmp`."""
    # secrets.token_hex(4), without importing `secrets` (and `hmac`, `random`) on every run
    return f".{path.name}.{os.urandom(4).hex()}{TEMP_SUFFIX}"


def open_locked_temp(path: Path) -> tuple[int, Path]:
    """Create a new temporary file beside `path` and lock it.

    The file is created with mode 0o666, which the process umask reduces, as for any new
    file. A cleaner removes a temporary file only while holding its lock, so a file found
    unlinked once the lock is ours was taken for a leftover in the instant between its
    creation and its locking: start again with a new one.
    """
    for _ in range(100):
        temp = path.parent / temp_name(path)
        try:
            fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        except FileExistsError:
            continue
        if not oslock.RENAME_WHILE_LOCKED:
            return fd, temp
        oslock.lock(fd)
        if os.fstat(fd).st_nlink > 0:
            return fd, temp
        os.close(fd)
    raise FileExistsError(f"cannot create a temporary file beside {path}")


def atomic_write(path: Path, data: bytes) -> None:
    """Write to a temporary file beside `path`, fsync it, then rename it over `path`.

    The file keeps the permissions it had (a new file gets the umask's default), so a
    rewrite never turns a shared, group-writable file into a private one.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        mode: int | None = stat.S_IMODE(os.stat(path).st_mode)
    except FileNotFoundError:
        mode = None
    with naming(path):
        fd, temp = open_locked_temp(path)
    with naming(path, temp):
        _write_and_replace(fd, temp, path, data, mode)
    try:  # make the rename itself durable
        dir_fd = os.open(path.parent, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)


def _write_and_replace(fd: int, temp: Path, path: Path, data: bytes, mode: int | None) -> None:
    """Write `data` to the locked temporary file `fd` (`temp`), fsync it and rename it over
    `path`; the temporary file is removed when anything fails."""
    closed = False
    try:
        if mode is not None and hasattr(os, "fchmod"):
            os.fchmod(fd, mode)
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        os.fsync(fd)
        if not oslock.RENAME_WHILE_LOCKED:  # a file cannot be renamed while open there
            os.close(fd)
            closed = True
        os.replace(temp, path)  # still locked: a cleaner never sees it unlocked before this
    except BaseException:
        temp.unlink(missing_ok=True)
        raise
    finally:
        if not closed:
            os.close(fd)


def _temp_files(folder: Path, name: re.Pattern[str], recursive: bool) -> Iterator[Path]:
    """Regular files (symlinks are never followed) in `folder` that look like temp files."""
    pattern = re.compile(r"\.(?P<name>.+)\.[A-Za-z0-9_]+" + re.escape(TEMP_SUFFIX))
    for top, _dirs, files in os.walk(folder):
        for file in files:
            match = pattern.fullmatch(file)
            if match and name.fullmatch(match["name"]):
                path = Path(top) / file
                try:
                    regular = stat.S_ISREG(os.lstat(path).st_mode)
                except FileNotFoundError:
                    continue
                if regular:
                    yield path
        if not recursive:  # os.walk never descends into a symlinked folder either
            return


def _remove_if_abandoned(path: Path) -> bool:
    """Remove a temporary file unless a writer still holds it; True if removed."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return False  # gone already (renamed by its writer), or not ours to open
    try:
        if not oslock.RENAME_WHILE_LOCKED:
            if time.time() - os.fstat(fd).st_mtime < UNLOCKED_TEMP_AGE:
                return False
        else:
            if not oslock.try_lock(fd):
                return False  # a writer is at work on it
            try:  # still the same file under that name (not renamed away meanwhile)?
                if not os.path.samestat(os.fstat(fd), os.lstat(path)):
                    return False
            except FileNotFoundError:
                return False
        try:
            os.unlink(path)
        except FileNotFoundError:
            return False
        return True
    finally:
        os.close(fd)


def remove_stale_temp_files(
    folder: Path, name: str = ".+", *, recursive: bool = False
) -> list[Path]:
    """Remove the temporary files that interrupted `atomic_write`s left in `folder`.

    `name` (a regular expression) is what the target's name must match, e.g.
    `toolkit\\.lock`; a temporary file that a running writer holds is never touched.
    Returns the files removed.
    """
    if not folder.is_dir():
        return []
    pattern = re.compile(name)
    return [path for path in _temp_files(folder, pattern, recursive) if _remove_if_abandoned(path)]


def stable_json(data: Any) -> bytes:
    """JSON that diffs well in git: sorted keys, two-space indent, a final newline."""
    return (json.dumps(data, sort_keys=True, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


# A file modified less than this before its stat was looked at may change again within the
# same tick of the clock without its stat changing (git's "racy" files).
RACY_NS = 2_000_000_000


def stat_trusted(mtime_ns: int, looked_at_ns: int) -> bool:
    """Whether a file whose stat (modification time `mtime_ns`) is the one seen at
    `looked_at_ns` (ns since the epoch) is unchanged: yes, unless it was modified so shortly
    before that a second write within the same clock tick, of the same size, would have
    left the stat as it was. When not, its bytes must be compared."""
    return mtime_ns + RACY_NS < looked_at_ns


def quick_write(path: Path, data: bytes) -> None:
    """Write `data` to `path` so that a reader sees the old bytes or the new, never half:
    in place when the file is new (nothing can be reading it), else through a temporary
    file renamed over it. No fsync: for files a crash at worst leaves to be made again
    (the site's output); `atomic_write` is for those that must survive one."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_CLOEXEC", 0)
    exists = os.path.lexists(path)
    target = path.parent / temp_name(path) if exists else path
    with naming(path, target):
        try:
            fd = os.open(target, flags, 0o666)
        except FileNotFoundError:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(target, flags, 0o666)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
        except BaseException:
            os.close(fd)
            if exists:  # a half-written temporary file is nobody's
                target.unlink(missing_ok=True)
            raise
        os.close(fd)
        if exists:
            os.replace(target, path)


def holds(path: Path, data: bytes) -> bool:
    """Whether the file at `path` holds exactly `data` (its size is looked at first)."""
    try:
        if os.stat(path).st_size != len(data):
            return False
        with open(path, "rb") as handle:
            return handle.read() == data
    except OSError:
        return False


def write_if_changed(path: Path, data: bytes, *, durable: bool = True) -> bool:
    """Write `data` unless the file already holds exactly these bytes; True if written.

    The one place that decides whether a file needs writing: `toolkit.lock` and the
    mirror (`durable`: `atomic_write`, fsynced), and the site's output (`durable=False`:
    `quick_write`, through `toolkit.site.output`, which adds its manifest records).
    """
    if holds(path, data):
        return False
    (atomic_write if durable else quick_write)(path, data)
    return True


# -- names from outside ----------------------------------------------------------------

MAX_NAME_BYTES = 100  # leaves room for a suffix and atomic_write's temporary name
SHOWN = 60  # characters of a refused name shown in a message
# Characters that never go into a file name: separators, control characters, and those
# Windows refuses; each run of them becomes one `-`.
_UNSAFE_ASCII = re.compile(r'[\x00-\x1f\x7f/\\:*?"<>|\s]+')
# Unicode categories dropped from a name: controls, format characters (bidi overrides
# that make a name read backwards), surrogates, private use, unassigned, line separators.
_UNSAFE_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp", "Zs"})
_WINDOWS_DEVICES = frozenset(
    {"CON", "PRN", "AUX", "NUL"} | {f"{d}{n}" for d in ("COM", "LPT") for n in range(1, 10)}
)


def safe_name(text: str, *, max_length: int = MAX_NAME_BYTES) -> str:
    """`text` reduced to one harmless file name: no separator, `..`, control or invisible
    character, no leading `.`/`_`/`-` (hidden or reserved), at most `max_length` bytes of
    UTF-8. A name that is already safe comes back unchanged (and so does a reduced one).
    Raise `UnsafeNameError` when nothing usable is left."""
    if not isinstance(text, str):
        raise UnsafeNameError(f"{quoted(str(text), SHOWN)} is not a name")
    name = unicodedata.normalize("NFC", text)
    if not name.isascii():
        name = "".join(
            "-" if unicodedata.category(char) in _UNSAFE_CATEGORIES else char for char in name
        )
    name = _UNSAFE_ASCII.sub("-", name)
    name = name.encode("utf-8")[:max_length].decode("utf-8", "ignore")
    name = name.lstrip("._-").rstrip(". -")
    if not name or name.split(".", 1)[0].upper() in _WINDOWS_DEVICES:
        raise UnsafeNameError(f"{quoted(text, SHOWN)} cannot be used as a file name")
    return name


def path_inside(folder: Path, name: str) -> Path:
    """`folder / name`, once it is certain to be a file directly in `folder` (symlinks
    resolved); raise `UnsafeNameError` otherwise. Check before anything is opened."""
    if not name or name in (".", "..") or any(c in name for c in ("/", "\\", "\x00")):
        raise UnsafeNameError(f"{quoted(name, SHOWN)} is not a plain file name")
    path = folder / name
    if path.resolve().parent != folder.resolve():
        raise UnsafeNameError(f"{path}: leads out of {folder}")
    return path
