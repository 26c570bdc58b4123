"""Fixtures of the tests that sync a project with the sandbox."""

from __future__ import annotations

import pytest

from tests.support.sync_helpers import SYNC_CONFIG


@pytest.fixture
def env(sandbox) -> dict[str, str]:
    """A freshly reset sandbox, and the environment that points toolkit at it."""
    sandbox.reset()
    return {"FOREM_BASE_URL": sandbox.base_url, "FOREM_API_KEY": sandbox.demo_api_key}


@pytest.fixture
def site(make_project):
    """A project whose rate-limit window matches the sandbox's (1 s)."""
    return make_project(SYNC_CONFIG)
