"""An event's time the log service cannot hold, and a batch the service keeps failing on:
the sandbox answers a time whose UTC time is outside the years 1 to 9999 with a 400 that
names the field (never a 500), the shipper sets aside a batch the service fails on
`MAX_FAILED_SENDS` times and ships what comes after it, and the client never sends such
a time."""

from __future__ import annotations

import datetime as dt
import json
import secrets

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.support.runlog_helpers import assert_shipped_once, events, later, ship_with
from toolkit.runlog.shipping import MAX_FAILED_SENDS, REFUSED_NAME, SETTLE

EDGE = "0001-01-01T00:00:00+14:00"  # year 0 in UTC


def _stream() -> str:
    return "t" + secrets.token_hex(6)


def _utc_in_range(moment: dt.datetime, offset_minutes: int) -> bool:
    """Whether `moment` (its wall time at that offset) is a datetime in UTC."""
    try:
        moment.replace(tzinfo=dt.timezone(dt.timedelta(minutes=offset_minutes))).astimezone(dt.UTC)
    except OverflowError:
        return False
    return True


def _text(moment: dt.datetime, offset_minutes: int) -> str:
    sign = "-" if offset_minutes < 0 else "+"
    hours, minutes = divmod(abs(offset_minutes), 60)
    return moment.replace(microsecond=0).isoformat() + f"{sign}{hours:02d}:{minutes:02d}"


def test_a_time_before_year_one_in_utc_is_a_400_naming_the_field(service):
    typed = _stream()  # `time` is a timestamp there already
    assert service.ingest(typed, [{"time": "2024-05-01T12:00:00Z"}]).status_code == 200
    for stream in (typed, _stream()):  # and a stream whose first event it is
        answer = service.ingest(stream, [{"time": EDGE, "n": 1}])
        assert answer.status_code == 400, answer.text
        assert answer.text.startswith("Invalid Request: Failed to create recordbatch")
        assert "whilst decoding field 'time'" in answer.text and EDGE in answer.text
    late = service.ingest(typed, [{"date": "9999-12-31T23:59:59-14:00"}])
    assert late.status_code == 400 and "field 'date'" in late.text


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    moment=st.datetimes(min_value=dt.datetime(1, 1, 1), max_value=dt.datetime(9999, 12, 31)),
    offset=st.integers(min_value=-(23 * 60 + 59), max_value=23 * 60 + 59),
    fresh=st.booleans(),
)
def test_property_any_event_time_is_stored_or_refused_by_name_never_a_500(
    service, moment, offset, fresh
):
    stream = _stream()
    if not fresh:
        assert service.ingest(stream, [{"time": "2024-05-01T12:00:00Z"}]).status_code == 200
    text = _text(moment, offset)
    answer = service.ingest(stream, [{"time": text}])
    if _utc_in_range(moment, offset):
        assert answer.status_code == 200, (text, answer.text)
    else:
        assert answer.status_code == 400, (text, answer.text)
        assert "whilst decoding field 'time'" in answer.text


def test_a_batch_the_service_keeps_failing_on_is_set_aside_and_later_events_ship(
    site, env, forem_env, service, stream, sandbox
):
    """A 500 on every send of one batch: it is sent `MAX_FAILED_SENDS` times (each once
    its absence is settled), then kept in refused-events.jsonl, said, and what came
    after it ships; nothing is sent twice."""
    assert site.run("check", env=forem_env).exit_code in (0, 1)  # events, not shipped
    first = [e for e in events(site.root)]
    sandbox.reset_stats()
    sandbox.fault("POST", "/api/v1/ingest", status=500, count=MAX_FAILED_SENDS)
    reports = [ship_with(site, sandbox, max_events=1000)]
    assert site.run("check", env=forem_env).exit_code in (0, 1)  # later events
    for runs in range(1, MAX_FAILED_SENDS + 1):  # each once the last send has settled
        clock = later(runs * (SETTLE + 1))
        reports.append(ship_with(site, sandbox, max_events=1000, clock=clock))
    assert [r.shipped for r in reports[:MAX_FAILED_SENDS]] == [0] * MAX_FAILED_SENDS
    assert all("500" in (r.problem or "") for r in reports[:MAX_FAILED_SENDS]), reports
    last = reports[-1]
    assert last.ok and last.set_aside == len(first) and last.shipped > 0, last
    assert f"failed {MAX_FAILED_SENDS} times" in (last.refusal or "")
    assert sandbox.count("POST", "/api/v1/ingest", status=500) == MAX_FAILED_SENDS
    kept = (site.root / ".toolkit" / REFUSED_NAME).read_bytes().splitlines()
    assert [json.loads(line)["seq"] for line in kept] == [e["seq"] for e in first]
    later_events = [e for e in events(site.root) if e["run_id"] != first[0]["run_id"]]
    assert_shipped_once(service.shipped(stream), later_events)


def test_an_outage_sets_nothing_aside(site, env, forem_env, service, stream, sandbox):
    """502, 503 and 504 are not the batch's fault: however many, nothing is set aside."""
    assert site.run("check", env=forem_env).exit_code in (0, 1)
    for runs, status in enumerate((502, 503, 504, 503)):
        sandbox.fault("POST", "/api/v1/ingest", status=status)
        report = ship_with(site, sandbox, max_events=1000, clock=later(runs * (SETTLE + 1)))
        assert report.shipped == 0 and report.set_aside == 0, report
    report = ship_with(site, sandbox, max_events=1000, clock=later(5 * (SETTLE + 1)))
    assert report.ok and report.set_aside == 0
    assert_shipped_once(service.shipped(stream), events(site.root))
    assert not (site.root / ".toolkit" / REFUSED_NAME).exists()


def test_a_range_reaching_past_year_one_in_utc_is_the_whole_log(site, env, stream):
    """`--start 0001-01-01T00:00:00+14:00` (year 0 in UTC) reads as the earliest time,
    as the service reads it, locally and remotely: never a traceback."""
    assert site.run("check", env=env).exit_code == 0  # events, shipped
    sql = f'SELECT COUNT(*) AS n FROM "{stream}"'
    for where in ([], ["--local"]):
        result = site.run("logs", *where, sql, "--start", EDGE, "--format", "json", env=env)
        assert result.exit_code == 0, result.output
        assert json.loads(result.stdout)[0]["n"] >= 1
