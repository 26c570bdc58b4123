"""The one speed rule for imports (docs/architecture.md, "Speed: what stays, and why"):
ruff's PLC0415 is on, and each file allowed an import inside a function is listed in
pyproject.toml with its reason, and still has one (a stale entry would let new ones in)."""

from __future__ import annotations

import ast
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PYPROJECT = ROOT / "pyproject.toml"


def allowed() -> dict[str, list[str]]:
    lint = tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))["tool"]["ruff"]["lint"]
    assert "PLC0415" in lint["select"]
    return {
        pattern: rules
        for pattern, rules in lint.get("per-file-ignores", {}).items()
        if "PLC0415" in rules
    }


def imports_inside_functions(path: Path) -> int:
    tree = ast.parse(path.read_bytes())
    return sum(
        isinstance(node, ast.Import | ast.ImportFrom)
        for function in ast.walk(tree)
        if isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef)
        for node in ast.walk(function)
    )


def test_each_file_allowed_a_function_level_import_says_why() -> None:
    lines = PYPROJECT.read_text(encoding="utf-8").splitlines()
    listed = allowed()
    assert listed
    for pattern in listed:
        at = lines.index(f'"{pattern}" = ["PLC0415"]') - 1
        while lines[at].startswith('"'):  # an entry of a group under one reason
            at -= 1
        assert lines[at].startswith("# "), f"{pattern}: no reason given above it"


def test_no_product_file_is_listed_without_a_function_level_import() -> None:
    stale = [
        pattern
        for pattern in allowed()
        if pattern.startswith("toolkit/")
        and "*" not in pattern
        and imports_inside_functions(ROOT / pattern) == 0
    ]
    assert stale == []
