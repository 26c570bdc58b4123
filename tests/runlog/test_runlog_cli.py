"""`toolkit logs`: SQL on the log stream, or `--local` over `.toolkit/events.jsonl` with the
same engine and the same answers; its formats, time options and failures."""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys

import pytest

from tests.support.runlog_helpers import RUNLOG_CONFIG, events

QUERY_COLUMNS = (
    "run_id, seq, time, command, event, action, outcome, post, method, route, "
    "status, retries, wait_ms, message, article_id, duration_ms"
)


def shipped_project(site, env, sandbox, retry_after: int = 1):
    """A project whose runs (a publish with a 429, a build, a mirror) are all shipped; the
    429's Retry-After makes a wait (0: none, for a test that does not look at waits)."""
    site.post("one", "First logged post", published=True)
    site.post("two", "Second logged post", published=True)
    sandbox.fault("POST", "/api/articles", status=429, retry_after=retry_after)
    for args in (["publish"], ["build"], ["mirror"], ["check"]):
        result = site.run(*args, env=env)
        assert result.exit_code == 0, result.output
    return site


def json_rows(result) -> list[dict]:
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_local_answers_as_the_service_does_for_the_same_events(site, env, sandbox, stream):
    shipped_project(site, env, sandbox)
    done = "command NOT IN ('check', 'logs')"  # runs whose events are all shipped
    for sql in (
        f"SELECT {QUERY_COLUMNS} FROM {stream} WHERE {done} ORDER BY run_id, seq",
        f"SELECT command, event, COUNT(*) AS n, SUM(duration_ms) AS ms, MAX(status) AS top "
        f"FROM {stream} WHERE {done} GROUP BY command, event ORDER BY command, event",
        f"SELECT route, status, COUNT(*) AS n FROM {stream} WHERE event = 'request' AND {done} "
        "GROUP BY route, status ORDER BY route, status",
    ):
        remote = json_rows(site.run("logs", "--format", "json", sql, env=env))
        local = json_rows(site.run("logs", "--local", "--format", "json", sql, env=env))
        assert remote and remote == local, sql
    requests = [
        e
        for e in events(site.root)
        if e["event"] == "request" and e["command"] not in ("check", "logs")
    ]
    statuses = json_rows(
        site.run(
            "logs",
            "--format",
            "json",
            f"SELECT status, COUNT(*) AS n FROM "
            f"{stream} WHERE event = 'request' AND {done} GROUP BY status "
            "ORDER BY status",
            env=env,
        )
    )
    counts: dict[int, int] = {}
    for event in requests:
        counts[event["status"]] = counts.get(event["status"], 0) + 1
    assert statuses == [{"status": float(s), "n": n} for s, n in sorted(counts.items())]
    assert {"status": 429.0, "n": 1} in statuses


def test_table_and_csv_formats(site, env, sandbox, stream):
    shipped_project(site, env, sandbox, retry_after=0)
    sql = (
        f"SELECT status, COUNT(*) AS n FROM {stream} WHERE event = 'request' "
        "AND route = '/api/articles' GROUP BY status ORDER BY status"
    )
    table = site.run("logs", sql, env=env)
    assert table.exit_code == 0, table.output
    lines = table.stdout.splitlines()
    assert "status" in lines[0] and "n" in lines[0]
    assert any(line.split()[0] == "429" for line in lines[2:])  # whole numbers without .0
    assert f"record(s) from {sandbox.base_url}" in table.stderr
    as_csv = site.run("logs", "--format", "csv", sql, env=env)
    rows = list(csv.reader(io.StringIO(as_csv.stdout)))
    assert rows[0] == ["status", "n"] and ["429", "1"] in rows


def test_since_start_and_end(site, env, sandbox, stream):
    shipped_project(site, env, sandbox, retry_after=0)
    count = f"SELECT COUNT(*) AS n FROM {stream} WHERE command = 'publish'"
    recent = json_rows(site.run("logs", "--format", "json", "--since", "1h", count, env=env))
    assert recent[0]["n"] > 0  # shipped a moment ago, and still in: the end is the next minute
    local = json_rows(
        site.run("logs", "--local", "--format", "json", "--since", "1h", count, env=env)
    )
    assert local == recent
    old = ["--start", "2020-01-01T00:00:00Z", "--end", "2020-01-02T00:00:00Z"]
    assert json_rows(site.run("logs", "--format", "json", *old, count, env=env)) == [{"n": 0}]
    assert json_rows(site.run("logs", "--local", "--format", "json", *old, count, env=env)) == [
        {"n": 0}
    ]
    assert (
        json_rows(
            site.run("logs", "--format", "json", "--start", "2020-01-01T00:00:00Z", count, env=env)
        )
        == recent
    )


