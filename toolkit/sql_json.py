"""An SQL answer of Apache DataFusion as the log service writes it in JSON.

Shared by the two places that run the log stream's SQL on DataFusion, the engine of the
real service: `toolkit logs --local` (`toolkit.runlog.local`) and the sandbox's log
service (`toolkit_sandbox.logs.api`), so both answer in the same words.
"""

from __future__ import annotations

import datetime as dt
import math
from decimal import Decimal
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    import pyarrow


def records(table: pyarrow.Table) -> tuple[list[str], list[dict[str, Any]]]:
    """The answer's field names and its rows, each value as `jsonable` makes it."""
    rows = [{name: jsonable(value) for name, value in row.items()} for row in table.to_pylist()]
    return table.column_names, rows


def jsonable(value: Any) -> Any:
    """A value as arrow-json writes it: timestamps as `2024-05-01T12:00:00.123` (UTC, no
    zone, a fraction only when there is one), dates as `2024-05-01`, numbers that are not
    finite as null, durations and times as text, bytes in hex."""
    if isinstance(value, dt.datetime):
        if value.tzinfo is not None:
            value = value.astimezone(dt.UTC).replace(tzinfo=None)
        text = value.strftime("%Y-%m-%dT%H:%M:%S")
        micro = value.microsecond
        if micro:
            text += f".{micro // 1000:03d}" if micro % 1000 == 0 else f".{micro:06d}"
        return text
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, Decimal):
        return float(value)
    if isinstance(value, dt.timedelta | dt.time):
        return str(value)
    if isinstance(value, bytes):
        return value.hex()
    if isinstance(value, list):
        return [jsonable(item) for item in value]
    if isinstance(value, dict):
        return {str(key): jsonable(item) for key, item in value.items()}
    return value


def engine_message(exc: Exception) -> str:
    """A DataFusion error's text without the engine's own prefix."""
    return str(exc).strip().removeprefix("DataFusion error: ")
