"""`toolkit logs --local`: the same SQL over the local run log, with no service at all.

The engine is Apache DataFusion, the log service's own. The event files are read with
the schema `events.FIELDS` declares (numbers as Float64, `time` as a timestamp: what the
service infers from the same events), `p_timestamp` is the event's `time` (on the service
it is the moment the event was ingested), and the columns come in the service's order:
`p_timestamp`, then by name. The table is named after the stream. A time range filters on
`p_timestamp` exactly as the service does (`times.parse_range`); SQL that is not a query
(DDL, DML, `SET`) is refused, as it is there.

One difference, on purpose: locally every declared field is a column, null where no event
has it, while the service knows a field only once an event carried a value for it. So a
query about pauses (`wait_ms`) answers "no rows" locally before any pause happened, where
the service still says `No field named wait_ms`; and `SELECT *` shows those empty columns.

Lines that are not events (a line cut short by a crash, a hand edit, bytes that are not
UTF-8, a time before year 1 or after year 9999 once in UTC) are skipped and counted. The
table's name is the stream's exact name, as the service looks streams up: an unquoted
name in the SQL is folded to lower case first, so a mixed-case stream is written quoted
(`FROM "MyStream"`). DataFusion and pyarrow are imported here only, when a local query runs.
"""

from __future__ import annotations

import datetime as dt
import importlib
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from toolkit.errors import RunLogError
from toolkit.runlog.events import FIELDS
from toolkit.runlog.shipping import quoted
from toolkit.runlog.times import parse_range
from toolkit.sql_json import engine_message, records

if TYPE_CHECKING:  # pragma: no cover
    import pyarrow as pa

TIME_FIELD = "p_timestamp"

# The SQL engine is the `sql` extra of the package; a plain install has no DataFusion.
ENGINE = ("datafusion", "pyarrow")
NEEDS_EXTRA = (
    "the local SQL engine (DataFusion, pyarrow) is not installed; it is the sql extra: "
    "pip install 'toolkit[sql]'"
)


def require_engine() -> None:
    """Raise `RunLogError` naming the `sql` extra when DataFusion or pyarrow cannot be
    imported."""
    for name in ENGINE:
        try:
            importlib.import_module(name)
        except ImportError:
            raise RunLogError(NEEDS_EXTRA) from None


@dataclass
class LocalAnswer:
    fields: list[str] = field(default_factory=list)
    records: list[dict[str, Any]] = field(default_factory=list)
    skipped: int = 0  # lines of the log that are not events


def event_schema() -> pa.Schema:
    import pyarrow as pa

    kinds = {"timestamp": pa.timestamp("ms"), "number": pa.float64(), "string": pa.string()}
    return pa.schema([(name, kinds[kind]) for name, (kind, _) in FIELDS.items()])


def _read_fast(data: memoryview, schema: pa.Schema) -> pa.Table:
    import pyarrow as pa
    import pyarrow.json as pj

    return pj.read_json(
        pa.BufferReader(pa.py_buffer(data)),
        parse_options=pj.ParseOptions(explicit_schema=schema, unexpected_field_behavior="ignore"),
    )


def _event_row(line: bytes) -> dict[str, Any] | None:
    """One line as a row of the schema, or None when it is not an event of it."""
    try:
        value = json.loads(line)
    except (ValueError, RecursionError):
        return None
    if not isinstance(value, dict):
        return None
    row: dict[str, Any] = {}
    for name, item in value.items():
        kind = FIELDS.get(name, (None,))[0]
        if kind is None or item is None:
            continue
        if kind == "string" and isinstance(item, str):
            row[name] = item
        elif kind == "number" and isinstance(item, int | float) and not isinstance(item, bool):
            row[name] = float(item)
        elif kind == "timestamp" and isinstance(item, str):
            try:
                moment = dt.datetime.fromisoformat(item)
            except ValueError:
                return None
            try:
                if moment.tzinfo is not None:
                    moment = moment.astimezone(dt.UTC).replace(tzinfo=None)
            except OverflowError:  # past year 9999 (or before year 1) in UTC
                return None
            row[name] = moment
        else:
            return None
    return row


# The times a row may hold, in milliseconds since 1970: what a Python datetime can take
# (an answer's rows become them), years 1 to 9999.
_EPOCH = dt.datetime(1970, 1, 1)
EARLIEST = (dt.datetime(1, 1, 1) - _EPOCH) // dt.timedelta(milliseconds=1)
LATEST = (dt.datetime(9999, 12, 31, 23, 59, 59, 999000) - _EPOCH) // dt.timedelta(milliseconds=1)


