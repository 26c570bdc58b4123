"""Every request of the shared client is bounded, whatever the service does: a total
deadline per request (connect and whole answer, not per read), one deadline over the
premium gate, and answers read only up to a size and a JSON nesting depth.

The services here are real loopback servers in a thread that answer bytes a test chose:
dripped one at a time, nested thousands deep, larger than the bound."""

from __future__ import annotations

import contextlib
import json
import socket
import threading
from collections.abc import Iterator

import httpx
import pytest

from toolkit.clients import bounds, responses
from toolkit.clients.base import ApiClient, RetryPolicy
from toolkit.errors import ApiError, NoAnswerError


class RawServer:
    """A loopback HTTP server that answers every request with `body` (status 200, JSON),
    sending it `drip` bytes at a time with a pause of `pause` seconds between them (0:
    all at once). It stops dripping when the client goes away or the server closes."""

    def __init__(self, body: bytes, *, drip: int = 0, pause: float = 0.05):
        self.body = body
        self.drip = drip
        self.pause = pause
        self.sent: list[int] = []  # bytes sent, per connection, when it ended
        self.stopped = threading.Event()
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.base_url = f"http://127.0.0.1:{self.listener.getsockname()[1]}"
        self._threads: list[threading.Thread] = []
        self._accepting = threading.Thread(target=self._accept, daemon=True)
        self._accepting.start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            thread = threading.Thread(target=self._answer, args=(conn,), daemon=True)
            self._threads.append(thread)
            thread.start()

    def _answer(self, conn: socket.socket) -> None:
        sent = 0
        with conn:
            head = b""
            while b"\r\n\r\n" not in head:
                data = conn.recv(65536)
                if not data:
                    return
                head += data
            answer = (
                b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                b"Content-Length: " + str(len(self.body)).encode() + b"\r\n"
                b"Connection: close\r\n\r\n" + self.body
            )
            step = self.drip or len(answer)
            try:
                for start in range(0, len(answer), step):
                    conn.sendall(answer[start : start + step])
                    sent += step
                    if self.drip and self.stopped.wait(self.pause):
                        break
            except OSError:
                pass  # the client went away
            self.sent.append(min(sent, len(answer)))

    def close(self) -> None:
        self.stopped.set()
        with contextlib.suppress(OSError):
            self.listener.shutdown(socket.SHUT_RDWR)  # wakes the thread waiting in accept
        self.listener.close()
        self._accepting.join()
        for thread in self._threads:
            thread.join()


@contextlib.contextmanager
def serving(body: bytes, **options: float) -> Iterator[RawServer]:
    server = RawServer(body, **options)  # type: ignore[arg-type]
    try:
        yield server
    finally:
        server.close()


def nested(depth: int) -> bytes:
    return b"[" * depth + b"]" * depth


# -- a total deadline per request ------------------------------------------------------


@pytest.mark.e2e
def test_an_answer_dripped_a_byte_at_a_time_ends_at_the_requests_deadline():
    """Each byte comes well within the time a read may take, but the whole answer would
    take seconds: the request ends at its deadline instead of waiting for all of it."""
    body = json.dumps({"title": "x" * 200}).encode()
    with serving(body, drip=1) as server:
        with ApiClient(server.base_url, timeout=0.5, retry=RetryPolicy(attempts=1)) as api:
            with pytest.raises(NoAnswerError) as caught:
                api.get_json("/slow")
        server.stopped.set()
    assert caught.value.reason == "read timeout"
    assert server.sent and server.sent[0] < len(body)  # it never got the whole answer


@pytest.mark.e2e
def test_an_overall_deadline_ends_every_request_and_retry_inside_it():
    body = json.dumps({"title": "x" * 200}).encode()
    with serving(body, drip=1) as server:
        with (
            ApiClient(server.base_url, timeout=30, retry=RetryPolicy(attempts=5)) as api,
            bounds.deadline(0.5),
        ):
            with pytest.raises(NoAnswerError) as caught:
                api.get_json("/slow")
        server.stopped.set()
    assert caught.value.timed_out
    assert len(server.sent) == 1  # no retry once the time is used up


@pytest.mark.e2e
def test_a_premium_build_against_a_dripping_licensing_service_is_refused(make_project):
    """The licensing service answers ACTIVE for exactly the licence asked about, but one
    byte at a time: the gate's one deadline (`[license] timeout`) refuses the build."""
    app, customer = "123456789012", "acme.example"
    config = (
        f'[site]\ntitle = "P"\nurl = "https://example.com"\n\n[license]\n'
        f'application_id = "{app}"\ncustomer_id = "{customer}"\ntimeout = 0.5\n'
    )
    project = make_project(config)
    project.post("paid", "Members only", published=True, premium=True)
    licence = {
        "kind": "appsmarket#customerLicense",
        "state": "ACTIVE",
        "applicationId": app,
        "customerId": customer,
        "id": f"{app}/{customer}",
        "editions": [{"editionId": "default"}],
    }
    body = json.dumps(licence).encode() + b" " * 200
    with serving(body, drip=1) as server:
        result = project.run(
            "build",
            "--premium",
            env={"LICENSE_BASE_URL": server.base_url, "LICENSE_API_TOKEN": "t"},
        )
        server.stopped.set()
    assert result.exit_code == 1, result.output
    assert "premium build refused: the licensing service could not be reached" in result.output
    assert not (project.root / "site" / "paid").exists()


