"""Interface E in the sandbox, over real HTTP: time ranges truncated to the minute,
DataFusion SQL whose answers equal a plain Python computation over the same events (at
100,000 events too), and Parquet storage that survives a restart."""

from __future__ import annotations

import datetime as dt
import random
from collections import Counter

import pytest

from tests.support.runlog_helpers import LogService, ingest
from toolkit_sandbox.server import SandboxServer

# Every test here starts a process or opens a socket (tests/support/plugin.py).
pytestmark = pytest.mark.e2e

ROUTES = ["/api/articles", "/api/articles/{id}", "/api/articles/me/all", "/api/comments"]


def synthetic(count: int, seed: int = 1, run: str = "r") -> list[dict]:
    rng = random.Random(seed)
    base = dt.datetime(2024, 5, 1, 3, 0, tzinfo=dt.UTC)
    return [
        {
            "time": (base + dt.timedelta(milliseconds=250 * index)).strftime(
                "%Y-%m-%dT%H:%M:%S.%f"
            )[:-3]
            + "Z",
            "run_id": f"{run}{index // 50}",
            "seq": index % 50,
            "command": "publish",
            "event": "request",
            "method": rng.choice(["GET", "PUT", "POST"]),
            "route": rng.choice(ROUTES),
            "status": rng.choice([200, 200, 201, 404, 422, 429, 500]),
            "duration_ms": round(rng.random() * 900, 3),
        }
        for index in range(count)
    ]


def test_a_start_equal_to_the_end_after_truncation_is_an_empty_range(service, stream):
    ingest(service, stream, [{"a": 1}])
    start, end = "2024-05-01T00:00:10Z", "2024-05-01T00:00:50Z"  # the same minute
    assert service.rows(f"SELECT * FROM {stream}", start, end) == []


def test_time_ranges_filter_on_p_timestamp_truncated_to_the_minute(service, stream):
    ingest(service, stream, [{"a": 1}, {"a": 2}])
    (stamp,) = {row["p_timestamp"] for row in service.rows(f"SELECT p_timestamp FROM {stream}")}
    moment = dt.datetime.fromisoformat(stamp).replace(tzinfo=dt.UTC)
    minute = moment.replace(second=0, microsecond=0)

    def count(start: dt.datetime | str, end: dt.datetime | str) -> int:
        text = [
            value if isinstance(value, str) else value.isoformat()  # RFC 3339: `+00:00`
            for value in (start, end)
        ]
        rows = service.rows(f"SELECT COUNT(*) AS n FROM {stream}", *text)
        return rows[0]["n"]

    one = dt.timedelta(minutes=1)
    assert count(minute, minute + one) == 2  # start included
    assert count(minute - one, minute) == 0  # end excluded
    assert count(minute + dt.timedelta(seconds=59), minute + one) == 2  # start truncated
    assert count(minute - one, minute + dt.timedelta(seconds=59)) == 0  # end truncated
    assert count(minute.astimezone(dt.timezone(dt.timedelta(hours=2))), minute + one) == 2
    # Relative: "now" and a duration, the end truncated too (the current minute is left out).
    while True:
        before = dt.datetime.now(dt.UTC)
        rows = service.rows(f"SELECT COUNT(*) AS n FROM {stream}", "1h", "now")
        after = dt.datetime.now(dt.UTC)
        if before.replace(second=0, microsecond=0) == after.replace(second=0, microsecond=0):
            break  # a minute did not turn during the query
    now_minute = before.replace(second=0, microsecond=0)
    expected = 2 if now_minute - dt.timedelta(hours=1) <= moment < now_minute else 0
    assert rows == [{"n": expected}]
    assert service.rows(f"SELECT COUNT(*) AS n FROM {stream}", "2h", "now") in (
        [{"n": 0}],
        [{"n": 2}],
    )


