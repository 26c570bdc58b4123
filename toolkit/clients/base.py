"""What every remote client shares: one `ApiClient` over httpx.

It holds the base URL, the auth hook (an `httpx.Auth`, so a credential is added to each
request as it leaves and never appears in a URL or a message), the retry policy, the
handling of 429 answers, the wait listener and the mapping of failures to the
`toolkit.errors` tree (an answer's own error, its bounded reading and its JSON body are in
`toolkit.clients.responses`). A module per interface (`forem.py`, ...) builds on it.

Retries: reads and idempotent writes are retried a bounded number of times on 429, 5xx
and connection failures. A request that is not idempotent (creating an article) is
retried only when it certainly did not reach the server (the connection was never made)
or the server refused it outright (429); any other failure raises, and the caller
reconciles before deciding what to do.

429, in one place (`send`'s retry decision on an answer): `Retry-After` is read once. A request paced by a limiter
tells the limiter to hold for that long, and the limiter's next `acquire` does the
waiting (so every sender on that limiter waits, not only this one); a request without a
limiter waits itself. Every pause (limiter, Retry-After, backoff) goes through `wait`,
which tells the listener given at construction (`on_wait(seconds, reason)`) first.

Every attempt is reported, once it has an answer (a streamed one: its head) or has
failed without one, to the request listener given at construction
(`on_request(RequestReport)`, the run log's): its method, its route template
(`/api/articles/{id}`, given by the client method; never the concrete path, a query
string or a body), its status, duration and retry number.

Besides the API's own paths, `send` takes the absolute URLs a service hands out (an
upload form, a download; maybe on another host, which never gets the credential),
bodies streamed from disk (made anew for each attempt), answers streamed to disk, and a
time of a request's own (a held wait), so that every request of every client goes
through the same retries, 429 handling, error mapping and report.

Bounded, whatever the service does: each request has a total deadline, connect and whole
answer together, its retries and their backoff included (the client's `timeout`; httpx's
own timeouts are per read, so a server that drips one byte at a time would hold a request
for ever), enforced on every read and write of the connection. Only a pause the service
asks for (a 429's `Retry-After`, bounded by the retry policy, and the wait for a rate
limiter's slot) moves it on: the deadline counts the time spent waiting for answers. A
request's own `timeout` and a caller's overall `deadline` on several requests are firm:
nothing moves them. Both in `toolkit.clients.bounds`. A whole answer is read up to
`MAX_ANSWER_BYTES` (decoded) and, when it is JSON, nested at most `MAX_JSON_DEPTH` deep,
before anyone parses it; past either, one `ApiError` line names the service and what it
sent: both in `toolkit.clients.responses`.
"""

from __future__ import annotations

import logging
import re
import threading
import time
from collections.abc import Callable, Generator, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Self

import httpx

from toolkit import USER_AGENT, tls
from toolkit.clients.bounds import attempt_deadline, network_client, overall_deadline
from toolkit.clients.ratelimit import HELD, SlidingWindowLimiter
from toolkit.clients.responses import json_body, read_bounded, retry_after_seconds, status_error
from toolkit.errors import ApiError, NoAnswerError, ServerError
from toolkit.redact import redact_url

if TYPE_CHECKING:  # pragma: no cover
    from toolkit.config import Secret

log = logging.getLogger(__name__)

WaitListener = Callable[[float, str], None]  # (seconds, reason), told before each pause
Sleep = Callable[[float], None]

DEFAULT_TIMEOUT = 30.0
# Failures that happen before a single byte of the request has left.
NEVER_SENT = (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout)
# The 5xx answers of a gateway or a service that is briefly down, not of the request
# itself: `retry_server_errors=TRANSIENT` retries only these.
TRANSIENT = frozenset({502, 503, 504})


def timeout_of(seconds: float) -> httpx.Timeout:
    """A client timeout of `seconds` per read or write; connecting takes at most 10 s."""
    return httpx.Timeout(seconds, connect=min(seconds, 10.0))


def _words(name: str) -> str:
    """`ReadTimeout` -> `read timeout`, `ConnectError` -> `connect error`."""
    return re.sub(r"(?<!^)(?=[A-Z])", " ", name).lower()


