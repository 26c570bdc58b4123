"""One writer at a time: `.toolkit/run.lock`, held by every run that writes.

Every command that writes to the publishing API or to `toolkit.lock` (publish, pull,
watch's draft push) holds this lock for the whole run, and takes it before it reads
`toolkit.lock` or the remote list, so a second run starts from what the first one did
instead of repeating it. A second run waits a bounded time, then gives up with a message
that names the holder.

The lock is the operating system's (`toolkit.oslock`: `flock` on POSIX, `msvcrt.locking`
elsewhere), held on the open file: it goes away with the process that held it, however that process
ended, so there is never a stale lock to delete by hand. The file's content only says
who holds it (pid, command, start time), for the message a waiting run shows.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import os
import re
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from toolkit import oslock
from toolkit.config import Config
from toolkit.errors import RunLockBusy, SyncError
from toolkit.fsutil import naming, remove_stale_temp_files

log = logging.getLogger(__name__)

RUN_LOCK_NAME = "run.lock"
DEFAULT_TIMEOUT = 60.0  # seconds a run waits for another one (`--lock-timeout`)
POLL = 0.1  # seconds between attempts while waiting
_HOLDER_MAX = 4096  # bytes of holder information read back (the file is not trusted)


@dataclass(frozen=True)
class Holder:
    """Who holds the run lock, as its file says."""

    pid: int | None
    command: str
    started: dt.datetime | None

    def describe(self, now: dt.datetime | None = None) -> str:
        """`publish, pid 1234, since 12:03:04` (the date too when it is not today)."""
        parts = [self.command or "a toolkit command"]
        if self.pid is not None:
            parts.append(f"pid {self.pid}")
        if self.started is not None:
            local = self.started.astimezone()
            today = (now or dt.datetime.now().astimezone()).date()
            parts.append(
                "since "
                + local.strftime("%H:%M:%S" if local.date() == today else "%Y-%m-%d %H:%M:%S")
            )
        return ", ".join(parts)


def _plain(value: object, limit: int = 60) -> str:
    """A command name read back from the file: plain characters only, bounded."""
    text = value if isinstance(value, str) else ""
    return re.sub(r"[^A-Za-z0-9 ()._-]", "", text)[:limit]


def read_holder(path: Path) -> Holder | None:
    """The holder named in the lock file; None when it names nobody (or is unreadable)."""
    try:
        with open(path, "rb") as handle:
            raw = handle.read(_HOLDER_MAX)
        data = json.loads(raw.decode("utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict):
        return None
    pid = data.get("pid")
    started = None
    if isinstance(data.get("started"), str):
        try:
            started = dt.datetime.fromisoformat(data["started"])
        except ValueError:
            started = None
    if started is not None and started.tzinfo is None:
        started = started.astimezone()
    return Holder(
        pid if isinstance(pid, int) and not isinstance(pid, bool) else None,
        _plain(data.get("command")),
        started,
    )


def busy_message(display: str, holder: Holder | None, waited: float) -> str:
    who = f": {holder.describe()}" if holder is not None else " (it does not say which)"
    return f"another toolkit run holds {display}{who}; waited {waited:g} s"


def _write_holder(fd: int, command: str) -> None:
    holder = {
        "pid": os.getpid(),
        "command": command,
        "started": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
    }
    os.ftruncate(fd, 0)
    os.lseek(fd, 0, os.SEEK_SET)
    os.write(fd, (json.dumps(holder) + "\n").encode("utf-8"))


@contextmanager
def run_lock(
    state_dir: Path,
    command: str,
    *,
    timeout: float = DEFAULT_TIMEOUT,
    display: str | None = None,
    sleep: Callable[[float], None] = time.sleep,
    clock: Callable[[], float] = time.monotonic,
    on_wait: Callable[[str], None] | None = None,
) -> Iterator[str | None]:
    """Hold `<state_dir>/run.lock` for the block; raise `RunLockBusy` after `timeout` s.

    `command` names this run in the file (`publish`, `pull`, `watch`); `display` is how
    the lock file is named in messages (default `.toolkit/run.lock`). `on_wait(message)`
    is told once when the lock is busy and this run starts waiting, and the block gets
    that message (None when the lock was free); `sleep` paces the waiting (a caller that
    must stop early passes one that raises).
    """
    path = state_dir / RUN_LOCK_NAME
    display = display or f"{state_dir.name}/{RUN_LOCK_NAME}"
    try:
        state_dir.mkdir(parents=True, exist_ok=True)
        fd = oslock.open_lock_file(path)
    except OSError as exc:
        raise SyncError(
            f"{display}: cannot be opened ({exc.strerror or exc}); "
            "toolkit needs it to keep two runs from writing at once"
        ) from None
    try:
        waited: str | None = None

        def busy() -> None:
            nonlocal waited
            who = read_holder(path)
            waited = (
                f"another toolkit run holds {display}"
                + (f" ({who.describe()})" if who else "")
                + f"; waiting up to {timeout:g} s for it to finish"
            )
            if on_wait is not None:
                on_wait(waited)

        if not oslock.lock_within(fd, timeout, poll=POLL, sleep=sleep, clock=clock, on_busy=busy):
            holder = read_holder(path)
            raise RunLockBusy(busy_message(display, holder, timeout))
        try:
            with naming(path):  # a full disk names the lock file
                _write_holder(fd, command)
            yield waited
        finally:
            try:
                os.ftruncate(fd, 0)  # it names nobody once released
            finally:
                oslock.unlock(fd)
    finally:
        os.close(fd)


def remove_leftovers(config: Config) -> list[Path]:
    """Remove temporary files that interrupted writes left where toolkit writes: beside
    `toolkit.lock`, in `.toolkit/`, and under the content folder (pulled posts and
    `_mirror/`). A temporary file whose writer is still at work is never removed."""
    removed = remove_stale_temp_files(config.lock_path.parent, re.escape(config.lock_path.name))
    removed += remove_stale_temp_files(config.state_dir)
    removed += remove_stale_temp_files(config.site.content_dir, r".+\.(md|json)", recursive=True)
    for path in removed:
        log.info("removed %s, left behind by an interrupted run", config.relative(path))
    return removed


@contextmanager
def writer_run(
    config: Config,
    command: str,
    *,
    timeout: float = DEFAULT_TIMEOUT,
    sleep: Callable[[float], None] = time.sleep,
    on_wait: Callable[[str], None] | None = None,
) -> Iterator[str | None]:
    """A run that writes: hold the project's run lock, then tidy what a crash left. The
    block gets what was said while waiting for another run (None: it did not wait).

    Only `toolkit.commands` calls this: the run lock belongs to a user action (publish,
    pull, a watch's draft push), which knows its name, how long it may wait, and how to
    tell the user; the sync functions below it expect it held."""
    with run_lock(
        config.state_dir,
        command,
        timeout=timeout,
        sleep=sleep,
        on_wait=on_wait,
        display=config.relative(config.state_dir / RUN_LOCK_NAME),
    ) as waited:
        remove_leftovers(config)
        yield waited
