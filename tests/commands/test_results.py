"""`toolkit.commands`: the functions the CLI and the MCP server share. Their results carry
everything the CLI shows, so a caller without listeners misses nothing."""

from __future__ import annotations

import re
import threading
from pathlib import Path

import pytest

import toolkit
from toolkit.commands.publish import plan, publish
from toolkit.commands.pull import pull
from toolkit.config import load_config
from toolkit.sync.plan import Action
from toolkit.sync.runlock import run_lock

CONFIG = """
[site]
title = "Commands site"
url = "https://example.com/blog"

[forem]
rate_window = 1
"""


@pytest.fixture
def config(make_project, sandbox):
    sandbox.reset()
    project = make_project(CONFIG)
    project.post("one", "Command post one", published=True)
    project.post("two", "Command post two", published=True, premium=True)
    env = {"FOREM_BASE_URL": sandbox.base_url, "FOREM_API_KEY": sandbox.demo_api_key}
    return load_config(project.root / "toolkit.toml", env=env)


def test_publish_without_listeners_returns_everything(config, sandbox):
    planned = plan(config)
    assert [o.action for o in planned.outcomes] == [Action.CREATE, Action.SKIP]
    assert planned.dry_run and planned.ok and planned.requests == 1
    assert not config.lock_path.exists()

    sandbox.fault("POST", "/api/articles", status=429, retry_after=1)
    result = publish(config)
    assert result.ok and not result.dry_run
    created, skipped = result.outcomes
    assert created.message.startswith("created article") and created.article_id and created.url
    assert skipped.message == "premium post: never sent to the publishing API"
    ((seconds, reason),) = result.waits
    assert reason == "rate limited by the server (429): waiting as its Retry-After says"
    assert seconds == pytest.approx(1.0, abs=0.05)
    assert result.lock_wait is None
    assert result.requests == 3  # the list read, the 429, the create


def test_a_wait_for_the_run_lock_is_in_the_result(config):
    held, release = threading.Event(), threading.Event()

    def other_run() -> None:
        with run_lock(config.state_dir, "publish"):
            held.set()
            release.wait(10)

    holder = threading.Thread(target=other_run)
    holder.start()
    held.wait(10)
    told: list[str] = []

    def blocked(message: str) -> None:
        told.append(message)
        release.set()  # the other run finishes as soon as this one waits for it

    result = pull(config, lock_timeout=10, on_blocked=blocked)
    holder.join()
    assert told == [result.lock_wait]
    assert result.lock_wait is not None and result.lock_wait.startswith(
        "another toolkit run holds .toolkit/run.lock (publish, pid "
    )


def test_only_the_commands_take_the_run_lock():
    """The run lock belongs to a user action: the sync engine, pull and the watch session
    below the commands never take it themselves (so no action takes it twice, or not at
    all because a layer below was expected to)."""
    package = Path(toolkit.__file__).parent
    takers = sorted(
        path.relative_to(package).as_posix()
        for path in package.rglob("*.py")
        if re.search(r"\b(writer_run|run_lock)\(", path.read_text(encoding="utf-8"))
    )
    assert takers == [
        "commands/forget.py",
        "commands/publish.py",
        "commands/pull.py",
        "commands/unpublish.py",
        "commands/watch.py",
        "sync/runlock.py",
    ]
