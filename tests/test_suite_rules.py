"""Rules of the test suite itself, so that it stays green whatever order tests run in."""

from __future__ import annotations

import ast
import functools
from collections.abc import Callable
from pathlib import Path

import pytest

TESTS = Path(__file__).parent

# In one worker: the suite is parsed once for all the rules (`suite_modules`), not once in
# each worker a rule lands in. The rules read the source and run none of it (`untraced`).
pytestmark = [pytest.mark.xdist_group("suite-rules"), pytest.mark.untraced]


@functools.cache
def suite_modules() -> list[tuple[str, ast.Module]]:
    """Every module of tests/, parsed once for all the rules below."""
    return [
        (str(path.relative_to(TESTS)), ast.parse(path.read_text(encoding="utf-8")))
        for path in sorted(TESTS.rglob("*.py"))
    ]


def breaches(rule: Callable[[ast.Module], list[int]]) -> list[str]:
    """`path:line` of each place of the suite that `rule` finds."""
    return [f"{name}:{line}" for name, tree in suite_modules() for line in rule(tree)]


def conftest_imports(tree: ast.Module) -> list[int]:
    """Lines of `tree` that import a module named `conftest`."""
    lines = []
    for node in ast.walk(tree):
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
    test shares goes in a helper module of tests/support/ instead."""
    assert breaches(conftest_imports) == []


def test_the_conftest_import_check_can_fail():
    assert conftest_imports(ast.parse("def f():\n    from conftest import X\n")) == [2]
    assert conftest_imports(ast.parse("import conftest\n")) == [1]
    assert conftest_imports(ast.parse("from runlog_helpers import X\n")) == []


HTTPX_CALLS = {
    "Client",
    "AsyncClient",
    "get",
    "post",
    "put",
    "patch",
    "delete",
    "head",
    "request",
    "stream",
}


def clients_without_shared_tls(tree: ast.Module) -> list[int]:
    """Lines of `tree` that make an httpx client (or a one-off request) without
    `verify=`: httpx then loads the CA bundle again, some 30 ms of processor each time."""
    return [
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and isinstance(node.func.value, ast.Name)
        and node.func.value.id == "httpx"
        and node.func.attr in HTTPX_CALLS
        and not any(k.arg in ("verify", "transport") or k.arg is None for k in node.keywords)
    ]


def test_every_http_client_of_the_suite_shares_the_tls_context():
    """A test's httpx client passes `verify=toolkit.tls.shared_context()` (or a transport
    of its own): the suite makes thousands, and the CA bundle loaded for each cost more
    processor than some whole test files."""
    assert breaches(clients_without_shared_tls) == []


def test_the_shared_tls_check_can_fail():
    assert clients_without_shared_tls(ast.parse("import httpx\nhttpx.get(url)\n")) == [2]
    assert clients_without_shared_tls(ast.parse("httpx.Client(base_url=u, verify=ctx)\n")) == []
    assert clients_without_shared_tls(ast.parse("httpx.Client(transport=t)\n")) == []
