"""Interface E in the sandbox, over real HTTP: Parseable's ingest and query, its auth and
text errors, and routes that interface A's `/api` rules never shadow. What its queries
answer and how it keeps streams are in test_runlog_service_data.py."""

from __future__ import annotations

import datetime as dt
import json

import httpx
import pytest

from tests.support.runlog_helpers import ingest
from toolkit.tls import shared_context
from toolkit_sandbox.logs.http import PASSWORD, USERNAME


def test_ingest_types_fields_as_parseable_and_adds_p_timestamp(service, stream):
    before = dt.datetime.now(dt.UTC).replace(tzinfo=None)
    response = service.ingest(
        stream,
        {
            "status": 200,
            "msg": "hi",
            "time": "2024-05-01T03:00:00Z",
            "nested": {"ok": True, "n": 2},
        },
    )
    assert (response.status_code, response.content) == (200, b"")
    schema = service.http.get(f"/api/v1/logstream/{stream}/schema").json()
    types = {field["name"]: field["data_type"] for field in schema["fields"]}
    assert types == {
        "p_timestamp": {"Timestamp": ["Millisecond", None]},
        "msg": "Utf8",
        "nested_n": "Float64",
        "nested_ok": "Boolean",
        "status": "Float64",
        "time": {"Timestamp": ["Millisecond", None]},
    }
    assert [field["name"] for field in schema["fields"]][0] == "p_timestamp"
    (row,) = service.rows(f"SELECT * FROM {stream}")
    assert row["status"] == 200.0 and row["time"] == "2024-05-01T03:00:00"
    stamp = dt.datetime.fromisoformat(row["p_timestamp"])
    assert before - dt.timedelta(seconds=1) <= stamp <= dt.datetime.now(dt.UTC).replace(tzinfo=None)
    assert {"name": stream} in service.http.get("/api/v1/logstream").json()


def test_arrays_make_a_record_per_element_as_parseable_does(service, stream):
    """Parseable's generic flattening (a stream of schema version 1, a body at most 10
    levels deep): one record per element of an array, every pair for two arrays."""
    ingest(
        service,
        stream,
        [
            {"n": 1, "tags": ["a", "b"]},
            {"n": 2, "x": [1, 2], "y": ["p", "q"]},
            {"n": 3, "objs": [{"b": 1}, {"b": 2, "c": "z"}]},
            {"n": 4, "empty": [], "deep": {"list": [True]}},
        ],
    )
    rows = service.rows(
        f'SELECT n, tags, x, y, objs_b, objs_c, deep_list FROM "{stream}" '
        "ORDER BY n, tags, x, y, objs_b"
    )
    assert rows == [
        {"n": 1.0, "tags": "a"},
        {"n": 1.0, "tags": "b"},
        {"n": 2.0, "x": 1.0, "y": "p"},
        {"n": 2.0, "x": 1.0, "y": "q"},
        {"n": 2.0, "x": 2.0, "y": "p"},
        {"n": 2.0, "x": 2.0, "y": "q"},
        {"n": 3.0, "objs_b": 1.0},
        {"n": 3.0, "objs_b": 2.0, "objs_c": "z"},
        {"n": 4.0, "deep_list": True},
    ]
    types = {
        field["name"]: field["data_type"]
        for field in service.http.get(f"/api/v1/logstream/{stream}/schema").json()["fields"]
    }
    assert types["tags"] == "Utf8" and types["x"] == "Float64" and "empty" not in types
    like = service.rows(f"""SELECT COUNT(*) AS n FROM "{stream}" WHERE tags LIKE 'a'""")
    assert like == [{"n": 1}]


def nested(levels: int, inner: dict) -> dict:
    for _ in range(levels):
        inner = {"l": inner}
    return inner


def test_arrays_deeper_than_the_flatten_level_are_lists(service, stream):
    """Past P_MAX_FLATTEN_LEVEL (10) the body is not generically flattened: its arrays are
    Arrow lists, which `array_has` reads (and `LIKE` does not)."""
    prefix = "l_" * 9
    ingest(
        service,
        stream,
        [nested(9, {"tags": ["a", "b"], "nums": [1, 2], "objs": [{"k": "x"}, {"k": "y"}, None]})],
    )
    types = {
        field["name"]: field["data_type"]
        for field in service.http.get(f"/api/v1/logstream/{stream}/schema").json()["fields"]
    }
    assert types[prefix + "tags"]["List"]["data_type"] == "Utf8"
    assert types[prefix + "nums"]["List"]["data_type"] == "Int64"
    assert types[prefix + "objs_k"]["List"]["data_type"] == "Utf8"
    (row,) = service.rows(
        f'SELECT "{prefix}tags" AS tags, "{prefix}nums" AS nums, '
        f'"{prefix}objs_k" AS objs, array_has("{prefix}tags", \'a\') AS has_a '
        f'FROM "{stream}"'
    )
    assert row == {"tags": ["a", "b"], "nums": [1, 2], "objs": ["x", "y", None], "has_a": True}
    ingest(service, stream, [nested(8, {"tags": ["c", "d"]})])  # 10 levels: flattened
    rows = service.rows(
        f'SELECT "{"l_" * 8}tags" AS tags FROM "{stream}" '
        f'WHERE "{"l_" * 8}tags" IS NOT NULL ORDER BY 1'
    )
    assert rows == [{"tags": "c"}, {"tags": "d"}]
    mixed = service.ingest(stream, [nested(9, {"tags": "plain"})])  # a string, the field a list
    assert (mixed.status_code, mixed.text) == (
        400,
        "Invalid Request: Could not process this event due to mismatch in datatype",
    )


