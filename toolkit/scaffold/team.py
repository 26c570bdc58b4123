"""A team's repository, as `toolkit init` recognises it: one folder per writer under the
posts folder (`posts/<github-login>/*.md`, with `posts/<login>/assets/` beside them),
at least two such folders holding posts, and no post at the top of the posts folder.

Each writer publishes with their own key, read from `FOREM_API_KEY_<FOLDER>` by default
(`toolkit.config.sections.writer_variable`); init writes the `[writers]` table, names
the variables in `.env.example`, lists the secrets to add, and writes the team's
workflow. This is one detection step on its own: it runs on the folder init adopted.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from toolkit.config.sections import WRITER_FOLDER, writer_variable
from toolkit.config.writers import NOT_WRITERS, writer_order
from toolkit.scaffold.adopt import count_posts, is_post

MIN_WRITERS = 2


@dataclass(frozen=True)
class WriterFolder:
    """One writer's folder under the posts folder, and the variable of their key."""

    folder: str  # its name, directly under the posts folder
    variable: str  # the environment variable (a repository secret in CI) of their key
    posts: int  # front-matter posts in it


def find_writers(content: Path) -> tuple[WriterFolder, ...]:
    """The writers of a team's repository whose posts folder is `content`, by folder
    name; () when `content` is not laid out that way (a post at its top, fewer than two
    writers' folders). A folder named by a number (a year) is never a writer."""
    try:
        entries = sorted(os.scandir(content), key=lambda entry: writer_order(entry.name))
    except OSError:
        return ()
    writers: list[WriterFolder] = []
    for entry in entries:
        if entry.name.startswith((".", "_")):
            continue
        if entry.name.endswith(".md"):
            if entry.is_file(follow_symlinks=False) and is_post(Path(entry.path))[0]:
                return ()  # posts at the top: one writer's blog
            continue
        if (
            not entry.is_dir(follow_symlinks=False)
            or not WRITER_FOLDER.fullmatch(entry.name)
            or entry.name.isdigit()
            or entry.name.lower() in NOT_WRITERS
        ):
            continue
        posts, _ = count_posts(Path(entry.path))
        if posts:
            writers.append(WriterFolder(entry.name, writer_variable(entry.name), posts))
    return tuple(writers) if len(writers) >= MIN_WRITERS else ()
