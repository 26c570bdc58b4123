"""Fixtures of the licence tests: the session sandbox's licensing service, reset before
each test, and a project with premium posts pointed at it."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest

from tests.support.license_helpers import Licensing, premium_config

# Keep the developer's own licence settings out of every test.
for _name in ("LICENSE_API_TOKEN", "LICENSE_BASE_URL"):
    os.environ.pop(_name, None)


@pytest.fixture
def licensing(sandbox: Any, request: pytest.FixtureRequest) -> Iterator[Licensing]:
    """The session sandbox back at its seed (every interface, faults and outage cleared);
    its clients in-process, or over loopback HTTP for a test marked `socket`. (What
    toolkit runs goes over loopback HTTP either way.)"""
    service = Licensing(sandbox, in_process=request.node.get_closest_marker("socket") is None)
    service.reset()
    yield service
    service.close()


@pytest.fixture
def premium_project(make_project: Any) -> Any:
    """A project with a public post, a premium post, a draft and a premium overlay."""
    project = make_project(premium_config())
    project.post(
        "hello",
        "Hello readers",
        "Public words for everyone.\n",
        published=True,
        tags=["news"],
        date="2024-03-01",
    )
    project.post(
        "paid",
        "Members only",
        "Premium words for licensed readers.\n",
        published=True,
        premium=True,
        tags=["news"],
        date="2024-03-02",
    )
    project.post("later", "Not yet", "A draft.\n", published=False)
    project.write(
        "templates/premium/partials/footer.html",
        '<footer class="site-footer"><p>PREMIUM FOOTER</p></footer>\n',
    )
    return project
