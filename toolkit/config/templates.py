"""The files `toolkit init` writes from the declarations, so that they never drift from
them: the short `toolkit.toml` of a new project (`short_toml`), the full commented
reference `toolkit config --all` prints (`commented_toml`), and `.env.example`."""

from __future__ import annotations

import json
import re
import textwrap
from collections.abc import Mapping
from dataclasses import fields
from typing import Any

from toolkit.config.keys import (
    BASE_URL,
    BOOLEAN,
    ISO_DATE,
    KEY,
    ORGANIZATION,
    PATH,
    PATTERNS,
    POSITIVE_INT,
    TAG_MAP,
    TEXT,
    TIME_ZONE,
    URL,
    Key,
)
from toolkit.config.sections import DEFAULT_CONFIG_NAME, SECTIONS, declared_keys
from toolkit.config.writers import HELP, PROJECT_VARIABLE, writer_variable


def toml_value(value: Any) -> str:
    """A value as it is written in toolkit.toml."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str | list):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, dict):  # an inline table
        pairs = (
            f"{json.dumps(str(k), ensure_ascii=False)} = {toml_value(v)}" for k, v in value.items()
        )
        return "{ " + ", ".join(pairs) + " }"
    return str(value)


# What an unset key's commented line shows, by the kind of its value (uncommented, it is
# a valid value to edit, not its default).
EXAMPLES: dict[str, Any] = {
    URL.kind: "https://example.com/blog",
    BASE_URL.kind: "https://example.com",
    TEXT.kind: "...",
    PATH.kind: "path/to/file",
    POSITIVE_INT.kind: 1,
    PATTERNS.kind: ["examples/", "**/README.md"],
    ORGANIZATION.kind: "acme",
    BOOLEAN.kind: True,
    TAG_MAP.kind: {"GitHub Copilot": "githubcopilot"},
    ISO_DATE.kind: "2026-01-01",
    TIME_ZONE.kind: "America/New_York",
}


def commented_toml() -> str:
    """A `toolkit.toml` with every key commented out at its default, each with a line on
    what it does: what `toolkit init` writes. Made from the declarations, so it never
    drifts from them; loading it gives the defaults."""

    def comment(text: str) -> list[str]:
        return textwrap.wrap(text, width=88, initial_indent="# ", subsequent_indent="# ")

    lines = [
        f"# Every setting of {DEFAULT_CONFIG_NAME}, commented out at its default: copy a",
        "# key's line (and its [section] line) into your toolkit.toml, without the leading",
        "# `# `, to change it. Paths are relative to toolkit.toml. Secrets never go there:",
        "# they come from the environment or from .env beside it (see .env.example).",
        "# `toolkit config` lists every key with its value in force and where it came from.",
    ]
    for section_name, cls in SECTIONS.items():
        lines += ["", *comment((cls.__doc__ or f"[{section_name}]").strip()), f"[{section_name}]"]
        for item in fields(cls):
            key: Key = item.metadata[KEY]
            lines.append("")
            if key.secret:
                lines += comment(
                    f"{item.name}: {key.help} Never here: set {key.env} in the "
                    "environment or in .env."
                )
                continue
            notes = [key.help]
            if key.env:
                notes.append(f"{key.env} overrides it.")
            if key.default_from:
                notes.append(f"Default: the value of {section_name}.{key.default_from}.")
            elif key.default is None:
                notes.append("Unset by default.")
            lines += comment(" ".join(notes))
            value = key.default if key.default is not None else EXAMPLES.get(key.rule.kind, "")
            lines.append(f"# {item.name} = {toml_value(value)}")
    lines += [
        "",
        *comment(HELP),
        "# [writers]",
        f'# jane-doe = "{writer_variable("jane-doe")}"',
    ]
    return "\n".join(lines) + "\n"


def toml_key(name: str) -> str:
    """A key as it is written in toolkit.toml: bare when it can be, else quoted."""
    return name if re.fullmatch(r"[A-Za-z0-9_-]+", name) else json.dumps(name)


def writers_toml(writers: Mapping[str, str]) -> str:
    """The `[forem]` and `[writers]` tables of a team's repository: one line per writer's
    folder, naming the variable of their key."""
    lines = [
        "",
        "[forem]",
        '# organization = "acme"          # optional',
        "",
        "[writers]",
        "# one folder per writer under the posts folder; each writer's posts are published with the",
        "# key in the named environment variable",
        *(f"{toml_key(folder)} = {toml_value(variable)}" for folder, variable in writers.items()),
    ]
    return "\n".join(lines) + "\n"


def short_toml(
    content_dir: str = "content", title: str = "My posts", writers: Mapping[str, str] | None = None
) -> str:
    """The `toolkit.toml` of a new project: the keys a blogger sets (the site's title and
    address, where the posts are), every other one a command away; for a team's
    repository, its writers (`writers`: folder -> variable of their key)."""
    team = writers_toml(writers) if writers else ""
    return f"""# toolkit.toml: this blog's settings. Paths are relative to this file.
# Every other setting, with what it does: toolkit config --all
# Secrets (your API key) never go here: see .env.example.

[site]
title = {toml_value(title)}
# Where the site is published, e.g. https://you.github.io/blog (feed, links, images).
# url = "https://example.com/blog"
# The folder of your posts: Markdown files with front matter.
content_dir = {toml_value(content_dir)}
{team}"""


# FOREM_API_KEY in a team's repository: not a writer's key.
TEAM_PROJECT_KEY = (
    "Only for posts directly in the posts folder, outside every writer's folder (leave it "
    "empty when there are none): a writer's posts are never sent with it."
)


def dotenv_example(
    sections: tuple[str, ...] = ("forem",), writers: Mapping[str, str] | None = None
) -> str:
    """`.env.example`: the secrets of the sections in use (`sections`; a new project
    publishes only), by name, and in a team's repository each writer's (`writers`:
    folder -> variable); what `toolkit init` writes."""
    lines = [
        "# The secrets toolkit reads from the environment, or from a file named .env beside",
        "# toolkit.toml (the environment wins). Copy this file to .env, fill it in, and keep",
        "# .env to yourself (chmod 600 .env; it is git-ignored). In CI, set them as secrets",
        "# of the repository instead.",
    ]
    if writers:  # a writer's key is their own variable: FOREM_API_KEY would go unused
        lines += [
            "",
            "# A team's repository: each writer's API key (dev.to: Settings, Extensions, DEV",
            "# API Keys), in the variable [writers] of toolkit.toml names. On your machine, fill",
            "# in your own line only; in CI, every writer's is a secret of the repository.",
            *(f"{variable}=" for variable in writers.values()),
        ]
    for section_name, _, key in declared_keys():
        if key.secret and key.env and section_name in sections:
            text = key.help if not writers or key.env != PROJECT_VARIABLE else TEAM_PROJECT_KEY
            lines += [
                "",
                *textwrap.wrap(text, width=88, initial_indent="# ", subsequent_indent="# "),
                f"{key.env}=",
            ]
    lines += [
        "",
        "# The other services' secrets (export, premium builds, log shipping) are named by",
        "# toolkit config --all, in the section that turns each one on.",
    ]
    return "\n".join(lines) + "\n"
