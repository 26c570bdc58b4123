"""The sandbox as one ASGI application, composed of emulated interfaces.

`default_interfaces()` lists them, one line each. `create_app` composes them with the
generic layers every interface shares (interface.py says what an interface declares):

1. the control API under `/__sandbox` (control.py plus each interface's control routes
   under `/__sandbox/<name>/`), answering only requests addressed to the sandbox itself;
2. ownership: the interface with the longest prefix matching the path answers; a path
   no interface owns gets a neutral `404` with the text/plain body `Not Found` (no
   interface's error shape, so no client mistakes it for one of its API's answers);
3. for an owned path: the interface's guard, the body read within its limit (413 in its
   error body), injected faults (in its error body), then its routes - an unknown path
   or a wrong method there gets its own 404 (or for a wrong method the status the
   interface declares: the log service's 405);
4. every such request recorded (interface, method, route template, status, duration,
   caller), including `drop_after_commit` faults: the handler runs and commits, then
   the connection is closed before a single response byte is sent.

Requests in flight (every non-control request, from its arrival until its record is
written) are counted. The control routes that reset the sandbox or read its record
(`quiescent_routes` in control.py) first wait until none is in flight, at most
`QUIET_WITHIN` seconds: a client sees its answer (or a dropped connection) before the
request is recorded, and a client that gave up may leave its request running; without
the wait, a reset or a read right after could miss that record or see it land later.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
import time
from collections.abc import Callable, Sequence
from functools import lru_cache
from typing import Any, cast

from starlette.datastructures import Headers, State
from starlette.exceptions import HTTPException
from starlette.responses import PlainTextResponse, Response
from starlette.routing import BaseRoute, Match, Route, Router
from starlette.types import Message, Receive, Scope, Send

from toolkit.serving import replay, url_host
from toolkit_sandbox import control
from toolkit_sandbox.faults import Fault
from toolkit_sandbox.interface import MAX_BODY, Interface, under
from toolkit_sandbox.limits import BodyTooLarge, ClientGone, read_body
from toolkit_sandbox.recorder import UNMATCHED
from toolkit_sandbox.state import SandboxState
from toolkit_sandbox.store import Store

log = logging.getLogger("toolkit_sandbox")

# How long a reset or a read of the record waits for the requests in flight, at most.
QUIET_WITHIN = 15.0

# The status a request record carries when the client left before its body was complete
# (nothing was handled or answered; nginx's name for it).
CLIENT_CLOSED = 499


def default_interfaces() -> list[Interface]:
    """Every emulated interface, one line each; the log stream only when its SQL engine
    (the `sql` extra) is installed (`left_out()` says so)."""
    from toolkit_sandbox import archive, forem, licensing, logs

    return [
        forem.interface(),
        archive.interface(),
        licensing.interface(),
        *([logs.interface()] if logs.available() else []),
    ]


def left_out() -> list[str]:
    """What `default_interfaces()` leaves out, and why: one line each."""
    from toolkit_sandbox import logs

    return [] if logs.available() else [logs.MISSING]


def neutral_404() -> Response:
    """The answer for a path no interface owns."""
    return PlainTextResponse("Not Found", status_code=404)


_CONVERTOR = re.compile(r"\{(\w+):\w+\}")


@lru_cache(maxsize=512)
def template(path: str) -> str:
    """A route's path as the stats show it: `/api/articles/{id:rowid}` -> `/api/articles/{id}`."""
    return _CONVERTOR.sub(r"{\1}", path)


class Ownership:
    """Which interface owns a path: the longest matching prefix wins; an interface's
    `excludes` take part as disclaimers (owned by nobody), and at equal length a claim
    beats a disclaimer, so an interface can take a path another one leaves out."""

    def __init__(self, interfaces: Sequence[Interface]):
        claims: dict[str, Interface] = {}
        for interface in interfaces:
            for prefix in interface.prefixes:
                if prefix in claims:
                    raise ValueError(
                        f"{prefix} is claimed by both {claims[prefix].name} and {interface.name}"
                    )
                claims[prefix] = interface
        entries: list[tuple[str, Interface | None]] = list(claims.items())
        entries += [(prefix, None) for interface in interfaces for prefix in interface.excludes]
        self._entries = sorted(entries, key=lambda entry: (-len(entry[0]), entry[1] is None))

    def owner(self, path: str) -> Interface | None:
        for prefix, interface in self._entries:
            if under(path, prefix):
                return interface
        return None


