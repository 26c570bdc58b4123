"""Ingested JSON events as Arrow columns, the way Parseable types them (schema version 1).

- The body is one JSON object or an array of them; nested objects are flattened with `_`
  (`{"a": {"b": 1}}` becomes the field `a_b`). Arrays are kept as their JSON text (a
  deviation: Parseable keeps them as Arrow lists).
- A field is typed by the first batch that carries a value for it: every number is
  Float64, `true`/`false` Boolean, a string Utf8, except a string in a field whose name
  contains `time` or `date` that reads as RFC 3339 (or RFC 2822): a Timestamp in
  milliseconds. A field that is only ever null gets no type (and no column) yet.
- Later values must fit the field's type (a number fits Float64; a string or a number
  fits a Timestamp); one that does not is a 400, as is a batch whose new field mixes types.
- `p_timestamp` is reserved: the service adds it (the time of the ingest request, the
  same for every record of it) and a record may not bring its own.
- A stream has at most 250 fields (Parseable's default `P_DATASET_FIELDS_ALLOWED_LIMIT`).
"""

from __future__ import annotations

import datetime as dt
import email.utils
import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from toolkit.sandbox.interface import ErrorAnswer

if TYPE_CHECKING:
    import pyarrow as pa

TIME_FIELD = "p_timestamp"
MAX_FIELDS = 250
SEPARATOR = "_"
TIME_NAME_PARTS = ("time", "date")
# The types a field may have, by the name the stream's metadata file uses.
UTF8, FLOAT64, BOOLEAN, TIMESTAMP = "Utf8", "Float64", "Boolean", "Timestamp"
MISMATCH = "Invalid Request: Could not process this event due to mismatch in datatype"


def events_of(body: Any) -> list[dict[str, Any]]:
    """The records of an ingest body, flattened."""
    if isinstance(body, dict):
        items: list[Any] = [body]
    elif isinstance(body, list):
        items = body
    else:
        raise ErrorAnswer(400, "Invalid Request: the body must be a JSON object or an array "
                               "of JSON objects")
    if not all(isinstance(item, dict) for item in items):
        raise ErrorAnswer(400, "Invalid Request: every event of an array must be a JSON object")
    return [flatten(item) if _nested(item) else item for item in items]


def _nested(record: dict[str, Any]) -> bool:
    return any(isinstance(value, dict | list) for value in record.values())


def flatten(record: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    flat: dict[str, Any] = {}
    for key, value in record.items():
        name = f"{prefix}{SEPARATOR}{key}" if prefix else str(key)
        if isinstance(value, dict):
            flat.update(flatten(value, name))
        elif isinstance(value, list):
            flat[name] = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
        else:
            flat[name] = value
    return flat


def parse_time(text: str, *, strict: bool) -> dt.datetime | None:
    """A timestamp string as naive UTC: RFC 3339 (with its offset when `strict`, as type
    inference wants it; a value of a Timestamp field may leave it out) or RFC 2822."""
    try:
        moment = dt.datetime.fromisoformat(text)
    except ValueError:
        try:
            moment = email.utils.parsedate_to_datetime(text)
        except (TypeError, ValueError, IndexError):
            return None
    if moment.tzinfo is None:
        if strict:
            return None
        return moment
    return moment.astimezone(dt.UTC).replace(tzinfo=None)


def _infer(name: str, values: list[Any]) -> str | None:
    present = [value for value in values if value is not None]
    if not present:
        return None
    kinds = set(map(type, present))
    if kinds == {bool}:
        return BOOLEAN
    if kinds <= {int, float}:
        return FLOAT64
    if kinds == {str}:
        lowered = name.lower()
        if any(part in lowered for part in TIME_NAME_PARTS) and parse_time(
                present[0], strict=True) is not None:
            return TIMESTAMP
        return UTF8
    raise ErrorAnswer(400, MISMATCH)


def _column(kind: str, values: list[Any]) -> pa.Array:
    import pyarrow as pa

    kinds = set(map(type, values)) - {type(None)}
    if kind == UTF8 and kinds <= {str}:
        return pa.array(values, pa.string())
    if kind == BOOLEAN and kinds <= {bool}:
        return pa.array(values, pa.bool_())
    if kind == FLOAT64 and kinds <= {int, float}:
        if int in kinds:
            values = [float(value) if type(value) is int else value for value in values]
        return pa.array(values, pa.float64())
    if kind == TIMESTAMP and kinds <= {str, int, float}:
        converted: list[dt.datetime | int | None] = []
        for value in values:
            if isinstance(value, str):
                moment = parse_time(value, strict=False)
                if moment is None:
                    raise ErrorAnswer(400, MISMATCH)
                converted.append(moment)
            elif isinstance(value, int | float):  # milliseconds since the epoch
                converted.append(int(value))
            else:
                converted.append(None)
        return pa.array(converted, pa.timestamp("ms"))
    raise ErrorAnswer(400, MISMATCH)


def arrow_type(kind: str) -> pa.DataType:
    import pyarrow as pa

    return {UTF8: pa.string(), FLOAT64: pa.float64(), BOOLEAN: pa.bool_(),
            TIMESTAMP: pa.timestamp("ms")}[kind]


def table_of(records: Sequence[dict[str, Any]], known: dict[str, str],
             now: dt.datetime) -> tuple[pa.Table, dict[str, str]]:
    """The records as a table (`p_timestamp` first, then the fields by name) and the new
    fields they bring, typed; raises `ErrorAnswer` (400) for what Parseable refuses."""
    import pyarrow as pa

    names: set[str] = set().union(*records) if records else set()
    if TIME_FIELD in names:
        raise ErrorAnswer(400, f"Invalid Request: field {TIME_FIELD} is a reserved field")
    new: dict[str, str] = {}
    columns: dict[str, pa.Array] = {}
    for name in sorted(names):
        values = [record.get(name) for record in records]
        kind = known.get(name)
        if kind is None:
            kind = _infer(name, values)
            if kind is None:
                continue  # only nulls: no type yet
            new[name] = kind
        columns[name] = _column(kind, values)
    if len(known) + len(new) > MAX_FIELDS:
        raise ErrorAnswer(400, f"Invalid Request: Ingestion failed as field count "
                               f"{len(known) + len(new)} exceeds the limit of {MAX_FIELDS} "
                               "fields of a dataset; create a new dataset")
    stamps = pa.array([now.replace(tzinfo=None)] * len(records), pa.timestamp("ms"))
    table = pa.table({TIME_FIELD: stamps, **columns})
    return table, new
