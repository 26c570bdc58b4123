"""The sandbox as one ASGI application: interface A under `/api`, the control API under
`/__sandbox`, placeholder images under `/images`.

`create_app` is kept apart from the server so it can be mounted or served any way.
The application's outermost layer records every API request (route template, status,
duration, API key id) and carries out `drop_after_commit` faults: the handler runs and
commits, then the connection is closed before a single response byte is sent.
"""

from __future__ import annotations

import asyncio
import base64
import logging
import re
import time
from collections.abc import Sequence
from typing import Any

from starlette.applications import Starlette
from starlette.datastructures import Headers
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Match, Route
from starlette.types import Message, Receive, Scope, Send

from toolkit.sandbox import control, forem
from toolkit.sandbox.forem.http import error_response, template
from toolkit.sandbox.ratelimit import RateLimiter
from toolkit.sandbox.recorder import UNMATCHED
from toolkit.sandbox.state import SandboxState
from toolkit.sandbox.store import Store
from toolkit.serving import url_host

log = logging.getLogger("toolkit.sandbox")

# A 1x1 transparent PNG: every profile, cover and social image of the sandbox.
PIXEL = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
)
# What the real edge refuses: no User-Agent, or one of a generic HTTP library.
GENERIC_AGENT = re.compile(
    r"^(python-requests|python-httpx|python-urllib|aiohttp|curl|wget|go-http-client|"
    r"okhttp|java|axios|node-fetch|libwww-perl|httpie)\b",
    re.IGNORECASE,
)


async def image(request: Request) -> Response:
    return Response(PIXEL, media_type="image/png",
                    headers={"Cache-Control": "public, max-age=86400"})


async def http_error(request: Request, exc: Exception) -> Response:
    """Unknown paths and wrong methods: 404 with the API's error body (Rails routing)."""
    status = getattr(exc, "status_code", 500)
    if status == 405:
        status = 404
    return error_response(status)


async def server_error(request: Request, exc: Exception) -> Response:
    return error_response(500)


def _abort_connection(send: Send) -> bool:
    """Close the client connection at once, without a response (uvicorn's h11 cycle)."""
    cycle = getattr(send, "__self__", None)
    transport = getattr(cycle, "transport", None)
    if transport is None:
        return False
    transport.abort()
    return True


class SandboxApp(Starlette):
    """Starlette plus the recording and connection-dropping outer layer."""

    sandbox: SandboxState

    def _route_of(self, scope: Scope) -> str:
        for route in self.router.routes:
            if route.matches(scope)[0] is Match.FULL:
                return template(route.path)
        return UNMATCHED

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["path"].startswith("/__sandbox"):
            refusal = _control_refusal(scope, self.sandbox.host)
            if refusal is not None:
                await error_response(403, refusal)(scope, receive, send)
                return
        if scope["type"] != "http" or scope["path"].startswith("/__sandbox"):
            await super().__call__(scope, receive, send)
            return
        state = self.sandbox
        info: dict[str, Any] = {}
        scope["sandbox"] = info
        started, wall = time.perf_counter(), time.time()
        status = 0
        dropped = False
        if state.user_agent_check and _blocked_agent(scope):
            await Response(status_code=403)(scope, receive, send)
            state.recorder.record(
                started=wall, method=scope["method"], route=self._route_of(scope),
                path=scope["path"], status=403, duration=time.perf_counter() - started,
                api_key_id=None,
            )
            return

        async def send_wrapper(message: Message) -> None:
            nonlocal status, dropped
            if message["type"] == "http.response.start":
                status = message["status"]
                if info.get("drop"):
                    dropped = _abort_connection(send)
                    if dropped:
                        return
            if dropped:
                return
            await send(message)

        try:
            await super().__call__(scope, receive, send_wrapper)
        finally:
            if dropped:
                # Let the server see the connection is gone before this call returns,
                # so it does not try to answer on it.
                await asyncio.sleep(0)
            route = info.get("route")
            if route is None:
                matched = scope.get("route")
                route = template(matched.path) if matched is not None else UNMATCHED
            state.recorder.record(
                started=wall, method=scope["method"], route=route, path=scope["path"],
                status=status, duration=time.perf_counter() - started,
                api_key_id=info.get("api_key_id"), dropped=dropped,
            )


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


def _blocked_agent(scope: Scope) -> bool:
    """The real edge's rule: no User-Agent, or a generic HTTP library's, gets a 403."""
    if not scope["path"].startswith("/api"):
        return False
    agent = next((v for k, v in scope["headers"] if k == b"user-agent"), b"").decode("latin-1")
    return not agent.strip() or GENERIC_AGENT.match(agent.strip()) is not None


def create_app(
    store: Store,
    rate_window: float = 30.0,
    *,
    state: SandboxState | None = None,
    extra_routes: Sequence[BaseRoute] = (),
) -> SandboxApp:
    """The sandbox application over an opened store. `extra_routes` mount further
    emulated interfaces on the same origin (they are recorded like /api requests)."""
    state = state or SandboxState(store=store, limiter=RateLimiter(rate_window))
    app = SandboxApp(
        routes=[
            *forem.routes(),
            *control.routes,
            Route("/images/{path:path}", image, methods=["GET"]),
            *extra_routes,
        ],
        exception_handlers={HTTPException: http_error, Exception: server_error},
    )
    app.sandbox = state
    app.state.sandbox = state
    return app