def test_query_results_equal_a_plain_python_computation(service, stream):
    events = synthetic(3000, seed=7)
    ingest(service, stream, events, batch=700)
    by_status = service.rows(
        f"SELECT status, COUNT(*) AS n, MAX(duration_ms) AS slowest "
        f"FROM {stream} GROUP BY status ORDER BY status"
    )
    counts = Counter(e["status"] for e in events)
    assert by_status == [
        {
            "status": float(s),
            "n": counts[s],
            "slowest": max(e["duration_ms"] for e in events if e["status"] == s),
        }
        for s in sorted(counts)
    ]
    routes = service.rows(
        f"SELECT route, method, COUNT(*) AS n, AVG(duration_ms) AS mean FROM "
        f"{stream} WHERE status >= 400 GROUP BY route, method "
        "ORDER BY route, method"
    )
    failed = [e for e in events if e["status"] >= 400]
    groups = Counter((e["route"], e["method"]) for e in failed)
    assert [(r["route"], r["method"], r["n"]) for r in routes] == sorted(
        (route, method, n) for (route, method), n in groups.items()
    )
    for row in routes:
        durations = [
            e["duration_ms"]
            for e in failed
            if (e["route"], e["method"]) == (row["route"], row["method"])
        ]
        assert row["mean"] == pytest.approx(sum(durations) / len(durations))
    # A range over the events' own `time` field (a timestamp, as its name and value say).
    window = service.rows(
        f"SELECT COUNT(*) AS n FROM {stream} WHERE time >= "
        "'2024-05-01T03:05:00' AND time < '2024-05-01T03:10:00'"
    )
    low, high = dt.datetime(2024, 5, 1, 3, 5), dt.datetime(2024, 5, 1, 3, 10)
    assert window == [
        {"n": sum(low <= dt.datetime.fromisoformat(e["time"][:-1]) < high for e in events)}
    ]


@pytest.mark.untraced  # the lines its server runs are traced; the 100,000 events made here are not
def test_a_stream_of_100000_events_answers_correctly(service, stream):
    events = synthetic(100_000, seed=3)
    ingest(service, stream, events, batch=25_000)
    rows = service.rows(f"SELECT route, status, COUNT(*) AS n FROM {stream} GROUP BY route, status")
    expected = Counter((e["route"], float(e["status"])) for e in events)
    assert {(r["route"], r["status"]): r["n"] for r in rows} == expected
    (total,) = service.rows(
        f"SELECT COUNT(*) AS n, SUM(duration_ms) AS total, "
        f"COUNT(DISTINCT run_id) AS runs FROM {stream}"
    )
    assert total["n"] == 100_000 and total["runs"] == 2000
    assert total["total"] == pytest.approx(sum(e["duration_ms"] for e in events))


def test_streams_are_parquet_files_that_survive_a_restart(tmp_path):
    db = tmp_path / "sandbox.db"
    events = synthetic(500, seed=5)
    with SandboxServer(db_path=db) as first:
        logs = LogService(first)
        ingest(logs, "kept", events, batch=200)
        before = logs.rows("SELECT * FROM kept ORDER BY p_timestamp, seq, run_id")
        logs.http.close()
    files = sorted((tmp_path / "sandbox.data" / "logs" / "kept").rglob("*.parquet"))
    assert len(files) == 3
    assert all(
        path.relative_to(tmp_path / "sandbox.data" / "logs" / "kept").parts[0].startswith("date=")
        for path in files
    )
    with SandboxServer(db_path=db) as second:
        logs = LogService(second)
        assert logs.rows("SELECT * FROM kept ORDER BY p_timestamp, seq, run_id") == before
        described = logs.http.get("/__sandbox/logs/streams").json()["streams"]
        assert described[0]["name"] == "kept" and described[0]["rows"] == 500
        logs.http.post("/__sandbox/reset")
        assert logs.http.get("/api/v1/logstream").json() == []  # a reset empties the service
        logs.http.close()


def test_memory_mode_keeps_its_files_in_a_temporary_folder():
    with SandboxServer() as sandbox:
        logs = LogService(sandbox)
        ingest(logs, "temp", [{"a": 1}])
        folder = logs.http.get("/__sandbox/logs/streams").json()["folder"]
        logs.http.close()
    import os

    assert not os.path.exists(folder)
