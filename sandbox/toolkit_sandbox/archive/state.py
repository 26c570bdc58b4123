"""Interface C's runtime state in a running sandbox: the rate limiter, the settings the
control API changes, the injected task faults, the worker threads that build archives
and the wake-up of requests waiting for tasks.

Handlers run on the server's event loop; archives are built on worker threads (one per
task, so a long one never holds the loop or another task). A worker tells the waiting
requests that something changed through `notify()`, which hands the wake-up to the loop.
"""

from __future__ import annotations

import asyncio
import logging
import math
import shutil
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

log = logging.getLogger("toolkit_sandbox")

RATE_LIMIT = 500  # API requests per account and window (uploads and downloads are not counted)
WAIT_CAP = 3600.0  # seconds a wait request is held at most (then a 504: wait again)
UPLOAD_NAMES = ("path", "basename")
FAULT_KINDS = ("error", "slow", "truncate", "corrupt")


@dataclass
class Settings:
    """What the control API can change (`/__sandbox/archive/settings`); reset restores it."""

    wait_cap: float = WAIT_CAP
    rate_limit: int = RATE_LIMIT
    rate_limits: bool = True
    # What an uploaded file's name keeps of a `/`: "path" (all of it) or "basename" (its
    # last segment). The real service's choice is not documented: both can be tried.
    upload_names: str = "path"
    # Uploads answer 307 and downloads 302 to the same URL on the other loopback name
    # (127.0.0.1 <-> localhost: another origin), as a storage behind a CDN may redirect.
    storage_redirect: bool = False

    def as_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class TaskFault:
    """A fault for the next archive tasks (`error`, `slow`) or downloads (`truncate`: cut
    in half; `corrupt`: the byte at `offset`, default the middle one, flipped)."""

    id: int
    kind: str
    count: int
    seconds: float = 0.0  # slow: how long the task takes before it builds anything
    code: str = "SANDBOX_FAULT"  # error: the task's code and message
    message: str = "The task failed (a fault injected in the sandbox)."
    offset: int | None = None  # corrupt: which byte (None: the middle one)

    def as_json(self) -> dict[str, Any]:
        data = asdict(self)
        if self.kind != "corrupt":
            data.pop("offset")
        if self.kind != "slow":
            data.pop("seconds")
        if self.kind != "error":
            data.pop("code")
            data.pop("message")
        return data


class RequestWindow:
    """A fixed window per account, opened by its first request: at most `limit` API
    requests in it. `take` counts one request and says what is left."""

    def __init__(self, window: float):
        self.window = window
        self._windows: dict[int, tuple[float, int]] = {}
        self._lock = threading.Lock()

    def take(self, account: int, limit: int, now: float) -> tuple[bool, int, float]:
        """(allowed, remaining, seconds until the window ends)."""
        with self._lock:
            start, count = self._windows.get(account, (now, 0))
            if now - start >= self.window:
                start, count = now, 0
            left = start + self.window - now
            if count >= limit:
                return False, 0, left
            self._windows[account] = (start, count + 1)
            return True, limit - count - 1, left

    def reset(self) -> None:
        with self._lock:
            self._windows.clear()


