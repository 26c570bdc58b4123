"""Interface C's storage: the upload form of an upload task and the download URL of an
export task, as the real service's storage host serves them, here on the sandbox's own
origin under `/v2/storage/`.

Neither takes the API key: the form's `signature` parameter and the download URL's
`signature` query are the task's own secret, as the real storage signs its URLs.

An upload is `multipart/form-data` with the form's parameters and one file part named
`file`; its body is read as it arrives and written straight to disk (the route is
`streamed`: the application does not read it first), so a file of any size up to
`MAX_UPLOAD` costs no memory. The file part's `filename` is the name the file keeps in
archives: anything that could lead out of a folder (absolute, `..`, backslashes,
control characters) is a 422; of a relative path (`posts/a/index.html`) the sandbox
keeps all, or only its last segment with the setting `upload_names: "basename"` (what
the real storage does is not documented; the README says why both are there).
"""

from __future__ import annotations

import hmac
import json
import os
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

from starlette.requests import ClientDisconnect
from starlette.responses import FileResponse, RedirectResponse, Response, StreamingResponse
from starlette.routing import Route

from toolkit_sandbox.archive import specs, tasks
from toolkit_sandbox.archive.http import ArchiveCtx, endpoint
from toolkit_sandbox.archive.multipart import FormError, FormParser, boundary_of, header_value
from toolkit_sandbox.archive.worker import apply, file_of, part_of
from toolkit_sandbox.interface import ErrorAnswer

MAX_FIELD = 4096  # bytes of a form parameter
MAX_PATH = 1024  # characters of an uploaded file's name
CHUNK = 256 * 1024


class _TooLarge(Exception):
    pass


def safe_path(name: str) -> bool:
    """A relative POSIX path whose every segment is a plain name."""
    if not 0 < len(name) <= MAX_PATH or name.startswith("/"):
        return False
    return all(specs.safe_filename(segment) for segment in name.split("/"))


class _Form:
    """The parts of an upload form: small fields kept in memory, the one file part
    written to `target` as its bytes arrive."""

    def __init__(self, target: Path, limit: int):
        self.target = target
        self.limit = limit
        self.fields: dict[str, str] = {}
        self.filename: str | None = None
        self.size = 0
        self._file: int | None = None
        self._name: str | None = None
        self._value = bytearray()

    def start(self, headers: dict[str, str]) -> None:
        kind, options = header_value(headers.get("content-disposition", ""))
        if kind != "form-data" or "name" not in options:
            raise FormError("a part without a form-data name")
        self._name, self._value = options["name"], bytearray()
        if self.filename is not None and "filename" not in options:
            self._name = None  # a parameter after the file is ignored, as S3's POST does
        if "filename" in options:
            if self._name != "file" or self.filename is not None:
                raise FormError("one file, in the part named file")
            self.filename = options["filename"]
            self._file = os.open(self.target, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)

    def data(self, chunk: bytes) -> None:
        if self._file is not None:
            self.size += len(chunk)
            if self.size > self.limit:
                raise _TooLarge
            view = memoryview(chunk)
            while view:
                view = view[os.write(self._file, view) :]
        elif self._name is not None:
            self._value += chunk
            if len(self._value) > MAX_FIELD:
                raise FormError("a form parameter is too long")

    def end(self) -> None:
        if self._file is not None:
            self.close()
        elif self._name is not None:
            self.fields[self._name] = self._value.decode("utf-8", errors="replace")

    def close(self) -> None:
        if self._file is not None:
            os.close(self._file)
            self._file = None


