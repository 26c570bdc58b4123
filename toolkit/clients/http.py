"""What every remote client shares: an httpx client, retries, and errors without secrets.

Reads and idempotent writes are retried a bounded number of times on 429 (after the
`Retry-After` the server asked for), 5xx and connection failures. A request that is not
idempotent (creating an article) is retried only when it certainly did not reach the
server (the connection was never made) or the server refused it outright (429); any
other failure raises, and the caller reconciles before deciding what to do.
"""

from __future__ import annotations

import email.utils
import logging
import re
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

import httpx

from toolkit import USER_AGENT
from toolkit.errors import (
    ApiError,
    HTTPStatusError,
    NotFound,
    PaymentRequired,
    RateLimited,
    ServerError,
    TransportError,
    Unauthorized,
    Unprocessable,
)
from toolkit.redact import redact_url

log = logging.getLogger(__name__)

DEFAULT_TIMEOUT = httpx.Timeout(30.0, connect=10.0)
# Failures that happen before a single byte of the request has left.
NEVER_SENT = (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout)


def timeout_of(seconds: float) -> httpx.Timeout:
    """A client timeout of `seconds` per read or write; connecting takes at most 10 s."""
    return httpx.Timeout(seconds, connect=min(seconds, 10.0))


def _words(name: str) -> str:
    """`ReadTimeout` -> `read timeout`, `ConnectError` -> `connect error`."""
    return re.sub(r"(?<!^)(?=[A-Z])", " ", name).lower()


@dataclass(frozen=True)
class RetryPolicy:
    attempts: int = 5  # in all, the first try included
    backoff: float = 0.25  # seconds before the first retry of a 5xx / connection error
    max_backoff: float = 8.0
    max_retry_after: float = 300.0  # never sleep longer than this on one 429

    def pause(self, retry: int) -> float:
        return min(self.backoff * (2**retry), self.max_backoff)


def retry_after_seconds(response: httpx.Response, default: float = 30.0) -> float:
    """`Retry-After` as seconds: a number, or an HTTP date."""
    value = response.headers.get("retry-after", "").strip()
    if not value:
        return default
    try:
        return max(float(value), 0.0)
    except ValueError:
        parsed = email.utils.parsedate_to_datetime(value) if value else None
        if parsed is None:
            return default
        return max(parsed.timestamp() - time.time(), 0.0)


def _error_message(response: httpx.Response) -> str:
    """The server's own words: `{"error": ...}`, `{"errors": {...}}`, `{"message": ...}`."""
    try:
        body = response.json()
    except ValueError:
        text = response.text.strip()
        return text.splitlines()[0][:200] if text else response.reason_phrase
    if isinstance(body, dict):
        if isinstance(body.get("error"), str):
            return body["error"]
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


def status_error(response: httpx.Response) -> HTTPStatusError:
    request = response.request
    status = response.status_code
    message = f"{request.method} {request.url.path}: {status} {_error_message(response)}"
    kwargs = {"request": request, "response": response}
    if status == 429:
        return RateLimited(message, retry_after=retry_after_seconds(response), **kwargs)
    if status in (401, 403):
        return Unauthorized(message, **kwargs)
    if status == 402:
        return PaymentRequired(message, **kwargs)
    if status == 404:
        return NotFound(message, **kwargs)
    if status == 422:
        return Unprocessable(message, **kwargs)
    if status >= 500:
        return ServerError(message, **kwargs)
    return HTTPStatusError(message, **kwargs)


class Pacer(Protocol):
    """Rate-limit scheduling around each attempt of a request."""

    def before(self) -> None: ...

    def answered(self, response: httpx.Response) -> None: ...

    def failed(self, *, reached_server: bool) -> None: ...


class ApiClient:
    """An httpx client with toolkit's User-Agent, retries and error mapping.

    Pass `transport` (or a whole `client`) to talk to something other than the network.
    `on_wait(seconds, reason)` is told about every pause, for progress output and logs.
    """

    def __init__(
        self,
        base_url: str,
        *,
        headers: Mapping[str, str] | None = None,
        transport: httpx.BaseTransport | None = None,
        client: httpx.Client | None = None,
        retry: RetryPolicy | None = None,
        sleep: Callable[[float], None] = time.sleep,
        on_wait: Callable[[float, str], None] | None = None,
        timeout: httpx.Timeout = DEFAULT_TIMEOUT,
    ):
        self.base_url = base_url.rstrip("/")
        self.retry = retry or RetryPolicy()
        self._sleep = sleep
        self.on_wait = on_wait
        self._owns_client = client is None
        self._client = client or httpx.Client(
            base_url=self.base_url, transport=transport, timeout=timeout,
            headers={"User-Agent": USER_AGENT, "Accept": "application/json"},
        )
        if headers:
            self._client.headers.update(headers)
        self.requests_made = 0  # requests sent, retries included (publish reports it)
        self._count_lock = threading.Lock()  # the publish lanes send from several threads

    def close(self) -> None:
        if self._owns_client:
            self._client.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def wait(self, seconds: float, reason: str) -> None:
        if seconds <= 0:
            return
        if self.on_wait:
            self.on_wait(seconds, reason)
        log.info("waiting %.1f s: %s", seconds, reason)
        self._sleep(seconds)

    def send(
        self,
        method: str,
        path: str,
        *,
        params: Mapping[str, Any] | None = None,
        json: Any = None,
        idempotent: bool = True,
        pacer: Pacer | None = None,
    ) -> httpx.Response:
        """Send one request, retrying what can safely be retried; raise `ApiError` otherwise.

        A `pacer` (rate-limit scheduling) is asked before every attempt and told how it ended.
        """
        params = {k: v for k, v in (params or {}).items() if v is not None}
        retries = 0
        while True:
            if pacer:
                pacer.before()
            try:
                with self._count_lock:
                    self.requests_made += 1
                response = self._client.request(method, path, params=params or None, json=json)
            except httpx.TransportError as exc:
                # A connection that was never made certainly did not reach the server.
                unsent = isinstance(exc, NEVER_SENT)
                if pacer:
                    pacer.failed(reached_server=not unsent)
                safe = idempotent or unsent
                error = TransportError(
                    f"{method} {path}: {_words(type(exc).__name__)} talking to "
                    f"{redact_url(self.base_url)}",
                    request=_request_of(exc), maybe_sent=not unsent,
                )
                if safe and retries + 1 < self.retry.attempts:
                    self.wait(self.retry.pause(retries), f"{method} {path}: connection failed, retrying")
                    retries += 1
                    continue
                raise error from None
            if pacer:
                pacer.answered(response)
            if response.status_code < 400:
                return response
            error = status_error(response)
            retryable = isinstance(error, RateLimited) or (
                idempotent and isinstance(error, ServerError)
            )
            if not retryable or retries + 1 >= self.retry.attempts:
                raise error
            if isinstance(error, RateLimited):
                if pacer is None:  # a pacer holds its limiter for Retry-After and waits itself
                    pause = min(error.retry_after, self.retry.max_retry_after)
                    self.wait(pause, f"{method} {path}: rate limited, the server asked to wait")
            else:
                self.wait(self.retry.pause(retries), f"{method} {path}: {response.status_code}, retrying")
            retries += 1

    def get_json(self, path: str, params: Mapping[str, Any] | None = None) -> Any:
        return json_body(self.send("GET", path, params=params))


def _request_of(exc: httpx.TransportError) -> httpx.Request | None:
    try:
        return exc.request
    except RuntimeError:  # httpx raises when the error was made without a request
        return None


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
