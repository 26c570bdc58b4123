"""Looking at the sandbox from a test: what the account holds, what requests it served."""

from __future__ import annotations

import contextlib
import itertools
import json
import socket
import threading
from collections import Counter
from typing import Any

import httpx

from toolkit.tls import shared_context

# A project whose rate-limit window matches the sandbox's (1 s).
SYNC_CONFIG = """
[site]
title = "Sync site"
url = "https://example.com/blog"

[forem]
rate_window = 1
"""


def api_get(sandbox, path: str, **params: Any) -> Any:
    """GET an /api path as the demo account."""
    response = httpx.get(
        f"{sandbox.base_url}{path}",
        params=params,
        headers={"api-key": sandbox.demo_api_key},
        verify=shared_context(),
    )
    response.raise_for_status()
    return response.json()


def control(sandbox, method: str, path: str, **body: Any) -> Any:
    """Call the sandbox's control API (`/__sandbox{path}`)."""
    response = httpx.request(
        method, f"{sandbox.base_url}/__sandbox{path}", json=body or None, verify=shared_context()
    )
    response.raise_for_status()
    return response.json() if response.content else None


def my_articles(sandbox) -> list[dict]:
    return api_get(sandbox, "/api/articles/me/all", per_page=1000)


def titles(sandbox) -> list[str]:
    return [article["title"] for article in my_articles(sandbox)]


def writes(sandbox) -> dict[str, int]:
    """POST/PUT requests to /api since the last stats reset, by `METHOD status`."""
    counts: dict[str, int] = {}
    for row in sandbox.stats():
        if row["method"] in ("POST", "PUT") and row["route"].startswith("/api/"):
            key = f"{row['method']} {row['status']}"
            counts[key] = counts.get(key, 0) + row["count"]
    return counts


def requests_by_route(sandbox) -> dict[str, int]:
    """Requests to /api since the last stats reset, by `METHOD route`."""
    counts: dict[str, int] = {}
    for row in sandbox.stats():
        if row["route"].startswith("/api/"):
            key = f"{row['method']} {row['route']}"
            counts[key] = counts.get(key, 0) + row["count"]
    return counts


def web_edit(sandbox, article_id: int, body_markdown: str) -> None:
    """An edit of the article as if made on the website."""
    control(sandbox, "POST", f"/articles/{article_id}/edit", body_markdown=body_markdown)


def last_seq(sandbox) -> int:
    """The sequence number of the last request the sandbox recorded."""
    return control(sandbox, "GET", "/requests?limit=1")["last_seq"]


def records_after(sandbox, seq: int, method: str, route: str) -> list[dict]:
    """Request records after `seq` for one method and route template."""
    return [r for r in sandbox.requests(after=seq) if r["method"] == method and r["route"] == route]


def lock_entries(project) -> dict[str, dict]:
    return json.loads((project.root / "toolkit.lock").read_text())["posts"]


def complete_request(data: bytes | bytearray) -> bool:
    """Whether `data` is empty or ends a whole HTTP/1.1 request: its head, and its body as
    long as the head's Content-Length (or up to the last chunk)."""
    if not data:
        return True
    head, found, body = bytes(data).partition(b"\r\n\r\n")
    if not found:
        return False
    fields = dict(line.split(b":", 1) for line in head.split(b"\r\n")[1:] if b":" in line)
    fields = {name.strip().lower(): value.strip().lower() for name, value in fields.items()}
    if fields.get(b"transfer-encoding") == b"chunked":
        return body.endswith(b"0\r\n\r\n")
    return len(body) >= int(fields.get(b"content-length", b"0"))


class PatientProxy:
    """A TCP forwarder in front of the sandbox that, like a real network path, lets a
    request the client has already sent reach the server and finish there even when the
    client gave up waiting (timed out, or was killed) and closed its connection.

    A request the client had not finished sending when it closed (killed between the
    head and the body) can never be answered: its connection to the server is closed at
    once, as the server itself would after its body timeout."""

    def __init__(self, target_url: str):
        parts = httpx.URL(target_url)
        self.target = (parts.host, parts.port)
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.base_url = f"http://127.0.0.1:{self.listener.getsockname()[1]}"
        self._open: list[socket.socket] = []
        self._last: dict[int, str] = {}  # connection -> who sent bytes last: client/server
        self._asked: dict[int, bytearray] = {}  # connection -> client bytes since the answer
        self._answered: Counter[str] = Counter()  # method -> requests whose answer came
        self._mutex = threading.Lock()
        threading.Thread(target=self._accept, daemon=True).start()

    def in_flight(self) -> int:
        """Connections whose last bytes were the client's: a request awaits its answer."""
        with self._mutex:
            return sum(1 for side in self._last.values() if side == "client")

    def awaiting(self, method: str) -> int:
        """Whole requests of `method` sent through and not answered yet."""
        with self._mutex:
            return sum(
                1
                for asked in self._asked.values()
                if asked.startswith(method.encode() + b" ") and complete_request(asked)
            )

    def answered(self, method: str) -> int:
        """Requests of `method` whose answer has started to come back through."""
        with self._mutex:
            return self._answered[method]

    def _accept(self) -> None:
        for number in itertools.count():
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            upstream = socket.create_connection(self.target)
            self._open += [client, upstream]
            for source, sink, side in ((client, upstream, "client"), (upstream, client, "server")):
                threading.Thread(
                    target=self._pump, args=(number, source, sink, side), daemon=True
                ).start()

    def _pump(self, number: int, source: socket.socket, sink: socket.socket, side: str) -> None:
        sink_open = True
        while True:
            try:
                data = source.recv(65536)
            except OSError:
                data = b""
            if not data:
                break
            with self._mutex:
                self._last[number] = side
                if side == "client":
                    self._asked.setdefault(number, bytearray()).extend(data)
                else:
                    asked = self._asked.pop(number, None)
                    if asked and complete_request(asked):
                        self._answered[bytes(asked).split(b" ", 1)[0].decode()] += 1
            if sink_open:
                try:
                    sink.sendall(data)
                except OSError:
                    sink_open = False  # the client is gone: keep reading the server's answer
        with self._mutex:
            unfinished = side == "client" and not complete_request(self._asked.get(number, b""))
        if side == "server" or unfinished:  # nothing more to answer: both ends can go
            with self._mutex:
                self._last.pop(number, None)
                self._asked.pop(number, None)
            for end in (source, sink):
                with contextlib.suppress(OSError):
                    end.close()
        # The client's end closed after a whole request: the server's end stays open until
        # it has answered.

    def close(self) -> None:
        self.listener.close()
        for end in self._open:
            with contextlib.suppress(OSError):
                end.close()
