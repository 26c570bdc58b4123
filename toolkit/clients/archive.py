"""The archive-task API (interface C, CloudConvert API v2): jobs of named tasks, uploads
through a task's form, waiting, and downloads of an export task's files.

The API key goes out as `Authorization: Bearer ...` on the API's own requests only
(an `httpx.Auth`, so it never appears in a URL or a message). An upload form's URL and a
download URL are signed by the service and may be on another host (its storage): they
are sent without the key, and shown in messages by their path only (the signature is in
their query). They follow the storage's redirects (a signed URL may lead to another
host); no key is on them to forward, and httpx drops `Authorization` on a redirect to
another origin anyway. Error answers `{"message", "code", "errors"}` become one line that says
what the service said.

Waiting holds one request on the wait endpoint (`GET /v2/jobs/{id}/wait`), which the
service answers when the job is done; a request cut off first (by the client's time,
or a 504 from a proxy in between) is asked again until the caller's deadline. That request's read timeout is the time left before the deadline, not the
usual request timeout, since the service is meant to hold it.

Every request goes through `ApiClient.send` (retries, 429s, error mapping, the run log),
each with its route template. The storage's two (the upload form, the download URL) are
named by the templates the sandbox serves them under, `/v2/storage/{id}` and
`/v2/storage/{id}/{index}/{filename}`, so the run log and the sandbox's request records
agree.
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Callable, Iterator, Mapping
from contextlib import closing
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, BinaryIO
from urllib.parse import urlsplit

import httpx

from toolkit.clients.base import (
    ApiClient,
    BearerAuth,
    RequestListener,
    RetryPolicy,
    Sleep,
    WaitListener,
    reason_of,
)
from toolkit.clients.responses import MAX_SAID, json_body
from toolkit.config import Secret
from toolkit.errors import (
    ApiError,
    BrokenDownload,
    NoAnswerError,
    RateLimited,
    ServerError,
    StatusError,
)
from toolkit.redact import quoted, redact_url

ByteCounter = Callable[[int], None]  # told each chunk's size as it goes (negative: taken back)
CHUNK = 1024 * 1024
WAIT_ROUTE = "/v2/jobs/{id}/wait"
UPLOAD_ROUTE = "/v2/storage/{id}"  # an upload task's form
DOWNLOAD_ROUTE = "/v2/storage/{id}/{index}/{filename}"  # an export task's file
MAX_UPLOAD_REDIRECTS = 5


@dataclass(frozen=True)
class UploadForm:
    url: str
    parameters: dict[str, str]


@dataclass(frozen=True)
class RemoteFile:
    filename: str
    url: str | None
    size: int | None


@dataclass(frozen=True)
class Task:
    id: str
    name: str | None
    operation: str
    status: str
    code: str | None = None
    message: str | None = None
    form: UploadForm | None = None
    files: tuple[RemoteFile, ...] = ()


@dataclass(frozen=True)
class Job:
    id: str
    status: str
    tasks: tuple[Task, ...] = field(default=())

    def task(self, name: str) -> Task:
        found = self._named.get(name)
        if found is None:
            raise ApiError(f"job {self.id}: the answer has no task named {name!r}")
        return found

    @cached_property
    def _named(self) -> dict[str, Task]:
        return {task.name: task for task in self.tasks if task.name is not None}

    @property
    def done(self) -> bool:
        return self.status in ("finished", "error")


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _task(raw: Any) -> Task:
    """A task from an answer, checked: what the client relies on has the right type."""
    if (
        not isinstance(raw, dict)
        or not isinstance(raw.get("id"), str)
        or not isinstance(raw.get("status"), str)
    ):
        raise ApiError("the archive-task API answered a task without an id or a status")
    result: dict[str, Any] = raw["result"] if isinstance(raw.get("result"), dict) else {}
    form = None
    raw_form = result.get("form")
    if isinstance(raw_form, dict) and isinstance(raw_form.get("url"), str):
        parameters: dict[str, Any] = (
            raw_form["parameters"] if isinstance(raw_form.get("parameters"), dict) else {}
        )
        form = UploadForm(
            raw_form["url"],
            {str(k): str(v) for k, v in parameters.items() if isinstance(v, str | int | float)},
        )
    files = []
    for item in result.get("files") or []:
        if isinstance(item, dict) and isinstance(item.get("filename"), str):
            size = item.get("size")
            files.append(
                RemoteFile(
                    item["filename"],
                    _text(item.get("url")),
                    size if isinstance(size, int) and not isinstance(size, bool) else None,
                )
            )
    return Task(
        raw["id"],
        _text(raw.get("name")),
        _text(raw.get("operation")) or "",
        raw["status"],
        _text(raw.get("code")),
        _text(raw.get("message")),
        form,
        tuple(files),
    )


def _job(body: Any) -> Job:
    data = body.get("data") if isinstance(body, dict) else None
    if (
        not isinstance(data, dict)
        or not isinstance(data.get("id"), str)
        or not isinstance(data.get("tasks"), list)
    ):
        raise ApiError("the archive-task API answered something that is not a job")
    return Job(
        data["id"], str(data.get("status") or ""), tuple(_task(item) for item in data["tasks"])
    )


def _explained(exc: StatusError) -> StatusError:
    """The same error, its message in the service's words: `message (CODE): field: ...`."""
    response, request = exc.response, exc.request
    if response is None or request is None:
        return exc
    try:
        body = response.json()
    except ValueError:
        return exc
    if not isinstance(body, dict) or not isinstance(body.get("message"), str):
        return exc
    text = body["message"].strip()
    if isinstance(body.get("code"), str) and body["code"]:
        text += f" ({body['code']})"
    errors = body.get("errors")
    if isinstance(errors, dict) and errors:
        text += ": " + "; ".join(
            f"{name}: {' '.join(map(str, problems if isinstance(problems, list) else [problems]))}"
            for name, problems in list(errors.items())[:5]
        )
    said = quoted(text, MAX_SAID, marks=False)  # one line, controls escaped
    message = f"{request.method} {request.url.path}: {response.status_code} {said}"
    if response.status_code == 401 and "Authorization" in request.headers:
        message += "; check CLOUDCONVERT_API_KEY"
    if isinstance(exc, RateLimited):
        return RateLimited(message, retry_after=exc.retry_after, request=request, response=response)
    return type(exc)(message, request=request, response=response)


