"""Client of the marketplace licensing API (Google Workspace Marketplace License API,
appsmarket v2): a customer's licence, a user's licence, and the deprecated licence
notifications, paged.

The OAuth access token travels in the `Authorization: Bearer` header only, added by
`BearerAuth` as each request leaves; it never appears in a URL or a message. Path
segments are percent-encoded (a user id is an email address). Records are read
leniently: a field missing or of the wrong type reads as empty, and a state the client
does not know is kept as it came, so that the caller can refuse it by name. But a licence
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

import string
from collections.abc import Callable, Iterator, Mapping
from dataclasses import Field, dataclass, field, fields
from typing import TYPE_CHECKING, Any, TypeVar
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
from toolkit.config import Secret
from toolkit.errors import ApiError
from toolkit.redact import quoted

if TYPE_CHECKING:
    from toolkit.clients.bounds import DeadlineTransport

PREFIX = "/appsmarket/v2"
SCOPE = "https://www.googleapis.com/auth/appsmarketplace.license"
ACTIVE = "ACTIVE"
LICENSE_RETRY = RetryPolicy(
    attempts=3, backoff=0.25, max_backoff=2.0, max_retry_after=10.0, default_retry_after=2.0
)
MAX_PAGES = 10_000  # a server that never stops paging is cut off here
MAX_SHOWN = 60  # characters of an id from the service shown in a message
_ASCII_LOWER = str.maketrans(string.ascii_uppercase, string.ascii_lowercase)


def _string(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _text(data: Mapping[str, Any], key: str) -> str:
    return _string(data.get(key))


def _number(value: Any) -> int | None:
    """An integer, or one written as a string (Google sends 64-bit numbers as strings)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.strip().isascii() and value.strip().isdigit():
        return int(value.strip()[:19])
    return None


def _objects(value: Any) -> tuple[dict[str, Any], ...]:
    if not isinstance(value, list):
        return ()
    return tuple(item for item in value if isinstance(item, dict))


def _flag(value: Any) -> bool:
    return value is True


def _plain(value: Any) -> Any:
    """A value as JSON has it: a tuple as a list, a record under its JSON names."""
    if isinstance(value, tuple):
        return [write(item) if isinstance(item, LicenseRecord) else item for item in value]
    return value


def _records(cls: type[R]) -> Callable[[Any], tuple[R, ...]]:
    return lambda value: tuple(read(cls, item) for item in _objects(value))


def _json(
    reader: Callable[[Any], Any],
    default: Any,
    *,
    name: str | None = None,
    writer: Callable[[Any], Any] = _plain,
) -> Any:
    """A record's field: its JSON name (the field's own when None), how a value read
    from the service becomes the field's (`reader`, given whatever came, of any type),
    and how the field is written back (`writer`)."""
    return field(default=default, metadata={"json": name, "read": reader, "write": writer})


def _json_name(item: Field[Any]) -> str:
    name: str | None = item.metadata["json"]
    return name or item.name


@dataclass(frozen=True)
class LicenseRecord:
    """A record of the service, read leniently (see above) under Google's JSON names by
    `read`, and written back under them by `write`: each field says its JSON name and how
    it reads a value of the wrong type (`_json`). Unknown fields are ignored.

    A pydantic document or `TypeAdapter` holding a record writes it through `write` (and
    reads a mapping through `read`); pydantic is imported only then, never to read an
    answer (the premium gate of a build imports this module)."""

    @classmethod
    def __get_pydantic_core_schema__(cls, source: type[Any], handler: Any) -> Any:
        """Read by `read` (a record as it is), written by `write`."""
        from pydantic_core import core_schema

        def validate(value: Any) -> Any:
            if isinstance(value, source):
                return value
            if isinstance(value, Mapping):
                return read(source, value)
            raise ValueError(f"not a {source.__name__}")

        return core_schema.no_info_plain_validator_function(
            validate, serialization=core_schema.plain_serializer_function_ser_schema(write)
        )


R = TypeVar("R", bound=LicenseRecord)


def read(cls: type[R], data: Mapping[str, Any]) -> R:
    """A record of `cls` from the service's JSON object: each field present is read by its
    own rule, a missing one keeps its default."""
    given: dict[str, Any] = {}
    for item in fields(cls):
        key = _json_name(item)
        if key in data:
            given[item.name] = item.metadata["read"](data[key])
    return cls(**given)


def write(record: LicenseRecord) -> dict[str, Any]:
    """The record as the service writes it: every field under its JSON name, in order."""
    return {
        _json_name(item): item.metadata["write"](getattr(record, item.name))
        for item in fields(record)
    }