@pytest.mark.parametrize("local", [False, True])
def test_start_after_end_and_bad_queries_exit_1_with_the_services_message(site, env, local):
    assert site.run("check", env=env).exit_code == 0
    where = ["--local"] if local else []
    backwards = site.run(
        "logs",
        *where,
        "--start",
        "2024-05-01T01:00:00Z",
        "--end",
        "2024-05-01T00:00:00Z",
        "SELECT 1",
        env=env,
    )
    assert backwards.exit_code == 1
    assert (
        "Error while parsing provided time range: Start time cannot be greater than the end time"
    ) in backwards.output
    bad = site.run("logs", *where, "SELECT nope FROM toolkit", env=env)
    assert bad.exit_code == 1 and "Traceback" not in bad.output
    assert "Datafusion Error:" in bad.output
    unparsable = site.run("logs", *where, "--start", "yesterday", "SELECT 1", env=env)
    assert (
        unparsable.exit_code == 1 and "Error while parsing provided time range" in unparsable.output
    )


def test_a_query_that_fails_while_running_is_not_retried(site, env, sandbox, stream):
    """Its 500 ("Execution Error") is the query's own: asking again answers the same."""
    assert site.run("check", env=env).exit_code == 0
    sandbox.reset_stats()
    failed = site.run("logs", f'SELECT 1/0 AS x FROM "{stream}"', env=env)
    assert failed.exit_code == 1 and "Traceback" not in failed.output
    assert "Execution Error" in failed.output
    assert sandbox.count("POST", "/api/v1/query", interface="logs") == 1
    waits = [e for e in events(site.root) if e["command"] == "logs" and e["event"] == "wait"]
    assert waits == []


@pytest.mark.parametrize("status", [502, 503, 504])
def test_a_transient_failure_of_a_query_is_retried(site, env, sandbox, stream, status):
    """A gateway's or a briefly-down service's answer is not the query's: asked again."""
    assert site.run("check", env=env).exit_code == 0
    sandbox.reset_stats()
    sandbox.fault("POST", "/api/v1/query", status=status)
    answered = site.run(
        "logs", f'SELECT count(*) AS n FROM "{stream}"', "--format", "json", env=env
    )
    assert answered.exit_code == 0, answered.output
    assert json.loads(answered.stdout)[0]["n"] >= 1
    assert sandbox.count("POST", "/api/v1/query", interface="logs") == 2


def test_a_query_that_keeps_failing_is_retried_a_bounded_number_of_times(
    site, env, sandbox, stream
):
    assert site.run("check", env=env).exit_code == 0
    sandbox.reset_stats()
    sandbox.fault("POST", "/api/v1/query", status=503, count=5)
    failed = site.run("logs", f'SELECT count(*) AS n FROM "{stream}"', env=env)
    assert failed.exit_code == 1 and "Traceback" not in failed.output
    assert "503" in failed.output
    assert sandbox.count("POST", "/api/v1/query", interface="logs") == 5  # RetryPolicy().attempts


def test_queries_name_a_mixed_case_stream_exactly(make_project, env, service):
    """With `[logs] stream = "MixedCase..."`, shipping (and its check of a pending batch) and
    `toolkit logs` work on the stream of that exact name."""
    import secrets

    stream = "Mixed" + secrets.token_hex(4)
    site = make_project(RUNLOG_CONFIG.format(stream=stream))
    assert site.run("check", env=env).exit_code == 0
    assert site.run("check", env=env).exit_code == 0
    rows = json_rows(
        site.run(
            "logs",
            "--format",
            "json",
            f"SELECT COUNT(*) AS n FROM \"{stream}\" WHERE command = 'check' AND event = 'run'",
            env=env,
        )
    )
    assert rows == [{"n": 4}]


def test_usage_errors_exit_2(site):
    assert (
        site.run("logs", "--since", "1h", "--start", "2024-05-01T00:00:00Z", "SELECT 1").exit_code
        == 2
    )
    soon = site.run("logs", "--since", "soon", "SELECT 1")
    assert soon.exit_code == 2 and "not a duration" in soon.output


def test_without_a_log_service_only_local_queries_run(site, stream):
    result = site.run("logs", "SELECT 1")
    assert result.exit_code == 1
    assert "no log service" in result.output and "--local" in result.output
    local = site.run(
        "logs",
        "--local",
        "--format",
        "json",
        f"SELECT COUNT(*) AS n FROM {stream} "
        "WHERE command = 'logs' AND event <> 'run' OR action = 'end'",
    )
    assert json_rows(local) == [{"n": 2}]  # the failed query's error and end


