"""Reading a project's run log back, and speaking to the sandbox's log service."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

import httpx

from toolkit.clients.logs import LogsClient
from toolkit.config import Secret, load_config
from toolkit.runlog.backlog import CURSOR_NAME, Cursor
from toolkit.runlog.events import EventLog
from toolkit.runlog.run import target_of
from toolkit.runlog.shipping import Shipper
from toolkit.tls import shared_context
from toolkit_sandbox.logs.http import PASSWORD, USERNAME

# A project's toolkit.toml pointed at the sandbox (a 1 s rate window) with its own stream.
RUNLOG_CONFIG = """
[site]
title = "Run log site"
url = "https://example.com/blog"

[forem]
rate_window = 1

[logs]
stream = "{stream}"
"""


def event_lines(root: Path) -> list[bytes]:
    """Every line of a project's run log, oldest file first."""
    folder = root / ".toolkit"
    rotated = sorted(folder.glob("events.*.jsonl"), key=lambda p: -int(p.name.split(".")[1]))
    lines: list[bytes] = []
    for path in [*rotated, folder / "events.jsonl"]:
        if path.exists():
            lines += [line for line in path.read_bytes().splitlines() if line.strip()]
    return lines


def events(root: Path) -> list[dict[str, Any]]:
    """Every event of a project's run log, oldest first; lines that are not JSON objects
    are left out."""
    found = []
    for line in event_lines(root):
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if isinstance(event, dict):
            found.append(event)
    return found


def assert_shipped_once(shipped: list[tuple[str, int]], found: list[dict[str, Any]]) -> None:
    """Every event of the log is in the stream exactly once, but what the last run recorded
    after its end (its shipment's own requests and record, which the next run ships)."""
    assert len(shipped) == len(set(shipped)), "an event was shipped twice"
    local = {(e["run_id"], e["seq"]) for e in found}
    assert set(shipped) <= local
    last = found[-1]["run_id"]
    end = max(
        e["seq"]
        for e in found
        if e["run_id"] == last and e["event"] == "run" and e.get("action") == "end"
    )
    missing = local - set(shipped)
    assert all(run_id == last and seq > end for run_id, seq in missing), sorted(missing)


# A time range that holds every record (both times are required by the service).
EVER_START, EVER_END = "1970-01-01T00:00:00Z", "2200-01-01T00:00:00Z"


class LogService:
    """The sandbox's log service, spoken to directly (Basic auth): its requests handed to
    the sandbox's application without a socket (the same answers and records), or with
    `in_process=False` over loopback HTTP."""

    def __init__(self, sandbox, *, in_process: bool = True):
        self.sandbox = sandbox
        self.http = httpx.Client(
            base_url=sandbox.base_url,
            auth=(USERNAME, PASSWORD),
            timeout=60,
            verify=shared_context(),
            transport=sandbox.transport() if in_process else None,
        )

    def query(
        self, sql: str, start: str = EVER_START, end: str = EVER_END, **params: str
    ) -> httpx.Response:
        """`POST /api/v1/query` (the SQL names the stream; both times are required)."""
        body: dict[str, Any] = {"query": sql, "startTime": start, "endTime": end}
        return self.http.post("/api/v1/query", json=body, params=params)

    def rows(self, sql: str, start: str = EVER_START, end: str = EVER_END) -> list[dict[str, Any]]:
        response = self.query(sql, start, end)
        assert response.status_code == 200, response.text
        return response.json()

    def ingest(self, stream: str, records: Any) -> httpx.Response:
        return self.http.post(
            "/api/v1/ingest",
            content=json.dumps(records),
            headers={"X-P-Stream": stream, "Content-Type": "application/json"},
        )

    def shipped(self, stream: str) -> list[tuple[str, int]]:
        """`(run_id, seq)` of every event in the stream, as many times as it is there."""
        rows = self.rows(f'SELECT run_id, seq FROM "{stream}"')
        return sorted((row["run_id"], int(row["seq"])) for row in rows)


def ingest(service: LogService, stream: str, records: list[dict], batch: int = 20_000) -> None:
    """`records` into `stream`, `batch` at a time, each batch answered 200."""
    for start in range(0, len(records), batch):
        response = service.ingest(stream, records[start : start + batch])
        assert response.status_code == 200, response.text


def shipper(site, sandbox, cursor_class: type[Cursor], **options) -> Shipper:
    config = load_config(
        site.root / "toolkit.toml",
        env={
            "LOGS_BASE_URL": sandbox.base_url,
            "LOGS_USERNAME": USERNAME,
            "LOGS_PASSWORD": PASSWORD,
        },
    )
    client = LogsClient(
        sandbox.base_url, Secret(USERNAME), Secret(PASSWORD), timeout=options.pop("timeout", None)
    )
    return Shipper(
        EventLog(config.state_dir),
        cursor_class(config.state_dir / CURSOR_NAME),
        client,
        config.logs.stream,
        target_of(config),
        **{"max_events": 2, **options},
    )


def later(seconds: float):
    """A clock `seconds` ahead of now."""
    return lambda: dt.datetime.now(dt.UTC) + dt.timedelta(seconds=seconds)


def ship_with(site, sandbox, **options):
    """One shipment by a shipper of its own (options as `shipper`'s); its report."""
    shipping = shipper(site, sandbox, Cursor, **options)
    try:
        return shipping.ship()
    finally:
        shipping.client.close()
