"""Fixtures of the run-log tests: a project pointed at the sandbox's publishing API and log
service (a stream of its own per test), and ways to read its events back."""

from __future__ import annotations

import secrets
from collections.abc import Iterator

import pytest

from tests.support.runlog_helpers import RUNLOG_CONFIG, LogService
from toolkit_sandbox.logs.http import PASSWORD, USERNAME


@pytest.fixture
def stream() -> str:
    """A stream name of this test's own (the sandbox is shared by a worker's tests)."""
    return "t" + secrets.token_hex(6)


@pytest.fixture
def site(make_project, stream):
    """A project whose rate-limit window matches the sandbox's (1 s), with its own stream."""
    return make_project(RUNLOG_CONFIG.format(stream=stream))


@pytest.fixture
def forem_env(sandbox) -> dict[str, str]:
    """The sandbox, reset, and the environment of its publishing API only."""
    sandbox.reset()
    return {"FOREM_BASE_URL": sandbox.base_url, "FOREM_API_KEY": sandbox.demo_api_key}


@pytest.fixture
def env(forem_env, sandbox) -> dict[str, str]:
    """The environment that points toolkit at the sandbox's publishing API and log service."""
    return {
        **forem_env,
        "LOGS_BASE_URL": sandbox.base_url,
        "LOGS_USERNAME": USERNAME,
        "LOGS_PASSWORD": PASSWORD,
    }


@pytest.fixture
def service(sandbox, request) -> Iterator[LogService]:
    """The session sandbox's log service, spoken to in-process (over loopback HTTP for a
    test marked `socket`)."""
    logs = LogService(sandbox, in_process=request.node.get_closest_marker("socket") is None)
    yield logs
    logs.http.close()
