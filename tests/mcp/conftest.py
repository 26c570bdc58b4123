"""Fixtures of the MCP server tests: a project with a few posts, and the HTTP transport
running on loopback with a clock the test moves (one per test), or one that a module's
tests share when each only reads it or adds what no other test looks at."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.conftest import DEFAULT_CONFIG, Project
from tests.support.mcp_helpers import Clock, Harness, mcp_config, serving, write_posts


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


@pytest.fixture(scope="module")
def shared_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Harness]:
    """`toolkit mcp --transport http` as `server` starts it, once per module (and test
    worker), for the tests that only read it or add to it what no other test looks at (a
    client registration, a refused request): no test moves its clock, reads its events or
    its terminal, or counts what it stores. A test that does any of that takes `server`."""
    root = tmp_path_factory.mktemp("mcp-shared")
    (root / "content").mkdir()
    (root / "toolkit.toml").write_text(DEFAULT_CONFIG.lstrip(), encoding="utf-8")
    project = Project(root)
    write_posts(project)
    with serving(mcp_config(project), Clock()) as harness:
        yield harness
