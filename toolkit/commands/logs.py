"""`logs`: SQL over the run log, on the log service or (`local`) over `.toolkit/events.jsonl`.

The service gets `POST /api/v1/query` with the SQL and the time range, both times always
(`toolkit.runlog.times`: absolute times, the end at the start of the next minute so what
was shipped a moment ago is in). Locally the same SQL runs on DataFusion over the event
files, the stream's name being the table's (`toolkit.runlog.local`). Either way the answer
is a `LogQuery`: the columns in order and every record with every column.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from toolkit.clients import Clients
from toolkit.config import Config
from toolkit.redact import redact_url
from toolkit.runlog.local import query_events, require_engine
from toolkit.runlog.run import recorded
from toolkit.runlog.times import query_times

__all__ = ["LogQuery", "query"]


@dataclass
class LogQuery:
    sql: str
    stream: str
    local: bool
    source: str  # the service's URL (credentials hidden), or the local log's file
    start: str | None  # the time range as sent (None: the whole log)
    end: str | None
    fields: list[str] = field(default_factory=list)
    records: list[dict[str, Any]] = field(default_factory=list)
    skipped: int = 0  # local lines that are not events


def query(
    config: Config,
    sql: str,
    *,
    stream: str | None = None,
    since: str | None = None,
    start: str | None = None,
    end: str | None = None,
    local: bool = False,
    memory_limit: int | None = None,
    row_limit: int | None = None,
) -> LogQuery:
    """Run `sql` over the stream (default `[logs] stream`) within `--since` or `--start`/
    `--end` (default: the whole log); raises `RunLogError` for a bad range or, locally, a
    bad query, and the client's `ApiError` for what the service refuses. Locally, the query
    holds at most `memory_limit` bytes; either way at most `row_limit` records are kept."""
    name = stream or config.logs.stream
    everything = since is None and start is None and end is None
    times = query_times(since=since, start=start, end=end)
    if local:
        require_engine()
    with recorded(config, "logs") as run:
        if local:
            with run.files.reading() as files:
                answer = query_events(
                    files,
                    sql,
                    name,
                    start=None if everything else times.start,
                    end=None if everything else times.end,
                    memory_limit=memory_limit,
                    row_limit=row_limit,
                )
            return LogQuery(
                sql,
                name,
                True,
                config.relative(run.files.current),
                None if everything else times.start,
                None if everything else times.end,
                answer.fields,
                answer.records,
                answer.skipped,
            )
        with Clients.of(config, run).logs() as client:
            remote = client.query(sql, times.start, times.end)
        return LogQuery(
            sql,
            name,
            False,
            redact_url(client.base_url),
            times.start,
            times.end,
            remote.fields,
            remote.records[:row_limit],
        )
