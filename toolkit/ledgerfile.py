"""`toolkit.lock` as it is stored: the one reader of the file's format.

The ledger (`toolkit/sync/ledger.py`) builds its entries from what this module reads and
is the only writer of the file; the site asks here for the publication times it recorded
(`published_times`, for `toolkit/content/dates.py`), without importing the ledger.

The file is JSON, one section per server of the publishing API: `server` and `posts` are
the section of the server of the last run, `other_servers` holds the others, each named by
`server_key`. A lock written before servers were recorded (version 1: no `server`) has one
section, read as the configured server's.

It comes with the repository, so whatever stands there is read bounded: a regular file of
at most `MAX_LOCK_BYTES` (never a FIFO or a folder waited on or followed), JSON nested no
deeper than the parser's recursion allows. Every way it can be unusable is one
`Unusable`, its message a single line naming the file.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from toolkit import localfiles

MAX_LOCK_BYTES = 64 * 1024 * 1024  # a lock larger than this is not read
# What a lock that cannot be used can be replaced by, without losing anything.
_START_AGAIN = "publish again (toolkit finds your articles by canonical_url and title)"

Section = dict[str, Any]  # post key -> its entry, as the file holds it


class Unusable(ValueError):
    """The lock cannot be read, or is not a lock; the message is one line naming it."""

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


def server_key(base_url: str) -> str:
    """The name of a server's section of the lock: its base URL, scheme and host
    lower-cased, without credentials (the file is committed) or a final slash."""
    parts = urlsplit(base_url.strip())
    host = (parts.hostname or "").lower()
    if ":" in host:  # IPv6
        host = f"[{host}]"
    netloc = host + (f":{parts.port}" if parts.port is not None else "")
    return urlunsplit((parts.scheme.lower(), netloc, parts.path.rstrip("/"), "", ""))


def read(path: Path, server: str) -> tuple[Section | None, dict[str, Any]]:
    """The section of `server` (a `server_key`) in the lock at `path` (None when the file
    or the section is not there), and the other servers' sections as the file holds them
    (`{"posts": ...}` each). Raises `Unusable`."""
    name = path.name
    try:
        _, raw = localfiles.read_regular(path, MAX_LOCK_BYTES)
        data = json.loads(raw.decode("utf-8"))
    except FileNotFoundError:
        return None, {}
    except localfiles.TooLarge:
        raise Unusable(
            f"{name}: larger than {MAX_LOCK_BYTES // 1024 // 1024} MB; delete it and "
            + _START_AGAIN
        ) from None
    except (OSError, ValueError, RecursionError) as exc:  # RecursionError: nested too deep
        raise Unusable(
            f"{name}: cannot be read ({exc}); fix it, or delete it and " + _START_AGAIN
        ) from None
    if not isinstance(data, dict):
        raise Unusable(f"{name}: is not a JSON object; delete it and publish again")
    others = data.get("other_servers", {})
    if not isinstance(others, dict) or not all(
        isinstance(v, dict) and isinstance(v.get("posts"), dict) for v in others.values()
    ):
        raise Unusable(f'{name}: malformed "other_servers" table; delete it and publish again')
    others = dict(others)
    made_for = data.get("server")  # absent: version 1, read as this server's
    posts = data.get("posts")
    if isinstance(made_for, str) and made_for != server:
        if isinstance(posts, dict):
            others[made_for] = {"posts": posts}
        section = others.pop(server, None)
        if section is None:
            return None, others
        posts = section["posts"]
    else:
        others.pop(server, None)
    if not isinstance(posts, dict):
        raise Unusable(f'{name}: has no "posts" table; delete it and publish again')
    return posts, others


def published_times(path: Path, base_url: str) -> dict[str, object]:
    """Post key -> the `published_at` the lock recorded for each of its published posts,
    in the section of the server at `base_url`, as the file holds it; {} when the lock is
    missing or unusable."""
    try:
        posts, _ = read(path, server_key(base_url))
    except Unusable:
        return {}
    return {
        key: entry.get("published_at")
        for key, entry in (posts or {}).items()
        if isinstance(key, str) and isinstance(entry, dict) and entry.get("published")
    }
