"""Rules of the test suite itself, so that it stays green whatever order tests run in."""

from __future__ import annotations

import ast
from pathlib import Path

TESTS = Path(__file__).parent


def conftest_imports(source: str) -> list[int]:
    """Lines of `source` that import a module named `conftest`."""
    lines = []
    for node in ast.walk(ast.parse(source)):
        if (
            isinstance(node, ast.ImportFrom)
            and node.module == "conftest"
            or isinstance(node, ast.Import)
            and any(a.name == "conftest" for a in node.names)
        ):
            lines.append(node.lineno)
    return lines


def test_no_test_imports_a_conftest_by_name():
    """`import conftest` gets whichever folder's conftest a worker imported first: what a
    test shares goes in a helper module of its folder instead."""
    found = [
        f"{path.relative_to(TESTS)}:{line}"
        for path in sorted(TESTS.rglob("*.py"))
        for line in conftest_imports(path.read_text(encoding="utf-8"))
    ]
    assert found == []


def test_the_conftest_import_check_can_fail():
    assert conftest_imports("def f():\n    from conftest import X\n") == [2]
    assert conftest_imports("import conftest\n") == [1]
    assert conftest_imports("from runlog_helpers import X\n") == []
