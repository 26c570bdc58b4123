"""Interface E against Parseable's own source: time ranges read as chrono's RFC 3339
parser reads them (`TimeRange::parse_human_time`), the delete and about routes
(`logstream::delete`, `about::about`) and streamed query answers
(`query::handle_streaming_query`)."""

from __future__ import annotations

import json
import re

import pytest

from tests.support.runlog_helpers import ingest


@pytest.mark.parametrize(
    ("start", "end"),
    [
        ("2024-05-01t00:00:00z", "2200-01-01T00:00:00Z"),  # lower-case `t` and `z`
        ("2024-05-01 00:00:00Z", "2200-01-01t00:00:00.5+01:00"),  # a space, a fraction
        ("2024-05-01T00:00:60Z", "2200-01-01T00:00:00\u221201:00"),  # a leap second, U+2212
        ("0001-01-01T00:00:00+14:00", "9999-12-31T23:59:59-14:00"),  # beyond Python's years
    ],
)
def test_rfc3339_times_chrono_takes_are_taken(service, stream, start, end):
    ingest(service, stream, [{"a": 1}])
    assert service.rows(f'SELECT a FROM "{stream}"', start, end) == [{"a": 1.0}]


@pytest.mark.parametrize(
    ("start", "words"),
    [
        ("2024-05-01T00:00:00+0000", "input contains invalid characters"),  # no colon
        ("2024-W18-3T00:00:00Z", "input contains invalid characters"),  # an ISO week date
        ("2024-122T00:00:00Z", "input contains invalid characters"),  # an ordinal date
        ("20240501T000000Z", "input contains invalid characters"),  # ISO 8601's basic form
        ("2024-05-01T00:00:00", "premature end of input"),  # no offset
        ("2024-05-01", "premature end of input"),
        ("2024-05-01T00:00:00Zz", "trailing input"),
        ("2024-02-30T00:00:00Z", "input is out of range"),
        ("2024-05-01T00:00:00+24:00", "input is out of range"),
    ],
)
def test_iso8601_forms_outside_rfc3339_are_refused(service, stream, start, words):
    ingest(service, stream, [{"a": 1}])
    response = service.query(f'SELECT a FROM "{stream}"', start, "2200-01-01T00:00:00Z")
    assert response.status_code == 400, response.text
    assert response.text == f"Error while parsing provided time range: Error parsing time: {words}"


def test_a_stream_can_be_deleted(service, stream):
    ingest(service, stream, [{"a": 1}])
    deleted = service.http.delete(f"/api/v1/logstream/{stream}")
    assert (deleted.status_code, deleted.text) == (200, f"log stream {stream} deleted")
    assert {"name": stream} not in service.http.get("/api/v1/logstream").json()
    gone = service.http.get(f"/api/v1/logstream/{stream}/schema")
    assert (gone.status_code, gone.text) == (404, f"Stream not found: {stream}")
    again = service.http.delete(f"/api/v1/logstream/{stream}")
    assert (again.status_code, again.text) == (404, f"Stream not found: {stream}")
    # The name is free again: a new stream of that name starts empty.
    ingest(service, stream, [{"b": "x"}])
    assert service.rows(f'SELECT * FROM "{stream}"')[0].keys() == {"p_timestamp", "b"}
    assert service.http.delete("/api/v1/logstream/no%20such").status_code == 404


def test_about_answers_parseables_fields(service):
    about = service.http.get("/api/v1/about")
    assert about.status_code == 200
    body = about.json()
    assert set(body) == {
        "version",
        "uiVersion",
        "commit",
        "deploymentId",
        "updateAvailable",
        "latestVersion",
        "llmActive",
        "llmProvider",
        "oidcActive",
        "license",
        "mode",
        "staging",
        "hotTier",
        "grpcPort",
        "store",
        "analytics",
    }
    assert body["version"].startswith("v") and body["license"] == "AGPL-3.0-only"
    assert (body["mode"], body["store"]["type"], body["updateAvailable"]) == (
        "Standalone",
        "Local drive",
        False,
    )
    assert service.http.get("/api/v1/about", auth=None).status_code == 401


def test_streaming_answers_newline_delimited_json(service, stream):
    ingest(service, stream, [{"n": n} for n in range(3)])
    sql = f'SELECT n FROM "{stream}" ORDER BY n'
    plain = service.query(sql, streaming="true")
    assert plain.status_code == 200
    assert plain.headers["content-type"] == "application/x-ndjson"
    lines = plain.text.splitlines()
    assert plain.text.endswith("\n") and [json.loads(line) for line in lines] == [
        [{"n": 0.0}, {"n": 1.0}, {"n": 2.0}]
    ]
    with_fields = service.query(sql, streaming="true", fields="true")
    first, *batches = [json.loads(line) for line in with_fields.text.splitlines()]
    assert first == {"fields": ["n"]} and batches == [[{"n": 0.0}, {"n": 1.0}, {"n": 2.0}]]
    empty = service.query(f'SELECT n FROM "{stream}" WHERE n > 5', streaming="true")
    assert (empty.status_code, empty.text) == (200, "")


def test_the_time_range_is_read_before_anything_else_of_the_query(service, stream):
    """`query::query` parses the time range first: an empty time is a time range error
    (Parseable's own emptiness checks come later and never see one)."""
    for start, end, words in (
        ("", "now", "Parsing humantime"),
        ("", "2200-01-01T00:00:00Z", "Error parsing time: premature end of input"),
        ("2024-05-01T00:00:00Z", "", "Error parsing time: premature end of input"),
    ):
        response = service.query("", start, end)
        assert (response.status_code, response.text) == (
            400,
            f"Error while parsing provided time range: {words}",
        )


def test_query_flags_are_booleans_or_none_is_read(service, stream):
    """Parseable reads the query string as a map of booleans: `true` or `false` only;
    one other value (`True`, `1`) and no flag is read at all."""
    ingest(service, stream, [{"n": 1}])
    sql = f'SELECT n FROM "{stream}"'
    assert service.query(sql, fields="true").json() == {"fields": ["n"], "records": [{"n": 1.0}]}
    assert service.query(sql, fields="True").json() == [{"n": 1.0}]
    assert service.query(sql, fields="true", streaming="1").json() == [{"n": 1.0}]


def test_a_query_answer_says_how_long_it_ran(service, stream):
    ingest(service, stream, [{"n": 1}])
    for params in ({}, {"streaming": "true"}):
        answer = service.query(f'SELECT n FROM "{stream}"', **params)
        assert re.fullmatch(r"[0-9]+(\.[0-9]+)?(ns|\u00b5s|ms|s)", answer.headers["p-time-elapsed"])


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("GET", "/api/v1/query"),
        ("DELETE", "/api/v1/ingest"),
        ("PATCH", "/api/v1/logstream/somewhere"),
        ("POST", "/api/v1/about"),
    ],
)
def test_a_wrong_method_is_actixs_405(service, method, path):
    """A known path asked with a method it does not take: actix's 405, no body, before
    any credential is looked at; an unknown path stays a 404."""
    answer = service.http.request(method, path, auth=None)
    assert (answer.status_code, answer.content) == (405, b"")
    assert service.http.get("/api/v1/nothing").status_code == 404
