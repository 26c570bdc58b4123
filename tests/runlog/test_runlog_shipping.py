"""Shipping: with `[logs] base_url` set, each run ships the project's new events to the
stream, every event exactly once, across runs, failed shipments, lost acknowledgements,
crashes between ship and cursor write, and rotation; shipping never fails a run."""

from __future__ import annotations

import json

from tests.support.runlog_helpers import (
    RUNLOG_CONFIG,
    assert_shipped_once,
    events,
    later,
    ship_with,
    shipper,
)
from tests.support.waiting import until
from toolkit.config import load_config
from toolkit.runlog.backlog import CURSOR_NAME, Cursor, Mark
from toolkit.runlog.events import EventLog, EventWriter
from toolkit.runlog.shipping import SETTLE, Shipper


def test_each_run_ships_its_events_once(site, env, service, stream):
    site.post("one", "Shipped post", published=True)
    for args in (["check"], ["publish"], ["publish"], ["build"]):
        result = site.run(*args, env=env)
        assert result.exit_code == 0, result.output
        assert "not shipped" not in result.output
    shipped = service.shipped(stream)
    assert_shipped_once(shipped, events(site.root))
    cursor = json.loads((site.root / ".toolkit" / CURSOR_NAME).read_text())
    (mark,) = cursor["targets"].values()
    assert mark["pending"] is None and mark["shipped"] == len(shipped)


def test_without_a_log_service_a_run_only_appends(site, forem_env, sandbox):
    site.post("one", "Local only", published=True)
    sandbox.reset_stats()
    assert site.run("publish", env=forem_env).exit_code == 0
    assert site.run("publish", env=forem_env).exit_code == 0
    assert sandbox.count(interface="logs") == 0
    assert not (site.root / ".toolkit" / CURSOR_NAME).exists()
    assert any(e["event"] == "post" for e in events(site.root))


def test_a_failed_shipment_is_one_line_and_the_next_run_ships_it(
    site, env, service, stream, sandbox
):
    site.post("one", "Failed shipment", published=True)
    sandbox.fault("POST", "/api/v1/ingest", status=503)
    first = site.run("publish", env=env)
    assert first.exit_code == 0, first.output  # shipping never fails the run
    warnings = [line for line in first.output.splitlines() if "not shipped" in line]
    assert len(warnings) == 1 and "503" in warnings[0]
    assert service.query(f'SELECT 1 FROM "{stream}"').status_code == 400  # nothing yet
    second = site.run("check", env=env)
    assert "not shipped" not in second.output
    shipped = service.shipped(stream)
    assert len(shipped) == len(set(shipped))
    assert_shipped_once(shipped, events(site.root))  # the first run's came too


def test_a_lost_acknowledgement_is_not_shipped_twice(site, env, service, stream, sandbox):
    """The service stores the batch and the connection drops before its answer: the next
    run asks the service before sending it again."""
    site.post("one", "Lost answer", published=True)
    sandbox.fault("POST", "/api/v1/ingest", drop_after_commit=True)
    first = site.run("publish", env=env)
    assert first.exit_code == 0 and "not shipped" in first.output
    stored = service.shipped(stream)
    assert stored  # it did arrive
    pending = json.loads((site.root / ".toolkit" / CURSOR_NAME).read_text())
    assert next(iter(pending["targets"].values()))["pending"] is not None
    assert site.run("check", env=env).exit_code == 0
    shipped = service.shipped(stream)
    assert len(shipped) == len(set(shipped)) and set(stored) <= set(shipped)
    assert_shipped_once(shipped, events(site.root))


class Crash(BaseException):
    """The process dies here."""


class CrashingCursor(Cursor):
    """Dies when it is about to record that the service acknowledged a batch."""

    def save(self, target: str, mark: Mark) -> None:
        if mark.pending is None and mark.position is not None:
            raise Crash()
        super().save(target, mark)


