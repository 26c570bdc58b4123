"""The files `toolkit init` writes from the declarations: a commented `toolkit.toml`
and `.env.example`, made from `toolkit.config.sections` so that they never drift."""

from __future__ import annotations

from dataclasses import fields
from typing import Any

from toolkit.config.keys import BASE_URL, KEY, PATH, PATTERNS, POSITIVE_INT, TEXT, URL, Key
from toolkit.config.sections import DEFAULT_CONFIG_NAME, SECTIONS, declared_keys


def toml_value(value: Any) -> str:
    """A value as it is written in toolkit.toml."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str | list):
        import json

        return json.dumps(value, ensure_ascii=False)
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
}


def commented_toml() -> str:
    """A `toolkit.toml` with every key commented out at its default, each with a line on
    what it does: what `toolkit init` writes. Made from the declarations, so it never
    drifts from them; loading it gives the defaults."""
    import textwrap

    def comment(text: str) -> list[str]:
        return textwrap.wrap(text, width=88, initial_indent="# ", subsequent_indent="# ")

    lines = [
        f"# {DEFAULT_CONFIG_NAME}: the configuration of this toolkit project.",
        "# Every key is shown commented out at its default: remove the leading `# ` of a",
        "# key's line to change it. Paths are relative to this file. Secrets never go here:",
        "# they come from the environment or from .env beside this file (see .env.example).",
        "# `toolkit config` lists every key with its value here and where it came from.",
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
    return "\n".join(lines) + "\n"


def dotenv_example() -> str:
    """`.env.example`: every secret toolkit reads, and the variables that point it at
    other servers; what `toolkit init` writes."""
    lines = [
        "# The secrets toolkit reads from the environment, or from a file named .env beside",
        "# toolkit.toml (the environment wins). Copy this file to .env, fill in what you use,",
        "# keep .env to yourself (chmod 600 .env; it is git-ignored). In CI, set them as",
        "# secrets of the repository instead.",
    ]
    import textwrap

    overrides = []
    for section_name, key_name, key in declared_keys():
        if key.secret and key.env:
            lines += [
                "",
                *textwrap.wrap(
                    f"{section_name}.{key_name}: {key.help}",
                    width=88,
                    initial_indent="# ",
                    subsequent_indent="# ",
                ),
                f"{key.env}=",
            ]
        elif key.env:
            overrides.append(f"# {key.env}=  # overrides {section_name}.{key_name}")
    lines += [
        "",
        "# Not secrets: each points toolkit at another server than toolkit.toml's.",
        *overrides,
    ]
    return "\n".join(lines) + "\n"
