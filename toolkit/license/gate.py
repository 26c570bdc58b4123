"""The premium gate: a premium build runs only when the licensing service says so.

A premium build (`toolkit build --premium`, `toolkit watch --premium`) includes the
posts marked `premium: true` and the `templates/premium/` overlay. Before it writes
anything it asks the licensing service (interface D) for the customer's licence of
`[license] application_id` / `customer_id`, and, when `[license] user_id` is set, for
that user's licence too. It goes on only when the customer's licence is `ACTIVE` and
the user's is `ACTIVE` and `enabled`. Any other answer refuses the build, and so does no
answer at all: an unreachable service, a 5xx after the client's bounded retries, a
timeout, a token the service does not accept. The gate fails closed and says why, in
one line (`premium build refused: customer acme.example licence is UNLICENSED`).

The whole question, every request and retry, takes at most `[license] timeout` seconds,
however slowly the service answers; past it the build is refused as unreachable.

`PremiumGate.check()` asks once and keeps the answer (a grant or a refusal) for
`max_age` seconds: for the whole run by default (`toolkit build` asks once), a minute
in `toolkit watch --premium`. A premium build always asks, so the HTTP client is imported
with this module; a public build never imports it (`commands/build.py`).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from toolkit.clients import Clients
from toolkit.clients.bounds import deadline
from toolkit.config import Config
from toolkit.errors import (
    ApiError,
    ConfigError,
    LicenseError,
    NoAnswerError,
    PremiumRefused,
    RateLimited,
    ServerError,
    StatusError,
)
from toolkit.license.client import license_client
from toolkit.redact import clipped

if TYPE_CHECKING:  # pragma: no cover
    import httpx

    from toolkit.clients import WriterRequest
    from toolkit.clients.base import Sleep
    from toolkit.license.records import CustomerLicense, UserLicense

REFUSED = "premium build refused"
RECHECK_SECONDS = 60.0  # how often `toolkit watch --premium` asks again, at most
MAX_SHOWN = 60  # characters of a value from the service shown in a message
MAX_SERVICE_WORDS = 160  # characters of the service's own message in one


def shown(value: str) -> str:
    """A value the service sent, fit for a one-line message: no control characters,
    bounded, and `(none)` when empty."""
    text = "".join(ch if ch.isprintable() else "?" for ch in value)[:MAX_SHOWN]
    return text or "(none)"


@dataclass(frozen=True)
class LicenseSettings:
    """What a licence question needs from `[license]` (the token stays in the config)."""

    application_id: str
    customer_id: str
    user_id: str | None


def license_settings(
    config: Config, *, customer: bool = True, user: str | None = None
) -> LicenseSettings:
    """`[license]`'s ids, or one `ConfigError` naming each key that is missing.
    `user` replaces `[license] user_id`."""
    section = config.license
    missing = [
        key
        for key, value, needed in (
            ("application_id", section.application_id, True),
            ("customer_id", section.customer_id, customer),
        )
        if needed and not value
    ]
    if missing:
        raise ConfigError(
            [
                f"{config.path.name}: license.{key}: not set; the licensing service is asked "
                f'about it (add `{key} = "..."` under [license])'
                for key in missing
            ]
        )
    return LicenseSettings(
        section.application_id or "",
        section.customer_id or "",
        user if user is not None else section.user_id,
    )


def customer_refusal(customer: CustomerLicense, customer_id: str) -> str | None:
    """Why the customer's licence does not allow a premium build, or None."""
    if customer.active:
        return None
    return f"customer {customer_id} licence is {shown(customer.state)}"


def user_refusal(user: UserLicense, user_id: str) -> str | None:
    """Why the user's licence does not allow a premium build, or None."""
    if user.state != "ACTIVE":
        return f"user {user_id} licence is {shown(user.state)}"
    if not user.enabled:
        return (
            f"user {user_id} licence is ACTIVE but not enabled (the domain administrator "
            "has not enabled the application)"
        )
    return None


def _service_words(exc: ApiError) -> str:
    """`429 Resource has been exhausted (e.g. check quota).`: the status and Google's
    message (`{"error": {"message": ...}}`), whole or cut at a word with an ellipsis, on
    one line, without control characters."""
    response = exc.response
    if response is None:
        return ""
    message = ""
    try:
        body = response.json()
    except ValueError:
        body = None
    if isinstance(body, dict) and isinstance(body.get("error"), dict):
        text = body["error"].get("message")
        message = text if isinstance(text, str) else ""
    elif isinstance(body, dict) and isinstance(body.get("error"), str):
        message = body["error"]
    text = " ".join("".join(ch if ch.isprintable() else " " for ch in message).split())
    words = clipped(text, MAX_SERVICE_WORDS) if text else response.reason_phrase
    return f"{response.status_code} {words}".strip()


