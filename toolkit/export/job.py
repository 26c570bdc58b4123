"""The export job: bundle the built site or the posts into one archive made by the archive-task
API, and keep it only once it is verified.

One request creates the whole job: an upload task per file, one archive task whose
input is all of them (the requested `output_format`, `filename` and `timeout`), one
export task. The files go up through their tasks' forms, streamed from disk, a few at
a time (`[archive] uploads`). Then one wait request at a time until the job is done or
`[archive] deadline` has passed. The archive is streamed into a temporary file beside
the output, verified (size, it opens, its entries are exactly the files sent, no unsafe
names, every entry's bytes the bytes sent) and only then renamed into place: a failed
export leaves nothing at the output path (an archive already there from an earlier
export stays as it was). Requests in all: files + 3 when nothing needs a second look
(+ 1 with folders).

The temporary file is created, and locked, before anything is sent: an output folder
that cannot be written is said (`<path>: <what> (<hint>)`) before a file goes up or a
credit is spent. The lock tells a running export's file from one a killed export left
behind; each export removes such leftovers beside its output first.
"""

from __future__ import annotations

import os
import re
import threading
import time
from concurrent.futures import FIRST_EXCEPTION, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Protocol

from pydantic import PlainSerializer

from toolkit.clients import Clients
from toolkit.config import Config
from toolkit.config.keys import ARCHIVE_FORMATS, EXPORT_SOURCES
from toolkit.errors import (
    BrokenDownload,
    ContentError,
    ExportError,
    ExportTimeout,
    TaskFailed,
    ToolkitError,
)
from toolkit.export.files import Collected, SourceFile, collect
from toolkit.export.verify import Sent, require_reader, verify
from toolkit.fsutil import open_locked_temp, remove_stale_temp_files, temp_name
from toolkit.redact import quoted
from toolkit.runlog.run import Run

if TYPE_CHECKING:  # pragma: no cover
    import httpx

    from toolkit.clients.archive import ArchiveClient, Job, UploadForm

__all__ = ["ExportProgress", "ExportRequest", "ExportResult", "QuietExport", "export_archive"]

ARCHIVE_TASK, EXPORT_TASK = "archive", "export"
SAID = 300  # characters of a string of the service's shown in a message
EXTENSIONS = {fmt: f".{fmt}" for fmt in ARCHIVE_FORMATS}


class ExportProgress(Protocol):
    """What an export tells as it goes (calls come one at a time, from any thread)."""

    def collected(self, files: int, size: int) -> None: ...
    def uploaded(self, files: int, size: int) -> None: ...  # totals so far (bytes as they go)
    def processing(self, status: str, seconds: float) -> None: ...  # the job, after each wait
    def downloaded(self, size: int, total: int | None) -> None: ...  # bytes so far
    def paused(self, seconds: float, reason: str) -> None: ...  # a rate-limit or retry pause


class QuietExport:
    """An `ExportProgress` that tells nobody."""

    def collected(self, files: int, size: int) -> None:
        pass

    def uploaded(self, files: int, size: int) -> None:
        pass

    def processing(self, status: str, seconds: float) -> None:
        pass

    def downloaded(self, size: int, total: int | None) -> None:
        pass

    def paused(self, seconds: float, reason: str) -> None:
        pass


@dataclass
class ExportResult:
    output: Path
    source: str  # "site" or "content"
    folder: Path  # the folder that was bundled
    format: str
    entries: int  # files in the archive (each one checked)
    source_bytes: int
    size: int  # bytes of the archive
    job_id: str
    requests: int  # HTTP requests made, retries included
    seconds: Annotated[float, PlainSerializer(lambda seconds: round(seconds, 3))]
    # RAR archives cannot be listed without the proprietary unrar: only their signature
    # and size were checked.
    listed: bool = True
    skipped: Annotated[  # (path, why) left out
        list[tuple[str, str]],
        PlainSerializer(lambda items: [{"path": path, "reason": why} for path, why in items]),
    ] = field(default_factory=list)
    waits: Annotated[
        list[tuple[float, str]],
        PlainSerializer(
            lambda items: [{"seconds": round(s, 3), "reason": why} for s, why in items]
        ),
    ] = field(default_factory=list)


