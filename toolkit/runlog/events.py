"""The run log on disk: one JSON object per line in `.toolkit/events.jsonl`, rotated by size.

Every field an event may carry is declared once in `FIELDS`, with the type the log service
gives it (numbers are all Float64 there, `time` is a timestamp): `toolkit logs --local`
reads the file with exactly that schema, so a query answers the same locally and on the
service. An event holds facts about the run (what was done to which post, which route
answered what, how long it waited), never a secret and never a body: the callers pass
route templates, statuses and toolkit's own messages, and the writer also replaces any
configured secret it is handed with `***` and bounds every text.

Files: `events.jsonl` (the current one), `events.1.jsonl` (the one before) up to
`events.<keep>.jsonl`. When the current file reaches `max_bytes` it becomes
`events.1.jsonl`, the others move up one and the oldest is removed. Several toolkit
processes may write at once (a watch and a publish): every append is one `write` of
whole lines in append mode under a shared lock on `events.lock`, and a rotation takes
that lock exclusively, so no line is ever split or written to a file being renamed.
Readers (the shipper, `--local`) read complete lines only.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import os
import re
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from toolkit import oslock
from toolkit.redact import redact_url

log = logging.getLogger(__name__)

CURRENT_NAME = "events.jsonl"
LOCK_NAME = "events.lock"
MAX_BYTES = 10 * 1024 * 1024  # the current file is rotated once it is this big
KEEP = 3  # rotated files kept: events.1.jsonl ... events.3.jsonl
MAX_TEXT = 1000  # characters of one text field; a message is cut there, never a body
SECRET_MIN = 6  # shorter secrets are not searched for (they would mask ordinary words)
_GENERATION = re.compile(r"events\.([1-9][0-9]{0,3})\.jsonl")

# Every field of an event: its type on the log service, and what it says.
FIELDS: dict[str, tuple[str, str]] = {
    "time": ("timestamp", "when it happened (RFC 3339, UTC, milliseconds)"),
    "run_id": ("string", "the run it belongs to (one id per command run)"),
    "seq": ("number", "its number within the run, from 0"),
    "command": ("string", "the command: publish, plan, build, check, pull, mirror, ..."),
    "version": ("string", "toolkit's version"),
    "event": (
        "string",
        "run, request, wait, post, problem, check, build, mirror, step, "
        "license, export, mcp, error, ship",
    ),
    "action": (
        "string",
        "start/end of a run; create, update, unchanged, conflict, skip, "
        "error for a post; created, overwritten, ... for a pull; allowed "
        "for a premium build's licence; the format of an export",
    ),
    "outcome": ("string", "how a run ended: ok, failed (it ran, something failed), error"),
    "post": ("string", "the post's path, e.g. content/hello.md"),
    "line": ("number", "the line of a problem in its post"),
    "level": ("string", "error, warning or note, for a problem"),
    "method": ("string", "HTTP method of a request"),
    "route": ("string", "route template of a request, e.g. /api/articles/{id}"),
    "status": ("number", "HTTP status of the answer (absent: no answer came)"),
    "duration_ms": ("number", "how long a request, a build or the whole run took"),
    "retries": ("number", "the attempt's number after the first (0: first try)"),
    "wait_ms": ("number", "a pause: rate limit, Retry-After, retry backoff, run lock"),
    "reason": ("string", "why it waited"),
    "article_id": ("number", "the article of a post"),
    "writer": (
        "string",
        "in a team's repository ([writers]): the writer (their folder) whose key made a "
        "request or a wait, or whose post it is; absent with one account",
    ),
    "message": ("string", "what happened, in words (an error's message)"),
    "error": ("string", "the kind of error (the exception's class)"),
    "posts": ("number", "posts built or checked"),
    "written": ("number", "files written (build, mirror)"),
    "unchanged": ("number", "files or threads left as they were"),
    "removed": ("number", "files removed"),
    "errors": ("number", "problems that are errors"),
    "warnings": ("number", "problems that are warnings"),
    "fetched": ("number", "comment threads fetched (mirror)"),
    "items": ("number", "reading-list items (mirror), entries of an archive (export)"),
    "bytes": ("number", "the size of an archive (export)"),
    "requests": ("number", "HTTP requests a step made"),
    "shipped": ("number", "events shipped to the log service"),
    "stream": ("string", "the log stream shipped to"),
    "tool": ("string", "the MCP tool called"),
    "client": ("string", "the MCP client's id (never a token)"),
    "scopes": ("string", "the scopes an MCP call or token held, space-separated"),
}

Value = str | int | float | None


def utc_text(moment: dt.datetime | None = None) -> str:
    """RFC 3339 in UTC with milliseconds: `2024-05-01T12:00:00.123Z`."""
    moment = (moment or dt.datetime.now(dt.UTC)).astimezone(dt.UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


class Scrubber:
    """Replaces known secrets (API keys, passwords) by `***` and credentials in URLs,
    wherever a caller's text carries them by mistake, and bounds the text's length."""

    def __init__(self, secrets: Sequence[str] = ()):
        self._secrets = sorted({s for s in secrets if len(s) >= SECRET_MIN}, key=len, reverse=True)

    def __call__(self, text: str) -> str:
        for secret in self._secrets:
            if secret in text:
                text = text.replace(secret, "***")
        if "@" in text:
            text = redact_url(text)
        if len(text) > MAX_TEXT:
            text = text[: MAX_TEXT - 1] + "…"
        return text


class _FileLock:
    """A shared or exclusive OS lock on one file, held for a block."""

    def __init__(self, path: Path):
        self.path = path
        self._fd: int | None = None

    def _open(self) -> int:
        if self._fd is None:
            self._fd = oslock.open_lock_file(self.path)
        return self._fd

    @contextmanager
    def held(self, *, shared: bool) -> Iterator[None]:
        """Shared (an append) or exclusive (a rotation); Windows knows exclusive only."""
        with oslock.held(self._open(), shared=shared):
            yield

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


class EventLog:
    """The event files of one project's `.toolkit/` folder."""

    def __init__(self, folder: Path, *, max_bytes: int = MAX_BYTES, keep: int = KEEP):
        if max_bytes < 1 or keep < 1:
            raise ValueError("the run log needs a positive size cap and at least one generation")
        self.folder = folder
        self.max_bytes = max_bytes
        self.keep = keep
        self.current = folder / CURRENT_NAME
        self._lock = _FileLock(folder / LOCK_NAME)
        self._ready = False  # the folder exists and the file ends with a whole line

    def generation(self, number: int) -> Path:
        """`events.<number>.jsonl`; 0 is the current file."""
        return self.current if number == 0 else self.folder / f"events.{number}.jsonl"

    def files(self) -> list[Path]:
        """The event files that exist, oldest first, the current one last."""
        numbers = []
        try:
            names = os.listdir(self.folder)
        except OSError:
            return []
        for name in names:
            match = _GENERATION.fullmatch(name)
            if match:
                numbers.append(int(match[1]))
        found = [self.generation(n) for n in sorted(numbers, reverse=True)]
        if CURRENT_NAME in names:
            found.append(self.current)
        return found

    @contextmanager
    def reading(self) -> Iterator[list[Path]]:
        """The files, oldest first, with rotation held off while the block reads them."""
        self.folder.mkdir(parents=True, exist_ok=True)
        with self._lock.held(shared=True):
            yield self.files()

    def append(self, data: bytes) -> None:
        """Append whole lines (`data` ends with a newline) in one write; rotate after it
        when the file has reached its cap."""
        flags = os.O_RDWR | os.O_APPEND | os.O_CREAT | getattr(os, "O_CLOEXEC", 0)
        if not self._ready:
            self.folder.mkdir(parents=True, exist_ok=True)
        with self._lock.held(shared=True):
            fd = os.open(self.current, flags, 0o666)
            try:
                if not self._ready:
                    data = self._after_cut_line(fd) + data
                    self._ready = True
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view) :]
                size = os.fstat(fd).st_size
            finally:
                os.close(fd)
        if size >= self.max_bytes:
            self.rotate()

    @staticmethod
    def _after_cut_line(fd: int) -> bytes:
        """A newline when the file ends in a line a crash cut short, so that the next event
        starts a line of its own (the cut line stays what it is: not an event)."""
        size = os.fstat(fd).st_size
        if size == 0:
            return b""
        os.lseek(fd, size - 1, os.SEEK_SET)  # appends still go to the end (O_APPEND)
        return b"" if os.read(fd, 1) == b"\n" else b"\n"

    def rotate(self) -> bool:
        """Move the current file to `events.1.jsonl` (and each older one up) if it is still
        over its cap once no one writes; True when it did."""
        with self._lock.held(shared=False):
            try:
                if os.stat(self.current).st_size < self.max_bytes:
                    return False  # another process rotated it meanwhile
            except FileNotFoundError:
                return False
            oldest = self.generation(self.keep)
            if oldest.exists():
                oldest.unlink()
            for number in range(self.keep - 1, -1, -1):
                source = self.generation(number)
                if source.exists():
                    os.replace(source, self.generation(number + 1))
            return True

    def close(self) -> None:
        self._lock.close()