@dataclass(frozen=True)
class Edition(LicenseRecord):
    edition_id: str = _json(_string, "", name="editionId")
    seat_count: int | None = _json(_number, None, name="seatCount")
    assigned_seats: int | None = _json(_number, None, name="assignedSeats")


@dataclass(frozen=True)
class CustomerRecord(LicenseRecord):
    """The fields that lead every record about a customer of an application."""

    kind: str = _json(_string, "")
    id: str = _json(_string, "")
    application_id: str = _json(_string, "", name="applicationId")
    customer_id: str = _json(_string, "", name="customerId")


@dataclass(frozen=True)
class CustomerLicense(CustomerRecord):
    """`appsmarket#customerLicense`: `state` is `ACTIVE` or `UNLICENSED`."""

    state: str = _json(_string, "")
    editions: tuple[Edition, ...] = _json(_records(Edition), ())

    @property
    def active(self) -> bool:
        return self.state == ACTIVE


@dataclass(frozen=True)
class UserLicense(CustomerRecord):
    """`appsmarket#userLicense`: `state` is `ACTIVE`, `UNLICENSED` or `EXPIRED`; `enabled`
    says whether the domain administrator has activated the application."""

    user_id: str = _json(_string, "", name="userId")
    enabled: bool = _json(_flag, False)
    state: str = _json(_string, "")
    edition_id: str = _json(_string, "", name="editionId")

    @property
    def active(self) -> bool:
        return self.state == ACTIVE and self.enabled


NOTIFICATION_LISTS = ("provisions", "expiries", "reassignments", "deletes")
NOTIFICATION_KIND = "appsmarket#licenseNotification"


@dataclass(frozen=True)
class LicenseNotification(CustomerRecord):
    """`appsmarket#licenseNotification`: one licensing event of a customer. Its lists
    are kept as the service sent them (objects only); its timestamp is written back as
    Google writes 64-bit numbers, a string."""

    kind: str = _json(lambda _: NOTIFICATION_KIND, NOTIFICATION_KIND)
    timestamp_ms: int | None = _json(
        _number,
        None,
        name="timestamp",
        writer=lambda value: None if value is None else str(value),
    )
    provisions: tuple[dict[str, Any], ...] = _json(_objects, ())
    expiries: tuple[dict[str, Any], ...] = _json(_objects, ())
    reassignments: tuple[dict[str, Any], ...] = _json(_objects, ())
    deletes: tuple[dict[str, Any], ...] = _json(_objects, ())

    def events(self) -> list[str]:
        """What happened, in words: `provisioned 25 seats`, `assigned ana@x.example`..."""
        said: list[str] = []
        for item in self.provisions:
            seats = _number(item.get("seatCount"))
            said.append(
                f"provisioned {seats} seat{'s' if seats != 1 else ''}"
                if seats is not None
                else "provisioned"
            )
        for item in self.reassignments:
            kind = _text(item, "type")
            verb = {"USER_ASSIGNMENT": "assigned", "USER_UNASSIGNMENT": "unassigned"}.get(
                kind, f"reassigned ({kind})" if kind else "reassigned"
            )
            said.append(f"{verb} {_text(item, 'userId')}".rstrip())
        said.extend("licence expired" for _ in self.expiries)
        said.extend("application deleted" for _ in self.deletes)
        return said


@dataclass(frozen=True)
class NotificationPage:
    notifications: tuple[LicenseNotification, ...] = ()
    next_page_token: str | None = None


@dataclass
class NotificationRun:
    """Every page read from a starting token: the notifications in order, and the token
    to continue from next time (the last one the service gave; the start when none)."""

    notifications: list[LicenseNotification] = field(default_factory=list)
    next_token: str | None = None
    pages: int = 0


def plain_http_transport() -> DeadlineTransport:
    """The transport of a plain-HTTP origin (the sandbox on loopback). httpx's default
    transport loads the CA bundle into a TLS context as it is made (about 25 ms, most of
    what a licence check would cost there); an origin without TLS needs none. The context
    given instead trusts no authority, so anything sent over TLS through it would fail
    verification rather than go unverified."""
    import ssl

    from toolkit.clients.bounds import DeadlineTransport

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
        kwargs: dict[str, Any] = {}
        if sleep is not None:
            kwargs["sleep"] = sleep
        if timeout is not None:  # seconds to wait for the service (`[license] timeout`)
            kwargs["timeout"] = timeout
        if transport is None and base_url.startswith("http://"):
            transport = plain_http_transport()
        super().__init__(
            base_url,
            auth=BearerAuth(token) if token is not None else None,
            transport=transport,
            retry=retry or LICENSE_RETRY,
            on_wait=on_wait,
            on_request=on_request,
            **kwargs,
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
            tuple(read(LicenseNotification, item) for item in _objects(data.get("notifications"))),
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
