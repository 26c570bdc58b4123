"""The preview server of `toolkit watch`: the built site, with live reload.

Pages are served from the output folder as they are on disk, except that HTML responses
get a small script (never written into the built files) that listens on a server-sent
events stream, `/__toolkit/events`: a `reload` event reloads the page, a `problems` event
shows the current problems of the posts in a box on top of the page, or removes it.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import (
    FileResponse,
    HTMLResponse,
    PlainTextResponse,
    Response,
    StreamingResponse,
)
from starlette.routing import Route

EVENTS_PATH = "/__toolkit/events"
KEEPALIVE_SECONDS = 15.0

LIVE_RELOAD_SCRIPT = """<script>/* toolkit watch: live reload (not in the built files) */
(() => {
  const events = new EventSource("__EVENTS__");
  events.addEventListener("reload", () => location.reload());
  events.addEventListener("problems", (event) => {
    const problems = JSON.parse(event.data);
    let box = document.getElementById("toolkit-problems");
    if (!problems.length) { if (box) box.remove(); return; }
    if (!box) {
      box = document.createElement("div");
      box.id = "toolkit-problems";
      box.setAttribute("role", "alert");
      box.style.cssText = "position:fixed;top:0;left:0;right:0;z-index:2147483647;" +
        "background:#7f1d1d;color:#fff;font:14px/1.5 ui-monospace,monospace;" +
        "padding:.75rem 1rem;max-height:50vh;overflow:auto;white-space:pre-wrap";
      document.body.prepend(box);
    }
    box.textContent = problems.join("\\n");
  });
})();
</script>
""".replace("__EVENTS__", EVENTS_PATH)


class Broadcaster:
    """Fan-out of events from the watcher's threads to every connected browser."""

    def __init__(self) -> None:
        self._clients: set[tuple[asyncio.AbstractEventLoop, asyncio.Queue]] = set()
        self._lock = threading.Lock()
        self.problems: list[str] = []
        self.closed = threading.Event()
        self.sent: dict[str, int] = {}  # events sent, by name (for tests and the benchmark)

    def subscribe(self) -> asyncio.Queue:
        queue: asyncio.Queue = asyncio.Queue()
        with self._lock:
            self._clients.add((asyncio.get_running_loop(), queue))
        return queue

    def unsubscribe(self, queue: asyncio.Queue) -> None:
        with self._lock:
            self._clients = {(loop, q) for loop, q in self._clients if q is not queue}

    @property
    def clients(self) -> int:
        with self._lock:
            return len(self._clients)

    def send(self, event: str, data: Any = None) -> None:
        if event == "problems":
            self.problems = list(data or [])
        message = f"event: {event}\ndata: {json.dumps(data)}\n\n"
        with self._lock:
            clients = list(self._clients)
            self.sent[event] = self.sent.get(event, 0) + 1
        for loop, queue in clients:
            try:
                loop.call_soon_threadsafe(queue.put_nowait, message)
            except RuntimeError:  # that client's loop has closed
                self.unsubscribe(queue)

    def close(self) -> None:
        """End every stream, so the server can stop at once."""
        self.closed.set()
        with self._lock:
            clients = list(self._clients)
        for loop, queue in clients:
            try:
                loop.call_soon_threadsafe(queue.put_nowait, None)
            except RuntimeError:
                pass


def _resolve(root: Path, url_path: str) -> Path | None:
    """The file a URL path names inside `root`, or None (also for anything outside it)."""
    relative = url_path.lstrip("/")
    candidate = (root / relative).resolve()
    if candidate != root and root not in candidate.parents:
        return None
    if candidate.is_dir():
        candidate = candidate / "index.html"
    return candidate if candidate.is_file() else None


def _inject(html: str) -> str:
    index = html.lower().rfind("</body>")
    return html[:index] + LIVE_RELOAD_SCRIPT + html[index:] if index >= 0 else html + LIVE_RELOAD_SCRIPT


def create_preview_app(output_dir: Path, broadcaster: Broadcaster) -> Starlette:
    root = output_dir.resolve()

    async def events(request: Request) -> Response:
        queue = broadcaster.subscribe()

        async def stream() -> AsyncIterator[str]:
            try:
                yield f"event: problems\ndata: {json.dumps(broadcaster.problems)}\n\n"
                while not broadcaster.closed.is_set():
                    try:
                        message = await asyncio.wait_for(queue.get(), KEEPALIVE_SECONDS)
                    except TimeoutError:
                        yield ": keep-alive\n\n"
                        continue
                    if message is None:
                        return
                    yield message
            finally:
                broadcaster.unsubscribe(queue)

        return StreamingResponse(stream(), media_type="text/event-stream",
                                 headers={"Cache-Control": "no-store"})

    async def page(request: Request) -> Response:
        path = _resolve(root, request.url.path)
        status = 200
        if path is None:
            path, status = _resolve(root, "/404.html"), 404
            if path is None:
                return PlainTextResponse("not found", status_code=404)
        if path.suffix == ".html":
            html = path.read_text(encoding="utf-8")
            return HTMLResponse(_inject(html), status_code=status, headers={"Cache-Control": "no-store"})
        return FileResponse(path, status_code=status, headers={"Cache-Control": "no-store"})

    return Starlette(routes=[
        Route(EVENTS_PATH, events, methods=["GET"]),
        Route("/{path:path}", page, methods=["GET", "HEAD"]),
    ])
