"""Whose account publishes a post: in a team's repository (`[writers]`), the writer whose
folder holds it.

`account_of` maps a post's path to its `Account`: the writer (the folder directly under
the posts folder), the environment variable of their key and the key itself. A post
outside every writer's folder (directly in the posts folder) is the project's account's:
FOREM_API_KEY, when it is set; without it, it is skipped like a writer without a key.
Without `[writers]` every post is the project's account's.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from toolkit.config import Config, Secret
from toolkit.config.writers import PROJECT_VARIABLE, is_writer_folder, writer_order


@dataclass(frozen=True)
class Account:
    """The account that publishes a post, by the folder holding it."""

    writer: str | None  # the writer's folder; None: the project's account
    variable: str  # the environment variable of its key
    key: Secret | None = field(default=None, compare=False, repr=False)
    source: str = field(default="", compare=False)  # where the key was read from

    @property
    def label(self) -> str:
        """How lines and messages name it."""
        return self.writer if self.writer is not None else "(outside the writers' folders)"

    @property
    def folder_key(self) -> tuple[int, str, str]:
        """The order of accounts: the writers by folder (`writer_order`), the project's
        account last."""
        return (0, *writer_order(self.writer)) if self.writer is not None else (1, "", "")

    def owns(self, config: Config, key: str) -> bool:
        """Whether the post at `key` (a project-relative path) is this account's."""
        return account_of(config, key).writer == self.writer


def writer_folder(config: Config, path: str | Path) -> str | None:
    """The writer's folder holding `path` (absolute or relative to the project), or None."""
    if config.writers is None:
        return None
    full = Path(path) if Path(path).is_absolute() else config.root / path
    content = str(config.site.content_dir)
    text = os.path.normpath(str(full))
    if not text.startswith(content + os.sep):
        return None
    parts = text[len(content) + 1 :].split(os.sep)
    if len(parts) < 2 or not is_writer_folder(
        parts[0], listed=parts[0] in config.writers.variables
    ):
        return None
    return parts[0]


def account_of(config: Config, path: str | Path) -> Account:
    """The account that publishes the post at `path`, with its key (None: not set)."""
    writers = config.writers
    folder = writer_folder(config, path)
    if writers is None or folder is None:
        origin = config.origins.get("forem.api_key", PROJECT_VARIABLE)
        where = ".env" if origin.endswith(" in .env") else "the environment"
        return Account(
            None, PROJECT_VARIABLE, config.forem.api_key, f"{PROJECT_VARIABLE}, read from {where}"
        )
    variable = writers.variable(folder)
    return Account(folder, variable, writers.key(variable), writers.source(variable))


def accounts_of(config: Config, keys: Iterable[str]) -> dict[Account, list[str]]:
    """The posts at `keys` by account, the accounts in their order (`folder_key`)."""
    grouped: dict[Account, list[str]] = {}
    for key in keys:
        grouped.setdefault(account_of(config, key), []).append(key)
    return dict(sorted(grouped.items(), key=lambda item: item[0].folder_key))


def writer_folders(config: Config) -> list[str]:
    """The writers' folders found directly under the posts folder, sorted."""
    content = config.site.content_dir
    try:
        names = sorted((e.name for e in os.scandir(content) if e.is_dir()), key=writer_order)
    except OSError:
        return []
    listed = config.writers.variables if config.writers is not None else {}
    return [name for name in names if is_writer_folder(name, listed=name in listed)]
