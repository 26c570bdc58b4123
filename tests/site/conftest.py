"""Fixtures of the site tests (the helpers are in `site_helpers`)."""

from __future__ import annotations

import pytest

from tests.support.site_helpers import CONFIG, write_site


@pytest.fixture
def site_project(make_project):
    """A project with a bit of everything: see `site_helpers.write_site`."""
    project = make_project(CONFIG)
    write_site(project)
    return project