class SandboxApp:
    """The composed application (an ASGI callable). `state.sandbox` is the SandboxState,
    so handlers reach it as `request.app.state.sandbox`."""

    def __init__(
        self,
        interfaces: Sequence[Interface],
        sandbox: SandboxState,
        extra_routes: Sequence[BaseRoute] = (),
    ):
        names = [interface.name for interface in interfaces]
        if len(set(names)) != len(names):
            raise ValueError(f"two interfaces with one name: {names}")
        tables = [table for interface in interfaces for table in interface.tables]
        if len(set(tables)) != len(tables):
            raise ValueError("two interfaces declare a table of the same name")
        if sum(interface.control_aliases for interface in interfaces) > 1:
            raise ValueError("only one interface may serve its control routes unprefixed")
        self.interfaces = {interface.name: interface for interface in interfaces}
        self.ownership = Ownership(interfaces)
        self.sandbox = sandbox
        self.state = State()
        self.state.sandbox = sandbox
        self._routers = {
            interface.name: Router(routes=list(interface.routes)) for interface in interfaces
        }
        self._control_routes: list[BaseRoute] = list(control.routes)
        aliases: list[BaseRoute] = []
        for interface in interfaces:
            for route in interface.control_routes:
                self._control_routes.append(_moved(route, f"{control.PREFIX}/{interface.name}"))
                if interface.control_aliases:
                    aliases.append(_moved(route, control.PREFIX))
        self._control = Router(routes=self._control_routes + aliases)
        self._extra = Router(routes=list(extra_routes))
        self._in_flight = 0
        self._idle: list[asyncio.Future[None]] = []  # woken when none is in flight

    # --- requests in flight ---------------------------------------------------------

    @property
    def in_flight(self) -> int:
        """How many requests (not control ones) are being handled and not yet recorded."""
        return self._in_flight

    async def quiescent(self, timeout: float = QUIET_WITHIN) -> bool:
        """Wait until no request is in flight (True), or `timeout` seconds (False)."""
        if self._in_flight == 0:
            return True
        idle = asyncio.get_running_loop().create_future()
        self._idle.append(idle)
        try:
            await asyncio.wait_for(asyncio.shield(idle), timeout)
        except TimeoutError:
            log.info(
                "%d request(s) still in flight after %.0f s; going on", self._in_flight, timeout
            )
            return False
        finally:
            if idle in self._idle:
                self._idle.remove(idle)
        return True

    def _settled(self) -> None:
        self._in_flight -= 1
        if self._in_flight:
            return
        waiting, self._idle = self._idle, []
        for idle in waiting:
            # A waiter may belong to another event loop (an in-process client's).
            idle.get_loop().call_soon_threadsafe(_wake, idle)

    # --- what the control API shows -------------------------------------------------

    def owner_name(self, path: str) -> str | None:
        interface = self.ownership.owner(path)
        return interface.name if interface is not None else None

    def control_index(self) -> dict[str, str]:
        index = {}
        for route in self._control_routes:
            if isinstance(route, Route) and route.path != f"{control.PREFIX}/":
                methods = "|".join(sorted(set(route.methods or ()) - {"HEAD"}))
                doc = (route.endpoint.__doc__ or "").strip().splitlines()
                index[f"{methods} {route.path}"] = doc[0] if doc else ""
        return index

    def describe(self) -> dict[str, Any]:
        return {
            name: {
                "prefixes": list(interface.prefixes),
                "excludes": list(interface.excludes),
                "control": f"{control.PREFIX}/{name}",
            }
            for name, interface in self.interfaces.items()
        }

    # --- the ASGI application -------------------------------------------------------

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":  # lifespan is off and websockets are not served
            return
        scope["app"] = self
        path = scope["path"]
        if under(path, control.PREFIX):
            await self._serve_control(scope, receive, send)
            return
        interface = self.ownership.owner(path)
        self._in_flight += 1
        try:
            if interface is None:
                await self._serve_unowned(scope, receive, send)
            else:
                await self._serve(interface, scope, receive, send)
        finally:
            self._settled()

    async def _serve_control(self, scope: Scope, receive: Receive, send: Send) -> None:
        refusal = _control_refusal(scope, self.sandbox.host)
        if refusal is not None:
            await control.error(403, refusal)(scope, receive, send)
            return
        try:
            body = await read_body(scope, receive, MAX_BODY)
        except BodyTooLarge:
            await control.error(413)(scope, receive, send)
            return
        except ClientGone:
            log.info("client left before its control request was complete: %s", scope["path"])
            return
        try:
            await self._control(scope, replay(body, receive), send)
        except HTTPException as exc:
            await control.error(exc.status_code)(scope, receive, send)

    async def _serve_unowned(self, scope: Scope, receive: Receive, send: Send) -> None:
        started, wall = time.perf_counter(), time.time()
        status, route = 404, UNMATCHED
        matched = [
            candidate
            for candidate in self._extra.routes
            if candidate.matches(scope)[0] is not Match.NONE
        ]
        if matched:
            if isinstance(matched[0], Route) and matched[0].matches(scope)[0] is Match.FULL:
                route = template(matched[0].path)
            status = await _status_of(self._extra, scope, receive, send, neutral_404)
        else:
            await neutral_404()(scope, receive, send)
        self.sandbox.recorder.record(
            started=wall,
            interface=None,
            method=scope["method"],
            route=route,
            path=scope["path"],
            status=status,
            duration=time.perf_counter() - started,
        )

    async def _serve(
        self, interface: Interface, scope: Scope, receive: Receive, send: Send
    ) -> None:
        state = self.sandbox
        info: dict[str, Any] = {"interface": interface.name}
        scope["sandbox"] = info
        started, wall = time.perf_counter(), time.time()
        route = self._route_of(interface, scope)
        outcome = _Outcome()
        try:
            await self._handle(interface, route, scope, receive, send, outcome)
        finally:
            if outcome.dropped:
                # Let the server see the connection is gone before this call returns,
                # so it does not try to answer on it.
                await asyncio.sleep(0)
            state.recorder.record(
                started=wall,
                interface=interface.name,
                method=scope["method"],
                route=route,
                path=scope["path"],
                status=outcome.status,
                duration=time.perf_counter() - started,
                caller=_caller(interface, scope, state),
                dropped=outcome.dropped,
            )

    async def _handle(
        self,
        interface: Interface,
        route: str,
        scope: Scope,
        receive: Receive,
        send: Send,
        outcome: _Outcome,
    ) -> None:
        state = self.sandbox
        if interface.guard is not None:
            refusal = interface.guard(scope, state)
            if refusal is not None:
                await outcome.answer(refusal, scope, receive, send)
                return
        streamed = route in interface.streamed
        try:
            body = b"" if streamed else await read_body(scope, receive, interface.max_body)
        except BodyTooLarge:
            await outcome.answer(interface.error(413, None), scope, receive, send)
            return
        except ClientGone:
            log.info(
                "client left before its request body was complete: %s %s",
                scope["method"],
                scope["path"],
            )
            outcome.status = CLIENT_CLOSED
            return
        fault = None
        if interface.takes_faults(route):
            fault = state.faults.take(interface.name, scope["method"], route, scope["path"])
        if fault is not None and fault.status:
            answer = (
                interface.throttle(fault.retry_after)
                if fault.status == 429
                else interface.error(fault.status, None)
            )
            await outcome.answer(answer, scope, receive, send)
            return
        if fault is not None and fault.delay_ms:
            released = fault.released if fault.until_released else None
            await (
                _until(released, fault.delay_ms / 1000)
                if streamed
                else _hold(scope, receive, fault.delay_ms / 1000, released)
            )
        wrapped = outcome.sender(send, fault)
        try:
            await self._routers[interface.name](
                scope, receive if streamed else replay(body, receive), wrapped
            )
        except HTTPException as exc:  # no route or a wrong method inside its prefixes:
            # its 404, or for a wrong method the status it declares (the log service: 405)
            status = interface.wrong_method if exc.status_code == 405 else 404
            await interface.error(status, None)(scope, receive, wrapped)
        except Exception:
            log.exception("sandbox handler failed: %s %s", scope["method"], scope["path"])
            if not outcome.started:
                await interface.error(500, None)(scope, receive, wrapped)

    def _route_of(self, interface: Interface, scope: Scope) -> str:
        for candidate in self._routers[interface.name].routes:
            if candidate.matches(scope)[0] is Match.FULL and isinstance(candidate, Route):
                return template(candidate.path)
        return UNMATCHED


