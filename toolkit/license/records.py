"""The records of the marketplace licensing API (Google Workspace Marketplace License API,
appsmarket v2): a customer's licence, a user's licence, a licence notification.

Records are read leniently: a field missing or of the wrong type reads as empty, and a
state the client does not know is kept as it came, so that the caller can refuse it by
name. Google's JSON is proto3's: a repeated field with nothing in it, a false boolean
and an empty string may be left out; every such shape reads as empty.

They are frozen dataclasses read by one declarative reader, `read(cls, data)` (each field
says its JSON name and how a value of the wrong type reads, `_json(...)` in its
metadata), and written back under Google's names by `write`. They import no HTTP
library: the premium gate names them without loading the client.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import Field, dataclass, field, fields
from typing import Any, TypeVar

from pydantic_core import core_schema

ACTIVE = "ACTIVE"


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


def json_objects(value: Any) -> tuple[dict[str, Any], ...]:
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
    return lambda value: tuple(read(cls, item) for item in json_objects(value))


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
    reads a mapping through `read`), by the schema given here with pydantic-core's
    builders: pydantic itself is never imported to read an answer (the premium gate of a
    build imports this module)."""

    @classmethod
    def __get_pydantic_core_schema__(cls, source: type[Any], handler: Any) -> Any:
        """Read by `read` (a record as it is), written by `write`."""

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
    provisions: tuple[dict[str, Any], ...] = _json(json_objects, ())
    expiries: tuple[dict[str, Any], ...] = _json(json_objects, ())
    reassignments: tuple[dict[str, Any], ...] = _json(json_objects, ())
    deletes: tuple[dict[str, Any], ...] = _json(json_objects, ())

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
