"""Injected faults: the next `count` requests matching an interface, a method and a route
fail on purpose. The application applies them (app.py), before the interface's handler,
for every interface alike, and answers in the body of the interface that owns the route.

A fault is one of:

* `status`: answer that status with the interface's error body before the handler runs
  (nothing is written, nothing is rate-counted; a 429 carries `Retry-After`: the fault's
  `retry_after` seconds, 1 by default, 0 for "at once");
* `delay_ms`: hold the request that long, then handle it. Its body is read first, so a
  client that gives up meanwhile still has its request handled and committed - late
  (the disconnect is logged at INFO). With `until_released`, `delay_ms` is the longest
  hold: the request goes on as soon as the fault is released (`Faults.release`, the
  control API's `POST /faults/{id}/release`), so a test orders events without betting
  on a duration;
* `delay_response_ms`: handle the request at once (its write is committed), then hold
  the response that long - committed, answered late;
* `drop_after_commit`: handle the request (its write is committed), then close the
  connection without sending any response - the "did my create happen?" case.

`route` is a route template as the stats show it (`/api/articles/{id}`) or a concrete
path (`/api/articles/1001`); `method` is an HTTP method or `*`; `interface` is the name
of the interface serving the route (found from the route when not given).
"""

from __future__ import annotations

import asyncio
import itertools
import threading
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

KINDS = ("status", "delay_ms", "delay_response_ms", "drop_after_commit")
MAX_DELAY_MS = 60_000


@dataclass
class Fault:
    id: int
    interface: str
    method: str
    route: str
    count: int
    status: int | None = None
    delay_ms: int | None = None
    delay_response_ms: int | None = None
    drop_after_commit: bool = False
    retry_after: int = 1
    until_released: bool = False  # a `delay_ms` ends early when the fault is released

    def __post_init__(self) -> None:
        self.released = asyncio.Event()  # set on the sandbox's loop (`Faults.release`)

    def matches(self, interface: str, method: str, route: str, path: str) -> bool:
        return (
            self.interface == interface
            and self.method in ("*", method)
            and self.route in (route, path)
        )

    def as_json(self) -> dict[str, Any]:
        data = asdict(self)  # fields only: not the event
        # What is unset or off is left out; a `retry_after` of 0 is said.
        return {
            key: value for key, value in data.items() if value is not None and value is not False
        }


def _non_negative(spec: dict[str, Any], key: str, default: int | None = None) -> int | None:
    value = spec.get(key, default)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"{key} must be a non-negative integer")
    return value


def _delay(spec: dict[str, Any], key: str) -> int | None:
    delay = _non_negative(spec, key)
    if delay is not None and delay > MAX_DELAY_MS:
        raise ValueError(f"{key} must be at most {MAX_DELAY_MS}")
    return delay


class Faults:
    def __init__(self) -> None:
        self._pending: list[Fault] = []
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self._holding: dict[int, Fault] = {}  # until_released faults not released yet

    def add(self, spec: object, owner_of: Callable[[str], str | None]) -> Fault:
        """Validate a fault as posted to the control API; ValueError says what is wrong.
        `owner_of(path)` names the interface serving a path (None: no interface)."""
        if not isinstance(spec, dict):
            raise ValueError("the body must be a JSON object")
        method, route = spec.get("method"), spec.get("route")
        if not isinstance(method, str) or not method:
            raise ValueError("method is required (GET, POST, PUT, ... or *)")
        if not isinstance(route, str) or not route.startswith("/"):
            raise ValueError("route is required, a template such as /api/articles/{id}")
        owner = owner_of(route)
        interface = spec.get("interface", owner)
        if owner is None:
            raise ValueError(f"no interface serves {route}")
        if interface != owner:
            raise ValueError(f"{route} is served by interface {owner!r}, not {interface!r}")
        count = _non_negative(spec, "count", 1) or 0
        if count < 1:
            raise ValueError("count must be at least 1")
        kinds = [key for key in KINDS if spec.get(key)]
        if len(kinds) != 1:
            raise ValueError(
                "give exactly one of status, delay_ms, delay_response_ms, drop_after_commit: true"
            )
        status = _non_negative(spec, "status")
        if status is not None and not 400 <= status <= 599:
            raise ValueError("status must be an error status (400-599)")
        drop = spec.get("drop_after_commit", False)
        if drop not in (True, False):
            raise ValueError("drop_after_commit must be true or false")
        retry_after = _non_negative(spec, "retry_after")  # 0: "retry at once"; unset: 1
        until_released = spec.get("until_released", False)
        if until_released not in (True, False):
            raise ValueError("until_released must be true or false")
        if until_released and not spec.get("delay_ms"):
            raise ValueError("until_released goes with delay_ms (the longest hold)")
        fault = Fault(
            id=0,
            interface=owner,
            method=method.upper(),
            route=route,
            count=count,
            status=status,
            delay_ms=_delay(spec, "delay_ms"),
            delay_response_ms=_delay(spec, "delay_response_ms"),
            drop_after_commit=bool(drop),
            retry_after=1 if retry_after is None else retry_after,
            until_released=bool(until_released),
        )
        with self._lock:
            fault.id = next(self._ids)
            self._pending.append(fault)
            if fault.until_released:
                self._holding[fault.id] = fault
        return fault

    def release(self, fault_id: int) -> bool:
        """End the hold of an `until_released` fault: the requests it holds go on, and
        those it takes later are not held. False: no such fault (or already released).
        Called on the sandbox's loop."""
        with self._lock:
            fault = self._holding.pop(fault_id, None)
        if fault is None:
            return False
        fault.released.set()
        return True

    def take(self, interface: str, method: str, route: str, path: str) -> Fault | None:
        """The first pending fault for this request, used up by one."""
        if not self._pending:  # the common case costs no lock
            return None
        with self._lock:
            for fault in self._pending:
                if fault.matches(interface, method, route, path):
                    fault.count -= 1
                    if fault.count == 0:
                        self._pending.remove(fault)
                    return fault
        return None

    def pending(self) -> list[dict[str, Any]]:
        with self._lock:
            return [fault.as_json() for fault in self._pending]

    def clear(self) -> None:
        """Forget the pending faults, and end every hold (what a cleared fault holds goes
        on). Called on the sandbox's loop."""
        with self._lock:
            self._pending.clear()
            holding, self._holding = list(self._holding.values()), {}
        for fault in holding:
            fault.released.set()