class CrashBeforeSending(Cursor):
    """Dies right after marking a batch as pending, before it is sent."""

    def save(self, target: str, mark: Mark) -> None:
        super().save(target, mark)
        if mark.pending is not None:
            raise Crash()


def crash(shipping: Shipper) -> None:
    try:
        shipping.ship()
    except Crash:
        return
    finally:
        shipping.client.close()
    raise AssertionError("the shipper did not crash")


def test_a_crash_between_ship_and_cursor_write_loses_nothing_and_repeats_nothing(
    site, env, forem_env, service, stream, sandbox
):
    site.post("one", "Crash post", published=True)
    assert site.run("publish", env=forem_env).exit_code == 0  # events, not shipped yet
    crash(shipper(site, sandbox, CrashingCursor))
    acknowledged = service.shipped(stream)
    assert len(acknowledged) == 2  # the first batch, acknowledged, not in the cursor
    assert site.run("check", env=env).exit_code == 0  # the next run ships the rest
    shipped = service.shipped(stream)
    assert len(shipped) == len(set(shipped))
    assert_shipped_once(shipped, events(site.root))


def test_a_crash_before_sending_sends_the_batch_once_its_absence_is_settled(
    site, env, forem_env, service, stream, sandbox
):
    """A batch marked pending may have left: until it left more than SETTLE seconds ago,
    the service not holding it does not mean it will not (a request stored late)."""
    site.post("one", "Crash before", published=True)
    assert site.run("publish", env=forem_env).exit_code == 0
    crash(shipper(site, sandbox, CrashBeforeSending))
    assert service.query(f'SELECT 1 FROM "{stream}"').status_code == 400
    result = site.run("check", env=env)
    assert result.exit_code == 0
    assert "is not known yet" in result.output and "nothing is sent again" in result.output
    assert service.query(f'SELECT 1 FROM "{stream}"').status_code == 400  # nothing sent
    settled = shipper(site, sandbox, Cursor, clock=later(SETTLE + 1))
    try:
        report = settled.ship()
    finally:
        settled.client.close()
    assert report.ok and report.shipped > 0, report
    shipped = service.shipped(stream)
    assert len(shipped) == len(set(shipped))
    assert_shipped_once(shipped, events(site.root))


def test_shipping_follows_the_log_through_rotation(site, env, service, stream, sandbox):
    """The cursor finds its event again after the files were renamed by rotation."""
    config = load_config(site.root / "toolkit.toml", env={})
    small = EventLog(config.state_dir, max_bytes=3000, keep=20)
    writer = EventWriter(small, "filler", "check", "0")
    for index in range(30):
        writer.emit("post", post=f"content/{index}.md", action="unchanged")
    assert site.run("check", env=env).exit_code == 0  # ships all, cursor in the newest file
    for index in range(30, 90):
        writer.emit("post", post=f"content/{index}.md", action="unchanged")  # rotates
    assert len(small.files()) > 3
    assert site.run("check", env=env).exit_code == 0
    shipped = service.shipped(stream)
    assert len(shipped) == len(set(shipped))
    assert_shipped_once(shipped, events(site.root))


def test_events_rotated_away_before_shipping_are_reported(site, env, service, stream):
    config = load_config(site.root / "toolkit.toml", env={})
    assert site.run("check", env=env).exit_code == 0  # the cursor stands in events.jsonl
    small = EventLog(config.state_dir, max_bytes=1000, keep=1)
    writer = EventWriter(small, "flood", "check", "0")
    for index in range(60):
        writer.emit("post", post=f"content/{index}.md", action="unchanged")
    result = site.run("check", env=env)
    assert result.exit_code == 0
    assert "rotated before all of its events were shipped" in result.output
    shipped = service.shipped(stream)
    assert len(shipped) == len(set(shipped))


def test_lines_that_are_not_events_are_never_shipped(site, env, service, stream):
    assert site.run("check", env=env).exit_code == 0
    with open(site.root / ".toolkit" / "events.jsonl", "ab") as handle:
        handle.write(b'{"run_id": "x", "seq": \n')  # a line a crash cut short
        handle.write(b"not json at all\n")
    assert site.run("check", env=env).exit_code == 0
    shipped = service.shipped(stream)
    assert len(shipped) == len(set(shipped))
    assert_shipped_once(shipped, events(site.root))


