"""`dev-to-git.json`: dev-to-git's map of article ids to post files, read as it is.

dev-to-git (https://github.com/maxime1992/dev-to-git) keeps, at the root of a writer's
repository, a JSON array of `{"id": 123, "relativePathToArticle": "./blog-posts/x/x.md"}`,
each path relative to the file's own folder. toolkit reads it as one of the rules that
bind a post to its article (`remote.py`) and never writes it.

The file comes with the repository, so it is read bounded: at most `MAX_BYTES`, nesting
at most `MAX_DEPTH` deep, only entries of that shape. A path that leaves the project is
not a post of it; an entry toolkit cannot use is a `SyncError` naming the entry, since
guessing past it could bind a post to the wrong article or create a second one.
"""

from __future__ import annotations

import json
import os
from pathlib import Path, PurePosixPath

from toolkit import localfiles
from toolkit.clients.bounds import json_depth_over
from toolkit.errors import SyncError

FILE_NAME = "dev-to-git.json"
MAX_BYTES = 4 * 1024 * 1024
MAX_DEPTH = 8
MAX_ENTRIES = 100_000


def read_map(root: Path) -> dict[str, int]:
    """Post key (project-relative POSIX path) -> article id, from `root/dev-to-git.json`
    ({} when there is none)."""
    path = root / FILE_NAME
    if not os.path.lexists(path):
        return {}
    kind, _, reason = localfiles.classify_path(path, localfiles.project_folders(root))
    if kind != localfiles.FILE:
        raise SyncError(f"{FILE_NAME}: {reason or 'not a regular file'}")
    try:
        _, data = localfiles.read_regular(path, MAX_BYTES)
    except localfiles.TooLarge:
        raise SyncError(f"{FILE_NAME}: larger than {MAX_BYTES // 1024 // 1024} MB") from None
    except localfiles.NotRegularFile as exc:
        raise SyncError(f"{FILE_NAME}: {exc}") from None
    except OSError as exc:
        raise SyncError(f"{FILE_NAME}: cannot be read ({exc.strerror or exc})") from None
    try:
        text = data.decode("utf-8-sig")
        if json_depth_over(text.encode("utf-8"), MAX_DEPTH):
            raise ValueError("nested too deep")
        document = json.loads(text)
    except (UnicodeDecodeError, ValueError) as exc:
        raise SyncError(f"{FILE_NAME}: not valid JSON ({exc})") from None
    if not isinstance(document, list):
        raise SyncError(
            f'{FILE_NAME}: not a JSON array of {{"id", "relativePathToArticle"}} entries'
        )
    if len(document) > MAX_ENTRIES:
        raise SyncError(f"{FILE_NAME}: more than {MAX_ENTRIES} entries")
    mapped: dict[str, int] = {}
    for number, entry in enumerate(document, start=1):
        where = f"{FILE_NAME}: entry {number}"
        if not isinstance(entry, dict):
            raise SyncError(f"{where}: not an object")
        article_id, relative = entry.get("id"), entry.get("relativePathToArticle")
        if isinstance(article_id, bool) or not isinstance(article_id, int) or article_id < 1:
            raise SyncError(f"{where}: id must be a positive integer")
        if not isinstance(relative, str) or not relative.strip():
            raise SyncError(f"{where}: relativePathToArticle must be a path")
        key = _key(relative.strip())
        if key is None:
            raise SyncError(f"{where}: relativePathToArticle must stay inside the project")
        if mapped.get(key, article_id) != article_id:
            raise SyncError(f"{where}: {key} is named twice, with two ids")
        mapped[key] = article_id
    return mapped


def _key(relative: str) -> str | None:
    """`./blog-posts/x.md` -> `blog-posts/x.md`; None for a path leaving the project (or
    holding a control character)."""
    if any(ord(char) < 32 or ord(char) == 127 for char in relative) or "\\" in relative:
        return None
    path = PurePosixPath(relative)
    if path.is_absolute():
        return None
    parts: list[str] = []
    for part in path.parts:
        if part == "..":
            if not parts:
                return None
            parts.pop()
        elif part != ".":
            parts.append(part)
    return "/".join(parts) or None
