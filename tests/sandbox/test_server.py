"""The server and the CLI: persistence with a database file, loopback only, concurrent
requests, `toolkit sandbox` (the real CLI in this process; in a process of its own for
SIGTERM)."""

from __future__ import annotations

import os
import re
import socket
import sqlite3
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest

from tests.support.running_cli import RunningCli
from toolkit.tls import shared_context
from toolkit_sandbox.forem.seed import api_key_for
from toolkit_sandbox.server import SandboxError, SandboxServer, is_loopback


def test_state_persists_across_restarts_with_a_database_file(
    tmp_path: Path, make_sandbox, make_api
) -> None:
    db = tmp_path / "state" / "sandbox.db"
    first = make_sandbox(db_path=db)
    assert first.created
    api = make_api(first)
    created = api.create(title="Survives a restart", body_markdown="x", published=True)
    api.ok("PUT", "/api/articles/1004", user="demo", json={"article": {"description": "Changed"}})
    api.close()
    first.stop()

    second = make_sandbox(db_path=db)
    assert not second.created  # reopened, not seeded again
    api = make_api(second)
    assert api.ok("GET", f"/api/articles/{created['id']}")["title"] == "Survives a restart"
    assert api.ok("GET", "/api/articles/1004")["description"] == "Changed"
    assert api.keys == {a["username"]: a["api_key"] for a in first_accounts()}
    api.ok("POST", "/__sandbox/reset")
    assert api.get(f"/api/articles/{created['id']}").status_code == 404


def first_accounts() -> list[dict]:
    return [{"username": name, "api_key": api_key_for(name)} for name in ("demo", "sam", "admin")]


def test_no_seed_keeps_the_accounts_only(make_sandbox, make_api) -> None:
    server = make_sandbox(seed=False)
    api = make_api(server)
    assert [a["username"] for a in server.accounts()] == ["demo", "sam", "admin"]
    assert api.ok("GET", "/api/articles/me/all", user="demo") == []
    assert api.ok("GET", "/api/listings") == [] and api.ok("GET", "/api/tags") == []
    created = api.create(title="First", body_markdown="x", published=True)
    api.ok("POST", "/__sandbox/reset")
    assert api.get(f"/api/articles/{created['id']}").status_code == 404
    assert api.ok("GET", "/api/articles") == []


def test_a_database_of_another_schema_is_refused(tmp_path: Path) -> None:
    db = tmp_path / "old.db"
    with sqlite3.connect(db) as conn:
        conn.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
        conn.execute("INSERT INTO meta VALUES ('schema_version', '0')")
    conn.close()
    with pytest.raises(SandboxError, match="another sandbox version"):
        SandboxServer(db_path=db).start()
    (tmp_path / "junk.db").write_bytes(b"not a database at all" * 100)
    with pytest.raises(SandboxError, match="not a sandbox database"):
        SandboxServer(db_path=tmp_path / "junk.db").start()


def test_only_loopback_unless_allowed() -> None:
    assert is_loopback("127.0.0.1") and is_loopback("::1") and is_loopback("localhost")
    assert (
        not is_loopback("0.0.0.0")
        and not is_loopback("192.168.1.5")
        and not is_loopback("example.com")
    )
    with pytest.raises(SandboxError, match="loopback"):
        SandboxServer(host="0.0.0.0")
    SandboxServer(host="0.0.0.0", allow_remote=True)  # allowed (not started here)


@pytest.mark.e2e
def test_a_busy_port_is_a_clear_error() -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen(1)
        port = busy.getsockname()[1]
        with pytest.raises(SandboxError, match=f"cannot listen on 127.0.0.1:{port}"):
            SandboxServer(port=port).start()