def reason_of(exc: BaseException) -> str:
    """Why a request got no answer, in words: `ReadTimeout` -> `read timeout`."""
    return _words(type(exc).__name__)


@dataclass(frozen=True)
class RequestReport:
    """One attempt of a request, as the run log records it (the sandbox's request records
    use the same names: method, route, status, duration_ms)."""

    method: str
    route: str  # the route template, e.g. /api/articles/{id}
    status: int | None  # None: no answer (the connection failed or timed out)
    duration_ms: float
    retries: int  # attempts before this one
    error: str | None = None  # why there was no answer, e.g. "connect error"


RequestListener = Callable[[RequestReport], None]
# A request body: bytes, or a function that makes its chunks anew for every attempt.
Body = bytes | Callable[[], Iterable[bytes]]


@dataclass(frozen=True)
class RetryPolicy:
    attempts: int = 5  # in all, the first try included
    backoff: float = 0.25  # seconds before the first retry of a 5xx / connection error
    max_backoff: float = 8.0
    max_retry_after: float = 300.0  # never wait longer than this on one 429
    default_retry_after: float = 30.0  # a 429 without a usable Retry-After

    def pause(self, retry: int) -> float:
        return min(self.backoff * float(2**retry), self.max_backoff)


class BearerAuth(httpx.Auth):
    """`Authorization: Bearer <token>` (the archive tasks, the licensing API); the secret is
    revealed only into the outgoing request."""

    def __init__(self, token: Secret):
        self._token = token

    def auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        request.headers["Authorization"] = f"Bearer {self._token.reveal()}"
        yield request


@dataclass
class _Call:
    """One `send`: what each of its attempts sends, and the rules they follow."""

    method: str
    path: str  # under the base URL, or an absolute URL
    route: str  # for the request listener
    shown_path: str  # how messages name it
    talking_to: str  # the origin messages name
    ends: float | None  # `time.monotonic()` by which it must be done
    timeout: float | None  # the seconds it had in all
    firm: bool  # `ends` is the caller's (own timeout, overall deadline): no pause moves it
    params: dict[str, Any]
    json: Any
    content: Body | None
    headers: Mapping[str, str] | None
    stream: bool
    authenticated: bool
    follow_redirects: bool
    idempotent: bool
    retry_5xx: bool | frozenset[int]  # every 5xx, none, or these statuses
    limiter: SlidingWindowLimiter | None
    counted: bool

    def paused(self, seconds: float) -> None:
        """A pause the service asked for (Retry-After, a rate limiter's slot) was taken:
        the client's own deadline moves on by it; a caller's does not."""
        if not self.firm and self.ends is not None:
            self.ends += seconds

    def outlasts(self, seconds: float) -> bool:
        """Whether a pause of `seconds` would end after the request's time."""
        return self.ends is not None and seconds >= self.ends - time.monotonic()

    def give_back(self, *, counted: bool) -> None:
        """An attempt's limiter slot, once it ended: counted, or released."""
        if self.limiter is not None:
            self.limiter.record() if counted else self.limiter.release()


