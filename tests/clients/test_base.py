"""The shared `ApiClient.send` for requests other than a JSON API's own: absolute URLs a
service hands out, bodies streamed and made anew for each attempt, answers streamed, and
a time of a request's own. Through an injected transport, where the answers (a timeout, a
body cut short) must be scripted exactly."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from toolkit.clients.base import ApiClient, BearerAuth, RequestReport, RetryPolicy
from toolkit.config import Secret
from toolkit.errors import NoAnswerError, NotFound, RateLimited, ServerError


def scripted(
    *answers: httpx.Response | Exception, seen: list[httpx.Request]
) -> httpx.MockTransport:
    """A transport that gives these answers in turn and keeps the requests (their bodies
    read) in `seen`."""
    queue = list(answers)

    def handle(request: httpx.Request) -> httpx.Response:
        request.read()
        seen.append(request)
        answer = queue.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer

    return httpx.MockTransport(handle)


class Chunks(httpx.SyncByteStream):
    """An answer's body that arrives in chunks, and may break off after them."""

    def __init__(self, *chunks: bytes, broken: bool = False):
        self.chunks = chunks
        self.broken = broken
        self.closed = False

    def __iter__(self) -> Iterator[bytes]:
        yield from self.chunks
        if self.broken:
            raise httpx.ReadError("connection reset")

    def close(self) -> None:
        self.closed = True


def client(
    transport: httpx.MockTransport, **options
) -> tuple[ApiClient, list[float], list[RequestReport]]:
    """A client on https://api.example with a bearer token, its pauses and its reports."""
    slept: list[float] = []
    reports: list[RequestReport] = []
    options.setdefault("retry", RetryPolicy(backoff=0.01))
    api = ApiClient(
        "https://api.example",
        auth=BearerAuth(Secret("sekrit")),
        transport=transport,
        sleep=slept.append,
        on_request=reports.append,
        **options,
    )
    return api, slept, reports


def test_the_credential_goes_to_the_base_urls_origin_only():
    seen: list[httpx.Request] = []
    api, _, reports = client(scripted(*[httpx.Response(200) for _ in range(5)], seen=seen))
    with api:
        api.send("GET", "/v2/users/me")
        api.send("GET", "https://api.example:443/v2/jobs", route="/v2/jobs")
        api.send(
            "GET", "https://storage.example/v2/storage/t1?signature=s1g", route="/v2/storage/{id}"
        )
        api.send("GET", "http://api.example/v2/jobs", route="/v2/jobs")  # another scheme
        api.send(
            "GET",
            "https://api.example/v2/storage/t2",
            route="/v2/storage/{id}",
            authenticated=False,
        )
    assert [request.headers.get("authorization") for request in seen] == [
        "Bearer sekrit",
        "Bearer sekrit",
        None,
        None,
        None,
    ]
    assert str(seen[2].url) == "https://storage.example/v2/storage/t1?signature=s1g"
    assert [report.route for report in reports] == [
        "/v2/users/me",
        "/v2/jobs",
        "/v2/storage/{id}",
        "/v2/jobs",
        "/v2/storage/{id}",
    ]


def test_messages_name_an_absolute_url_by_its_path_never_its_query():
    seen: list[httpx.Request] = []
    refused = httpx.Response(404, json={"message": "Not found."})
    api, _, _ = client(
        scripted(refused, httpx.ConnectError("refused"), httpx.ConnectError("refused"), seen=seen),
        retry=RetryPolicy(attempts=2, backoff=0.0),
    )
    with api:
        with pytest.raises(NotFound) as missing:
            api.send("GET", "https://storage.example/t/0/a.zip?signature=s1g", route="/t")
        with pytest.raises(NoAnswerError) as failed:
            api.send("GET", "https://storage.example/t/0/a.zip?signature=s1g", route="/t")
    assert str(missing.value) == "GET /t/0/a.zip: 404 Not found."
    assert str(failed.value) == ("GET /t/0/a.zip: connect error talking to https://storage.example")
    assert (failed.value.reason, failed.value.maybe_sent) == ("connect error", False)


def test_a_services_own_words_in_an_error_are_one_line_with_controls_escaped():
    seen: list[httpx.Request] = []
    said = "Not found.\nError: forged\x1b[2J " + "x" * 600
    api, _, _ = client(scripted(httpx.Response(404, json={"error": said}), seen=seen))
    with api, pytest.raises(NotFound) as missing:
        api.send("GET", "/a")
    message = str(missing.value)
    assert message.startswith("GET /a: 404 Not found.\\nError: forged\\x1b[2J")
    assert "\n" not in message and "\x1b" not in message
    assert message.endswith("…") and len(message) < 600


