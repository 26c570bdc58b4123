"""The operating system's file lock: the one place toolkit takes one.

A lock is held on an open file descriptor (`flock` on POSIX, `msvcrt.locking` of one byte
elsewhere) and goes away with the process that held it, however that process ended, so
there is never a stale lock to delete by hand. Its users: the run lock
(`toolkit.sync.runlock`, waits a bounded time and names its holder), the run log's
`events.lock` (shared for appends, exclusive for a rotation), the shipper's `ship.lock`
(bounded wait) and `atomic_write`'s temporary files (`toolkit.fsutil`, held while written).

Windows has no shared lock: a shared lock is an exclusive one there. Nothing here reports
a lock it did not take.

The `filelock` library was weighed: it opens its lock file truncated (a waiting run would
erase the holder the run lock names), has no shared lock, and cannot lock a file already
open (the temporary files), so it would serve one user of four.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

try:
    import fcntl
except ImportError:  # Windows
    fcntl = None  # type: ignore[assignment]
    import msvcrt

# Whether a locked, open file may be renamed (POSIX). Elsewhere a writer must close, and
# so unlock, a file before renaming it.
RENAME_WHILE_LOCKED = fcntl is not None
_WINDOWS_OFFSET = 1 << 20  # the byte locked on Windows, clear of any content of the file


def try_lock(fd: int, *, shared: bool = False) -> bool:
    """Take the lock on `fd` if it is free; False when another process holds it."""
    try:
        if fcntl is not None:
            fcntl.flock(fd, (fcntl.LOCK_SH if shared else fcntl.LOCK_EX) | fcntl.LOCK_NB)
        else:  # pragma: no cover - Windows
            os.lseek(fd, _WINDOWS_OFFSET, os.SEEK_SET)
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
    except OSError:
        return False
    return True


def lock(fd: int, *, shared: bool = False) -> None:
    """Take the lock on `fd`, waiting for it (on Windows, about ten seconds at most, then
    an `OSError`)."""
    if fcntl is not None:
        fcntl.flock(fd, fcntl.LOCK_SH if shared else fcntl.LOCK_EX)
    else:  # pragma: no cover - Windows
        os.lseek(fd, _WINDOWS_OFFSET, os.SEEK_SET)
        msvcrt.locking(fd, msvcrt.LK_LOCK, 1)


def unlock(fd: int) -> None:
    """Release the lock held on `fd`."""
    if fcntl is not None:
        fcntl.flock(fd, fcntl.LOCK_UN)
    else:  # pragma: no cover - Windows
        os.lseek(fd, _WINDOWS_OFFSET, os.SEEK_SET)
        msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)


def lock_within(
    fd: int,
    timeout: float,
    *,
    poll: float,
    sleep: Callable[[float], None] = time.sleep,
    clock: Callable[[], float] = time.monotonic,
    on_busy: Callable[[], None] | None = None,
) -> bool:
    """Take the exclusive lock on `fd`, trying every `poll` s for at most `timeout` s;
    False when it stayed busy. `on_busy()` is called once, when the first try finds the
    lock held; `sleep` paces the waiting (a caller that must stop early passes one that
    raises)."""
    deadline = clock() + timeout
    busy = False
    while not try_lock(fd):
        remaining = deadline - clock()
        if remaining <= 0:
            return False
        if not busy:
            busy = True
            if on_busy is not None:
                on_busy()
        sleep(min(poll, remaining))
    return True


def open_lock_file(path: Path) -> int:
    """Open (creating it) a file that is there to be locked."""
    return os.open(path, os.O_RDWR | os.O_CREAT, 0o666)


@contextmanager
def held(fd: int, *, shared: bool = False) -> Iterator[None]:
    """Hold the lock on `fd` for the block, waiting for it first."""
    lock(fd, shared=shared)
    try:
        yield
    finally:
        unlock(fd)
