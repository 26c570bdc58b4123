"""One exception tree, drawn in `toolkit/errors.py`, and a core that never prints or exits:
only `toolkit/cli/` turns a failure into output and an exit code."""

from __future__ import annotations

import ast
import importlib
import pkgutil
import re
from collections import defaultdict
from pathlib import Path

import pytest

import toolkit
from toolkit import errors
from toolkit.errors import ToolkitError

PACKAGE = Path(toolkit.__file__).parent
SOURCES = sorted(PACKAGE.rglob("*.py"))


def class_definitions(sources: list[Path], root: Path = PACKAGE) -> dict[str, list[str]]:
    """Every class name defined in `sources` (at any depth), with where it is defined."""
    found: dict[str, list[str]] = defaultdict(list)
    for path in sources:
        relative = path.relative_to(root).as_posix()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef):
                found[node.name].append(f"{relative}:{node.lineno}")
    return found


@pytest.mark.untraced  # reads the source, runs none of it
def test_no_two_classes_under_toolkit_share_a_name():
    shared = {name: where for name, where in class_definitions(SOURCES).items() if len(where) > 1}
    assert shared == {}


def test_the_duplicate_name_check_can_fail(tmp_path):
    (tmp_path / "a.py").write_text("class ServerError(Exception):\n    pass\n")
    (tmp_path / "b.py").write_text("def f():\n    class ServerError:\n        pass\n")
    found = class_definitions([tmp_path / "a.py", tmp_path / "b.py"], tmp_path)
    assert found["ServerError"] == ["a.py:1", "b.py:2"]


def drawn_tree() -> dict[str, str | None]:
    """The tree of `errors.py`'s docstring as {class name: drawn parent}."""
    block = errors.__doc__.split("::\n\n", 1)[1].split("\n\n", 1)[0]
    parents: dict[str, str | None] = {}
    stack: list[tuple[int, str]] = []
    for line in block.splitlines():
        match = re.search(r"\w+", line)
        assert match, line
        depth, name = match.start(), match.group()
        while stack and stack[-1][0] >= depth:
            stack.pop()
        parents[name] = stack[-1][1] if stack else None
        stack.append((depth, name))
    return parents


def all_toolkit_errors() -> set[type[ToolkitError]]:
    for module in pkgutil.walk_packages(toolkit.__path__, "toolkit."):
        if module.name != "toolkit.__main__":
            importlib.import_module(module.name)
    found: set[type[ToolkitError]] = set()
    todo: list[type[ToolkitError]] = [ToolkitError]
    while todo:
        cls = todo.pop()
        found.add(cls)
        todo += cls.__subclasses__()
    return {cls for cls in found if cls.__module__.startswith("toolkit.")}


def test_every_toolkit_error_is_drawn_under_its_parent():
    tree = drawn_tree()
    assert tree["ToolkitError"] is None and tree["RateLimited"] == "StatusError"
    for cls in all_toolkit_errors():
        assert cls.__name__ in tree, f"{cls.__module__}.{cls.__name__} is not drawn in errors.py"
        parent = cls.__bases__[0].__name__ if cls is not ToolkitError else None
        assert tree[cls.__name__] == parent, cls.__name__
    assert set(tree) == {cls.__name__ for cls in all_toolkit_errors()}, "a drawn class is gone"


def test_the_root_is_a_plain_exception():
    assert ToolkitError.__mro__[1] is Exception
    error = ToolkitError("what went wrong")
    assert error.message == str(error) == "what went wrong"


# The sandbox's distribution, which holds to the same rule.
SANDBOX = PACKAGE.parent / "sandbox" / "toolkit_sandbox"


def python_sources_outside_the_cli() -> list[Path]:
    core = [p for p in SOURCES if "cli" not in p.relative_to(PACKAGE).parts]
    return core + sorted(SANDBOX.rglob("*.py"))


@pytest.mark.untraced  # reads the source, runs none of it
@pytest.mark.parametrize(
    "path",
    python_sources_outside_the_cli(),
    ids=lambda p: p.relative_to(PACKAGE.parent).as_posix(),
)
def test_the_core_never_imports_click_prints_or_exits(path):
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            names = [node.module or ""]
        else:
            names = []
        assert not [n for n in names if n.split(".")[0] in ("click", "rich")], getattr(
            node, "lineno", None
        )
        if isinstance(node, ast.Call):
            func = node.func
            assert not (isinstance(func, ast.Name) and func.id == "print"), node.lineno
            assert not (
                isinstance(func, ast.Attribute)
                and func.attr == "exit"
                and isinstance(func.value, ast.Name)
                and func.value.id == "sys"
            ), node.lineno
        if isinstance(node, ast.Name):
            assert node.id != "SystemExit", node.lineno


def test_an_expected_failure_is_one_line_and_exit_1(project):
    result = project.run("check", "missing.md")
    assert result.exit_code == 1
    assert result.output == "Error: missing.md: no such file or folder\n"
