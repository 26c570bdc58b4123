"""The run-log questions of the README and of the user guide run as written (locally, on
the same engine as the service) and answer with full rows: no column of an answer is
empty, as it would be for a `run` start event asked for its outcome."""

from __future__ import annotations

import json
import re
import shlex
import shutil
from pathlib import Path

import pytest

from tests.conftest import Project

REPOSITORY = Path(__file__).resolve().parents[2]
CONFIG = """
[site]
title = "Questions site"
url = "https://example.com/blog"

[forem]
rate_window = 1
"""


def examples(text: str) -> list[tuple[list[str], str]]:
    """Every `toolkit logs [OPTIONS] "SQL"` of a text: its options and its SQL (on one
    line, as the shell joins it)."""
    found = []
    for options, sql in re.findall(r'toolkit logs ((?:--[a-z]+ (?:[^"\s-]\S* )?)*)"([^"]+)"', text):
        found.append((shlex.split(options), " ".join(sql.split())))
    return found


def readme_questions() -> list[tuple[list[str], str]]:
    readme = (REPOSITORY / "README.md").read_text(encoding="utf-8")
    section = readme.split("\n## The run log\n", 1)[1].split("\n## ", 1)[0]
    guide = (REPOSITORY / "content" / "the-sandbox.md").read_text(encoding="utf-8")
    return examples(section) + examples(guide)


def test_the_examples_are_found():
    found = readme_questions()
    assert len(found) >= 5
    assert any("event = 'run' AND action = 'end'" in sql for _, sql in found)


@pytest.fixture(scope="module")
def _logged_once(tmp_path_factory, sandbox):
    """A project whose log holds a publish with a failed post and a rate-limit pause:
    made once for the module, as that pause is a real one (the 429's Retry-After)."""
    sandbox.reset()
    env = {"FOREM_BASE_URL": sandbox.base_url, "FOREM_API_KEY": sandbox.demo_api_key}
    root = tmp_path_factory.mktemp("questions") / "project"
    (root / "content").mkdir(parents=True)
    (root / "toolkit.toml").write_text(CONFIG.lstrip(), encoding="utf-8")
    site = Project(root)
    site.post("one", "First question post", published=True)
    site.post("two", "Second question post", published=True)
    site.write("content/bad.md", "---\ntitle: Bad\ntags: [a, b, c, d, e]\n---\nText.\n")
    sandbox.fault("POST", "/api/articles", status=429, retry_after=1)
    assert site.run("publish", env=env).exit_code == 1  # the bad post failed; the rest kept
    assert site.run("check", "content/one.md").exit_code == 0
    return site


@pytest.fixture
def logged(_logged_once, tmp_path):
    """A copy of that project for each test: a query is a run, and logged too."""
    root = tmp_path / "project"
    shutil.copytree(_logged_once.root, root)
    return Project(root)


@pytest.mark.parametrize(("options", "sql"), readme_questions())
def test_each_question_answers_with_full_rows(logged, options, sql):
    options = [o for o in options if o != "--local"]
    result = logged.run("logs", "--local", *options, "--json", sql)
    assert result.exit_code == 0, result.output
    records = json.loads(result.stdout)["records"]
    assert records, sql
    for record in records:
        empty = sorted(name for name, value in record.items() if value is None)
        assert not empty, f"{sql}: {record}"