def _wake(idle: asyncio.Future[None]) -> None:
    if not idle.done():
        idle.set_result(None)


def _caller(interface: Interface, scope: Scope, state: SandboxState) -> int | str | None:
    if interface.caller is None:
        return None
    try:
        return interface.caller(scope, state)
    except Exception:  # a record without its caller beats a request that fails
        log.exception("sandbox: identifying the caller failed")
        return None


class _Outcome:
    """What happened to one request's response: its status, whether it was dropped."""

    def __init__(self) -> None:
        self.status = 0
        self.started = False
        self.dropped = False

    async def answer(self, response: Response, scope: Scope, receive: Receive, send: Send) -> None:
        self.status = response.status_code
        self.started = True
        await response(scope, receive, send)

    def sender(self, send: Send, fault: Fault | None) -> Send:
        """`send`, recording the status and carrying out the response faults."""
        hold = (
            fault.delay_response_ms / 1000 if fault is not None and fault.delay_response_ms else 0
        )
        drop = fault is not None and fault.drop_after_commit

        async def wrapper(message: Message) -> None:
            if message["type"] == "http.response.start":
                self.status = message["status"]
                self.started = True
                if drop:
                    self.dropped = _abort_connection(send)
                if hold:
                    await asyncio.sleep(hold)
            if self.dropped:
                return
            try:
                await send(message)
            except OSError:  # the client is gone: nothing to answer
                if message["type"] == "http.response.start":
                    log.info("client left before its answer (%s) was sent", self.status)

        return wrapper


