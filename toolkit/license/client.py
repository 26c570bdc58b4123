"""Client of the marketplace licensing API (Google Workspace Marketplace License API,
appsmarket v2): a customer's licence, a user's licence, and the deprecated licence
notifications, paged.

The OAuth access token travels in the `Authorization: Bearer` header only, added by
`BearerAuth` as each request leaves; it never appears in a URL or a message. Path
segments are percent-encoded (a user id is an email address). Records
(`records.py`) are read leniently, but a licence
counts only when it is about what was asked: a customer's or a user's licence whose
`applicationId` and `customerId` / `userId` are missing or name someone else is an
`ApiError` (an answer not to be read), whatever its `state` says. Domain names and email
addresses are compared without regard to ASCII case; the application id exactly. A user
licence's `customerId` is not compared: Google's reference calls it the user's domain,
its own example shows the user's email address there.

Google's JSON is proto3's: a repeated field with nothing in it, a false boolean and an
empty string may be left out, and `nextPageToken` may come as an empty string; every
such shape reads as empty.

Retries are fewer than the publishing client's: a licence check stands before a build,
and an unreachable service is answered quickly (and closed) rather than waited out.
"""

from __future__ import annotations

import ssl
import string
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

import httpx

from toolkit.clients.base import (
    ApiClient,
    BearerAuth,
    RequestListener,
    RetryPolicy,
    Sleep,
    WaitListener,
)
from toolkit.clients.bounds import DeadlineTransport
from toolkit.config import Secret
from toolkit.errors import ApiError, ConfigError
from toolkit.license.records import (
    CustomerLicense,
    LicenseNotification,
    NotificationPage,
    NotificationRun,
    UserLicense,
    json_objects,
    read,
)
from toolkit.redact import quoted

if TYPE_CHECKING:
    from toolkit.clients import Clients

PREFIX = "/appsmarket/v2"
SCOPE = "https://www.googleapis.com/auth/appsmarketplace.license"
LICENSE_RETRY = RetryPolicy(
    attempts=3, backoff=0.25, max_backoff=2.0, max_retry_after=10.0, default_retry_after=2.0
)
MAX_PAGES = 10_000  # a server that never stops paging is cut off here
MAX_SHOWN = 60  # characters of an id from the service shown in a message
_ASCII_LOWER = str.maketrans(string.ascii_uppercase, string.ascii_lowercase)


def plain_http_transport() -> DeadlineTransport:
    """The transport of a plain-HTTP origin (the sandbox on loopback). httpx's default
    transport loads the CA bundle into a TLS context as it is made (about 25 ms, most of
    what a licence check would cost there); an origin without TLS needs none. The context
    given instead trusts no authority, so anything sent over TLS through it would fail
    verification rather than go unverified."""

    return DeadlineTransport(ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT))


def _segment(value: str) -> str:
    return quote(value, safe="")


def _same(given: str, asked: str, *, fold: bool) -> bool:
    if fold:
        return given.translate(_ASCII_LOWER) == asked.translate(_ASCII_LOWER)
    return given == asked


def misnamed(data: Mapping[str, Any], asked: Mapping[str, str]) -> str | None:
    """Why a licence record is not about what was asked (`{"applicationId": ...,
    "customerId" or "userId": ...}`), or None when it names exactly that. A missing or
    empty id, or one that is not a string, names nothing."""
    for key, wanted in asked.items():
        given = data.get(key)
        if not isinstance(given, str) or not given:
            return (
                f"the answer names no {key} (asked about {quoted(wanted, MAX_SHOWN, marks=False)})"
            )
        if not _same(given, wanted, fold=key != "applicationId"):
            return (
                f"the answer is about {key} {quoted(given, MAX_SHOWN, marks=False)}, "
                f"not {quoted(wanted, MAX_SHOWN, marks=False)}"
            )
    return None


def _object(response: httpx.Response, path: str, what: str) -> dict[str, Any]:
    """The answer's JSON object; anything else (not JSON, or not an object) is an
    `ApiError` saying it is not `what`."""
    try:
        data = response.json()
    except ValueError:
        data = None
    if not isinstance(data, dict):
        raise ApiError(
            f"GET {path}: the answer is not {what}", request=response.request, response=response
        )
    return data


