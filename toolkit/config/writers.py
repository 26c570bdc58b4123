"""`[writers]`: a team's repository, one folder per writer under the posts folder.

The table names a writer folder's environment variable, the one holding that writer's
API key; a writer folder it does not list reads `FOREM_API_KEY_<FOLDER>` (`writer_variable`).
The section being there, even empty, is what makes a project a team's. Keys are secrets:
read from the environment (or `.env`) only, at load, for every variable the table names
and every `FOREM_API_KEY_*` one, so that the folders found later have theirs.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from toolkit.config.keys import Secret
from toolkit.redact import quoted

PROJECT_VARIABLE = "FOREM_API_KEY"  # the key of a post outside every writer's folder
# A variable's name as a shell and GitHub Actions take it.
ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# A writer's folder: one plain name, directly under the posts folder.
WRITER_FOLDER = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,99}")
WRITER_VARIABLE_PREFIX = "FOREM_API_KEY_"
# Folders beside writers' posts that are never a writer's unless [writers] names them
# (their images, drafts); nor is a folder named by a number (a year).
NOT_WRITERS = frozenset({"assets", "images", "img", "static", "media", "drafts", "files"})

HELP = (
    "A team's repository: one folder per writer under the posts folder (content_dir), "
    "each writer's posts published with the API key in the environment variable named "
    "here (default FOREM_API_KEY_<FOLDER>: the folder upper-cased, every character other "
    "than a letter or digit written _). The section alone, even empty, makes the project "
    "a team's: every folder directly under the posts folder is a writer's (but those "
    "starting with _ or ., named by a number, or named assets, images, img, static, "
    "media, drafts or files, unless listed here). A post outside every writer's folder is "
    "published with FOREM_API_KEY when it is set, and skipped like a writer without a key "
    "otherwise. Comments and reading lists are mirrored per writer, under "
    "content/_mirror/<writer>/. toolkit init writes one line per writer's folder."
)


def writer_order(folder: str) -> tuple[str, str]:
    """The order writers are listed in everywhere (init, config, plan, publish, pull): by
    folder name, without case (`Bob42` between `alice` and `carol`)."""
    return folder.casefold(), folder


def writer_variable(folder: str) -> str:
    """The variable a writer's key is read from by default: `FOREM_API_KEY_` and the
    folder's name upper-cased, every character but a letter or digit written `_`
    (`jane-doe` -> `FOREM_API_KEY_JANE_DOE`)."""
    return WRITER_VARIABLE_PREFIX + re.sub(r"[^A-Z0-9]", "_", folder.upper())


def is_writer_folder(name: str, listed: bool = False) -> bool:
    """Whether a folder directly under the posts folder is a writer's: one that
    `[writers]` lists (`listed`), or any plain name but `_mirror`, `.git`, a year and the
    folders of `NOT_WRITERS`."""
    if not WRITER_FOLDER.fullmatch(name) or set(name) == {"."}:
        return False
    if listed:
        return True
    return not (name.startswith(("_", ".")) or name.isdigit() or name.lower() in NOT_WRITERS)


@dataclass(frozen=True)
class Writers:
    """The `[writers]` table and the keys the environment holds for it."""

    variables: Mapping[str, str] = field(default_factory=dict)  # folder -> variable named
    keys: Mapping[str, Secret] = field(default_factory=dict, repr=False)  # variable -> key
    origins: Mapping[str, str] = field(default_factory=dict, repr=False)  # variable -> where

    def variable(self, folder: str) -> str:
        """The environment variable of a writer's key."""
        return self.variables.get(folder) or writer_variable(folder)

    def key(self, variable: str) -> Secret | None:
        return self.keys.get(variable)

    def source(self, variable: str) -> str:
        """Where a key was read from, as a refused key's message names it."""
        return f"{variable}, read from {self.origins.get(variable, 'the environment')}"


def parse_writers(
    name: str, table: Any, env: Mapping[str, str], in_dotenv: set[str] | frozenset[str]
) -> tuple[Writers | None, list[str]]:
    """`[writers]` as `Writers` (None: no such section) and every problem as
    `name: key: problem`."""
    if table is None:
        return None, []
    if not isinstance(table, dict):
        return None, [f"{name}: writers: must be a table ([writers])"]
    problems: list[str] = []
    variables: dict[str, str] = {}
    for folder, variable in table.items():
        where = f"{name}: writers.{quoted(folder, 100, marks=False)}"
        if not is_writer_folder(folder, listed=True) or folder.startswith(("_", ".")):
            problems.append(f"{where}: a writer is one folder name under the posts folder")
        elif not isinstance(variable, str) or not ENV_NAME.fullmatch(variable):
            problems.append(
                f"{where}: must be the name of an environment variable, e.g. "
                f'"{writer_variable(folder)}"'
            )
        elif variable == PROJECT_VARIABLE:
            problems.append(
                f"{where}: {PROJECT_VARIABLE} is the key of the posts outside every writer's "
                f'folder; give the writer a variable of their own, e.g. "{writer_variable(folder)}"'
            )
        else:
            variables[folder] = variable
    named = set(variables.values())
    keys: dict[str, Secret] = {}
    origins: dict[str, str] = {}
    for variable, value in env.items():
        if (variable in named or variable.startswith(WRITER_VARIABLE_PREFIX)) and value:
            keys[variable] = Secret(value)
            origins[variable] = ".env" if variable in in_dotenv else "the environment"
    return Writers(variables, keys, origins), problems