def test_concurrent_requests_on_an_in_memory_database(make_sandbox) -> None:
    server = make_sandbox()
    server.set_rate_limits(False)
    key = server.demo_api_key

    def work(number: int) -> list[int]:
        with httpx.Client(
            base_url=server.base_url, headers={"api-key": key}, verify=shared_context()
        ) as client:
            statuses = [client.get("/api/articles").status_code]
            created = client.post(
                "/api/articles",
                json={
                    "article": {
                        "title": f"Concurrent {number}",
                        "body_markdown": "x",
                        "published": True,
                    }
                },
            )
            statuses.append(created.status_code)
            article_id = created.json()["id"]
            for version in range(5):
                statuses.append(
                    client.put(
                        f"/api/articles/{article_id}",
                        json={"article": {"body_markdown": f"v{version}"}},
                    ).status_code
                )
            statuses.append(client.get(f"/api/articles/{article_id}").status_code)
            return statuses

    with ThreadPoolExecutor(max_workers=16) as pool:
        results = [status for statuses in pool.map(work, range(32)) for status in statuses]
    assert results.count(201) == 32 and set(results) == {200, 201}
    with httpx.Client(
        base_url=server.base_url, headers={"api-key": key}, verify=shared_context()
    ) as client:
        mine = client.get("/api/articles/me/all", params={"per_page": 1000}).json()
    assert len([a for a in mine if a["title"].startswith("Concurrent")]) == 32
    assert all(a["body_markdown"] == "v4" for a in mine if a["title"].startswith("Concurrent"))


@pytest.mark.e2e
def test_cli_prints_url_and_key_serves_and_stops_cleanly(tmp_path: Path) -> None:
    with RunningCli("sandbox", "--port", "0", "--rate-window", "5", cwd=tmp_path) as running:
        first = running.until(lambda: running.lines[0] if running.lines else None)
        started = re.search(r"(http://127\.0\.0\.1:\d+)", first)
        assert started is not None, first
        url = started.group(1)
        # the environment lines, one per interface
        line = running.until(
            lambda: next((x for x in running.lines if "FOREM_API_KEY=" in x), None)
        )
        assert line == f"  export FOREM_BASE_URL={url} FOREM_API_KEY={line.rsplit('=', 1)[1]}"
        key = line.rsplit("=", 1)[1].strip()
        with httpx.Client(
            base_url=url, headers={"api-key": key}, verify=shared_context()
        ) as client:
            assert client.get("/api/users/me").json()["username"] == "demo"
            assert client.get("/__sandbox/forem/rate-limits").json()["window"] == 5.0
    assert running.code == 0
    assert "Sandbox stopped." in running.output() and "Traceback" not in running.output()
    assert (tmp_path / ".toolkit" / "sandbox.db").is_file()  # the default database


@pytest.mark.e2e
def test_cli_stops_on_sigterm_too(tmp_path: Path) -> None:
    """The process, sent SIGTERM (`kill`'s signal): a clean stop as on Ctrl-C."""
    process = subprocess.Popen(
        [sys.executable, "-m", "toolkit", "sandbox", "--memory", "--port", "0"],
        cwd=tmp_path,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        assert process.stdout is not None
        assert "Sandbox running at" in process.stdout.readline()
    finally:
        process.terminate()
        process.communicate(timeout=20)
    assert process.returncode == 0
    assert not (tmp_path / ".toolkit").exists()


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (["--host", "0.0.0.0"], 1, "loopback"),
        (["--memory", "--db", "x.db"], 2, "exclude each other"),
        (["--rate-window", "0"], 2, "rate-window"),
    ],
)
def test_cli_refuses_bad_options(tmp_path: Path, args, code, message) -> None:
    running = RunningCli("sandbox", *args, cwd=tmp_path)
    assert running.wait() == code
    assert message in running.output() and "Traceback" not in running.output()


def test_cli_help_has_an_example() -> None:
    from click.testing import CliRunner

    from toolkit.cli import main

    result = CliRunner().invoke(main, ["sandbox", "--help"])
    assert result.exit_code == 0
    assert "Example:" in result.output and "--memory" in result.output


@pytest.mark.e2e
def test_interfaces_get_a_data_folder_removed_at_stop_in_memory_mode():
    from toolkit_sandbox.server import SandboxServer

    with SandboxServer(db_path=None) as server:
        assert server.state is not None
        folder = server.state.files("archive")
        (folder / "upload.bin").write_bytes(b"x")
        assert folder.is_dir() and folder.parent == server.state.data_dir
    assert not folder.exists()


@pytest.mark.e2e
def test_a_database_file_keeps_its_data_folder_beside_it(tmp_path):
    from toolkit_sandbox.server import SandboxServer

    with SandboxServer(db_path=tmp_path / "sandbox.db") as server:
        assert server.state is not None
        (server.state.files("logs") / "part.parquet").write_bytes(b"x")
    assert (tmp_path / "sandbox.data" / "logs" / "part.parquet").is_file()
