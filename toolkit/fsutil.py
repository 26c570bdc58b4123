"""File writes that never leave a half-written file behind, and file names from outside
made safe before anything is written under them."""

from __future__ import annotations

import json
import os
import re
import tempfile
import unicodedata
from pathlib import Path
from typing import Any

from toolkit.errors import ToolkitError


def atomic_write(path: Path, data: bytes) -> None:
    """Write to a temporary file beside `path`, fsync it, then rename it over `path`."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temp, path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise
    try:  # make the rename itself durable
        dir_fd = os.open(path.parent, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)


def stable_json(data: Any) -> bytes:
    """JSON that diffs well in git: sorted keys, two-space indent, a final newline."""
    return (json.dumps(data, sort_keys=True, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def write_if_changed(path: Path, data: bytes) -> bool:
    """Atomically write `data` unless the file already holds exactly it; True if written."""
    try:
        if path.read_bytes() == data:
            return False
    except FileNotFoundError:
        pass
    atomic_write(path, data)
    return True


# -- names from outside ----------------------------------------------------------------

MAX_NAME_BYTES = 100  # leaves room for a suffix and atomic_write's temporary name
# Characters that never go into a file name: separators, control characters, and those
# Windows refuses; each run of them becomes one `-`.
_UNSAFE_ASCII = re.compile(r'[\x00-\x1f\x7f/\\:*?"<>|\s]+')
# Unicode categories dropped from a name: controls, format characters (bidi overrides
# that make a name read backwards), surrogates, private use, unassigned, line separators.
_UNSAFE_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp", "Zs"})
_WINDOWS_DEVICES = frozenset(
    {"CON", "PRN", "AUX", "NUL"} | {f"{d}{n}" for d in ("COM", "LPT") for n in range(1, 10)}
)


class UnsafeNameError(ToolkitError):
    """A name from outside (a remote slug, an option) leaves nothing usable as a file name,
    or a path built from it would lead out of its folder."""


def _shown(text: str) -> str:
    return repr(text if len(text) <= 60 else text[:60] + "…")


def safe_name(text: str, *, max_length: int = MAX_NAME_BYTES) -> str:
    """`text` reduced to one harmless file name: no separator, `..`, control or invisible
    character, no leading `.`/`_`/`-` (hidden or reserved), at most `max_length` bytes of
    UTF-8. A name that is already safe comes back unchanged (and so does a reduced one).
    Raise `UnsafeNameError` when nothing usable is left."""
    if not isinstance(text, str):
        raise UnsafeNameError(f"{_shown(str(text))} is not a name")
    name = unicodedata.normalize("NFC", text)
    if not name.isascii():
        name = "".join(
            "-" if unicodedata.category(char) in _UNSAFE_CATEGORIES else char for char in name
        )
    name = _UNSAFE_ASCII.sub("-", name)
    name = name.encode("utf-8")[:max_length].decode("utf-8", "ignore")
    name = name.lstrip("._-").rstrip(". -")
    if not name or name.split(".", 1)[0].upper() in _WINDOWS_DEVICES:
        raise UnsafeNameError(f"{_shown(text)} cannot be used as a file name")
    return name


def path_inside(folder: Path, name: str) -> Path:
    """`folder / name`, once it is certain to be a file directly in `folder` (symlinks
    resolved); raise `UnsafeNameError` otherwise. Check before anything is opened."""
    if not name or name in (".", "..") or any(c in name for c in ("/", "\\", "\x00")):
        raise UnsafeNameError(f"{_shown(name)} is not a plain file name")
    path = folder / name
    if path.resolve().parent != folder.resolve():
        raise UnsafeNameError(f"{path}: leads out of {folder}")
    return path
