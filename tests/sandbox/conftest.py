"""Fixtures of the sandbox tests: the shared session sandbox (reset before each test),
clients bound to its accounts, and fresh private sandboxes for tests that need one."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from tests.support.sandbox_client import Api


@pytest.fixture
def api(sandbox, request) -> Iterator[Api]:
    """The session sandbox, back at its seed, with zeroed counts and rate limits on; its
    requests handed to the sandbox's application without a socket (what it answers,
    records and limits is the same), or over loopback HTTP for a test marked `socket`
    (a test of the connection: client timeouts, a dropped connection)."""
    sandbox.reset()
    sandbox.reset_stats()
    client = Api(sandbox, in_process=request.node.get_closest_marker("socket") is None)
    yield client
    client.close()


@pytest.fixture
def make_sandbox() -> Iterator[Callable[..., Any]]:
    """Start private sandboxes (stopped at the end of the test)."""
    from tests.support.forem_sandbox import ForemSandbox

    started: list[ForemSandbox] = []

    def make(**options: Any) -> ForemSandbox:
        server = ForemSandbox(**options).start()
        started.append(server)
        return server

    yield make
    for server in started:
        server.stop()


@pytest.fixture
def make_api() -> Iterator[Callable[..., Api]]:
    """Clients for private sandboxes (`in_process=True`: without a socket), closed at the
    end of the test even when it fails."""
    clients: list[Api] = []

    def make(server: Any, *, in_process: bool = False) -> Api:
        client = Api(server, in_process=in_process)
        clients.append(client)
        return client

    yield make
    for client in clients:
        client.close()