@endpoint(auth=False)
async def upload(ctx: ArchiveCtx) -> Response:
    """`POST /v2/storage/{id}`: the file of an upload task, as its form says; 201 with
    no body, as a storage answers."""
    task_id = ctx.path_param("id")
    with ctx.store.read() as db:
        row = db.execute("SELECT * FROM archive_tasks WHERE id = ?", (task_id,)).fetchone()
    if row is None or row["operation"] != specs.UPLOAD:
        raise ErrorAnswer(404)
    if row["status"] != "waiting" or task_id in ctx.runtime.uploading:
        raise ErrorAnswer(409, "The task is not waiting for an upload.")
    if ctx.runtime.settings.storage_redirect and "hop" not in ctx.request.query_params:
        async for _ in ctx.request.stream():  # read (and drop) what was sent here
            pass
        return RedirectResponse(_other_origin(ctx), status_code=307)  # the form, sent there
    boundary = boundary_of(ctx.request.headers.get("content-type", ""))
    if boundary is None:
        raise ErrorAnswer(
            400, "The upload must be multipart/form-data.", extra={"code": "INVALID_UPLOAD"}
        )
    part, target = part_of(ctx.runtime, task_id), file_of(ctx.runtime, task_id)
    form = _Form(part, specs.MAX_UPLOAD)
    ctx.runtime.uploading.add(task_id)
    try:
        await _receive(ctx, form, boundary)
        _check(form, row)
        part.replace(target)
        assert form.filename is not None  # _check
        kept = (
            form.filename.rsplit("/", 1)[-1]
            if ctx.runtime.settings.upload_names == "basename"
            else form.filename
        )
        with ctx.store.transaction() as db:
            effects = tasks.finish(
                db, task_id, {"files": [{"filename": kept, "size": form.size}]}, time.time()
            )
            if not effects.changed:
                target.unlink(missing_ok=True)
                raise ErrorAnswer(409, "The task is not waiting for an upload.")
    except BaseException:
        form.close()
        part.unlink(missing_ok=True)
        raise
    finally:
        ctx.runtime.uploading.discard(task_id)
    apply(ctx.store, ctx.runtime, effects)
    redirect = json.loads(row["payload"]).get("redirect")
    if isinstance(redirect, str):  # the upload task's `redirect`: the browser goes on there
        return RedirectResponse(redirect, status_code=303)
    return Response(status_code=201)


async def _receive(ctx: ArchiveCtx, form: _Form, boundary: bytes) -> None:
    parser = FormParser(boundary, form)
    try:
        async for chunk in ctx.request.stream():
            parser.feed(chunk)
        parser.close()
    except _TooLarge:
        raise ErrorAnswer(413, f"A file is at most {specs.MAX_UPLOAD} bytes.") from None
    except FormError as exc:
        raise ErrorAnswer(
            400, f"The upload is not a valid form: {exc}.", extra={"code": "INVALID_UPLOAD"}
        ) from None
    except ClientDisconnect:
        raise ErrorAnswer(
            400, "The client left before the upload was complete.", extra={"code": "INVALID_UPLOAD"}
        ) from None


def _check(form: _Form, row: Any) -> None:
    """The form's parameters, then its file. The file is the last part of the form (the
    import docs: "file always needs to be the last post parameter"): parameters after it
    are not read, so a form that sends its file first lacks its signature, which the
    storage's S3-style POST refuses in S3's words (400 `InvalidArgument`)."""
    if "signature" not in form.fields:
        raise ErrorAnswer(
            400,
            "Bucket POST must contain a field named 'signature'.  If it is specified, "
            "please check the order of the fields.",
            extra={"code": "INVALID_ARGUMENT"},
        )
    if not hmac.compare_digest(form.fields.get("signature", ""), row["token"]):
        raise ErrorAnswer(403)
    if form.filename is None:
        raise ErrorAnswer(422, extra={"errors": {"file": ["The form has no file part."]}})
    if not safe_path(form.filename):
        raise ErrorAnswer(
            422,
            extra={
                "errors": {
                    "file": [
                        "The file name must be a relative path of plain names (no /, .. or control "
                        "characters at its start or in it)."
                    ]
                }
            },
        )


