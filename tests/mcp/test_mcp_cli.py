"""`toolkit mcp` on the command line: its client management, Ctrl-C, and what it costs the
commands that do not use it (nothing)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys

import pytest

from tests.support.mcp_helpers import SECRET


def test_add_client_shows_its_secret_once_and_lists_it(mcp_project):
    created = mcp_project.run(
        "mcp", "add-client", "nightly check", "--scope", "read", "--scope", "logs"
    )
    assert created.exit_code == 0, created.output
    lines = dict(line.split(": ", 1) for line in created.stdout.splitlines())
    assert lines["client_secret"].startswith("tks_")
    listed = mcp_project.run("mcp", "clients", "--json")
    (client,) = json.loads(listed.stdout)
    assert client["client_id"] == lines["client_id"]
    assert client["name"] == "nightly check" and client["origin"] == "operator"
    assert client["scopes"] == ["read", "logs"]
    assert lines["client_secret"] not in listed.output
    text = mcp_project.run("mcp", "clients")
    assert lines["client_id"] in text.stdout and "[operator]" in text.stdout


def test_add_client_and_revoke_as_json(mcp_project):
    created = mcp_project.run("mcp", "add-client", "ci job", "--json")
    assert created.exit_code == 0, created.output
    client = json.loads(created.stdout)
    assert client["name"] == "ci job" and client["scopes"] == ["read"]
    assert client["client_secret"].startswith("tks_") and client["client_id"]
    revoked = mcp_project.run("mcp", "revoke", client["client_id"], "--json")
    assert revoked.exit_code == 0, revoked.output
    document = json.loads(revoked.stdout)
    assert document["client_id"] == client["client_id"] and document["revoked"]
    assert "client_secret" not in document
    unknown = mcp_project.run("mcp", "revoke", "toolkit-nobody", "--json")
    assert unknown.exit_code == 1 and json.loads(unknown.stdout)["ok"] is False


def test_no_clients_yet(mcp_project):
    result = mcp_project.run("mcp", "clients", "--json")
    assert result.exit_code == 0 and json.loads(result.stdout) == []
    assert not (mcp_project.root / ".toolkit" / "mcp.db").exists()


def test_options_of_one_transport_are_refused_for_the_other(mcp_project):
    stdio = mcp_project.run("mcp", "--port", "9000")
    assert stdio.exit_code == 2 and "--transport http" in stdio.output
    http = mcp_project.run("mcp", "--transport", "http", "--scope", "read")
    assert http.exit_code == 2 and "--scope is for stdio" in http.output


@pytest.mark.e2e
def test_ctrl_c_stops_a_stdio_server_whose_client_keeps_stdin_open(mcp_project):
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "toolkit",
            "--config",
            str(mcp_project.root / "toolkit.toml"),
            "mcp",
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=mcp_project.root,
    )
    try:
        assert process.stderr is not None
        assert b"toolkit MCP server on stdio" in process.stderr.readline()
        process.send_signal(signal.SIGINT)
        assert process.wait(timeout=10) == 0
        assert b"Fatal" not in process.stderr.read()
        assert process.stdout is not None and process.stdout.read() == b""
    finally:
        process.kill()
        process.wait()
        for stream in (process.stdin, process.stdout, process.stderr):
            if stream is not None:
                stream.close()


@pytest.mark.e2e
def test_ctrl_c_stops_the_http_server(mcp_project):
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "toolkit",
            "--config",
            str(mcp_project.root / "toolkit.toml"),
            "mcp",
            "--transport",
            "http",
            "--port",
            "0",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=mcp_project.root,
        text=True,
        env={**os.environ, "TOOLKIT_MCP_OPERATOR_SECRET": SECRET},
    )
    try:
        assert process.stdout is not None
        first = process.stdout.readline()
        assert first.startswith("MCP server at http://127.0.0.1:") and "/mcp" in first
        process.send_signal(signal.SIGINT)
        assert process.wait(timeout=15) == 0
        assert process.stdout.read().strip().endswith("MCP server stopped.")
        assert process.stderr is not None and SECRET not in process.stderr.read()
    finally:
        process.kill()
        process.wait()
        for stream in (process.stdout, process.stderr):
            if stream is not None:
                stream.close()


@pytest.mark.e2e
def test_help_and_a_build_with_nothing_to_do_never_import_the_sdk(mcp_project):
    mcp_project.run("build")
    script = (
        "import sys\n"
        "from toolkit.cli import main\n"
        "for args in (['--help'], ['mcp', '--help'], "
        f"['--config', {str(mcp_project.root / 'toolkit.toml')!r}, '-q', 'build']):\n"
        "    try:\n"
        "        main(args)\n"
        "    except SystemExit as exit:\n"
        "        assert not exit.code, exit.code\n"
        "print('MODULES:' + ','.join(m for m in sys.modules if m == 'mcp' or m.startswith('mcp.')"
        " or m in ('pydantic', 'starlette')))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        cwd=mcp_project.root,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "MODULES:"
