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

from toolkit_sandbox.interface import ErrorAnswer

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


_TOO_SHORT = "Error parsing time: premature end of input"
_INVALID = "Error parsing time: input contains invalid characters"
_TOO_LONG = "Error parsing time: trailing input"
_OUT_OF_RANGE = "Error parsing time: input is out of range"
# chrono's `parse_from_rfc3339`, piece by piece: the date, a `T`, `t` or space, the time
# with optional fraction, then `Z`, `z` or an offset whose colon is required.
_PIECES = (
    re.compile(r"[0-9]{4}"),
    re.compile(r"-"),
    re.compile(r"[0-9]{2}"),
    re.compile(r"-"),
    re.compile(r"[0-9]{2}"),
    re.compile(r"[Tt ]"),
    re.compile(r"[0-9]{2}"),
    re.compile(r":"),
    re.compile(r"[0-9]{2}"),
    re.compile(r":"),
    re.compile(r"[0-9]{2}"),
    re.compile(r"(?:\.[0-9]+)?"),
    re.compile(r"[Zz]|[+\-\u2212][0-9]{2}:[0-9]{2}"),
)


def rfc3339(text: str) -> dt.datetime:
    """An RFC 3339 time as chrono's `DateTime::parse_from_rfc3339` reads it (naive UTC):
    `t` and `z` in lower case and a space for the `T` are taken; ISO 8601's other forms
    (`+0000`, week dates, no offset) are not. A moment before year 1 or after 9999 in UTC
    (`0001-01-01T00:00:00+14:00`) is kept as the first or last moment Python has: no
    record lies beyond either."""
    position, values = 0, []
    for piece in _PIECES:
        if position >= len(text) and piece.pattern != r"(?:\.[0-9]+)?":
            raise ValueError(_TOO_SHORT)
        match = piece.match(text, position)
        if match is None:
            raise ValueError(_INVALID)
        values.append(match[0])
        position = match.end()
    if position != len(text):
        raise ValueError(_TOO_LONG)
    year, _, month, _, day, _, hour, _, minute, _, second, fraction, offset = values
    try:  # year 0 (chrono has it; Python does not) is checked as 2000, another leap year
        naive = dt.datetime(
            int(year) or 2000, int(month), int(day), int(hour), int(minute), min(int(second), 59)
        )  # a leap second (60) stays in its minute, as chrono keeps it
    except ValueError:
        raise ValueError(_OUT_OF_RANGE) from None
    if int(second) > 60:
        raise ValueError(_OUT_OF_RANGE)
    micro = int((fraction[1:] + "000000")[:6]) if fraction else 0
    shift = dt.timedelta(0)
    if offset not in ("Z", "z"):
        hours, minutes = int(offset[1:3]), int(offset[4:6])
        if minutes > 59 or hours * 60 + minutes >= 24 * 60:
            raise ValueError(_OUT_OF_RANGE)
        shift = dt.timedelta(hours=hours, minutes=minutes) * (1 if offset[0] == "+" else -1)
    if int(year) == 0:
        return dt.datetime.min
    try:
        return naive.replace(microsecond=micro) - shift
    except OverflowError:
        return dt.datetime.min if shift > dt.timedelta(0) else dt.datetime.max


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