def explain(exc: ApiError, subject: str, application_id: str, tries: int) -> LicenseError:
    """A failed licence request as one line naming the cause (never the token)."""
    words = _service_words(exc)
    status = exc.status
    tried = f" ({tries} tries)" if tries > 1 else ""
    if isinstance(exc, NoAnswerError):
        detail = exc.message.split(": ", 1)[-1]
        return LicenseError(
            f"the licensing service could not be reached: {detail}{tried}", "unreachable"
        )
    if isinstance(exc, ServerError | RateLimited):
        return LicenseError(f"the licensing service failed: {words}{tried}", "service")
    if not isinstance(exc, StatusError):  # an answer, but not one a client can read
        return LicenseError(
            f"the licensing service's answer is not a licence ({exc.message})", "answer"
        )
    if status == 401:
        return LicenseError(
            f"the licensing service did not accept LICENSE_API_TOKEN: {words}", "token"
        )
    if status == 403:
        return LicenseError(
            f"LICENSE_API_TOKEN may not read the licences of application {application_id}: {words}",
            "forbidden",
        )
    if status == 404:  # Google answers an unknown customer or user with UNLICENSED
        return LicenseError(
            f"the licensing service has no method for the licence of "
            f"{subject}: {words} (is [license] base_url, or LICENSE_BASE_URL, "
            f"the service's root?)",
            "unknown",
        )
    return LicenseError(f"the licensing service refused the request: {words}", "request")


@dataclass(frozen=True)
class LicenseCheck:
    """A premium build may run: what the licensing service answered, and when."""

    application_id: str
    customer: CustomerLicense
    user: UserLicense | None
    requests: int  # requests this answer took, retries included
    checked_at: float  # seconds since the epoch


class PremiumGate:
    """Asks whether a premium build may run; `check()` returns the `LicenseCheck` or
    raises `PremiumRefused` (a `ConfigError` when `[license]` or the token is missing).

    The answer is kept for `max_age` seconds (None: for the gate's life, i.e. one run);
    `transport` and `sleep` reach the client (tests, the benchmark), `on_request` its
    request listener (the run log)."""

    def __init__(
        self,
        config: Config,
        *,
        max_age: float | None = None,
        clock: Callable[[], float] = time.monotonic,
        transport: httpx.BaseTransport | None = None,
        sleep: Sleep | None = None,
        on_request: WriterRequest | None = None,
    ):
        self.config = config
        self._on_request = on_request
        self.max_age = max_age
        self.asked = 0  # how many times the service was asked
        self._clock = clock
        self._license_transport = transport
        self._sleep = sleep
        self._answer: LicenseCheck | PremiumRefused | None = None
        self._answered_at = 0.0

    def use(self, config: Config) -> None:
        """A new configuration (watch reloaded toolkit.toml): ask again when `[license]`
        changed."""
        if config.license != self.config.license:
            self._answer = None
        self.config = config

    def check(self) -> LicenseCheck:
        fresh = self._answer is not None and (
            self.max_age is None or self._clock() - self._answered_at < self.max_age
        )
        if not fresh:
            settings = license_settings(self.config)  # a missing key is not remembered
            self._answered_at = self._clock()
            try:
                self._answer = self._ask(settings)
            except PremiumRefused as refused:
                self._answer = refused
        if isinstance(self._answer, PremiumRefused):
            raise PremiumRefused(self._answer.message, self._answer.cause)
        assert self._answer is not None
        return self._answer

    def _ask(self, settings: LicenseSettings) -> LicenseCheck:
        self.asked += 1
        app = settings.application_id
        # One deadline for the whole question, retries and the user's licence included.
        with (
            deadline(self.config.license.timeout),
            license_client(
                Clients(
                    self.config,
                    on_request=self._on_request,
                    sleep=self._sleep,
                    transport=self._license_transport,
                )
            ) as client,
        ):
            subject = f"customer {settings.customer_id}"
            try:
                customer = client.customer_license(app, settings.customer_id)
                why = customer_refusal(customer, settings.customer_id)
                user = None
                if why is None and settings.user_id:
                    subject = f"user {settings.user_id}"
                    user = client.user_license(app, settings.user_id)
                    why = user_refusal(user, settings.user_id)
            except ApiError as exc:
                failure = explain(exc, subject, app, client.requests_made)
                raise PremiumRefused(f"{REFUSED}: {failure.message}", failure.cause) from None
            if why is not None:
                raise PremiumRefused(f"{REFUSED}: {why}", "inactive")
            return LicenseCheck(app, customer, user, client.requests_made, time.time())
