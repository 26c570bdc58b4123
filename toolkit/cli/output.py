"""Where the CLI writes: results on stdout, progress and diagnostics on stderr."""

from __future__ import annotations

import os

from rich.console import Console

stdout = Console(highlight=False, soft_wrap=True)
stderr = Console(stderr=True, highlight=False, soft_wrap=True)


def in_github_actions() -> bool:
    return os.environ.get("GITHUB_ACTIONS") == "true"


def _escape(value: str, *, property_value: bool = False) -> str:
    # The workflow-command escaping GitHub documents for messages and properties.
    value = value.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    if property_value:
        value = value.replace(":", "%3A").replace(",", "%2C")
    return value


def github_annotation(level: str, message: str, file: str | None = None,
                      line: int | None = None) -> str:
    """`::error file=content/a.md,line=3::message`: shown on the commit by GitHub Actions."""
    properties = []
    if file:
        properties.append(f"file={_escape(file, property_value=True)}")
    if line:
        properties.append(f"line={line}")
    head = f"::{level}" + (" " + ",".join(properties) if properties else "")
    return f"{head}::{_escape(message)}"