# -- answers read with a size and a depth bound ----------------------------------------


@pytest.mark.e2e
def test_a_deeply_nested_answer_is_one_line_naming_the_service(make_project):
    project = make_project()
    project.post("hello", "Hello", published=True)
    with serving(nested(100_000)) as server:
        result = project.run(
            "plan", env={"FOREM_BASE_URL": server.base_url, "FOREM_API_KEY": "key"}
        )
    assert result.exit_code == 1, result.output
    errors = [line for line in result.output.splitlines() if line.startswith("Error:")]
    assert len(errors) == 1, result.output
    assert server.base_url in errors[0] and "nested deeper than" in errors[0]
    assert "Traceback" not in result.output


@pytest.mark.e2e
def test_a_deeply_nested_licence_answer_refuses_the_premium_build(make_project):
    config = (
        '[site]\ntitle = "P"\nurl = "https://example.com"\n\n[license]\n'
        'application_id = "1"\ncustomer_id = "acme.example"\n'
    )
    project = make_project(config)
    project.post("paid", "Members only", published=True, premium=True)
    with serving(b'{"state": "ACTIVE", "x": ' + nested(50_000) + b"}") as server:
        result = project.run(
            "build",
            "--premium",
            env={"LICENSE_BASE_URL": server.base_url, "LICENSE_API_TOKEN": "t"},
        )
    assert result.exit_code == 1, result.output
    assert "premium build refused" in result.output
    assert "nested deeper than" in result.output
    assert "Traceback" not in result.output


@pytest.mark.e2e
def test_an_answer_nested_within_the_bound_is_read(monkeypatch):
    monkeypatch.setattr(responses, "MAX_JSON_DEPTH", 8)
    body = b'{"a": [{"b": "[[[[[[[[[[ not structure \\" [[[["}]}'
    with serving(body) as server, ApiClient(server.base_url) as api:
        assert api.get_json("/x") == json.loads(body)
    with serving(nested(9)) as server, ApiClient(server.base_url) as api:
        with pytest.raises(ApiError, match="nested deeper than 8 levels"):
            api.get_json("/x")


@pytest.mark.e2e
def test_an_answer_larger_than_the_bound_is_refused_unread(monkeypatch):
    monkeypatch.setattr(responses, "MAX_ANSWER_BYTES", 1000)
    with serving(b'"' + b"x" * 5000 + b'"') as server, ApiClient(server.base_url) as api:
        with pytest.raises(ApiError, match=f"{server.base_url} sent an answer of 5002 bytes"):
            api.get_json("/big")


@pytest.mark.parametrize("depth", [10, 127])
def test_the_depth_scan_agrees_with_the_nesting(depth):
    text = json.dumps(json.loads(nested(depth))).encode()
    assert not bounds.json_depth_over(text, 127)
    assert bounds.json_depth_over(text, depth - 1)


# -- the deadline cannot be lost ---------------------------------------------------------


def test_a_client_cannot_be_made_over_a_network_transport_without_the_deadline():
    """httpx's own network transport reads for as long as a server drips: refused, so
    that no client of toolkit reaches the network without its deadline."""
    with pytest.raises(TypeError, match="would not end requests by their deadline"):
        ApiClient("http://127.0.0.1:9", transport=httpx.HTTPTransport())


@pytest.mark.e2e
def test_a_request_through_the_environments_proxy_keeps_its_deadline(monkeypatch):
    """A proxy named by the environment drips its answer: the request through it still
    ends at its deadline (the proxy's transport is bounded as the direct one is)."""
    body = json.dumps({"title": "x" * 200}).encode()
    with serving(body, drip=1) as proxy:
        monkeypatch.setenv("HTTP_PROXY", proxy.base_url)
        monkeypatch.delenv("NO_PROXY", raising=False)
        monkeypatch.delenv("no_proxy", raising=False)
        with ApiClient("http://forem.invalid", timeout=0.5, retry=RetryPolicy(attempts=1)) as api:
            with pytest.raises(NoAnswerError) as caught:
                api.get_json("/slow")
        proxy.stopped.set()
    assert caught.value.reason == "read timeout"
    assert proxy.sent and proxy.sent[0] < len(body)  # the proxy was asked, never finished


@pytest.mark.e2e
def test_hosts_the_environment_exempts_from_the_proxy_are_reached_directly(monkeypatch):
    with serving(b'{"ok": true}') as server:
        monkeypatch.setenv("HTTP_PROXY", "http://127.0.0.1:9")  # nothing listens there
        monkeypatch.setenv("NO_PROXY", "127.0.0.1")
        with ApiClient(server.base_url, retry=RetryPolicy(attempts=1)) as api:
            assert api.get_json("/x") == {"ok": True}
