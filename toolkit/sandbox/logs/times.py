"""`startTime` and `endTime` of a query, read as Parseable reads them (`TimeRange::
parse_human_time`): `endTime: "now"` with `startTime` a duration (humantime: `10m`, `1h`,
`7d`, `2 hours`, `1h 30m`), otherwise two RFC 3339 times; both truncated to the minute;
a start after the end is refused. The range keeps `start <= p_timestamp < end`. Both
are required, as Parseable's query body has them (the seed's table makes them optional;
the real service answers 400 `missing field `startTime``).
"""

from __future__ import annotations

import datetime as dt
import re

from toolkit.sandbox.interface import ErrorAnswer

PREFIX = "Error while parsing provided time range: "
_UNITS = {
    "nsec": 1e-9,
    "ns": 1e-9,
    "usec": 1e-6,
    "us": 1e-6,
    "msec": 1e-3,
    "ms": 1e-3,
    "seconds": 1,
    "second": 1,
    "sec": 1,
    "secs": 1,
    "s": 1,
    "minutes": 60,
    "minute": 60,
    "min": 60,
    "mins": 60,
    "m": 60,
    "hours": 3600,
    "hour": 3600,
    "hr": 3600,
    "hrs": 3600,
    "h": 3600,
    "days": 86400,
    "day": 86400,
    "d": 86400,
    "weeks": 604800,
    "week": 604800,
    "w": 604800,
    "months": 2630016,
    "month": 2630016,
    "M": 2630016,
    "years": 31557600,
    "year": 31557600,
    "y": 31557600,
}
_PART = re.compile(r"\s*([0-9]+)\s*([A-Za-z]+)\s*")
MAX_SECONDS = 200 * 31557600  # beyond this a duration is "Out of Range"


def duration(text: str) -> dt.timedelta:
    """A humantime duration; ValueError with Parseable's words otherwise."""
    seconds, position = 0.0, 0
    if not text.strip():
        raise ValueError("Parsing humantime")
    while position < len(text):
        match = _PART.match(text, position)
        if match is None or match[2] not in _UNITS:
            raise ValueError("Parsing humantime")
        seconds += int(match[1]) * _UNITS[match[2]]
        position = match.end()
    if seconds > MAX_SECONDS:
        raise ValueError("Out of Range")
    return dt.timedelta(seconds=seconds)


def rfc3339(text: str) -> dt.datetime:
    try:
        moment = dt.datetime.fromisoformat(text)
    except ValueError:
        raise ValueError("Error parsing time: input contains invalid characters") from None
    if moment.tzinfo is None or len(text) < 20:
        raise ValueError("Error parsing time: premature end of input")
    return moment.astimezone(dt.UTC).replace(tzinfo=None)


def _minute(moment: dt.datetime) -> dt.datetime:
    return moment.replace(second=0, microsecond=0)


def time_range(start: str, end: str, now: dt.datetime) -> tuple[dt.datetime, dt.datetime]:
    """The range to keep (naive UTC); `ErrorAnswer` (400)."""
    try:
        if end == "now":
            upper = now.astimezone(dt.UTC).replace(tzinfo=None)
            lower = upper - duration(start)
        else:
            lower, upper = rfc3339(start), rfc3339(end)
    except ValueError as exc:
        raise ErrorAnswer(400, PREFIX + str(exc)) from None
    lower, upper = _minute(lower), _minute(upper)
    if lower > upper:
        raise ErrorAnswer(400, PREFIX + "Start time cannot be greater than the end time")
    return lower, upper