def test_a_streamed_body_is_made_again_for_each_attempt():
    made: list[int] = []

    def body() -> Iterator[bytes]:
        made.append(len(made))
        yield b"head "
        yield b"tail"

    seen: list[httpx.Request] = []
    api, slept, reports = client(scripted(httpx.Response(503), httpx.Response(201), seen=seen))
    with api:
        api.send(
            "POST",
            "/v2/up",
            content=body,
            headers={"Content-Length": "9"},
            idempotent=False,
            retry_server_errors=True,
        )
    assert made == [0, 1]
    assert [request.content for request in seen] == [b"head tail", b"head tail"]
    assert [(report.status, report.retries) for report in reports] == [(503, 0), (201, 1)]
    assert len(slept) == 1


def test_a_request_that_must_not_go_twice_is_not_retried_on_a_5xx_unless_told():
    seen: list[httpx.Request] = []
    api, _, _ = client(scripted(httpx.Response(503), seen=seen))
    with api, pytest.raises(ServerError):
        api.send("POST", "/v2/up", content=lambda: iter([b"x"]), idempotent=False)
    assert len(seen) == 1


def test_a_streamed_answer_is_returned_unread_for_the_caller_to_read_and_close():
    stream = Chunks(b"one ", b"two")
    seen: list[httpx.Request] = []
    api, _, reports = client(scripted(httpx.Response(200, stream=stream), seen=seen))
    with api:
        response = api.send(
            "GET",
            "https://storage.example/f?signature=s",
            route="/f",
            stream=True,
            authenticated=False,
        )
        assert not response.is_stream_consumed
        assert list(response.iter_bytes()) == [b"one ", b"two"]
        response.close()
    assert stream.closed
    assert [(report.route, report.status) for report in reports] == [("/f", 200)]


def test_a_streamed_error_answer_is_read_and_raised_like_any_other():
    seen: list[httpx.Request] = []
    answers = (
        httpx.Response(503, stream=Chunks(b"overloaded", broken=True)),
        httpx.Response(429, headers={"Retry-After": "2"}, stream=Chunks(b"slow down")),
        httpx.Response(404, stream=Chunks(b'{"message": "No such file."}')),
    )
    api, slept, _ = client(scripted(*answers, seen=seen))
    with api, pytest.raises(NotFound) as caught:
        api.send("GET", "/f", stream=True)
    assert str(caught.value) == "GET /f: 404 No such file."
    assert slept == [0.01, 2.0]  # the broken 503 was judged by its status and retried


def test_a_request_of_its_own_time_is_read_for_what_is_left_and_not_retried_at_its_end():
    seen: list[httpx.Request] = []
    api, slept, reports = client(scripted(httpx.ReadTimeout("held too long"), seen=seen))
    with api, pytest.raises(NoAnswerError) as caught:
        api.send("GET", "/v2/jobs/1/wait", route="/v2/jobs/{id}/wait", timeout=5.0)
    assert caught.value.timed_out and caught.value.reason == "read timeout"
    assert len(seen) == 1 and slept == []
    read = seen[0].extensions["timeout"]["read"]
    assert 4.0 < read <= 5.0  # not the client's 30 s
    assert (reports[0].status, reports[0].error) == (None, "read timeout")


def test_a_request_without_time_of_its_own_retries_a_timeout_within_the_clients():
    seen: list[httpx.Request] = []
    api, _, _ = client(scripted(httpx.ReadTimeout("slow"), httpx.Response(200), seen=seen))
    with api:
        assert api.send("GET", "/v2/jobs/1").status_code == 200
    assert len(seen) == 2
    first, second = (request.extensions["timeout"]["read"] for request in seen)
    assert 29.0 < second <= first <= 30.0  # the client's 30 s in all, not 30 s a try


def test_no_time_left_sends_nothing_and_a_pause_past_it_is_not_taken():
    seen: list[httpx.Request] = []
    limited = httpx.Response(429, headers={"Retry-After": "30"}, json={"message": "Too many."})
    api, slept, _ = client(
        scripted(limited, httpx.ConnectError("refused"), httpx.Response(200), seen=seen)
    )
    with api:
        with pytest.raises(NoAnswerError) as none_left:
            api.send("GET", "/v2/jobs/1/wait", timeout=0.0)
        assert none_left.value.timed_out and not none_left.value.maybe_sent and seen == []
        with pytest.raises(RateLimited) as limited_out:
            api.send("GET", "/v2/jobs/1/wait", timeout=5.0)
        assert limited_out.value.retry_after == 30.0 and slept == []
        # A connection that was never made is tried again within the time.
        assert api.send("GET", "/v2/jobs/1/wait", timeout=5.0).status_code == 200
    assert len(seen) == 3 and slept == [0.01]
