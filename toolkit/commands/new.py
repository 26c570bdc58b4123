"""`new`: a new post, a draft with valid front matter, ready to write."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable

from toolkit.config import Config
from toolkit.content.draft import NewPost, write_draft

__all__ = ["NewPost", "new_post"]


def new_post(
    config: Config, title: str, *, tags: Iterable[str] = (), today: dt.date | None = None
) -> NewPost:
    """A new draft post titled `title` in the content folder (`write_draft`: its name,
    its front matter, the checks it passes). Raises `ContentError`."""
    return write_draft(config, title, tags=tags, today=today)
