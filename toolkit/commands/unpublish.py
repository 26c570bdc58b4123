"""`unpublish`: set a post's article unpublished on the website, on purpose."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from toolkit.commands import records
from toolkit.commands.accounts import client_of
from toolkit.config import Config
from toolkit.runlog.run import recorded
from toolkit.sync.retire import RetireResult, unpublish_post
from toolkit.sync.runlock import DEFAULT_TIMEOUT, writer_run

__all__ = ["RetireResult", "unpublish"]


def unpublish(
    config: Config,
    path: str | Path,
    *,
    lock_timeout: float = DEFAULT_TIMEOUT,
    on_blocked: Callable[[str], None] | None = None,
) -> RetireResult:
    """Set the article of `path` (a post, or a gone post's lock entry) unpublished, never
    deleted, holding the run lock (`on_blocked(message)` while another run holds it)."""
    with recorded(config, "unpublish") as run:
        with (
            client_of(config, path, run) as client,
            writer_run(config, "unpublish", timeout=lock_timeout, on_wait=on_blocked) as lock_wait,
        ):
            result = unpublish_post(config, client, path)
        if lock_wait:
            run.event("wait", action="run lock", reason=lock_wait)
        records.retire(run, result)
    return result
