"""The time range of a run-log query: what `--since`, `--start` and `--end` mean.

The log service takes `startTime` and `endTime` as RFC 3339 times, or `endTime: "now"` with
`startTime` a duration (`10m`, `1h`, `7d`); it truncates both to the minute, keeps the
records with `start <= p_timestamp < end`, and refuses a start after the end. Because of
the truncation, `end: now` leaves out the current minute, so toolkit sends absolute times
and ends a range that reaches "now" at the start of the next minute: events shipped a
moment ago are in it. `toolkit logs --local` applies the same rules to the local log
(`parse_range`), with the same messages.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass

from toolkit.errors import RunLogError

EPOCH = "1970-01-01T00:00:00Z"
RANGE_ERROR = "Error while parsing provided time range: "
START_AFTER_END = RANGE_ERROR + "Start time cannot be greater than the end time"

_UNITS = {
    "s": 1,
    "sec": 1,
    "secs": 1,
    "second": 1,
    "seconds": 1,
    "m": 60,
    "min": 60,
    "mins": 60,
    "minute": 60,
    "minutes": 60,
    "h": 3600,
    "hr": 3600,
    "hrs": 3600,
    "hour": 3600,
    "hours": 3600,
    "d": 86400,
    "day": 86400,
    "days": 86400,
    "w": 604800,
    "week": 604800,
    "weeks": 604800,
}
_PART = re.compile(r"\s*([0-9]+)\s*([a-z]+)", re.IGNORECASE)
MAX_DURATION = dt.timedelta(days=36500)


def parse_duration(text: str) -> dt.timedelta:
    """`1h`, `30m`, `7d`, `1h 30m`, `2 hours`: a sum of whole numbers with units."""
    seconds, position, stripped = 0, 0, text.strip()
    if not stripped:
        raise ValueError("a duration such as 10m, 1h or 7d is needed")
    while position < len(stripped):
        match = _PART.match(stripped, position)
        if match is None or match[2].lower() not in _UNITS:
            raise ValueError(f"{text!r} is not a duration such as 10m, 1h or 7d")
        seconds += int(match[1]) * _UNITS[match[2].lower()]
        position = match.end()
        while position < len(stripped) and stripped[position] in " ,":
            position += 1
    duration = dt.timedelta(seconds=seconds)
    if duration > MAX_DURATION:
        raise ValueError(f"{text!r} is longer than a century")
    return duration


# RFC 3339 as the log service's parser (chrono's) reads it: `T`, `t` or a space; a
# fraction; `Z`, `z` or an offset with its colon. `+0000` or a week date is not one.
_RFC3339 = re.compile(
    r"([0-9]{4}-[0-9]{2}-[0-9]{2})[Tt ]([0-9]{2}:[0-9]{2}):([0-9]{2})(\.[0-9]+)?"
    r"([Zz]|[+-][0-9]{2}:[0-9]{2})"
)


def parse_time(text: str) -> dt.datetime:
    """An RFC 3339 time with its offset (`2024-05-01T12:00:00Z`, `...+02:00`), in UTC."""
    match = _RFC3339.fullmatch(text.strip())
    if match is None:
        raise ValueError(
            f"{text!r} is not an RFC 3339 time with its offset, such as 2024-05-01T12:00:00Z"
        )
    date, minutes, seconds, fraction, offset = match.groups()
    seconds = min(seconds, "59")  # a leap second stays in its minute
    fraction = (fraction or "")[:7]  # Python keeps microseconds
    offset = "+00:00" if offset in ("Z", "z") else offset
    try:
        moment = dt.datetime.fromisoformat(f"{date}T{minutes}:{seconds}{fraction}{offset}")
    except ValueError:
        raise ValueError(f"{text!r} is not an RFC 3339 time such as 2024-05-01T12:00:00Z") from None
    try:
        return moment.astimezone(dt.UTC)
    except OverflowError:  # `0001-01-01T00:00:00+14:00` is in year 0 in UTC: kept at the
        # bound it passed, as the service (whose times reach past both) keeps no event there
        bound = dt.datetime.min if moment.year == 1 else dt.datetime.max
        return bound.replace(tzinfo=dt.UTC)


def rfc3339(moment: dt.datetime) -> str:
    return moment.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def truncate(moment: dt.datetime) -> dt.datetime:
    return moment.replace(second=0, microsecond=0)


def next_minute(now: dt.datetime) -> dt.datetime:
    """The end of a range that reaches `now` and keeps its minute."""
    return truncate(now) + dt.timedelta(minutes=1)


@dataclass(frozen=True)
class QueryTimes:
    """The `startTime` and `endTime` a query sends (the service requires both)."""

    start: str
    end: str


def query_times(
    *,
    since: str | None = None,
    start: str | None = None,
    end: str | None = None,
    now: dt.datetime | None = None,
) -> QueryTimes:
    """The times to send for `--since DURATION` or `--start T --end T` (either may be left
    out: from the beginning, or up to now); nothing given: the whole log. Start and end
    are sent as written, for the service (or `parse_range`) to judge."""
    now = now or dt.datetime.now(dt.UTC)
    if since is not None:
        if start is not None or end is not None:
            raise RunLogError("give either --since or --start/--end, not both")
        try:
            duration = parse_duration(since)
        except ValueError as exc:
            raise RunLogError(f"--since: {exc}") from None
        return QueryTimes(rfc3339(now - duration), rfc3339(next_minute(now)))
    return QueryTimes(
        start if start is not None else EPOCH, end if end is not None else rfc3339(next_minute(now))
    )


def parse_range(
    start: str, end: str, *, now: dt.datetime | None = None
) -> tuple[dt.datetime, dt.datetime]:
    """The range a query keeps, as the log service reads `startTime` and `endTime`:
    `end` "now" with a duration as `start`, else two RFC 3339 times; both truncated to
    the minute; a start after the end is refused. UTC, without a zone (as p_timestamp)."""
    try:
        if end.strip() == "now":
            upper = now or dt.datetime.now(dt.UTC)
            lower = upper - parse_duration(start)
        else:
            lower, upper = parse_time(start), parse_time(end)
    except ValueError as exc:
        raise RunLogError(RANGE_ERROR + str(exc)) from None
    lower, upper = truncate(lower), truncate(upper)
    if lower > upper:
        raise RunLogError(START_AFTER_END)
    return lower.replace(tzinfo=None), upper.replace(tzinfo=None)