def test_one_run_ships_at_a_time(site, env, service, stream, sandbox):
    """A run that finds another one shipping leaves its events to the next run."""
    import fcntl
    import os

    assert site.run("check", env=env).exit_code == 0
    busy = shipper(site, sandbox, Cursor)
    busy.lock_wait = 0
    fd = os.open(site.root / ".toolkit" / "ship.lock", os.O_RDWR | os.O_CREAT)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        report = busy.ship()
    finally:
        os.close(fd)
        busy.client.close()
    assert (
        report.problem
        == ("another toolkit run is shipping the run log; these events go with the next run")
        and report.shipped == 0
    )
    assert site.run("check", env=env).exit_code == 0
    assert_shipped_once(service.shipped(stream), events(site.root))


def test_another_stream_gets_the_whole_log(site, env, service, stream):
    assert site.run("check", env=env).exit_code == 0
    assert site.run("check", env={**env}).exit_code == 0
    other = stream + "b"
    (site.root / "toolkit.toml").write_text(
        (site.root / "toolkit.toml").read_text().replace(stream, other)
    )
    assert site.run("check", env=env).exit_code == 0
    found = events(site.root)
    assert_shipped_once(service.shipped(other), found)  # every event, from the first one
    cursor = json.loads((site.root / ".toolkit" / CURSOR_NAME).read_text())
    assert sorted(key.split()[-1] for key in cursor["targets"]) == sorted([stream, other])


def wait_for_rows(service, stream: str, count: int) -> None:
    """Wait (at most 30 s) until the stream holds `count` events: a request stored late."""

    def held() -> bool:
        answer = service.query(f'SELECT COUNT(*) AS n FROM "{stream}"')
        return answer.status_code == 200 and answer.json() == [{"n": count}]

    until(held, timeout=30, interval=0.05, what=f"the stream holding {count} events")


def test_a_request_stored_after_the_client_gave_up_is_not_sent_again(
    site, env, forem_env, service, stream, sandbox
):
    """The service holds the ingest past the client's time and stores it late; the next
    shipment, while it is still held, finds nothing yet: that is not "absent", so nothing
    is re-sent."""
    site.post("one", "Stored late", published=True)
    assert site.run("publish", env=forem_env).exit_code == 0
    held = sandbox.fault("POST", "/api/v1/ingest", delay_ms=60_000, until_released=True)
    first = ship_with(site, sandbox, timeout=0.5)
    assert first.shipped == 0 and "timeout" in (first.problem or "")
    second = ship_with(site, sandbox)  # the held request is not stored yet
    assert second.shipped == 0 and "is not known yet" in (second.problem or "")
    sandbox.release(held)
    wait_for_rows(service, stream, 2)  # the first batch (2 events), stored late
    third = ship_with(site, sandbox)
    assert third.ok and third.shipped > 0, third
    shipped = service.shipped(stream)
    assert len(shipped) == len(set(shipped)), "an event was stored twice"
    assert_shipped_once(shipped, events(site.root))


def test_a_failed_check_is_unknown_and_nothing_is_sent_again(site, env, service, stream, sandbox):
    """The batch was stored but its answer lost; the query asking for it is refused: not
    a clear "absent", so the batch is not sent again until a later run finds it."""
    site.post("one", "Check refused", published=True)
    sandbox.fault("POST", "/api/v1/ingest", drop_after_commit=True)
    assert site.run("publish", env=env).exit_code == 0
    stored = service.shipped(stream)
    assert stored
    sandbox.fault("POST", "/api/v1/query", status=400)
    refused = site.run("check", env=env)
    assert refused.exit_code == 0 and "is not known yet" in refused.output
    assert service.shipped(stream) == stored  # nothing sent again
    assert site.run("check", env=env).exit_code == 0
    shipped = service.shipped(stream)
    assert len(shipped) == len(set(shipped))
    assert_shipped_once(shipped, events(site.root))