@endpoint(auth=False)
async def download(ctx: ArchiveCtx) -> Response:
    """`GET /v2/storage/{id}/{index}/{filename}?signature=`: a file of an export task,
    `Content-Disposition: attachment` (`inline` when the task asked for it).
    A signed URL takes no other credential: with an `Authorization` header it is a 400,
    as a presigned S3 URL is ("only one auth mechanism allowed")."""
    task_id = ctx.path_param("id")
    if "authorization" in ctx.request.headers:
        raise ErrorAnswer(
            400,
            "Only one auth mechanism allowed: the URL is signed.",
            extra={"code": "INVALID_ARGUMENT"},
        )
    with ctx.store.read() as db:
        row = db.execute("SELECT * FROM archive_tasks WHERE id = ?", (task_id,)).fetchone()
        given = ctx.request.query_params.get("signature", "")
        if (
            row is None
            or row["operation"] != specs.EXPORT
            or row["status"] != "finished"
            or not hmac.compare_digest(given, row["token"])
        ):
            raise ErrorAnswer(404)
        files = json.loads(row["result"])["files"]
        index = int(ctx.path_param("index"))
        sources = [
            input_id
            for input_id in tasks.input_ids(db, task_id)
            for _ in tasks.files_of(db, input_id)
        ]
    if not 0 <= index < len(files) or index >= len(sources):
        raise ErrorAnswer(404)
    path = file_of(ctx.runtime, sources[index])
    if not path.is_file():
        raise ErrorAnswer(404)
    if ctx.runtime.settings.storage_redirect and "hop" not in ctx.request.query_params:
        return RedirectResponse(_other_origin(ctx), status_code=302)
    filename = files[index]["filename"]
    # `inline: true` on the export task: shown in a browser rather than saved (export docs).
    disposition = "inline" if json.loads(row["payload"]).get("inline") is True else "attachment"
    headers = {"Content-Disposition": f"{disposition}; filename*=UTF-8''{quote(filename, safe='')}"}
    fault = ctx.runtime.take_fault("truncate", "corrupt")
    if fault is not None and fault.kind == "truncate":
        return StreamingResponse(
            _first_half(path), media_type="application/octet-stream", headers=headers
        )
    if fault is not None:
        size = path.stat().st_size
        offset = min(size // 2 if fault.offset is None else fault.offset, max(size - 1, 0))
        return StreamingResponse(
            _flipped(path, offset),
            media_type="application/octet-stream",
            headers={**headers, "Content-Length": str(size)},
        )
    return FileResponse(path, media_type="application/octet-stream", headers=headers)


def _other_origin(ctx: ArchiveCtx) -> str:
    """The URL asked for, on the other loopback name (127.0.0.1 <-> localhost)."""
    url = ctx.request.url
    other = "localhost" if url.hostname != "localhost" else "127.0.0.1"
    return str(url.replace(hostname=other).include_query_params(hop="1"))


async def _first_half(path: Path) -> AsyncIterator[bytes]:
    """The first half of the file, then a clean end: only the size tells it is cut."""
    left = path.stat().st_size // 2
    with path.open("rb") as source:
        while left > 0:
            chunk = source.read(min(CHUNK, left))
            if not chunk:
                return
            left -= len(chunk)
            yield chunk


async def _flipped(path: Path, offset: int) -> AsyncIterator[bytes]:
    """The whole file, its byte at `offset` inverted: only its content tells."""
    with path.open("rb") as source:
        position = 0
        while chunk := source.read(CHUNK):
            if position <= offset < position + len(chunk):
                data = bytearray(chunk)
                data[offset - position] ^= 0xFF
                chunk = bytes(data)
            position += len(chunk)
            yield chunk


routes = [
    Route("/v2/storage/{id}", upload, methods=["POST"]),
    Route("/v2/storage/{id}/{index:int}/{filename:path}", download, methods=["GET"]),
]
STREAMED = ("/v2/storage/{id}",)