def test_fields_true_and_null_columns(service, stream):
    ingest(service, stream, [{"a": 1}, {"b": "x"}])
    answer = service.query(f"SELECT a, b FROM {stream} ORDER BY a", fields="true").json()
    assert answer == {"fields": ["a", "b"], "records": [{"a": 1.0}, {"b": "x"}]}
    with_nulls = service.query(f"SELECT a, b FROM {stream} ORDER BY a", sendNull="true").json()
    assert with_nulls == [{"a": 1.0, "b": None}, {"a": None, "b": "x"}]


@pytest.mark.parametrize(
    ("body", "headers", "message"),
    [
        (b"[]", {}, "Header Error: Stream name not found in header [x-p-stream]"),
        (b"{", {"X-P-Stream": "ok"}, "Json deserialize error: the body is not valid JSON"),
        (
            b"12",
            {"X-P-Stream": "ok"},
            "Invalid Request: the body must be a JSON object or an array of JSON objects",
        ),
        (b'{"a": 1}', {"X-P-Stream": "has space"}, "Stream name cannot contain whitespace"),
        (b'{"a": 1}', {"X-P-Stream": "a.b"}, "Stream name cannot contain special character: ."),
        (b'{"a": 1}', {"X-P-Stream": "select"}, "SQL keyword cannot be used as stream name"),
        (
            b'{"p_timestamp": 1}',
            {"X-P-Stream": "ok"},
            "Invalid Request: field p_timestamp is a reserved field",
        ),
        (
            b'[{"a": 1}, {"a": "x"}]',
            {"X-P-Stream": "ok"},
            "Invalid Request: Could not process this event due to mismatch in datatype",
        ),
    ],
)
def test_ingest_errors_are_400_text(service, body, headers, message):
    response = service.http.post(
        "/api/v1/ingest", content=body, headers={"Content-Type": "application/json", **headers}
    )
    assert response.status_code == 400
    assert response.headers["content-type"].startswith("text/plain")
    assert response.text == message


def test_a_later_value_of_another_type_is_refused(service, stream):
    ingest(service, stream, [{"status": 200}])
    refused = service.ingest(stream, [{"status": "ok"}])
    assert (refused.status_code, refused.text) == (
        400,
        "Invalid Request: Could not process this event due to mismatch in datatype",
    )
    assert service.rows(f"SELECT COUNT(*) AS n FROM {stream}") == [{"n": 1}]


@pytest.mark.parametrize("auth", [None, ("admin", "wrong"), ("someone", PASSWORD)])
@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("POST", "/api/v1/ingest"),
        ("POST", "/api/v1/query"),
        ("GET", "/api/v1/logstream"),
        ("GET", "/api/v1/logstream/toolkit/schema"),
    ],
)
def test_basic_auth_401_without_credentials_403_with_wrong_ones(sandbox, auth, method, path):
    response = httpx.request(
        method,
        sandbox.base_url + path,
        auth=auth,
        json={"a": 1},
        headers={"X-P-Stream": "toolkit"},
        verify=shared_context(),
    )
    assert response.headers["content-type"].startswith("text/plain")
    if auth is None:
        assert (response.status_code, response.text) == (401, "No authentication method supplied")
    else:
        assert response.status_code == 403
        assert response.text.startswith("You don't have permission to access this resource")
    garbled = httpx.request(
        method,
        sandbox.base_url + path,
        headers={"Authorization": "Basic !!!"},
        verify=shared_context(),
    )
    assert garbled.status_code == 401


WHOLE = {"startTime": "1970-01-01T00:00:00Z", "endTime": "2200-01-01T00:00:00Z"}


