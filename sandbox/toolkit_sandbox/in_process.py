"""A way to the sandbox's application without a socket, for tests of what it answers
(`SandboxServer.transport()`)."""

from __future__ import annotations

import concurrent.futures

import httpx

from toolkit.serving import BackgroundServer


class InProcessTransport(httpx.BaseTransport):
    """An httpx transport that hands each request to a running sandbox's application on
    the sandbox's own event loop, without a socket.

    What answers is what answers a request over loopback: the same application (inside
    uvicorn's middleware), state, request record, limits, faults and rate limits, on the
    same loop and thread, in the same order. What is not there is the connection: no
    HTTP parsing, no client timeouts on a slow answer (`timeout` bounds the whole
    request instead), no client that leaves before its answer, no dropped connection
    (a `drop_after_commit` fault answers). For tests of what the sandbox answers; tests
    of the connection use the socket (`base_url`)."""

    def __init__(self, server: BackgroundServer, timeout: float = 60.0):
        self._server = server
        self._asgi = httpx.ASGITransport(app=server.asgi_app, client=("127.0.0.1", 50000))
        self._timeout = timeout

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        if request.url.scheme != "http" or request.url.port != self._server.port:
            # Another origin (a webhook receiver, a foreign download): never this app's.
            raise httpx.ConnectError(
                f"{request.url.scheme}://{request.url.netloc.decode()} is not the sandbox "
                "(an in-process transport reaches only its own application)",
                request=request,
            )
        request.read()  # the whole body: a synchronous stream is not read on the loop
        timeouts = request.extensions.get("timeout", {})
        bound = timeouts.get("read") or self._timeout
        future = self._server.submit(self._send(request))
        try:
            return future.result(bound)
        except concurrent.futures.TimeoutError:
            # As over a socket, a client that stops waiting leaves the request running.
            raise httpx.ReadTimeout(f"no answer within {bound} s", request=request) from None

    async def _send(self, request: httpx.Request) -> httpx.Response:
        answer = await self._asgi.handle_async_request(request)
        content = await answer.aread()
        return httpx.Response(
            answer.status_code,
            headers=answer.headers,
            stream=httpx.ByteStream(content),
            request=request,
        )