def test_local_skips_lines_that_are_not_events(site, stream):
    assert site.run("check").exit_code == 0
    with open(site.root / ".toolkit" / "events.jsonl", "ab") as handle:
        handle.write(b"garbage\n")
        handle.write(b'{"run_id": "x", "seq": 0, "time": "not a time"}\n')
        handle.write(b'{"run_id": "half"')  # a line a crash cut short
    result = site.run(
        "logs",
        "--local",
        "--format",
        "json",
        f"SELECT command FROM {stream} WHERE event = 'run' AND action = 'end'",
    )
    assert json_rows(result) == [{"command": "check"}]
    assert "3 line(s) of the log are not events" in result.stderr


@pytest.mark.parametrize(
    "bad",
    [
        b'{"time": "2024-05-01T00:00:00Z", "run_id": "x", "seq": 0, "command": "ch\xff\xfeck", '
        b'"event": "run"}',  # not UTF-8
        b'{"time": "9999-12-31T23:59:59-05:00", "run_id": "x", "seq": 0, "command": "check", '
        b'"event": "run"}',  # after the year 9999 in UTC
        b'{"time": "0001-01-01T00:00:00+05:00", "run_id": "x", "seq": 0, "command": "check", '
        b'"event": "run"}',  # before the year 1 in UTC
    ],
)
def test_local_skips_lines_with_bad_text_or_a_time_out_of_range(site, stream, bad):
    assert site.run("check").exit_code == 0
    with open(site.root / ".toolkit" / "events.jsonl", "ab") as handle:
        handle.write(bad + b"\n")
    result = site.run(
        "logs",
        "--local",
        "--format",
        "json",
        f"SELECT command, time FROM {stream} WHERE event = 'run' ORDER BY time",
    )
    rows = json_rows(result)
    assert [row["command"] for row in rows] == ["check", "check", "logs"]
    assert "1 line(s) of the log are not events" in result.stderr


def checks_counted(site, stream: str, table: str) -> list[dict]:
    """After one more `check`, its runs counted by `logs --local` on `stream` as `table`."""
    assert site.run("check").exit_code == 0
    return json_rows(
        site.run(
            "logs",
            "--local",
            "--stream",
            stream,
            "--format",
            "json",
            f"SELECT COUNT(*) AS n FROM {table} WHERE command = 'check'",
        )
    )


def test_a_mixed_case_stream_is_named_quoted_locally_as_on_the_service(site):
    """Unquoted identifiers fold to lower case; the table has the stream's exact name."""
    assert checks_counted(site, "MyStream", '"MyStream"') == [{"n": 3}]
    folded = site.run("logs", "--local", "--stream", "MyStream", "SELECT 1 FROM MyStream")
    assert folded.exit_code == 1
    assert "table 'datafusion.public.mystream' not found" in folded.output


def test_the_stream_name_is_the_table_name_locally(site):
    assert checks_counted(site, "other", "other") == [{"n": 3}]
    refused = site.run("logs", "--local", "DELETE FROM other", "--stream", "other")
    assert refused.exit_code == 1


def test_a_table_sent_to_a_pipe_is_not_wrapped(site):
    assert site.run("check").exit_code == 0
    route = "/appsmarket/v2/customerLicense/{applicationId}/{customerId}" * 2
    result = site.run(
        "logs",
        "--local",
        "--stream",
        "other",
        f"SELECT 200 AS status, 7 AS requests, '{route}' AS slowest_route FROM other LIMIT 1",
    )
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert any(
        line.replace("┃", " ").split() == ["status", "requests", "slowest_route"] for line in lines
    ), result.stdout
    assert any(route in line and line.split()[0] == "200" for line in lines), result.stdout


@pytest.mark.e2e
def test_the_cli_and_a_no_change_build_do_not_import_the_query_engine(site):
    site.post("one", "Fast post", published=True)
    assert site.run("build").exit_code == 0
    script = (
        "import sys\n"
        "from toolkit.cli import main\n"
        "for args in (['--help'], ['-q', 'build'], ['-q', 'check']):\n"
        "    try:\n"
        f"        main(['--config', {str(site.root / 'toolkit.toml')!r}, *args])\n"
        "    except SystemExit as exit:\n"
        "        assert not exit.code, exit.code\n"
        "print('loaded:' + ','.join(m for m in ('datafusion', 'pyarrow') if m in sys.modules))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, cwd=site.root, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "loaded:"