class _Told:
    """The progress listener behind a lock, with the upload totals it is told."""

    def __init__(self, listener: ExportProgress):
        self.listener = listener
        self.lock = threading.Lock()
        self.files = 0
        self.bytes = 0

    def bytes_up(self, count: int) -> None:
        with self.lock:
            self.bytes += count
            self.listener.uploaded(self.files, self.bytes)

    def file_up(self) -> None:
        with self.lock:
            self.files += 1
            self.listener.uploaded(self.files, self.bytes)


@dataclass(frozen=True)
class ExportRequest:
    """One export, resolved and checked before anything is sent."""

    source: str  # "site" or "content"
    fmt: str
    folder: Path  # the folder bundled
    target: Path  # the archive's path
    files: Collected


def export_archive(
    config: Config,
    run: Run,
    *,
    source: str | None = None,
    fmt: str | None = None,
    output: str | Path | None = None,
    progress: ExportProgress | None = None,
    transport: httpx.BaseTransport | None = None,
) -> ExportResult:
    """Bundle `source` ("site": the built site; "content": the posts and their files;
    default `[archive] source`) into a `fmt` archive (default `[archive] format`) at
    `output` (default `[archive] output`, else `<source>.<format>` beside toolkit.toml;
    a relative `output` is relative to the current folder). The requests and pauses go
    to `run`."""
    started = time.monotonic()
    request = _request(config, source, fmt, output)
    with _Temp(request.target) as temp:
        return _run(
            config, run, request, temp, started=started, progress=progress, transport=transport
        )


def _request(
    config: Config, source: str | None, fmt: str | None, output: str | Path | None
) -> ExportRequest:
    source = source or config.archive.source
    fmt = fmt or config.archive.format
    if source not in EXPORT_SOURCES:
        raise ExportError(f"export: the source must be one of {', '.join(EXPORT_SOURCES)}")
    if fmt not in ARCHIVE_FORMATS:
        raise ExportError(f"export: the format must be one of {', '.join(ARCHIVE_FORMATS)}")
    require_reader(fmt)
    folder = config.site.output_dir if source == "site" else config.site.content_dir
    target = _output(config, source, fmt, output, folder)
    return ExportRequest(source, fmt, folder, target, _collect(folder, config, source))


def _run(
    config: Config,
    run: Run,
    request: ExportRequest,
    temp: _Temp,
    *,
    started: float,
    progress: ExportProgress | None,
    transport: httpx.BaseTransport | None,
) -> ExportResult:
    files, fmt, target = request.files, request.fmt, request.target
    told = _Told(progress or QuietExport())
    told.listener.collected(len(files.files), files.size)
    waits: list[tuple[float, str]] = []

    def on_wait(seconds: float, reason: str, *, writer: str | None = None) -> None:
        run.wait(seconds, reason, writer=writer)
        with told.lock:
            waits.append((seconds, reason))
            told.listener.paused(seconds, reason)

    with Clients.of(config, run, on_wait=on_wait, transport=transport).archive() as client:
        job = client.create_job(
            _job_tasks(files, fmt, target.name, config.archive.task_timeout), tag="toolkit-export"
        )
        try:
            job, sent = _upload(client, job, files, config.archive.uploads, told)
            job = _wait(client, job.id, config.archive.deadline, told)
        except ToolkitError as exc:
            if not isinstance(exc, TaskFailed):  # a failed job is over already
                _forget(client, job)
            raise
        size, entries = _download(client, job, sent, fmt, temp, told)
        requests = client.requests_made
    return ExportResult(
        output=target,
        source=request.source,
        folder=request.folder,
        format=fmt,
        entries=entries,
        source_bytes=files.size,
        size=size,
        job_id=job.id,
        requests=requests,
        seconds=time.monotonic() - started,
        skipped=files.skipped,
        waits=waits,
        listed=fmt != "rar",
    )