def _about(error: ApiError, what: str) -> ApiError:
    """The same error, its message led by `what` (`upload of a.html: POST ...: 403 ...`)."""
    message = f"{what}: {error.message}"
    if isinstance(error, RateLimited):
        return RateLimited(
            message, retry_after=error.retry_after, request=error.request, response=error.response
        )
    if isinstance(error, NoAnswerError):
        return NoAnswerError(
            message,
            maybe_sent=error.maybe_sent,
            request=error.request,
            reason=error.reason,
            timed_out=error.timed_out,
        )
    if isinstance(error, StatusError):
        return type(error)(message, request=error.request, response=error.response)
    return error


def shown(url: str) -> str:
    """A signed URL as messages show it: no query (the signature), no credentials."""
    parts = urlsplit(redact_url(url))
    return f"{parts.scheme}://{parts.netloc}{parts.path}"


def _quoted(text: str) -> str:
    """A form-data parameter value as a quoted string (RFC 7578); no line breaks."""
    if "\r" in text or "\n" in text:
        raise ApiError("the upload form holds a line break in a name or value")
    return text.replace("\\", "\\\\").replace('"', '\\"')


class _FormBody:
    """An upload form as `multipart/form-data`: the parameters and the file part's head
    in one piece with the file's first chunk, the rest of the file in chunks, so a small
    file leaves in one write. Every attempt reads the file again from its start, and
    takes back the bytes the one before it counted."""

    def __init__(self, parameters: Mapping[str, str], name: str, path: Path, size: int):
        self.boundary = secrets.token_hex(16)
        head = "".join(
            f"--{self.boundary}\r\nContent-Disposition: form-data; "
            f'name="{_quoted(key)}"\r\n\r\n{_quoted(value)}\r\n'
            for key, value in parameters.items()
        )
        head += (
            f'--{self.boundary}\r\nContent-Disposition: form-data; name="file"; '
            f'filename="{_quoted(name)}"\r\nContent-Type: application/octet-stream\r\n\r\n'
        )
        self.head = head.encode("utf-8")
        self.tail = f"\r\n--{self.boundary}--\r\n".encode("ascii")
        self.path, self.size = path, size
        self.sent = 0  # file bytes read by the current attempt
        self.digest = hashlib.sha256()  # of the bytes the current attempt sent

    @property
    def headers(self) -> dict[str, str]:
        return {
            "Content-Type": f"multipart/form-data; boundary={self.boundary}",
            "Content-Length": str(len(self.head) + self.size + len(self.tail)),
        }

    def chunks(self, on_bytes: ByteCounter) -> Iterator[bytes]:
        on_bytes(-self.sent)
        self.sent = 0
        self.digest = hashlib.sha256()
        with self.path.open("rb") as source:
            prefix = self.head
            while self.sent < self.size:
                chunk = source.read(min(CHUNK, self.size - self.sent))
                if not chunk:
                    raise ApiError(f"{self.path.name} became shorter while it was uploaded")
                self.sent += len(chunk)
                self.digest.update(chunk)
                on_bytes(len(chunk))
                last = self.sent == self.size
                yield prefix + chunk + (self.tail if last else b"")
                prefix = b""
            if self.size == 0:
                yield prefix + self.tail