@pytest.mark.parametrize(
    ("body", "status", "message"),
    [
        ({**WHOLE}, 400, "Json deserialize error: missing field `query`"),
        (
            {"query": "SELECT 1", "endTime": "now"},
            400,
            "Json deserialize error: missing field `startTime`",
        ),
        (
            {"query": "SELECT 1", "startTime": "1h"},
            400,
            "Json deserialize error: missing field `endTime`",
        ),
        ({"query": " ", **WHOLE}, 400, "Query cannot be empty"),
        (
            {"query": "SELECT * FROM nope", **WHOLE},
            400,
            "Datafusion Error: Error during planning: table 'datafusion.public.nope' not found",
        ),
        (
            {"query": "SELEC x", **WHOLE},
            400,
            'Datafusion Error: SQL error: ParserError("Expected: an SQL statement, found: SELEC at '
            'Line: 1, Column: 1")',
        ),
        (
            {"query": "SELECT nope FROM STREAM", **WHOLE},
            400,
            "Datafusion Error: Schema error: No field named nope.",
        ),
        (
            {"query": "SELECT * FROM elsewhere", **WHOLE},
            400,
            "Datafusion Error: Error during planning: table 'datafusion.public.elsewhere' not found",
        ),
        ({"query": "DROP TABLE STREAM", **WHOLE}, 400, "Datafusion Error: Error during planning"),
        (
            {"query": "COPY (SELECT 1) TO '/tmp/x.csv'", **WHOLE},
            400,
            "Datafusion Error: Error during planning: DML not supported: COPY",
        ),
        (
            {"query": "SELECT 1/0 FROM STREAM", **WHOLE},
            500,
            "Execution Error: Query Execution failed due to error in datafusion",
        ),
        (
            {"query": "SELECT 1", "startTime": "", "endTime": "now"},
            400,
            "Error while parsing provided time range: Parsing humantime",
        ),
        (
            {"query": "SELECT 1", "startTime": "soon", "endTime": "now"},
            400,
            "Error while parsing provided time range: Parsing humantime",
        ),
        (
            {"query": "SELECT 1", "startTime": "yesterday", "endTime": "2024-05-01T00:00:00Z"},
            400,
            "Error while parsing provided time range: Error parsing time",
        ),
        (
            {
                "query": "SELECT 1",
                "startTime": "2024-05-01T01:00:00Z",
                "endTime": "2024-05-01T00:00:00Z",
            },
            400,
            "Error while parsing provided time range: Start time cannot be greater than the end time",
        ),
    ],
)
def test_query_errors_are_text_with_parseable_words(service, stream, body, status, message):
    ingest(service, stream, [{"a": 1}])
    body = {key: value.replace("STREAM", stream) for key, value in body.items()}
    response = service.http.post("/api/v1/query", json=body)
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("text/plain")
    assert response.text.startswith(message), response.text


def test_a_query_names_its_stream_in_its_sql_only(service, stream):
    """`streamName` is not required, and ignored when sent (Parseable ignores unknown
    fields): the SQL's table is the stream."""
    ingest(service, stream, [{"a": 1}])
    bare = service.http.post("/api/v1/query", json={"query": f'SELECT a FROM "{stream}"', **WHOLE})
    assert (bare.status_code, bare.json()) == (200, [{"a": 1.0}])
    other = service.http.post(
        "/api/v1/query",
        json={"query": f'SELECT a FROM "{stream}"', "streamName": "elsewhere", **WHOLE},
    )
    assert (other.status_code, other.json()) == (200, [{"a": 1.0}])


def test_unquoted_stream_names_fold_to_lower_case(service):
    """Parseable looks a stream up by its exact name after the SQL engine has folded an
    unquoted identifier to lower case: `FROM MyStream` looks for `mystream`."""
    import secrets

    mixed = "Mixed" + secrets.token_hex(4)
    ingest(service, mixed, [{"a": 1}])
    assert service.rows(f'SELECT a FROM "{mixed}"') == [{"a": 1.0}]
    folded = service.query(f"SELECT a FROM {mixed}")
    assert (folded.status_code, folded.text) == (
        400,
        "Datafusion Error: Error during planning: table "
        f"'datafusion.public.{mixed.lower()}' not found",
    )
    ingest(service, mixed.lower(), [{"a": 2}])  # another stream, its lower-case namesake
    assert service.rows(f"SELECT a FROM {mixed}") == [{"a": 2.0}]
    assert service.rows(f'SELECT a FROM "{mixed}"') == [{"a": 1.0}]


