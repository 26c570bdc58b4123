"""`diff`: a post against its article on the website."""

from __future__ import annotations

from pathlib import Path

from toolkit.commands.accounts import client_of
from toolkit.config import Config
from toolkit.runlog.run import recorded
from toolkit.sync.diff import PostDiff, diff_post

__all__ = ["PostDiff", "diff"]


def diff(config: Config, path: str | Path) -> PostDiff:
    """What `publish` would send for the post at `path` against what the website holds."""
    with recorded(config, "diff") as run:
        with client_of(config, path, run) as client:
            result = diff_post(config, client, path)
        run.event(
            "post",
            post=result.path,
            action="diff",
            status=result.status,
            article_id=result.article_id,
        )
    return result
