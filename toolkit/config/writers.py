"""`[writers]`: a team's repository, one folder per writer under the posts folder.

The table names a writer folder's environment variable, the one holding that writer's
API key; a writer folder it does not list reads `FOREM_API_KEY_<FOLDER>` (`default_variable`).
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

DEFAULT_PREFIX = "FOREM_API_KEY_"
PROJECT_VARIABLE = "FOREM_API_KEY"  # the key of a post outside every writer's folder
_VARIABLE = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,127}")
_FOLDER_BAD = re.compile(r"[/\\\x00-\x1f\x7f]")

HELP = (
    "A team's repository: one folder per writer under the posts folder (content_dir), "
    "each writer's posts published with the API key in the environment variable named "
    "here (default FOREM_API_KEY_<FOLDER>: the folder upper-cased, every character other "
    "than a letter or digit written _). The section alone, even empty, makes the project "
    "a team's: every folder directly under the posts folder (but those starting with _ "
    "or .) is a writer's. A post outside every writer's folder is published with "
    "FOREM_API_KEY when it is set, and skipped like a writer without a key otherwise. "
    "Comments and reading lists are mirrored per writer, under content/_mirror/<writer>/."
)


def default_variable(folder: str) -> str:
    """`FOREM_API_KEY_<FOLDER>`: `jane-doe` -> `FOREM_API_KEY_JANE_DOE`."""
    return DEFAULT_PREFIX + re.sub(r"[^A-Z0-9]", "_", folder.upper())


def is_writer_folder(name: str) -> bool:
    """Whether a folder directly under the posts folder is a writer's (`_mirror`,
    `.git` and the like are not)."""
    return bool(name) and not name.startswith(("_", ".")) and not _FOLDER_BAD.search(name)


@dataclass(frozen=True)
class Writers:
    """The `[writers]` table and the keys the environment holds for it."""

    variables: Mapping[str, str] = field(default_factory=dict)  # folder -> variable named
    keys: Mapping[str, Secret] = field(default_factory=dict, repr=False)  # variable -> key
    origins: Mapping[str, str] = field(default_factory=dict, repr=False)  # variable -> where

    def variable(self, folder: str) -> str:
        """The environment variable of a writer's key."""
        return self.variables.get(folder) or default_variable(folder)

    def key(self, variable: str) -> Secret | None:
        return self.keys.get(variable)

    def source(self, variable: str) -> str:
        """Where a key was read from, as a refused key's message names it."""
        return f"{variable}, read from {self.origins.get(variable, 'the environment')}"


def parse_writers(
    name: str, table: Any, env: Mapping[str, str], in_dotenv: set[str] | frozenset[str]
) -> tuple[Writers | None, list[str]]:
    """`[writers]` as `Writers` (None: no such section) and its problems."""
    if table is None:
        return None, []
    if not isinstance(table, dict):
        return None, [f"{name}: writers: must be a table ([writers])"]
    problems: list[str] = []
    variables: dict[str, str] = {}
    for folder, variable in table.items():
        if not is_writer_folder(folder):
            problems.append(
                f"{name}: writers.{folder!r}: must be the name of a folder directly under "
                "the posts folder (not starting with _ or .)"
            )
        elif not isinstance(variable, str) or not _VARIABLE.fullmatch(variable):
            problems.append(
                f"{name}: writers.{folder}: must be the name of an environment variable, "
                f'e.g. "{default_variable(folder)}"'
            )
        elif variable == PROJECT_VARIABLE:
            problems.append(
                f"{name}: writers.{folder}: {PROJECT_VARIABLE} is the key of the posts outside "
                f'every writer\'s folder; give the writer a variable of their own, e.g. "{default_variable(folder)}"'
            )
        else:
            variables[folder] = variable
    named = set(variables.values())
    keys: dict[str, Secret] = {}
    origins: dict[str, str] = {}
    for variable, value in env.items():
        if (variable in named or variable.startswith(DEFAULT_PREFIX)) and value:
            keys[variable] = Secret(value)
            origins[variable] = ".env" if variable in in_dotenv else "the environment"
    return Writers(variables, keys, origins), problems
