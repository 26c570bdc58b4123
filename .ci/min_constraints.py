"""Constraints pinning every dependency of toolkit at its declared lower bound.

Prints a pip constraints file: each requirement of `[project] dependencies` and of the
runtime extras (not `dev` or `sdk`, the tools) that has a lower bound `>=X` becomes
`name==X`. `make test-min` installs toolkit with it into a venv of its own and runs the
tests that exercise those dependencies, so that a lower bound in pyproject.toml is one
toolkit is known to work with. A requirement without a lower bound is an error: there is
nothing to test. The sandbox's distribution (sandbox/pyproject.toml) is pinned the same
way; the two name each other without a bound, as the siblings `make test-min` installs
from their folders.
"""

from __future__ import annotations

import re
import sys
import tomllib
from pathlib import Path

TOOLS = ("dev", "sdk")  # extras of the developers' tools, installed as they come
SIBLINGS = ("toolkit", "toolkit-sandbox")  # this repository's two distributions


def lower_bounds(pyproject: Path) -> list[str]:
    project = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]
    requirements = list(project["dependencies"])
    for extra, more in project.get("optional-dependencies", {}).items():
        if extra not in TOOLS:
            requirements += more
    pins = []
    for requirement in requirements:
        name = re.split(r"[\s<>=!~\[;]", requirement, maxsplit=1)[0]
        if name in SIBLINGS:
            continue
        lower = re.search(r">=\s*([^,;\s]+)", requirement)
        if lower is None:
            raise SystemExit(f"{pyproject}: {requirement}: no lower bound (>=) to test")
        pins.append(f"{name}=={lower.group(1)}")
    return pins


if __name__ == "__main__":
    root = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parent.parent
    pins = lower_bounds(root / "pyproject.toml") + lower_bounds(root / "sandbox" / "pyproject.toml")
    print("\n".join(dict.fromkeys(pins)))
