"""The time range a query sends (`--since`, `--start`, `--end`) and how `--local` reads it:
as the log service does, truncated to the minute."""

from __future__ import annotations

import datetime as dt

import pytest

from toolkit.errors import RunLogError
from toolkit.runlog.times import parse_duration, parse_range, parse_time, query_times

NOW = dt.datetime(2024, 5, 1, 12, 34, 56, tzinfo=dt.UTC)


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("90s", 90),
        ("10m", 600),
        ("1h", 3600),
        ("7d", 604800),
        ("1h30m", 5400),
        ("1h 30m", 5400),
        ("2 hours", 7200),
        ("1w", 604800),
    ],
)
def test_durations(text, seconds):
    assert parse_duration(text) == dt.timedelta(seconds=seconds)


@pytest.mark.parametrize("text", ["", "soon", "10", "m10", "1 fortnight", "-1h", "1h 3"])
def test_bad_durations(text):
    with pytest.raises(ValueError):
        parse_duration(text)


def test_since_ends_at_the_next_minute_so_the_current_one_is_in():
    times = query_times(since="1h", now=NOW)
    assert (times.start, times.end) == ("2024-05-01T11:34:56Z", "2024-05-01T12:35:00Z")
    whole = query_times(now=NOW)
    assert (whole.start, whole.end) == ("1970-01-01T00:00:00Z", "2024-05-01T12:35:00Z")
    given = query_times(start="2024-05-01T00:00:00+02:00", now=NOW)
    assert given.start == "2024-05-01T00:00:00+02:00"  # sent as written, for the service
    with pytest.raises(RunLogError, match="either --since or --start/--end"):
        query_times(since="1h", end="2024-05-01T00:00:00Z", now=NOW)


def test_local_ranges_read_as_the_service_reads_them():
    assert parse_range("2024-05-01T10:00:59Z", "2024-05-01T12:00:30+02:00") == (
        dt.datetime(2024, 5, 1, 10, 0),
        dt.datetime(2024, 5, 1, 10, 0),
    )
    assert parse_range("10m", "now", now=NOW) == (
        dt.datetime(2024, 5, 1, 12, 24),
        dt.datetime(2024, 5, 1, 12, 34),
    )
    with pytest.raises(RunLogError, match="Start time cannot be greater than the end time"):
        parse_range("2024-05-01T10:01:00Z", "2024-05-01T10:00:00Z")
    with pytest.raises(RunLogError, match="Error while parsing provided time range"):
        parse_range("2024-05-01", "2024-05-02T00:00:00Z")  # no time, no offset


@pytest.mark.parametrize(
    ("text", "utc"),
    [
        ("2024-05-01t10:00:00z", dt.datetime(2024, 5, 1, 10, 0, tzinfo=dt.UTC)),
        ("2024-05-01 12:00:00.5+02:00", dt.datetime(2024, 5, 1, 10, 0, 0, 500000, tzinfo=dt.UTC)),
    ],
)
def test_times_read_as_the_services_rfc3339_parser_reads_them(text, utc):
    assert parse_time(text) == utc


@pytest.mark.parametrize(
    "text", ["2024-05-01T10:00:00+0000", "2024-W18-3T10:00:00Z", "2024-05-01T10:00:00", "soon"]
)
def test_times_the_service_refuses_are_refused_here_first(text):
    with pytest.raises(ValueError, match="is not an RFC 3339 time"):
        parse_time(text)
