"""Credentials written into a base URL never show in output, logs or exception text."""

from __future__ import annotations

import socket

import pytest

from toolkit.clients.base import RetryPolicy
from toolkit.clients.forem import ForemClient
from toolkit.config import Secret
from toolkit.errors import NoAnswerError
from toolkit.redact import clipped, quoted, redact_url

SYNC_CONFIG = """
[site]
title = "Sync site"
url = "https://example.com/blog"

[forem]
rate_window = 1
"""


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("https://user:secret@host/x", "https://***@host/x"),
        ("http://secret@127.0.0.1:8787", "http://***@127.0.0.1:8787"),
        ("https://me@mail.example:secret@host:1/p?q=a@b", "https://***@host:1/p?q=a@b"),
        ("https://dev.to", "https://dev.to"),
        ("https://host/a@b", "https://host/a@b"),
        (
            "GET http://u:secret@h/api and ftp://x:secret@y/z",
            "GET http://***@h/api and ftp://***@y/z",
        ),
    ],
)
def test_redact_url_replaces_the_userinfo(url, expected):
    assert redact_url(url) == expected


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.mark.e2e
def test_a_failed_connection_does_not_show_the_password():
    base = f"http://user:secret@127.0.0.1:{closed_port()}"
    with ForemClient(base, Secret("key"), retry=RetryPolicy(attempts=1)) as client:
        with pytest.raises(NoAnswerError) as caught:
            client.articles()
    text = f"{caught.value} {caught.value!r} {caught.value.message}"
    assert "secret" not in text and "user" not in text
    assert f"talking to http://***@127.0.0.1:{base.rsplit(':', 1)[1]}" in str(caught.value)


def test_cli_logs_do_not_show_the_password(make_project, sandbox):
    sandbox.reset()
    project = make_project(SYNC_CONFIG)
    project.post("hello", "Hello", published=True)
    host = sandbox.base_url.removeprefix("http://")
    env = {"FOREM_BASE_URL": f"http://user:secret@{host}", "FOREM_API_KEY": sandbox.demo_api_key}

    result = project.run("-vv", "plan", env=env)

    assert result.exit_code == 0, result.output
    assert f"http://***@{host}/api/articles/me/all" in result.output  # the request was logged
    assert "secret" not in result.output


def test_a_config_problem_does_not_show_the_password(make_project):
    project = make_project(SYNC_CONFIG)
    result = project.run(
        "plan", env={"FOREM_BASE_URL": "ftp://user:secret@host", "FOREM_API_KEY": "key"}
    )
    assert result.exit_code == 1
    assert "FOREM_BASE_URL: must be an absolute http(s) URL, not 'ftp://***@host'" in result.output
    assert "secret" not in result.output


def test_a_value_from_outside_is_shown_quoted_bounded_and_on_one_line():
    assert quoted("a.png", 60) == "'a.png'"
    assert quoted("x" * 61, 60) == repr("x" * 60 + "…")
    assert quoted("x" * 60, 60) == repr("x" * 60)
    assert quoted("a\nb\u202ec", 60) == "'a\\nb\\u202ec'"  # no line break, no bidi override


def test_a_value_within_a_sentence_is_shown_the_same_without_its_quotes():
    assert quoted("globex.example", 60, marks=False) == "globex.example"
    assert quoted("it's \\ fine", 60, marks=False) == "it's \\ fine"  # printable: as it is
    assert quoted("a\x1b[31mb\u202ec", 60, marks=False) == "a\\x1b[31mb\\u202ec"
    assert quoted("x" * 61, 60, marks=False) == "x" * 60 + "…"


def test_a_services_message_is_whole_or_cut_at_a_word_with_an_ellipsis():
    text = "Resource has been exhausted (e.g. check quota)."
    assert clipped(text, 60) == text
    assert clipped(text, 30) == "Resource has been exhausted…"
    assert clipped(text, 27) == "Resource has been exhausted…"  # a word that ends there
    assert clipped("x" * 40, 30) == "x" * 30 + "…"  # one word longer than the bound
    assert quoted(text, 30) == repr("Resource has been exhausted…")
