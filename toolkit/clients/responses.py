"""What an answer means, once `ApiClient` has one: read whole within bounds, mapped to
the `toolkit.errors` tree, and its `Retry-After` and JSON body taken out.

A whole answer is read up to `MAX_ANSWER_BYTES` (decoded) and, when it is JSON, nested
at most `MAX_JSON_DEPTH` deep, before anyone parses it; past either, one `ApiError` line
names the service and what it sent. An error answer becomes the `StatusError` of its
status (`status_error`), in the server's own words where it gave any.
"""

from __future__ import annotations

import email.utils
import time
from typing import Any

import httpx

from toolkit.clients.bounds import json_depth_over
from toolkit.errors import (
    ApiError,
    NotFound,
    PaymentRequired,
    RateLimited,
    ServerError,
    StatusError,
    Unauthorized,
    Unprocessable,
)
from toolkit.redact import clipped, quoted

MAX_ANSWER_BYTES = 256 * 1024 * 1024  # one whole answer, decoded
MAX_JSON_DEPTH = 128  # nesting of a JSON answer: arrays and objects
MAX_SAID = 500  # characters of a service's own words shown in an error


def retry_after_seconds(response: httpx.Response, default: float) -> float:
    """`Retry-After` as seconds: a number, or an HTTP date; `default` when absent or bad."""
    value = response.headers.get("retry-after", "").strip()
    if not value:
        return default
    try:
        return max(float(value), 0.0)
    except ValueError:
        try:
            parsed = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return default
        return max(parsed.timestamp() - time.time(), 0.0)


def _error_message(response: httpx.Response) -> str:
    """The server's own words: `{"error": ...}`, `{"errors": {...}}`, `{"message": ...}`."""
    try:
        body = response.json()
    except ValueError:
        text = response.text.strip()
        return clipped(text.splitlines()[0], 200) if text else response.reason_phrase
    if isinstance(body, dict):
        if isinstance(body.get("error"), str):
            return str(body["error"])
        if isinstance(body.get("error"), dict) and body["error"].get("message"):
            return str(body["error"]["message"])
        if isinstance(body.get("errors"), dict):
            return "; ".join(
                f"{field} {' and '.join(map(str, problems if isinstance(problems, list) else [problems]))}"
                for field, problems in body["errors"].items()
            )
        if body.get("message"):
            return str(body["message"])
    return response.reason_phrase


def status_error(response: httpx.Response, *, retry_after: float = 0.0) -> StatusError:
    """The error of the tree for an error answer (`retry_after`: seconds, for a 429)."""
    request = response.request
    status = response.status_code
    said = quoted(_error_message(response), MAX_SAID, marks=False)  # one line, controls escaped
    message = f"{request.method} {request.url.path}: {status} {said}"
    if status == 429:
        return RateLimited(message, retry_after=retry_after, request=request, response=response)
    kind: type[StatusError] = StatusError
    if status in (401, 403):
        kind = Unauthorized
    elif status == 402:
        kind = PaymentRequired
    elif status == 404:
        kind = NotFound
    elif status == 422:
        kind = Unprocessable
    elif status >= 500:
        kind = ServerError
    return kind(message, request=request, response=response)


def read_bounded(
    response: httpx.Response, method: str, shown_path: str, talking_to: str
) -> httpx.Response:
    """`response` read whole, at most `MAX_ANSWER_BYTES` of it, and checked to nest no
    deeper than `MAX_JSON_DEPTH` if it is JSON; past either, `ApiError` naming the
    service. An error answer whose body breaks off is judged by its head alone."""
    refused = f"{method} {shown_path}: {talking_to} sent an answer"
    try:
        length = int(response.headers.get("content-length", "0"))
    except ValueError:
        length = 0
    chunks: list[bytes] = []
    size = 0
    try:
        if length > MAX_ANSWER_BYTES:
            raise ApiError(
                f"{refused} of {length} bytes, over the {_mib(MAX_ANSWER_BYTES)} "
                "toolkit reads (not trusted)",
                request=response.request,
            )
        try:
            for chunk in response.iter_bytes():
                size += len(chunk)
                if size > MAX_ANSWER_BYTES:
                    raise ApiError(
                        f"{refused} over the {_mib(MAX_ANSWER_BYTES)} toolkit reads (not trusted)",
                        request=response.request,
                    )
                chunks.append(chunk)
        except httpx.TransportError:
            if response.status_code < 400:
                raise
            return _head_only(response)
    finally:
        response.close()
    body = b"".join(chunks)
    if json_depth_over(body, MAX_JSON_DEPTH):
        raise ApiError(
            f"{refused} nested deeper than {MAX_JSON_DEPTH} levels (not trusted)",
            request=response.request,
        )
    kept = [
        (name, value)
        for name, value in response.headers.multi_items()
        if name.lower() not in ("content-encoding", "content-length", "transfer-encoding")
    ]
    return httpx.Response(
        response.status_code,
        headers=kept,
        content=body,
        request=response.request,
        extensions=response.extensions,
    )


def _head_only(response: httpx.Response) -> httpx.Response:
    """An error answer whose body broke off, judged by its status and `Retry-After`."""
    kept = {
        name: value for name, value in response.headers.items() if name.lower() == "retry-after"
    }
    return httpx.Response(response.status_code, headers=kept, request=response.request)


def _mib(size: int) -> str:
    return f"{size // (1024 * 1024)} MiB"


def json_body(response: httpx.Response) -> Any:
    if not response.content:
        return None
    try:
        return response.json()
    except ValueError:
        raise ApiError(
            f"{response.request.method} {response.request.url.path}: the answer is not JSON",
            request=response.request,
            response=response,
        ) from None
