"""The one speed rule for imports (docs/architecture.md, "Speed: what stays, and why"):
ruff's PLC0415 is on, and each file allowed an import inside a function is listed in
pyproject.toml with its reason, and still has one (a stale entry would let new ones in)."""

from __future__ import annotations

import ast
import tomllib
from pathlib import Path

import pytest

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


@pytest.mark.e2e  # each row is a `toolkit` process of its own: what it loads is the subject
def test_each_quick_row_loads_none_of_what_keeps_it_quick(tmp_path: Path) -> None:
    """bench/devices.py's import budget, on a small project: `--help`, a build with
    nothing to do, a one-post rebuild without a Liquid tag and a check of one post load
    none of the modules their row must not load (YAML, the Markdown engines, rich...)."""
    from bench.devices import BUDGET, Project, over_budget

    (tmp_path / "toolkit.toml").write_text(
        '[site]\ntitle = "Posts"\ncontent_dir = "content"\nsearch = false\n', encoding="utf-8"
    )
    posts = tmp_path / "content"
    posts.mkdir()
    for n in range(1, 4):
        (posts / f"post-{n}.md").write_text(
            f"---\ntitle: Post {n}\npublished: true\ndate: 2024-01-0{n}\ntags: [python]\n---\n"
            "A paragraph with a [link](https://example.com) and `code`.\n\n## A heading\n",
            encoding="utf-8",
        )
    project = Project(tmp_path, posts / "post-2.md", posts / "post-3.md")
    project.run("none", ["build"])
    assert over_budget(project, tmp_path) == {row: [] for row in BUDGET}
