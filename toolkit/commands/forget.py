"""`forget`: drop the toolkit.lock entry of a post whose file is gone."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from toolkit.clients import forem_client
from toolkit.commands import records
from toolkit.config import Config
from toolkit.runlog.run import recorded
from toolkit.sync.retire import RetireResult, forget_post
from toolkit.sync.runlock import DEFAULT_TIMEOUT, writer_run

__all__ = ["RetireResult", "forget"]


def forget(
    config: Config,
    path: str | Path,
    *,
    lock_timeout: float = DEFAULT_TIMEOUT,
    on_blocked: Callable[[str], None] | None = None,
) -> RetireResult:
    """Drop the lock entry of the gone post `path`; its article stays on the website.
    Reads the account's articles to bind every post first; holds the run lock (it writes
    toolkit.lock)."""
    with recorded(config, "forget") as run:
        with (
            forem_client(config, on_wait=run.wait, on_request=run.request) as client,
            writer_run(config, "forget", timeout=lock_timeout, on_wait=on_blocked) as lock_wait,
        ):
            result = forget_post(config, client, path)
        if lock_wait:
            run.event("wait", action="run lock", reason=lock_wait)
        records.retire(run, result)
    return result