def test_a_lost_acknowledgement_on_a_mixed_case_stream_is_not_shipped_twice(
    make_project, env, service, sandbox
):
    """The check names the stream quoted: `FROM MixedCase` would look for `mixedcase`."""
    import secrets

    stream = "Mixed" + secrets.token_hex(4)
    site = make_project(RUNLOG_CONFIG.format(stream=stream))
    site.post("one", "Mixed case", published=True)
    sandbox.fault("POST", "/api/v1/ingest", drop_after_commit=True)
    assert site.run("publish", env=env).exit_code == 0
    assert service.shipped(stream)
    assert site.run("check", env=env).exit_code == 0
    shipped = service.shipped(stream)
    assert len(shipped) == len(set(shipped)), "an event was stored twice"
    assert_shipped_once(shipped, events(site.root))


BAD_EVENT = b'{"time": "not a time", "run_id": "bad", "seq": 0, "command": "check", "event": "run"}'


def test_an_event_the_service_refuses_is_set_aside_once_and_the_rest_ship(
    site, env, service, stream
):
    assert site.run("check", env=env).exit_code == 0  # `time` is a timestamp there now
    with open(site.root / ".toolkit" / "events.jsonl", "ab") as handle:
        handle.write(BAD_EVENT + b"\n")
    first = site.run("check", env=env)
    assert first.exit_code == 0
    said = " ".join(first.output.split())  # the warning may be wrapped
    assert said.count("refused 1 event(s)") == 1 and "not shipped" not in said
    assert "mismatch in datatype" in said and ".toolkit/refused-events.jsonl" in said
    second = site.run("check", env=env)
    assert second.exit_code == 0 and "refused" not in second.output  # said once
    kept = (site.root / ".toolkit" / "refused-events.jsonl").read_bytes()
    assert kept == BAD_EVENT + b"\n"
    shipped = service.shipped(stream)
    assert ("bad", 0) not in shipped
    assert_shipped_once(shipped, [e for e in events(site.root) if e["run_id"] != "bad"])


def test_many_refused_events_are_sorted_out_over_several_shipments(
    site, env, service, stream, sandbox
):
    """A shipment spends a bounded number of refused requests, and each one makes progress:
    the next shipments carry on until every refused event is set aside."""
    assert site.run("check", env=env).exit_code == 0
    with open(site.root / ".toolkit" / "events.jsonl", "ab") as handle:
        for seq in range(6):
            handle.write(BAD_EVENT.replace(b'"seq": 0', b'"seq": %d' % seq) + b"\n")
    reports = []
    for _ in range(20):
        reports.append(ship_with(site, sandbox, max_events=100, max_refused=2))
        if reports[-1].ok:
            break
    assert reports[-1].ok and len(reports) > 1, reports
    assert "refused" in (reports[0].problem or "")
    assert sum(report.set_aside for report in reports) == 6
    kept = (site.root / ".toolkit" / "refused-events.jsonl").read_bytes().splitlines()
    assert sorted(kept) == sorted(
        BAD_EVENT.replace(b'"seq": 0', b'"seq": %d' % seq) for seq in range(6)
    )
    assert_shipped_once(
        service.shipped(stream), [e for e in events(site.root) if e["run_id"] != "bad"]
    )


def test_a_request_the_service_refuses_sets_nothing_aside(make_project, env, service):
    """A 400 about the request (here its stream's name), not the events: nothing is set
    aside, the shipment stops saying why."""

    site = make_project(RUNLOG_CONFIG.format(stream="bad name"))
    result = site.run("check", env=env)
    assert result.exit_code == 0
    said = " ".join(result.output.split())  # the warning may be wrapped
    assert "not shipped" in said and "Stream name cannot contain whitespace" in said
    assert not (site.root / ".toolkit" / "refused-events.jsonl").exists()
