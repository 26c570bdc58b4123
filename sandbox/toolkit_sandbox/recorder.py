"""Every request to an interface, recorded: counts by interface and route template for
the stats endpoint, and a bounded list of request records that a log shipper can read or
subscribe to.

A record's field names are shared with toolkit's run log where they overlap (`time`,
`method`, `route`, `status`, `duration_ms`; the run log writes `time` as an RFC 3339
timestamp and keeps no concrete `path`); `interface` names the interface that owned the
path (None: no interface did, the neutral 404) and `caller` is who called as that
interface identifies them (Forem: the API key's id, never the key).

Requests to the control API (`/__sandbox/...`) are not recorded, so reading the stats
does not change them.
"""

from __future__ import annotations

import logging
import threading
from collections import Counter, deque
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any, TypedDict

log = logging.getLogger("toolkit_sandbox")

UNMATCHED = "<unmatched>"  # the route of a request no route matched


class RouteCount(TypedDict):
    """One line of the stats: how many requests got `status` on a route."""

    interface: str | None
    method: str
    route: str
    status: int
    count: int


@dataclass(frozen=True)
class RequestRecord:
    seq: int
    time: float  # seconds since the epoch, when the request arrived
    interface: str | None
    method: str
    route: str
    path: str
    status: int
    duration_ms: float
    caller: int | str | None
    dropped: bool = False  # a drop_after_commit fault closed the connection

    def as_json(self) -> dict[str, Any]:
        return asdict(self)


class Recorder:
    def __init__(self, capacity: int = 10_000):
        self._counts: Counter[tuple[str | None, str, str, int]] = Counter()
        self._records: deque[RequestRecord] = deque(maxlen=capacity)
        self._seq = 0
        self._lock = threading.Lock()
        self.listeners: list[Callable[[RequestRecord], None]] = []

    def record(
        self,
        *,
        started: float,
        interface: str | None,
        method: str,
        route: str,
        path: str,
        status: int,
        duration: float,
        caller: int | str | None = None,
        dropped: bool = False,
    ) -> RequestRecord:
        with self._lock:
            self._seq += 1
            record = RequestRecord(
                seq=self._seq,
                time=started,
                interface=interface,
                method=method,
                route=route,
                path=path,
                status=status,
                duration_ms=round(duration * 1000, 3),
                caller=caller,
                dropped=dropped,
            )
            self._counts[(interface, method, route, status)] += 1
            self._records.append(record)
        if log.isEnabledFor(logging.INFO):
            log.info(
                "%s %s %s %s %.1fms%s",
                interface or "-",
                method,
                path,
                status,
                duration * 1000,
                " (dropped)" if dropped else "",
            )
        for listener in list(self.listeners):
            try:
                listener(record)
            except Exception:  # a broken listener must never break a request
                log.exception("request listener failed")
        return record

    def stats(self) -> list[RouteCount]:
        with self._lock:
            items = sorted(
                self._counts.items(),
                key=lambda item: (item[0][2], item[0][1], item[0][3], item[0][0] or ""),
            )
        return [
            RouteCount(interface=interface, method=method, route=route, status=status, count=count)
            for (interface, method, route, status), count in items
        ]

    def reset_stats(self) -> None:
        with self._lock:
            self._counts.clear()

    def records(self, after: int = 0, limit: int = 1000) -> list[dict[str, Any]]:
        with self._lock:
            selected = [record for record in self._records if record.seq > after]
        return [record.as_json() for record in selected[:limit]]

    @property
    def last_seq(self) -> int:
        return self._seq
