"""Fixtures of the MCP server tests: a project with a few posts, and the HTTP transport
running on loopback with a clock the test moves."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from mcp_helpers import Clock, Harness, mcp_config, write_posts

from toolkit.commands.mcp import http_server
from toolkit.mcp.events import EventRecorder


@pytest.fixture
def mcp_project(project):
    write_posts(project)
    return project


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def server(mcp_project, clock) -> Iterator[Harness]:
    """`toolkit mcp --transport http` on a free loopback port, its state in the project."""
    recorder = EventRecorder()
    running = http_server(mcp_config(mcp_project), port=0, clock=clock, listener=recorder)
    harness = Harness(running.issuer_url, clock, recorder)
    try:
        yield harness
    finally:
        harness.http.close()
        running.stop()
