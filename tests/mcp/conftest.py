"""Fixtures of the MCP server tests: a project with a few posts, and the HTTP transport
running on loopback with a clock the test moves."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from mcp_helpers import Clock, Harness, mcp_config, serving, write_posts


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
    with serving(mcp_config(mcp_project), clock) as harness:
        yield harness