@pytest.mark.parametrize("content_type", [None, "text/plain", "application/x-www-form-urlencoded"])
@pytest.mark.parametrize("path", ["/api/v1/ingest", "/api/v1/query", "/api/v1/logstream/STREAM"])
def test_a_body_without_a_json_content_type_is_refused(service, stream, content_type, path):
    ingest(service, stream, [{"a": 1}])
    headers = (
        {"X-P-Stream": stream}
        if content_type is None
        else {"X-P-Stream": stream, "Content-Type": content_type}
    )
    body = json.dumps(
        {"query": f'SELECT a FROM "{stream}"', **WHOLE} if "query" in path else [{"a": 2}]
    ).encode()
    request = service.http.build_request(
        "POST", path.replace("STREAM", stream), content=body, headers=headers
    )
    assert ("content-type" in request.headers) == (content_type is not None)
    response = service.http.send(request)
    assert (response.status_code, response.text) == (400, "Content type error")
    assert service.rows(f'SELECT COUNT(*) AS n FROM "{stream}"') == [{"n": 1}]
    for kind in ("application/json; charset=utf-8", "application/vnd.api+json"):
        accepted = service.http.post(
            path.replace("STREAM", stream),
            content=body,
            headers={"X-P-Stream": stream, "Content-Type": kind},
        )
        assert accepted.status_code == 200, accepted.text


def test_logstream_routes_create_and_ingest_into_a_named_stream(service, stream):
    missing = service.http.post(f"/api/v1/logstream/{stream}", json=[{"a": 1}])
    assert (missing.status_code, missing.text) == (404, f"Stream not found: {stream}")
    created = service.http.put(f"/api/v1/logstream/{stream}")
    assert (created.status_code, created.text) == (200, "Log stream created")
    assert {"name": stream} in service.http.get("/api/v1/logstream").json()
    again = service.http.put(f"/api/v1/logstream/{stream}")
    assert (again.status_code, again.text) == (
        400,
        f"Logstream {stream} already exists, please create a new log stream with unique name",
    )
    bad = service.http.put("/api/v1/logstream/has.dot")
    assert (bad.status_code, bad.text) == (400, "Stream name cannot contain special character: .")
    stored = service.http.post(f"/api/v1/logstream/{stream}", json=[{"a": 1}, {"a": 2}])
    assert (stored.status_code, stored.content) == (200, b"")
    assert service.rows(f'SELECT SUM(a) AS total FROM "{stream}"') == [{"total": 3.0}]
    for method in ("PUT", "POST"):
        anonymous = httpx.request(
            method,
            f"{service.sandbox.base_url}/api/v1/logstream/{stream}",
            json=[{"a": 1}],
            verify=shared_context(),
        )
        assert anonymous.status_code == 401


@pytest.mark.parametrize("path", ["/api/v1/liveness", "/api/v1/readiness"])
@pytest.mark.parametrize("method", ["GET", "HEAD"])
def test_liveness_and_readiness_answer_without_credentials(sandbox, path, method):
    response = httpx.request(method, sandbox.base_url + path, verify=shared_context())
    assert (response.status_code, response.content) == (200, b"")


def test_interface_a_never_shadows_the_log_service(sandbox, service, stream):
    """Forem owns /api, but not /api/v1: its 404 body, User-Agent rule and api-key do not
    apply there."""
    forem = httpx.Client(
        base_url=sandbox.base_url, headers={"User-Agent": "Java/17.0.2"}, verify=shared_context()
    )
    try:
        forem.post(f"{sandbox.base_url}/__sandbox/forem/user-agent-check", json={"enabled": True})
        assert forem.get("/api/articles").status_code == 403  # Forem's edge refuses it
        ingested = forem.post(
            "/api/v1/ingest",
            auth=(USERNAME, PASSWORD),
            json={"a": 1},
            headers={"X-P-Stream": stream},
        )
        assert ingested.status_code == 200
        unknown = forem.get("/api/v1/nothing", auth=(USERNAME, PASSWORD))
        assert (unknown.status_code, unknown.text) == (404, "")
        assert unknown.headers["content-type"].startswith("text/plain")
        key_only = forem.get("/api/v1/logstream", headers={"api-key": sandbox.demo_api_key})
        assert (key_only.status_code, key_only.text) == (401, "No authentication method supplied")
    finally:
        forem.post(f"{sandbox.base_url}/__sandbox/forem/user-agent-check", json={"enabled": False})
        forem.close()
    records = [r for r in sandbox.requests() if r["route"].startswith("/api/v1")]
    assert {r["interface"] for r in records} == {"logs"}
    assert any(r["caller"] == USERNAME for r in records)


def test_faults_answer_in_the_log_services_words(sandbox, service, stream):
    sandbox.fault("POST", "/api/v1/ingest", status=503)
    response = service.ingest(stream, [{"a": 1}])
    assert (response.status_code, response.text) == (503, "Service Unavailable")
    assert response.headers["content-type"].startswith("text/plain")


def test_ingest_bodies_over_10_mib_are_413(service, stream):
    big = json.dumps([{"a": "x" * 1000}] * 11_000).encode()
    response = service.http.post(
        "/api/v1/ingest",
        content=big,
        headers={"X-P-Stream": stream, "Content-Type": "application/json"},
    )
    assert response.status_code == 413