def complete_lines(data: bytes) -> bytes:
    """`data` up to its last newline: a line another process is still writing (or one a
    crash cut short) is left out."""
    end = data.rfind(b"\n")
    return data[: end + 1] if end >= 0 else b""


def split_lines(data: bytes) -> Iterator[tuple[int, bytes]]:
    """`(offset after the line, line)` for every complete, non-blank line of `data`."""
    data = complete_lines(data)
    start = 0
    while start < len(data):
        end = data.index(b"\n", start) + 1
        line = data[start:end].strip()
        if line:
            yield end, line
        start = end


class EventWriter:
    """Writes the events of one run: numbers them, stamps them with the run's id, command
    and version, keeps the declared fields only, and never lets the log break the run
    (a write that fails is reported once, in the log, and the run goes on)."""

    def __init__(
        self,
        log_files: EventLog,
        run_id: str,
        command: str,
        version: str,
        *,
        scrub: Scrubber | None = None,
    ):
        self.files = log_files
        self.run_id = run_id
        self.command = command
        self.version = version
        self._scrub = scrub or Scrubber()
        self._seq = 0
        self._mutex = threading.Lock()  # the publish lanes report from several threads
        self._failed = False

    def emit(self, event: str, **fields: Value) -> None:
        record: dict[str, Any] = {"time": utc_text(), "run_id": self.run_id}
        with self._mutex:
            record["seq"] = self._seq
            self._seq += 1
            record.update(command=self.command, version=self.version, event=event)
            for name, value in fields.items():
                if name not in FIELDS:
                    raise ValueError(f"the run log has no field {name!r}")
                if value is None:
                    continue
                if isinstance(value, bool) or not isinstance(value, str | int | float):
                    raise TypeError(f"run log field {name}: {type(value).__name__}")
                record[name] = self._scrub(value) if isinstance(value, str) else value
            line = (
                json.dumps(record, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
                + "\n"
            ).encode("utf-8")
            if self._failed:
                return
            try:
                self.files.append(line)
            except OSError as exc:
                self._failed = True
                log.warning(
                    "the run log cannot be written (%s): this run is not recorded",
                    exc.strerror or exc,
                )

    @property
    def count(self) -> int:
        """Events written so far."""
        return self._seq