def _output(config: Config, source: str, fmt: str, output: str | Path | None, folder: Path) -> Path:
    """Where the archive goes, checked: not a folder, not inside what is bundled, and
    not named for another format."""
    if output is not None:
        target = Path(output).absolute()
    elif config.archive.output is not None:
        target = config.archive.output
    else:
        target = config.root / f"{source}{EXTENSIONS[fmt]}"
    if target.is_dir():
        raise ExportError(f"export: {target} is a folder; --output names the archive file")
    if target.resolve().is_relative_to(folder.resolve()):
        raise ExportError(
            f"export: the archive cannot be written inside {folder}, the folder "
            "it bundles; choose another --output"
        )
    named = next(
        (
            other
            for other in sorted(ARCHIVE_FORMATS, key=len, reverse=True)
            if target.name.lower().endswith(EXTENSIONS[other])
        ),
        None,
    )
    if named is not None and named != fmt:
        raise ExportError(
            f"export: {target.name} is named for a {named} archive, not {fmt}; "
            f"use --format {named} or another --output"
        )
    return target


def _collect(folder: Path, config: Config, source: str) -> Collected:
    if not folder.is_dir():
        hint = " (run `toolkit build` first)" if source == "site" else ""
        raise ContentError(f"export: {config.relative(folder)}/ does not exist{hint}")
    files = collect(folder, config.root, skip_hidden=source == "content")
    if not files.files:
        raise ContentError(f"export: nothing to export in {config.relative(folder)}/")
    return files


def _job_tasks(files: Collected, fmt: str, filename: str, timeout: int) -> dict[str, Any]:
    """The job: `file-1`... (uploads), `archive`, `export`."""
    uploads = {
        f"file-{index}": {"operation": "import/upload"} for index in range(1, len(files.files) + 1)
    }
    return {
        **uploads,
        ARCHIVE_TASK: {
            "operation": "archive",
            "input": list(uploads),
            "output_format": fmt,
            "filename": filename,
            "timeout": timeout,
        },
        EXPORT_TASK: {"operation": "export/url", "input": ARCHIVE_TASK},
    }


def _upload(
    client: ArchiveClient, job: Job, files: Collected, workers: int, told: _Told
) -> tuple[Job, dict[str, Sent]]:
    """Every file through its task's form, `workers` at a time; the first failure stops
    the ones not started yet and is raised. The job, as last shown, and each file as it
    went up (its size and the SHA-256 of the bytes sent)."""
    names = [f"file-{index}" for index in range(1, len(files.files) + 1)]
    if any(job.task(name).form is None for name in names):
        job = client.job(job.id)  # a service that gives the forms only once the job is shown
    forms = []
    for name, file in zip(names, files.files, strict=True):
        form = job.task(name).form
        if form is None:
            raise ExportError(f"export: the service gave no upload form for {file.name}")
        forms.append((form, file))

    sent: dict[str, Sent] = {}

    def send(form: UploadForm, file: SourceFile) -> None:
        digest = client.upload(form, file.path, file.name, file.size, told.bytes_up)
        with told.lock:
            sent[file.name] = Sent(file.size, digest)
        told.file_up()

    # Whether the service keeps the folders of a file's name is not documented: the first
    # file in a folder goes up alone, and the name the service kept is looked at before
    # the rest go (the archive task waits for every upload, so it has not run yet).
    probe = next((index for index, (_, file) in enumerate(forms) if "/" in file.name), None)
    if probe is not None:
        form, file = forms.pop(probe)
        send(form, file)
        job = client.job(job.id)
        kept = [remote.filename for remote in job.task(names[probe]).files]
        if kept != [file.name]:
            as_kept = ", ".join(_said(name) for name in kept) or "nothing"
            raise ExportError(
                f"export: the archive service kept {file.name} as {as_kept}: "
                "it does not keep the folders of uploaded names, so the archive would lose "
                "its layout; nothing was archived (the archive task was cancelled)"
            )

    with ThreadPoolExecutor(max_workers=max(1, workers), thread_name_prefix="upload") as pool:
        futures = [pool.submit(send, form, file) for form, file in forms]
        done, _ = wait(futures, return_when=FIRST_EXCEPTION)
        failed = next((future for future in done if future.exception() is not None), None)
        if failed is not None:
            for future in futures:
                future.cancel()
            error = failed.exception()
            raise (
                error
                if isinstance(error, ToolkitError)
                else ExportError(f"export: an upload failed: {error}")
            )
    return job, sent


