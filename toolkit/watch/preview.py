"""The preview server of `toolkit watch`: the built site, with live reload.

Pages are served from the output folder as they are on disk, except that HTML responses
get a small script (never written into the built files) that listens on a server-sent
events stream, `/__toolkit/events`: a `reload` event reloads the page, a `problems` event
shows the current problems of the posts in a box on top of the page, or removes it.
"""

from __future__ import annotations

import asyncio
import json
import re
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
        # Per browser: its loop and its queue of messages (None: the end of the stream).
        self._clients: set[tuple[asyncio.AbstractEventLoop, asyncio.Queue[str | None]]] = set()
        self._lock = threading.Lock()
        self.problems: list[str] = []
        self.closed = threading.Event()
        self.sent: dict[str, int] = {}  # events sent, by name (for tests and the benchmark)

    def subscribe(self) -> asyncio.Queue[str | None]:
        queue: asyncio.Queue[str | None] = asyncio.Queue()
        with self._lock:
            self._clients.add((asyncio.get_running_loop(), queue))
        return queue

    def unsubscribe(self, queue: asyncio.Queue[str | None]) -> None:
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


# No page of a built site has a control character or a backslash in its path, nor a path
# this long: such a request is malformed (400), whatever the file system would say.
_MALFORMED = re.compile(r"[\x00-\x1f\x7f\\]")
MAX_PATH = 1024


class BadPath(ValueError):
    """A URL path that no file of the site can have."""


def _inside(root: Path, path: Path) -> Path | None:
    """`path` with every symlink resolved, if that is inside `root` (and exists)."""
    resolved = path.resolve()
    return resolved if resolved == root or root in resolved.parents else None


def _resolve(root: Path, url_path: str) -> Path | None:
    """The regular file a URL path names inside `root` (a folder's `index.html`), or None
    when there is none, or when it or any symlink on the way leads outside `root`.
    Raises `BadPath` for a path with a NUL, another control character or a backslash,
    or longer than `MAX_PATH`."""
    if len(url_path) > MAX_PATH or _MALFORMED.search(url_path):
        raise BadPath(url_path[:80])
    try:
        candidate = _inside(root, root / url_path.lstrip("/"))
        if candidate is not None and candidate.is_dir():
            candidate = _inside(root, candidate / "index.html")
        return candidate if candidate is not None and candidate.is_file() else None
    except (OSError, ValueError, RuntimeError):  # a name too long, a loop of symlinks, ...
        return None


def _read_html(path: Path) -> str | None:
    """A page's text; bytes that are not UTF-8 are replaced rather than failing the page."""
    try:
        return path.read_bytes().decode("utf-8", errors="replace")
    except OSError:
        return None


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

    def not_found() -> Response:
        page = _resolve(root, "/404.html")
        html = _read_html(page) if page is not None else None
        if html is None:
            return PlainTextResponse("not found", status_code=404)
        return HTMLResponse(_inject(html), status_code=404, headers={"Cache-Control": "no-store"})

    async def page(request: Request) -> Response:
        # The decoded path as the server received it: `request.url.path` goes through
        # urlsplit, which silently drops newlines and tabs.
        try:
            path = _resolve(root, request.scope["path"])
        except BadPath:
            return PlainTextResponse("bad request", status_code=400)
        if path is None:
            return not_found()
        if path.suffix == ".html":
            html = _read_html(path)
            if html is None:  # removed or replaced by a rebuild since
                return not_found()
            return HTMLResponse(_inject(html), headers={"Cache-Control": "no-store"})
        return FileResponse(path, headers={"Cache-Control": "no-store"})

    return Starlette(routes=[
        Route(EVENTS_PATH, events, methods=["GET"]),
        Route("/{path:path}", page, methods=["GET", "HEAD"]),
    ])