class ArchiveClient(ApiClient):
    def __init__(
        self,
        base_url: str,
        api_key: Secret,
        *,
        timeout: float = 30.0,
        on_wait: WaitListener | None = None,
        sleep: Sleep | None = None,
        transport: httpx.BaseTransport | None = None,
        retry: RetryPolicy | None = None,
        on_request: RequestListener | None = None,
    ):
        super().__init__(
            base_url,
            auth=BearerAuth(api_key),
            transport=transport,
            retry=retry,
            sleep=sleep,
            on_wait=on_wait,
            on_request=on_request,
            timeout=timeout,
        )

    def _call(self, method: str, path: str, **options: Any) -> httpx.Response:
        """`send`, its error answers in the service's words."""
        try:
            return self.send(method, path, **options)
        except StatusError as exc:
            raise _explained(exc) from None

    # --- the API ----------------------------------------------------------------------

    def create_job(self, tasks: Mapping[str, Mapping[str, Any]], tag: str | None = None) -> Job:
        """One request for the whole job. Not retried once it may have reached the
        service (a second job would cost credits again)."""
        body: dict[str, Any] = {"tasks": tasks}
        if tag is not None:
            body["tag"] = tag
        return _job(json_body(self._call("POST", "/v2/jobs", json=body, idempotent=False)))

    def job(self, job_id: str) -> Job:
        return _job(json_body(self._call("GET", f"/v2/jobs/{job_id}", route="/v2/jobs/{id}")))

    def delete_task(self, task_id: str) -> None:
        self._call("DELETE", f"/v2/tasks/{task_id}", route="/v2/tasks/{id}")

    def cancel_task(self, task_id: str) -> None:
        """Cancel a waiting or processing task (it ends in error; nothing is charged)."""
        self._call(
            "POST", f"/v2/tasks/{task_id}/cancel", route="/v2/tasks/{id}/cancel", idempotent=False
        )

    def wait_job(self, job_id: str, *, seconds: float) -> Job | None:
        """One wait request, held by the service until the job is done or its cap; read
        for at most `seconds`. None: no answer in that time (ask again, or give up).
        A 429 or a 5xx is waited out within `seconds`; one that cannot be is raised."""
        try:
            response = self._call(
                "GET", f"/v2/jobs/{job_id}/wait", route=WAIT_ROUTE, timeout=seconds
            )
        except NoAnswerError as exc:
            if exc.timed_out:
                return None
            raise
        except ServerError as exc:
            if exc.response is not None and exc.response.status_code == 504:
                return None  # held past a cap on the way: the job is still running
            raise
        return _job(json_body(response))

    # --- storage: the upload form and the download URL ----------------------------------

    def upload(
        self, form: UploadForm, path: Path, name: str, size: int, on_bytes: ByteCounter
    ) -> str:
        """POST the `size` bytes of `path` through an upload task's form, streamed from
        disk, as the file `name`; the SHA-256 (hex) of the bytes sent. Retried (the file
        read again from its start) on a connection that was never made, a 429 and a 5xx:
        a task takes one upload, so nothing is doubled. Not retried once the file may
        have arrived (a second upload to the task would be refused). A 307 or 308 from
        the storage is followed (the whole form sent again there, a few times at most);
        any other redirect would drop the file, and is an error."""
        body = _FormBody(form.parameters, name, path, size)
        url = form.url
        for _ in range(MAX_UPLOAD_REDIRECTS + 1):
            try:
                response = self._call(
                    "POST",
                    url,
                    route=UPLOAD_ROUTE,
                    headers=body.headers,
                    content=lambda: body.chunks(on_bytes),
                    idempotent=False,
                    retry_server_errors=True,
                    authenticated=False,
                )
            except ApiError as exc:
                on_bytes(-body.sent)
                raise _about(exc, f"upload of {name}") from None
            location = response.headers.get("location")
            if not response.is_redirect:
                return body.digest.hexdigest()
            on_bytes(-body.sent)
            body.sent = 0
            if response.status_code not in (307, 308) or not location:
                break
            url = str(response.url.join(location))
            if httpx.URL(url).scheme not in ("http", "https"):
                break
        raise ApiError(
            f"upload of {name}: POST {shown(url)}: the storage answered "
            f"{response.status_code}, a redirect that does not take the file"
        )

    def download(self, url: str, target: BinaryIO, on_bytes: ByteCounter) -> tuple[int, int | None]:
        """Stream `url` into `target`: (bytes received, the size the answer declared, if
        it declared one). A connection that breaks off is a `BrokenDownload`; it is not
        asked again once it may have been sent."""
        received = 0
        try:
            response = self._call(
                "GET",
                url,
                route=DOWNLOAD_ROUTE,
                stream=True,
                idempotent=False,
                authenticated=False,
                follow_redirects=True,
            )
        except NoAnswerError as exc:
            raise BrokenDownload(
                f"the download of {shown(url)} broke off after 0 bytes ({exc.reason})"
            ) from None
        except httpx.TooManyRedirects:
            raise BrokenDownload(
                f"the download of {shown(url)} was redirected too many times"
            ) from None
        with closing(response):
            length = response.headers.get("content-length", "")
            declared = (
                int(length)
                if length.isdigit() and not response.headers.get("content-encoding")
                else None
            )
            try:
                for chunk in response.iter_bytes(CHUNK):
                    target.write(chunk)
                    received += len(chunk)
                    on_bytes(len(chunk))
            except httpx.TransportError as exc:
                raise BrokenDownload(
                    f"the download of {shown(url)} broke off after {received} "
                    f"bytes ({reason_of(exc)})"
                ) from None
        return received, declared