def _wait(client: ArchiveClient, job_id: str, deadline: float, told: _Told) -> Job:
    """Wait requests until the job is done; `ExportTimeout` once `deadline` seconds pass."""
    started = time.monotonic()
    ends = started + deadline
    while True:
        job = client.wait_job(job_id, seconds=ends - time.monotonic())
        if job is not None:
            with told.lock:
                told.listener.processing(job.status, time.monotonic() - started)
            if job.status == "error":
                raise _failure(job)
            if job.done:
                return job
        if time.monotonic() >= ends:
            raise ExportTimeout(
                f"export: the archive was not ready within {deadline:g} s "
                "([archive] deadline); the job was cancelled"
            )


def _failure(job: Job) -> TaskFailed:
    """The task that failed first (the one the others failed because of)."""
    failed = [task for task in job.tasks if task.status == "error"]
    if not failed:
        return TaskFailed(f"export: the archive job {_said(job.id)} failed", None)
    causes = [task for task in failed if task.code != "INPUT_TASK_FAILED"]
    cause = (causes or failed)[0]
    return TaskFailed(
        f"export: the {_said(cause.name or cause.operation)} task failed: "
        f"{_said(cause.message or 'no message')} ({_said(cause.code or 'no code')})",
        cause.code,
    )


def _said(text: str) -> str:
    """A string of the service's, fit for a one-line message (control characters
    escaped, a long one cut)."""
    return quoted(text, SAID, marks=False)


def _forget(client: ArchiveClient, job: Job) -> None:
    """Best effort: cancel the archive task, so the service stops waiting or working (and
    charges nothing), then delete it."""
    try:
        task_id = job.task(ARCHIVE_TASK).id
    except ToolkitError:
        return
    for step in (client.cancel_task, client.delete_task):
        try:
            step(task_id)
        except ToolkitError:
            pass


class _Temp:
    """The temporary file beside the output that the download goes into: created (and
    locked) on entry, after removing what killed exports left there; removed on exit
    unless it was renamed into place."""

    def __init__(self, target: Path):
        self.target = target
        self.path = target.parent / temp_name(target)  # until __enter__ makes the file
        self.fd = -1
        self.kept = False

    def __enter__(self) -> _Temp:
        folder = self.target.parent
        try:
            folder.mkdir(parents=True, exist_ok=True)
            remove_stale_temp_files(folder, re.escape(self.target.name))
            # Locked, and made again if another export's clean-up took it for a leftover
            # in the instant before the lock.
            self.fd, self.path = open_locked_temp(self.target)
        except OSError as exc:
            what = (exc.strerror or type(exc).__name__).lower()
            raise ExportError(
                f"{folder}: {what} (the archive's folder must be writable; choose another --output)"
            ) from None
        return self

    def __exit__(self, *exc_info: object) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1
        if not self.kept:
            self.path.unlink(missing_ok=True)

    def keep(self) -> None:
        """Rename the file into place, over the output."""
        os.replace(self.path, self.target)
        self.kept = True


def _download(
    client: ArchiveClient, job: Job, sent: dict[str, Sent], fmt: str, temp: _Temp, told: _Told
) -> tuple[int, int]:
    """Stream the archive into `temp`, verify it, rename it into place."""
    exported = job.task(EXPORT_TASK).files
    if len(exported) != 1 or exported[0].url is None:
        raise BrokenDownload(
            f"export: the export task gave {len(exported)} file(s) to download, not one"
        )
    remote = exported[0]
    assert remote.url is not None
    done = 0

    def on_bytes(count: int) -> None:
        nonlocal done
        done += count
        with told.lock:
            told.listener.downloaded(done, remote.size)

    try:
        with open(os.dup(temp.fd), "wb") as sink:
            received, declared = client.download(remote.url, sink, on_bytes)
            sink.flush()
            os.fsync(sink.fileno())
        for expected in (declared, remote.size):
            if expected is not None and received != expected:
                raise BrokenDownload(f"the download is incomplete: {received} of {expected} bytes")
        entries = verify(temp.path, fmt, sent)
        temp.keep()
    except BrokenDownload as exc:
        raise BrokenDownload(f"export: {exc.message}") from None
    except OSError as exc:
        what = (exc.strerror or type(exc).__name__).lower()
        raise ExportError(
            f"{temp.target.parent}: {what} (the archive could not be written there)"
        ) from None
    return received, entries
