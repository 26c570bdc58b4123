"""The preview server of `toolkit watch`: the built site, with live reload.

Pages are served from the output folder as they are on disk (`toolkit.serving.static`),
except that HTML responses get a small script (never written into the built files) that
listens on a server-sent events stream, `/__toolkit/events`: a `reload` event reloads the
page, a `problems` event shows the current problems of the posts in a box at the top of
the page (in the flow of the page, so it covers nothing), or removes it.

A mistake shows in the browser, styled, where the writer is looking, and goes away by
itself with the next good save (which reloads the page):

- a post with an error is left out of the site, so its page is gone: the address shows
  an error page with the problems (`path:line: message`) instead of the 404 page;
- a build that cannot run at all (a broken template, a `toolkit.toml` that does not load)
  leaves the last good pages on disk: while it lasts, every page shows an error page
  with what failed (`Broadcaster.fail`).
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import AsyncIterator, Callable
from html import escape
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

from toolkit.serving.static import create_site_app
from toolkit.site.search import INDEX_DIR

EVENTS_PATH = "/__toolkit/events"
KEEPALIVE_SECONDS = 15.0

LIVE_RELOAD_SCRIPT = """<script>/* toolkit watch: live reload (not in the built files) */
(() => {
  const events = new EventSource("__EVENTS__");
  events.addEventListener("reload", () => location.reload());
  // Said when the stream opens during a failed build: a page loaded just before the
  // failure missed its reload. Once per failure and tab, so a page never loops.
  events.addEventListener("failure", (event) => {
    if (document.getElementById("toolkit-error")) return;
    if (sessionStorage.getItem("toolkit-failure") === event.data) return;
    sessionStorage.setItem("toolkit-failure", event.data);
    location.reload();
  });
  events.addEventListener("problems", (event) => {
    const problems = JSON.parse(event.data);
    let box = document.getElementById("toolkit-problems");
    if (document.getElementById("toolkit-error")) return;  // the error page lists them
    if (!problems.length) { if (box) box.remove(); return; }
    if (!box) {
      box = document.createElement("div");
      box.id = "toolkit-problems";
      box.setAttribute("role", "alert");
      box.style.cssText = "background:#7f1d1d;color:#fff;font:14px/1.5 ui-monospace," +
        "monospace;padding:.75rem 1rem;max-height:40vh;overflow:auto;white-space:pre-wrap;" +
        "overflow-wrap:anywhere";
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
        self.problems: list[str] = []  # of the posts, as `path:line: message`
        self.failure: list[str] = []  # why the last build could not run; [] when it could
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

    def fail(self, lines: list[str]) -> None:
        """The build could not run: every page shows `lines` until `recover()`."""
        self.failure = list(lines)
        self.send("reload", {"changed": []})

    def recover(self, changed: list[str]) -> None:
        """A build ran again after `fail` (after a save of `changed`): the pages come back."""
        if self.failure:
            self.failure = []
            self.send("reload", {"changed": changed})

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


ERROR_PAGE = """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<title>__TITLE__ · toolkit watch</title>
<style>
body{margin:0;font:16px/1.6 system-ui,sans-serif;background:#fff;color:#1f2328}
main{max-width:48rem;margin:0 auto;padding:2rem 1.25rem}
h1{font-size:1.5rem;line-height:1.3;margin:0 0 .5rem;color:#9b1c1c}
ul{list-style:none;padding:0;margin:1.25rem 0}
li{font:14px/1.5 ui-monospace,monospace;background:#fdf0f0;border-left:4px solid #9b1c1c;
padding:.6rem .9rem;margin:.5rem 0;white-space:pre-wrap;overflow-wrap:anywhere}
a{color:#0b5cad}
@media (prefers-color-scheme:dark){body{background:#101418;color:#e3e8ed}h1{color:#ff9b9b}
li{background:#2a1414;border-color:#ff9b9b}a{color:#7cb7ff}}
</style>
</head>
<body>
<main id="toolkit-error">
<h1>__TITLE__</h1>
<p>__WHAT__</p>
<ul>
__LINES__
</ul>
<p>This page comes back by itself with the next good save. <a href="/">The home page</a></p>
</main>
</body>
</html>
"""


def error_page(title: str, what: str, lines: list[str]) -> str:
    """The preview's page for a mistake: what happened and each line of it, escaped."""

    items = "\n".join(f"<li>{escape(line)}</li>" for line in lines)
    return (
        ERROR_PAGE.replace("__TITLE__", escape(title))
        .replace("__WHAT__", escape(what))
        .replace("__LINES__", items)
    )


def _inject(html: str) -> str:
    index = html.lower().rfind("</body>")
    return (
        html[:index] + LIVE_RELOAD_SCRIPT + html[index:]
        if index >= 0
        else html + LIVE_RELOAD_SCRIPT
    )


def create_preview_app(
    output_dir: Path,
    broadcaster: Broadcaster,
    root_path: str = "/",
    search_index: Callable[[], None] | None = None,
) -> Starlette:
    """The built preview, served like `toolkit serve` serves a site (`toolkit.serving.static`),
    with the live-reload script in every page and the events stream. `search_index`
    makes the search index when the browser asks for it (a rebuild does not)."""

    async def events(request: Request) -> Response:
        queue = broadcaster.subscribe()

        async def stream() -> AsyncIterator[str]:
            try:
                yield f"event: problems\ndata: {json.dumps(broadcaster.problems)}\n\n"
                if failure := broadcaster.failure:  # a page loaded before it missed its reload
                    yield f"event: failure\ndata: {json.dumps(failure)}\n\n"
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

        return StreamingResponse(
            stream(), media_type="text/event-stream", headers={"Cache-Control": "no-store"}
        )

    def failed() -> str | None:
        if not broadcaster.failure:
            return None
        return error_page(
            "The site could not be built",
            "The last save left the preview unable to build; the pages show "
            "this until it builds again.",
            broadcaster.failure,
        )

    def missing() -> str | None:
        if not broadcaster.problems:
            return None
        return error_page(
            "This page is not built: a post has an error",
            "A post with an error is left out of the site until it is fixed:",
            broadcaster.problems,
        )

    return create_site_app(
        output_dir,
        root_path=root_path,
        html=_inject,
        instead_of_pages=failed,
        instead_of_not_found=missing,
        on_demand={INDEX_DIR: search_index} if search_index else None,
        routes=[Route(EVENTS_PATH, events, methods=["GET"])],
    )