async def _until(released: asyncio.Event | None, seconds: float) -> None:
    """Wait `seconds`, or less when `released` is set first (a fault `until_released`)."""
    if released is None:
        await asyncio.sleep(seconds)
        return
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(released.wait(), seconds)


async def _hold(
    scope: Scope, receive: Receive, seconds: float, released: asyncio.Event | None
) -> None:
    """Wait `seconds` (a delay fault; less when `released` is set first), noticing a
    client that gives up meanwhile: the request is still handled afterwards (its body is
    already read), as a real server handles a request whose client stopped waiting."""
    waiter = asyncio.ensure_future(receive())
    try:
        holding = asyncio.ensure_future(_until(released, seconds))
        done, _ = await asyncio.wait({waiter, holding}, return_when=asyncio.FIRST_COMPLETED)
        if waiter in done and waiter.result().get("type") == "http.disconnect":
            log.info(
                "client left while a delay fault held %s %s; handling it anyway",
                scope["method"],
                scope["path"],
            )
        await holding
    finally:
        waiter.cancel()


async def _status_of(
    router: Router, scope: Scope, receive: Receive, send: Send, fallback: Callable[[], Response]
) -> int:
    """Serve with `router`, its HTTPException answered by `fallback`; the status sent."""
    status = 0

    async def wrapper(message: Message) -> None:
        nonlocal status
        if message["type"] == "http.response.start":
            status = message["status"]
        await send(message)

    try:
        await router(scope, receive, wrapper)
    except HTTPException:
        response = fallback()
        status = response.status_code
        await response(scope, receive, send)
    return status


def _moved(route: BaseRoute, prefix: str) -> BaseRoute:
    """An interface's control route at its place under `prefix`."""
    if not isinstance(route, Route):
        raise TypeError("control routes are starlette Routes")
    return Route(
        prefix + route.path, route.endpoint, methods=list(route.methods or ()), name=route.name
    )


def _abort_connection(send: Send) -> bool:
    """Close the client connection at once, without a response (uvicorn's h11 cycle)."""
    cycle = getattr(send, "__self__", None)
    transport = getattr(cycle, "transport", None)
    if transport is None:
        return False
    transport.abort()
    return True


def _own_hosts(scope: Scope, host: str | None) -> set[str]:
    """The `Host` values that name this sandbox: the address the connection came in on,
    the host it was started with, and the loopback names, each with the port."""
    server = scope.get("server") or ("127.0.0.1", None)
    port = server[1]
    names = {"localhost", "127.0.0.1", "[::1]", url_host(str(server[0]))}
    if host:
        names.add(url_host(host))
    hosts = {f"{name.lower()}:{port}" for name in names}
    if port == 80:
        hosts |= {name.lower() for name in names}
    return hosts


def _control_refusal(scope: Scope, host: str | None) -> str | None:
    """Why a control request is refused, or None. The control API resets and rewrites
    the sandbox and lists its keys, so it answers only requests addressed to the sandbox
    itself (a foreign `Host` is DNS rebinding) and writes from no page but its own
    (a foreign `Origin`, or `Sec-Fetch-Site: cross-site`)."""
    headers = Headers(scope=scope)
    own = _own_hosts(scope, host)
    if headers.get("host", "").lower() not in own:
        return "forbidden: the control API answers only requests addressed to the sandbox"
    if scope["method"] in ("GET", "HEAD"):
        return None
    origin = headers.get("origin")
    if origin is not None and origin.lower() not in {f"http://{name}" for name in own}:
        return "forbidden: the control API refuses cross-site writes"
    if headers.get("sec-fetch-site", "").lower() == "cross-site":
        return "forbidden: the control API refuses cross-site writes"
    return None


def create_app(
    store: Store,
    rate_window: float = 30.0,
    *,
    state: SandboxState | None = None,
    extra_routes: Sequence[BaseRoute] = (),
    interfaces: Sequence[Interface] | None = None,
) -> SandboxApp:
    """The sandbox application over an opened store (whose interfaces it serves unless
    `interfaces` says otherwise). `extra_routes` serve paths no interface owns; they are
    recorded with no interface."""
    # The store holds the interfaces it was opened with (it reads them as a `Schema`).
    opened = cast("tuple[Interface, ...]", store.interfaces)
    interfaces = list(interfaces if interfaces is not None else opened or default_interfaces())
    state = state or SandboxState(store=store)
    for interface in interfaces:
        if interface.state is not None and interface.name not in state.interfaces:
            state.interfaces[interface.name] = interface.state(rate_window)
    return SandboxApp(interfaces, state, extra_routes)