class LicenseClient(ApiClient):
    def __init__(
        self,
        base_url: str,
        token: Secret | None = None,
        *,
        transport: httpx.BaseTransport | None = None,
        retry: RetryPolicy | None = None,
        sleep: Sleep | None = None,
        on_wait: WaitListener | None = None,
        on_request: RequestListener | None = None,
        timeout: float | None = None,
    ):
        if transport is None and base_url.startswith("http://"):
            transport = plain_http_transport()
        super().__init__(
            base_url,
            auth=BearerAuth(token) if token is not None else None,
            transport=transport,
            retry=retry or LICENSE_RETRY,
            sleep=sleep,
            on_wait=on_wait,
            timeout=timeout,  # seconds to wait for the service (`[license] timeout`)
            on_request=on_request,
        )

    def _record(
        self, path: str, route: str, what: str, asked: Mapping[str, str]
    ) -> Mapping[str, Any]:
        response = self.send("GET", path, route=route)
        data = _object(response, path, what)
        why = misnamed(data, asked)
        if why is not None:
            raise ApiError(f"GET {path}: {why}", request=response.request, response=response)
        return data

    def customer_license(self, application_id: str, customer_id: str) -> CustomerLicense:
        path = f"{PREFIX}/customerLicense/{_segment(application_id)}/{_segment(customer_id)}"
        return read(
            CustomerLicense,
            self._record(
                path,
                f"{PREFIX}/customerLicense/{{applicationId}}/{{customerId}}",
                "a customer licence",
                {"applicationId": application_id, "customerId": customer_id},
            ),
        )

    def user_license(self, application_id: str, user_id: str) -> UserLicense:
        path = f"{PREFIX}/userLicense/{_segment(application_id)}/{_segment(user_id)}"
        return read(
            UserLicense,
            self._record(
                path,
                f"{PREFIX}/userLicense/{{applicationId}}/{{userId}}",
                "a user licence",
                {"applicationId": application_id, "userId": user_id},
            ),
        )

    def notifications(
        self,
        application_id: str,
        *,
        start_token: str | None = None,
        max_results: int | None = None,
        timestamp_ms: int | None = None,
    ) -> NotificationPage:
        """One page of licence notifications (deprecated by Google, still answered)."""
        path = f"{PREFIX}/licenseNotification/{_segment(application_id)}"
        response = self.send(
            "GET",
            path,
            params={
                "max-results": max_results,
                "start-token": start_token,
                "timestamp": timestamp_ms,
            },
            route=f"{PREFIX}/licenseNotification/{{applicationId}}",
        )
        data = _object(response, path, "a list of notifications")
        token = data.get("nextPageToken")
        return NotificationPage(
            tuple(
                read(LicenseNotification, item) for item in json_objects(data.get("notifications"))
            ),
            token if isinstance(token, str) and token else None,
        )

    def notification_pages(
        self, application_id: str, *, start_token: str | None = None, max_results: int | None = None
    ) -> Iterator[NotificationPage]:
        """Pages from `start_token` (None: the first notification) until a page brings
        nothing new: no notifications, no token, or the token it was asked with."""
        token = start_token
        for _ in range(MAX_PAGES):
            page = self.notifications(application_id, start_token=token, max_results=max_results)
            yield page
            if not page.notifications or page.next_page_token in (None, token):
                return
            token = page.next_page_token

    def read_notifications(
        self, application_id: str, *, start_token: str | None = None, max_results: int | None = None
    ) -> NotificationRun:
        """Every notification after `start_token`, and the token to start from next time."""
        run = NotificationRun(next_token=start_token)
        for page in self.notification_pages(
            application_id, start_token=start_token, max_results=max_results
        ):
            run.pages += 1
            run.notifications.extend(page.notifications)
            if page.next_page_token:
                run.next_token = page.next_page_token
        return run


MISSING_LICENSE_TOKEN = (
    "LICENSE_API_TOKEN is not set: put an OAuth access token with the scope "
    "https://www.googleapis.com/auth/appsmarketplace.license in the environment or in a .env "
    "file beside toolkit.toml; `toolkit demo` shows a premium build against the built-in sandbox"
)


def license_client(clients: Clients) -> LicenseClient:
    """The licensing API client for this project, wired as `clients`' others are; refuses
    to start without a token (the one place that turns a `Config` into one, as
    `toolkit.clients.Clients` does for the other interfaces)."""
    config = clients.config
    if config.license.token is None:
        raise ConfigError([MISSING_LICENSE_TOKEN])
    return LicenseClient(
        config.license.base_url,
        config.license.token,
        timeout=config.license.timeout,
        on_wait=clients.wait_listener(),
        sleep=clients.sleep,
        transport=clients.transport,
        on_request=clients.request_listener(),
    )