def _sound(table: pa.Table) -> bool:
    """Whether every text of the table is UTF-8 and every time within the years 1 to 9999
    (else its file is read line by line, leaving such lines out)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    try:
        table.validate(full=True)  # checks that every string is UTF-8
    except pa.ArrowInvalid:
        return False
    bounds = pc.min_max(table.column("time").cast(pa.int64()))
    low, high = bounds["min"].as_py(), bounds["max"].as_py()
    return low is None or (EARLIEST <= low and high <= LATEST)


def _read_careful(data: memoryview, schema: pa.Schema) -> tuple[pa.Table, int]:
    """Line by line, leaving out what is not an event; the table and the lines left out."""
    import pyarrow as pa

    rows, skipped = [], 0
    for line in bytes(data).splitlines():
        if not line.strip():
            continue
        row = _event_row(line)
        if row is None:
            skipped += 1
        else:
            rows.append(row)
    return pa.Table.from_pylist(rows, schema=schema), skipped


def read_events(paths: Sequence[Path]) -> tuple[pa.Table, int]:
    """Every event of the files (oldest first) as one table with the service's columns."""
    import pyarrow as pa

    schema = event_schema()
    tables, skipped = [], 0
    for path in paths:
        try:
            whole = path.read_bytes()
        except FileNotFoundError:
            continue
        except OSError as exc:
            raise RunLogError(f"{path.name}: cannot be read ({exc.strerror or exc})") from None
        # Up to the last newline (a line being written, or cut by a crash, is left out),
        # without copying the file's bytes.
        data = memoryview(whole)[: whole.rfind(b"\n") + 1]
        if not data:
            continue
        try:
            fast: pa.Table | None = _read_fast(data, schema)
        except (pa.ArrowInvalid, pa.ArrowTypeError):
            fast = None
        if fast is not None and _sound(fast):
            tables.append(fast)
        else:
            table, bad = _read_careful(data, schema)
            tables.append(table)
            skipped += bad
    table = pa.concat_tables(tables) if tables else schema.empty_table()
    table = table.add_column(0, TIME_FIELD, table.column("time"))
    return table.select([TIME_FIELD, *sorted(FIELDS)]), skipped


def bounded_context(memory_limit: int | None) -> Any:
    """A DataFusion context whose operators together hold at most `memory_limit` bytes (a
    query past it fails with "Resources exhausted"), never spilling to disk; a default one
    for None."""
    from datafusion import RuntimeEnvBuilder, SessionConfig, SessionContext

    if memory_limit is None:
        return SessionContext()
    runtime = RuntimeEnvBuilder().with_greedy_memory_pool(memory_limit).with_disk_manager_disabled()
    return SessionContext(SessionConfig().with_target_partitions(1), runtime)


def query_events(
    paths: Sequence[Path],
    sql: str,
    table_name: str,
    *,
    start: str | None = None,
    end: str | None = None,
    memory_limit: int | None = None,
    row_limit: int | None = None,
) -> LocalAnswer:
    """Run `sql` over the events of `paths`, as the table `table_name`, keeping those with
    `start <= p_timestamp < end` when a range is given (both, as `parse_range` reads them);
    within `memory_limit` bytes and giving at most `row_limit` rows, when given."""
    require_engine()
    import pyarrow as pa
    from datafusion import SQLOptions, col, lit

    bounds = parse_range(start, end) if start is not None and end is not None else None
    events, skipped = read_events(paths)
    context = bounded_context(memory_limit)
    frame = context.from_arrow(events)
    if bounds is not None:
        stamp = pa.timestamp("ms")
        frame = frame.filter(
            (col(TIME_FIELD) >= lit(pa.scalar(bounds[0], stamp)))
            & (col(TIME_FIELD) < lit(pa.scalar(bounds[1], stamp)))
        )
    context.register_view(quoted(table_name), frame)  # the exact name, as the service has it
    options = SQLOptions().with_allow_ddl(False).with_allow_dml(False).with_allow_statements(False)
    if not sql.strip():
        raise RunLogError("Query cannot be empty")
    try:
        result = context.sql_with_options(sql, options)
    except Exception as exc:  # DataFusion raises its own errors as plain exceptions
        raise RunLogError(f"Datafusion Error: {engine_message(exc)}") from None
    try:
        if row_limit is not None:
            result = result.limit(row_limit)
        answer = result.to_arrow_table()
    except Exception as exc:
        raise RunLogError(f"Execution Error: {engine_message(exc)}") from None
    fields, rows = records(answer)
    return LocalAnswer(fields, rows, skipped)
