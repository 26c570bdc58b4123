"""Injected faults: the next `count` requests matching a method and route fail on purpose.

A fault is one of:

* `status`: answer that status with the API's error body before the handler runs
  (nothing is written, nothing is rate-counted; a 429 carries `Retry-After`);
* `delay_ms`: wait that long, then handle the request normally;
* `drop_after_commit`: handle the request (its write is committed), then close the
  connection without sending any response - the "did my create happen?" case.

`route` is a route template as the stats show it (`/api/articles/{id}`) or a concrete
path (`/api/articles/1001`); `method` is an HTTP method or `*`.
"""

from __future__ import annotations

import itertools
import threading
from dataclasses import asdict, dataclass


@dataclass
class Fault:
    id: int
    method: str
    route: str
    count: int
    status: int | None = None
    delay_ms: int | None = None
    drop_after_commit: bool = False
    retry_after: int = 1

    def matches(self, method: str, route: str, path: str) -> bool:
        return self.method in ("*", method) and self.route in (route, path)

    def as_json(self) -> dict:
        data = asdict(self)
        return {key: value for key, value in data.items() if value not in (None, False)}


def _positive_int(spec: dict, key: str, default: int | None = None) -> int | None:
    value = spec.get(key, default)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"{key} must be a non-negative integer")
    return value


class Faults:
    def __init__(self) -> None:
        self._pending: list[Fault] = []
        self._ids = itertools.count(1)
        self._lock = threading.Lock()

    def add(self, spec: object) -> Fault:
        """Validate a fault as posted to the control API; ValueError says what is wrong."""
        if not isinstance(spec, dict):
            raise ValueError("the body must be a JSON object")
        method, route = spec.get("method"), spec.get("route")
        if not isinstance(method, str) or not method:
            raise ValueError("method is required (GET, POST, PUT, ... or *)")
        if not isinstance(route, str) or not route.startswith("/"):
            raise ValueError("route is required, a template such as /api/articles/{id}")
        count = _positive_int(spec, "count", 1) or 0
        if count < 1:
            raise ValueError("count must be at least 1")
        kinds = [key for key in ("status", "delay_ms", "drop_after_commit") if spec.get(key)]
        if len(kinds) != 1:
            raise ValueError("give exactly one of status, delay_ms, drop_after_commit: true")
        status = _positive_int(spec, "status")
        if status is not None and not 400 <= status <= 599:
            raise ValueError("status must be an error status (400-599)")
        delay = _positive_int(spec, "delay_ms")
        if delay is not None and delay > 60_000:
            raise ValueError("delay_ms must be at most 60000")
        drop = spec.get("drop_after_commit", False)
        if drop not in (True, False):
            raise ValueError("drop_after_commit must be true or false")
        retry_after = _positive_int(spec, "retry_after", 1) or 1
        with self._lock:
            fault = Fault(
                id=next(self._ids),
                method=method.upper(),
                route=route,
                count=count,
                status=status,
                delay_ms=delay,
                drop_after_commit=bool(drop),
                retry_after=retry_after,
            )
            self._pending.append(fault)
        return fault

    def take(self, method: str, route: str, path: str) -> Fault | None:
        """The first pending fault for this request, used up by one."""
        if not self._pending:  # the common case costs no lock
            return None
        with self._lock:
            for fault in self._pending:
                if fault.matches(method, route, path):
                    fault.count -= 1
                    if fault.count == 0:
                        self._pending.remove(fault)
                    return fault
        return None

    def pending(self) -> list[dict]:
        with self._lock:
            return [fault.as_json() for fault in self._pending]

    def clear(self) -> None:
        with self._lock:
            self._pending.clear()