@dataclass
class ArchiveState:
    limiter: RequestWindow
    settings: Settings = field(default_factory=Settings)
    faults: list[TaskFault] = field(default_factory=list)
    # The folder of the interface's files and the server's loop, known from the first
    # request (the state is built before either exists).
    folder: Path | None = None
    loop: asyncio.AbstractEventLoop | None = None
    uploading: set[str] = field(default_factory=set)  # tasks whose upload is being received
    base: str = ""  # the origin the last job was created through (links in webhooks)
    _workers: dict[str, threading.Event] = field(default_factory=dict)
    _event: asyncio.Event = field(default_factory=asyncio.Event)
    _fault_ids: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @classmethod
    def create(cls, rate_window: float) -> ArchiveState:
        return cls(limiter=RequestWindow(rate_window))

    def bind(self, loop: asyncio.AbstractEventLoop, folder: Path) -> None:
        self.loop, self.folder = loop, folder

    def files(self) -> Path:
        if self.folder is None:
            raise RuntimeError("interface C has served no request yet")
        return self.folder

    def retry_after(self, seconds_left: float) -> int:
        return max(1, math.ceil(seconds_left))

    # --- waking the waiting requests ------------------------------------------------

    def notify(self) -> None:
        """Something changed: wake every waiting request (from any thread)."""
        loop = self.loop
        if loop is None or loop.is_closed():
            return
        try:
            loop.call_soon_threadsafe(self._wake)
        except RuntimeError:  # the loop stopped meanwhile: nobody waits any more
            pass

    def _wake(self) -> None:
        event, self._event = self._event, asyncio.Event()
        event.set()

    def changed(self) -> asyncio.Event:
        """The event set at the next change: take it before reading the state, then wait."""
        return self._event

    # --- workers --------------------------------------------------------------------

    def start(self, task_id: str, work: Callable[[threading.Event], None]) -> None:
        """Run `work(stop)` on a thread of its own; `stop` is set when the task is cancelled."""
        stop = threading.Event()
        with self._lock:
            self._workers[task_id] = stop

        def run() -> None:
            try:
                work(stop)
            except Exception:  # the sandbox stopping under a worker, or a bug: never raise
                log.info("archive worker for task %s stopped", task_id, exc_info=True)
            finally:
                with self._lock:
                    if self._workers.get(task_id) is stop:
                        del self._workers[task_id]
                self.notify()

        threading.Thread(target=run, name=f"archive-{task_id[:8]}", daemon=True).start()

    def cancel(self, task_id: str) -> None:
        with self._lock:
            stop = self._workers.get(task_id)
        if stop is not None:
            stop.set()

    def running(self) -> int:
        with self._lock:
            return len(self._workers)

    # --- faults ---------------------------------------------------------------------

    def add_fault(self, spec: dict[str, Any]) -> TaskFault:
        kind = spec.get("kind")
        if kind not in FAULT_KINDS:
            raise ValueError(f"kind must be one of {', '.join(FAULT_KINDS)}")
        count = spec.get("count", 1)
        if isinstance(count, bool) or not isinstance(count, int) or not 1 <= count <= 1000:
            raise ValueError("count must be an integer from 1 to 1000")
        fault = TaskFault(id=0, kind=str(kind), count=count)
        if kind == "slow":
            seconds = spec.get("seconds")
            if (
                isinstance(seconds, bool)
                or not isinstance(seconds, int | float)
                or not 0 < seconds <= 600
            ):
                raise ValueError("seconds must be a number from 0 to 600")
            fault.seconds = float(seconds)
        if kind == "corrupt" and spec.get("offset") is not None:
            offset = spec["offset"]
            if isinstance(offset, bool) or not isinstance(offset, int) or offset < 0:
                raise ValueError("offset must be a non-negative integer")
            fault.offset = offset
        if kind == "error":
            for key in ("code", "message"):
                value = spec.get(key, getattr(fault, key))
                if not isinstance(value, str) or not value or len(value) > 500:
                    raise ValueError(f"{key} must be a non-empty string")
                setattr(fault, key, value)
        with self._lock:
            self._fault_ids += 1
            fault.id = self._fault_ids
            self.faults.append(fault)
        return fault

    def take_fault(self, *kinds: str) -> TaskFault | None:
        """The first pending fault of one of `kinds`, used up by one."""
        with self._lock:
            for fault in self.faults:
                if fault.kind in kinds:
                    fault.count -= 1
                    if fault.count == 0:
                        self.faults.remove(fault)
                    return fault
        return None

    def pending_faults(self) -> list[dict[str, Any]]:
        with self._lock:
            return [fault.as_json() for fault in self.faults]

    def clear_faults(self) -> None:
        with self._lock:
            self.faults.clear()

    # --- reset ----------------------------------------------------------------------

    def reset(self) -> None:
        """Back to the start (the store has just emptied the tables): workers stopped,
        files removed, settings and limits as at start, faults cleared."""
        with self._lock:
            workers = list(self._workers.values())
            self.faults.clear()
        for stop in workers:
            stop.set()
        self.limiter.reset()
        self.settings = Settings()
        self.uploading.clear()
        if self.folder is not None and self.folder.is_dir():
            for child in list(self.folder.iterdir()):
                if child.is_dir():
                    shutil.rmtree(child, ignore_errors=True)
                else:
                    child.unlink(missing_ok=True)
        self.notify()


def now() -> float:
    return time.time()