class ApiClient:
    """An httpx client with toolkit's User-Agent, an auth hook, retries and error mapping.

    Pass `transport` to talk to something other than the network (the network is reached
    only through `bounds.network_client`'s transports, which end each request by its
    deadline; httpx's own network transport is refused).
    `on_wait(seconds, reason)` is told about every pause, for progress output and logs;
    `sleep` does the pausing (a caller that must stop early passes one that raises);
    `on_request(report)` is told about every attempt (the run log).
    """

    def __init__(
        self,
        base_url: str,
        *,
        auth: httpx.Auth | None = None,
        transport: httpx.BaseTransport | None = None,
        retry: RetryPolicy | None = None,
        sleep: Sleep | None = None,
        on_wait: WaitListener | None = None,
        timeout: float | None = None,
        on_request: RequestListener | None = None,
    ):
        self.base_url = base_url.rstrip("/")
        self.retry = retry or RetryPolicy()
        self._auth = auth
        self._sleep = sleep or time.sleep  # what pauses between attempts
        self._on_wait = on_wait
        self._on_request = on_request
        # seconds an attempt may take in all, connect and answer
        self.timeout = DEFAULT_TIMEOUT if timeout is None else timeout
        self._client = network_client(
            tls.shared_context(),  # used only when no transport is given
            transport,
            base_url=self.base_url,
            timeout=timeout_of(self.timeout),
            headers={"User-Agent": USER_AGENT, "Accept": "application/json"},
        )
        self.requests_made = 0  # requests sent, retries included (publish reports it)
        self._count_lock = threading.Lock()  # the publish lanes send from several threads

    def close(self) -> None:
        self._client.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def wait(self, seconds: float, reason: str) -> None:
        """Pause, telling the listener first."""
        if seconds <= 0:
            return
        if self._on_wait is not None:
            self._on_wait(seconds, reason)
        log.info("waiting %.1f s: %s", seconds, reason)
        self._sleep(seconds)

    def _report(self, report: RequestReport) -> None:
        if self._on_request is None:
            return
        try:
            self._on_request(report)
        except Exception:  # a listener never breaks a request
            log.exception("the request listener failed")

    def send(
        self,
        method: str,
        path: str,
        *,
        params: Mapping[str, Any] | None = None,
        json: Any = None,
        idempotent: bool = True,
        limiter: SlidingWindowLimiter | None = None,
        counted: bool = True,
        route: str | None = None,
        content: Body | None = None,
        headers: Mapping[str, str] | None = None,
        timeout: float | None = None,
        stream: bool = False,
        authenticated: bool = True,
        retry_server_errors: bool | frozenset[int] | None = None,
        follow_redirects: bool = False,
    ) -> httpx.Response:
        """Send one request, retrying what can safely be retried; raise `ApiError` otherwise.

        `path` is a path under the base URL, or an absolute URL (one the service gave,
        maybe on another host). `route` is the path's template for the request listener
        (default: `path`, for paths without variable parts; always give one for an
        absolute URL, whose query may be a signature). `content` is a body already
        encoded (instead of `json`), or a function that makes the body's chunks: it is
        called again for each attempt, so a retry sends the body from its start.
        `headers` are added to the client's own.

        The credential goes only to the base URL's origin, never to another host's, and
        not at all with `authenticated=False` (a URL the service signed carries its own).
        The request ends, answered or not, by the client's `timeout` (connect and whole
        answer, its retries and their backoff included; a pause the service asks for, a
        429's `Retry-After` or a rate limiter's, moves that deadline on by its length).
        `timeout`: the seconds the request may take in all, retries and pauses included;
        each attempt is read for at most what is left of them (not the client's timeout),
        an attempt that runs out of them is not retried, and a pause that would outlast
        them is not taken. Running out raises `NoAnswerError` with `timed_out`: no
        answer in that time. `stream=True` returns a successful answer with its body
        unread, for the caller to iterate and close (its body is read with the per-read
        timeout only: the deadline covers the head); error answers are read and raised as
        usual. A 5xx answer is retried when the request is idempotent, or when
        `retry_server_errors` says so (a request the server refuses to take twice); a set
        of statuses there (`TRANSIENT`) retries only those.
        `follow_redirects` follows them (httpx drops `Authorization` on another origin).

        With a `limiter`, each attempt first takes a slot of it (waiting while its window
        is full) and gives it back, or has it counted, according to how the attempt ended.
        A request the server checks against the limit but does not count (`counted=False`)
        holds its slot only until it is answered, so that no other sender fills the window
        while it is on its way.
        """
        firm = timeout is not None
        if timeout is None:
            timeout = self.timeout
        ends = time.monotonic() + timeout
        overall = overall_deadline()
        if overall is not None and overall < ends:
            ends, timeout, firm = overall, max(overall - time.monotonic(), 0.0), True
        shown_path, talking_to = self._shown(path)
        call = _Call(
            method=method,
            path=path,
            route=route or path,
            shown_path=shown_path,
            talking_to=talking_to,
            ends=ends,
            timeout=timeout,
            firm=firm,
            params={k: v for k, v in (params or {}).items() if v is not None},
            json=json,
            content=content,
            headers=headers,
            stream=stream,
            authenticated=authenticated,
            follow_redirects=follow_redirects,
            idempotent=idempotent,
            retry_5xx=idempotent if retry_server_errors is None else retry_server_errors,
            limiter=limiter,
            counted=counted,
        )
        return self._send_handling_retries(call)

    # `send` in steps, as httpx splits its own: the retries (each decision its own
    # function) around single attempts, each of which reports itself.

    def _send_handling_retries(self, call: _Call) -> httpx.Response:
        """Attempts of `call` until one is answered for good, pausing between them as the
        retry decisions say; the failure of the last one is raised."""
        retries = 0
        while True:
            self._check_time(call, retries)
            try:
                response = self._send_single_attempt(call, retries)
            except httpx.TransportError as exc:
                seconds, why = self._retry_after_failure(call, exc, retries)
            else:
                decision = self._retry_after_answer(call, response, retries)
                if decision is None:
                    return response
                seconds, why = decision
            self.wait(seconds, why)
            retries += 1

    @staticmethod
    def _check_time(call: _Call, retries: int) -> float | None:
        """The seconds left to `call`; `NoAnswerError` (timed out) when none are."""
        left = None if call.ends is None else call.ends - time.monotonic()
        if left is not None and left <= 0:
            raise NoAnswerError(
                f"{call.method} {call.shown_path}: no answer within {call.timeout:g} s",
                maybe_sent=retries > 0,
                reason="out of time",
                timed_out=True,
            )
        return left

    def _send_single_attempt(self, call: _Call, retries: int) -> httpx.Response:
        """One attempt, reported to the request listener once it has an answer (read
        whole and bounded, or a streamed one's head) or has failed without one; with a
        limiter, the attempt's slot is taken first and given back or counted after (a 429
        keeps it: its retry decision holds the limiter)."""
        limiter = call.limiter
        if limiter is not None:
            waited = time.monotonic()
            limiter.acquire(lambda seconds: self.wait(seconds, limiter.reason))
            call.paused(time.monotonic() - waited)
            try:
                left = self._check_time(call, retries)
            except NoAnswerError:
                call.give_back(counted=False)  # never sent
                raise
        else:
            left = self._check_time(call, retries)
        content = call.content() if callable(call.content) else call.content
        request = self._client.build_request(
            call.method,
            call.path,
            params=call.params or None,
            json=call.json,
            content=content,
            headers=call.headers,
            timeout=(
                httpx.Timeout(left, connect=min(left, 10.0))
                if left is not None
                else httpx.USE_CLIENT_DEFAULT
            ),
        )
        started = time.perf_counter()
        try:
            with self._count_lock:
                self.requests_made += 1
            auth = (
                self._auth or httpx.USE_CLIENT_DEFAULT
                if self._credited(request, call.authenticated)
                else None
            )
            # The attempt ends by the request's own time (a held wait may be long) or
            # else the client's timeout, however slowly the answer arrives.
            attempt_ends = time.monotonic() + (self.timeout if left is None else left)
            with attempt_deadline(attempt_ends):
                response = self._client.send(
                    request, auth=auth, stream=True, follow_redirects=call.follow_redirects
                )
                if not call.stream or response.status_code >= 400:
                    response = read_bounded(response, call.method, call.shown_path, call.talking_to)
        except ApiError:  # an answer toolkit does not read: too large or too deep
            self._report(
                RequestReport(
                    call.method, call.route, None, _elapsed_ms(started), retries, "answer refused"
                )
            )
            call.give_back(counted=call.counted)
            raise
        except httpx.TransportError as exc:
            self._report(
                RequestReport(
                    call.method, call.route, None, _elapsed_ms(started), retries, reason_of(exc)
                )
            )
            # A connection that was never made certainly did not reach the server; one
            # that was may have been counted: stay on the safe side.
            call.give_back(counted=call.counted and not isinstance(exc, NEVER_SENT))
            raise
        self._report(
            RequestReport(
                call.method, call.route, response.status_code, _elapsed_ms(started), retries
            )
        )
        status = response.status_code
        if status != 429:
            # Answered. A refusal (4xx) stored nothing, and the limiters pace what the
            # server counts: stored creates and successful updates (Forem's
            # `RateLimitChecker`). A 5xx may have stored it: counted, to stay on the safe side.
            call.give_back(counted=call.counted and not 400 <= status < 500)
        return response

    def _retry_after_failure(
        self, call: _Call, exc: httpx.TransportError, retries: int
    ) -> tuple[float, str]:
        """The pause before retrying an attempt that got no answer, or its `NoAnswerError`
        raised: an attempt given what was left of the request's time has used it up, and
        one that may have reached the server is retried only when idempotent."""
        reason = reason_of(exc)
        unsent = isinstance(exc, NEVER_SENT)
        # A timeout under the caller's deadline used it up; under the client's own, the
        # next try gets what is left, if anything (a connect timeout is at most 10 s).
        timed_out = isinstance(exc, httpx.TimeoutException) and (
            call.firm or call.outlasts(self.retry.pause(retries))
        )
        if not timed_out and (call.idempotent or unsent) and retries + 1 < self.retry.attempts:
            backoff = self.retry.pause(retries)
            if call.ends is not None:  # the time left is checked again before the next try
                backoff = min(backoff, call.ends - time.monotonic())
            return backoff, f"{call.method} {call.shown_path}: connection failed, retrying"
        raise NoAnswerError(
            f"{call.method} {call.shown_path}: {reason} talking to {call.talking_to}",
            request=_request_of(exc),
            maybe_sent=not unsent,
            reason=reason,
            timed_out=timed_out,
        ) from None

    def _retry_after_answer(
        self, call: _Call, response: httpx.Response, retries: int
    ) -> tuple[float, str] | None:
        """None for an answer to return; else the pause before retrying, or the answer's
        error raised. 429, in one place: `Retry-After` is read once; a request paced by a
        limiter holds the limiter that long (its next `acquire` waits, for every sender on
        it: no pause here), one without pauses itself. A 5xx is retried when `retry_5xx`."""
        if response.status_code == 429:
            limiter = call.limiter
            default = limiter.window if limiter is not None else self.retry.default_retry_after
            seconds = min(retry_after_seconds(response, default), self.retry.max_retry_after)
            if limiter is not None:
                limiter.hold(seconds)
            if retries + 1 >= self.retry.attempts or (call.firm and call.outlasts(seconds)):
                raise status_error(response, retry_after=seconds)
            if limiter is None:  # (a limiter's wait is counted when its slot is taken)
                call.paused(seconds)
            return (
                0.0 if limiter is not None else seconds,
                f"{call.method} {call.shown_path}: {HELD}",
            )
        if response.status_code < 400:
            return None
        refused = status_error(response)
        backoff = self.retry.pause(retries)
        retried = (
            call.retry_5xx
            if isinstance(call.retry_5xx, bool)
            else response.status_code in call.retry_5xx
        )
        if (
            not (retried and isinstance(refused, ServerError))
            or retries + 1 >= self.retry.attempts
            or call.outlasts(backoff)
        ):
            raise refused
        return backoff, f"{call.method} {call.shown_path}: {response.status_code}, retrying"

    def _shown(self, path: str) -> tuple[str, str]:
        """How messages name a request's path and the origin it went to: an absolute URL
        by its path alone (its query may hold a signature) and its own origin."""
        url = httpx.URL(path)
        if not url.is_absolute_url:
            return path, redact_url(self.base_url)
        return url.path, redact_url(f"{url.scheme}://{url.netloc.decode('ascii')}")

    def _credited(self, request: httpx.Request, authenticated: bool) -> bool:
        """Whether `request` carries the credential: only to the base URL's origin."""
        return authenticated and _origin(request.url) == _origin(self._client.base_url)

    def get_json(
        self, path: str, params: Mapping[str, Any] | None = None, *, route: str | None = None
    ) -> Any:
        return json_body(self.send("GET", path, params=params, route=route))


def _origin(url: httpx.URL) -> tuple[str, str, int | None]:
    return url.scheme, url.host, url.port


def _elapsed_ms(started: float) -> float:
    return round((time.perf_counter() - started) * 1000, 3)


def _request_of(exc: httpx.TransportError) -> httpx.Request | None:
    try:
        return exc.request
    except RuntimeError:  # httpx raises when the error was made without a request
        return None
