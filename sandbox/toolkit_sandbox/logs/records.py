"""Ingested JSON events as Arrow columns, the way Parseable types them (schema version 1).

- The body is one JSON object or an array of them; nested objects are flattened with `_`
  (`{"a": {"b": 1}}` becomes the field `a_b`).
- Arrays, as Parseable's `flatten_json_body` treats them for a stream of schema version 1
  (every stream it creates now): a body nested at most `MAX_FLATTEN_LEVEL` levels deep
  (`P_MAX_FLATTEN_LEVEL`, 10) goes through its "generic flattening" first, which makes
  one record per element of an array (`{"tags": ["a", "b"]}` is two records, `tags`
  `a` and `tags` `b`; two arrays give every pair; an object in an array is flattened
  like any other); an empty array stays `[]`. A deeper body keeps its arrays as Arrow
  lists (`array_has(tags, 'a')`): a list of strings, booleans, integers (Int64) or
  numbers (Float64), and an array of objects becomes one list per field
  (`{"a": [{"b": 1}, {"b": 2}]}` is `a_b` = `[1, 2]`). The sandbox stores `[]` as null,
  and refuses (400) lists of lists and lists that mix types, which Parseable's Arrow
  reader may take; a body that would make more than `MAX_ROWS` records is refused too.
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
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from toolkit_sandbox.interface import ErrorAnswer

if TYPE_CHECKING:
    import pyarrow as pa

TIME_FIELD = "p_timestamp"
MAX_FIELDS = 250
SEPARATOR = "_"
TIME_NAME_PARTS = ("time", "date")
# The types a field may have, by the name the stream's metadata file uses.
UTF8, FLOAT64, BOOLEAN, TIMESTAMP = "Utf8", "Float64", "Boolean", "Timestamp"
INT64 = "Int64"  # only as the items of a list
LIST_PREFIX, LIST_SUFFIX = "List(", ")"  # a list's type: "List(Utf8)"
MAX_FLATTEN_LEVEL = 10  # Parseable's default P_MAX_FLATTEN_LEVEL
MAX_ROWS = 100_000  # records one request may become (a sandbox bound)
MISMATCH = "Invalid Request: Could not process this event due to mismatch in datatype"


class TimeOutOfRange(ValueError):
    """A timestamp whose UTC time falls outside what a datetime holds (years 1 to 9999):
    `0001-01-01T00:00:00+14:00` is in year 0 in UTC."""

    def __init__(self, text: str):
        super().__init__(text)
        self.text = text


def out_of_range(name: str, text: str) -> str:
    """The 400 for a timestamp the sandbox cannot convert, naming its field in the words
    of Parseable's ingest (`Failed to create recordbatch due to ...`) around arrow-json's
    (`whilst decoding field '...': failed to parse "..." as Timestamp(...)`)."""
    shown = text.replace("\\", "\\\\").replace('"', '\\"')
    return (
        'Invalid Request: Failed to create recordbatch due to JsonError("whilst decoding '
        f"field '{name}': failed to parse \\\"{shown}\\\" as Timestamp(Millisecond, None): "
        'timestamp out of range")'
    )


def events_of(body: Any) -> list[dict[str, Any]]:
    """The records of an ingest body, flattened as Parseable flattens them."""
    if isinstance(body, dict):
        items: list[Any] = [body]
    elif isinstance(body, list):
        items = body
    else:
        raise ErrorAnswer(
            400, "Invalid Request: the body must be a JSON object or an array of JSON objects"
        )
    if not all(isinstance(item, dict) for item in items):
        raise ErrorAnswer(400, "Invalid Request: every event of an array must be a JSON object")
    if not any(map(_nested, items)):  # flat events (the usual case): as they are
        return items
    if too_deep([item for item in items if _nested(item)]):
        return [flatten(item) for item in items]
    rows: list[Any] = []
    for item in items:
        if not _nested(item):
            rows.append(item)
        elif _has_array(item):
            rows += explode(item, MAX_ROWS - len(rows))
        else:
            rows.append(flatten(item))
    if not all(isinstance(row, dict) for row in rows):
        raise ErrorAnswer(400, "Invalid Request: Expected object in array of objects")
    return [flatten(row) if _nested(row) else row for row in rows]


def _nested(record: dict[str, Any]) -> bool:
    return any(isinstance(value, dict | list) for value in record.values())


def _has_array(record: dict[str, Any]) -> bool:
    return any(
        isinstance(value, list) or (isinstance(value, dict) and _has_array(value))
        for value in record.values()
    )


def too_deep(value: Any, level: int = 1) -> bool:
    """Whether a value is nested more than `MAX_FLATTEN_LEVEL` levels deep (an object's
    values are one level below it; an array's items on its own level)."""
    if level > MAX_FLATTEN_LEVEL:
        return True
    if isinstance(value, list):
        return any(too_deep(item, level) for item in value)
    if isinstance(value, dict):
        return any(too_deep(item, level + 1) for item in value.values())
    return False


def _too_many(count: int, budget: int) -> None:
    if count > budget:
        raise ErrorAnswer(
            400,
            f"Invalid Request: the events make more than {MAX_ROWS} "
            "records (a limit of the sandbox)",
        )


def explode(value: Any, budget: int) -> list[Any]:
    """Parseable's generic flattening: a record per element of every array (every
    combination, when there are several), nested objects kept for `flatten`."""
    if isinstance(value, list):
        out: list[Any] = []
        for item in value:
            out += explode(item, budget - len(out))
            _too_many(len(out), budget)
        return out
    if not isinstance(value, dict):
        return [value]
    results: list[dict[str, Any]] = [{}]
    for key, item in value.items():
        if isinstance(item, list) and not item:
            results = [{**result, key: []} for result in results]
        elif isinstance(item, list | dict):
            parts = explode(item, budget)
            _too_many(len(parts) * len(results), budget)
            results = [{**result, key: part} for part in parts for result in results]
        else:
            results = [{**result, key: item} for result in results]
    return results


def flatten(record: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    """Nested objects become fields named with `_`; an array of objects becomes a list per
    field (`_objects`); any other array is kept (a list)."""
    flat: dict[str, Any] = {}
    for key, value in record.items():
        name = f"{prefix}{SEPARATOR}{key}" if prefix else str(key)
        if isinstance(value, dict):
            flat.update(flatten(value, name))
        elif isinstance(value, list) and any(isinstance(item, dict) for item in value):
            flat.update(_objects(value, name))
        else:
            flat[name] = value
    return flat


def _objects(items: list[Any], name: str) -> dict[str, list[Any]]:
    """Parseable's `flatten_array_objects`: the fields of an array of objects (or nulls),
    each as the list of its values, null where an object lacks it."""
    columns: dict[str, list[Any]] = {}
    for index, item in enumerate(items):
        if isinstance(item, dict):
            for field, value in flatten(item, name).items():
                columns.setdefault(field, [None] * index).append(value)
        elif item is not None:
            raise ErrorAnswer(
                400, "Invalid Request: Found non-object element while flattening array of objects"
            )
        for column in columns.values():
            column.extend([None] * (index + 1 - len(column)))
    return dict(sorted(columns.items()))


def is_list(kind: str) -> bool:
    return kind.startswith(LIST_PREFIX)


def item_kind(kind: str) -> str:
    return kind[len(LIST_PREFIX) : -len(LIST_SUFFIX)]


def _item_kind(values: list[Any]) -> str | None:
    """The type of a list's items, as arrow-json infers it (None: no item yet)."""
    present = [item for value in values for item in value if item is not None]
    if not present:
        return None
    kinds = set(map(type, present))
    if kinds == {bool}:
        return BOOLEAN
    if kinds == {int}:
        return INT64
    if kinds <= {int, float}:
        return FLOAT64
    if kinds == {str}:
        return UTF8
    raise ErrorAnswer(400, MISMATCH)  # lists of lists, or of mixed items: not emulated


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
    try:
        return moment.astimezone(dt.UTC).replace(tzinfo=None)
    except OverflowError:  # its UTC time is before year 1 or after 9999
        raise TimeOutOfRange(text) from None


def _infer(name: str, values: list[Any]) -> str | None:
    present = [value for value in values if value is not None]
    if not present:
        return None
    kinds = set(map(type, present))
    if kinds == {list}:
        item = _item_kind(present)
        return None if item is None else f"{LIST_PREFIX}{item}{LIST_SUFFIX}"
    if kinds == {bool}:
        return BOOLEAN
    if kinds <= {int, float}:
        return FLOAT64
    if kinds == {str}:
        lowered = name.lower()
        if (
            any(part in lowered for part in TIME_NAME_PARTS)
            and parse_time(present[0], strict=True) is not None
        ):
            return TIMESTAMP
        return UTF8
    raise ErrorAnswer(400, MISMATCH)


def _fits(kind: str, item: Any) -> bool:
    if kind == FLOAT64:
        return isinstance(item, int | float) and not isinstance(item, bool)
    return type(item) is {INT64: int, UTF8: str, BOOLEAN: bool}[kind]


def _column(kind: str, values: list[Any]) -> pa.Array:
    import pyarrow as pa

    kinds = set(map(type, values)) - {type(None)}
    if is_list(kind):
        items = item_kind(kind)
        if not kinds <= {list} or not all(
            _fits(items, item)
            for value in values
            if value is not None
            for item in value
            if item is not None
        ):
            raise ErrorAnswer(400, MISMATCH)
        if items == FLOAT64:
            values = [
                None if value is None else [None if item is None else float(item) for item in value]
                for value in values
            ]
        return pa.array(values, arrow_type(kind))
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

    if is_list(kind):
        return pa.list_(arrow_type(item_kind(kind)))
    return {
        UTF8: pa.string(),
        FLOAT64: pa.float64(),
        BOOLEAN: pa.bool_(),
        INT64: pa.int64(),
        TIMESTAMP: pa.timestamp("ms"),
    }[kind]


def table_of(
    records: Sequence[dict[str, Any]], known: dict[str, str], now: dt.datetime
) -> tuple[pa.Table, dict[str, str]]:
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
        if (kind is None or not is_list(kind)) and any(value == [] for value in values):
            values = [None if value == [] else value for value in values]  # `[]`: null
        try:
            if kind is None:
                kind = _infer(name, values)
                if kind is None:
                    continue  # only nulls: no type yet
                new[name] = kind
            columns[name] = _column(kind, values)
        except TimeOutOfRange as exc:
            raise ErrorAnswer(400, out_of_range(name, exc.text)) from None
    if len(known) + len(new) > MAX_FIELDS:
        raise ErrorAnswer(
            400,
            f"Invalid Request: Ingestion failed as field count "
            f"{len(known) + len(new)} exceeds the limit of {MAX_FIELDS} "
            "fields of a dataset; create a new dataset",
        )
    stamps = pa.array([now.replace(tzinfo=None)] * len(records), pa.timestamp("ms"))
    table = pa.table({TIME_FIELD: stamps, **columns})
    return table, new
