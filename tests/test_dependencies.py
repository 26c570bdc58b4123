"""pyproject.toml declares what toolkit imports: every distribution a module of toolkit/
imports is a dependency or in an extra, and a module of an extra (which a writer may not
have installed) is imported only where it is used, never when a module is loaded. The
same of the sandbox, a distribution of its own (sandbox/pyproject.toml)."""

from __future__ import annotations

import ast
import functools
import re
import sys
import tomllib
from importlib.metadata import packages_distributions
from pathlib import Path
from typing import Any

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parent.parent

# In one worker: each package is parsed once for all the tests (`_imports`), not once in
# each worker a test lands in. The tests read the source and run none of it (`untraced`).
pytestmark = [pytest.mark.xdist_group("dependency-rules"), pytest.mark.untraced]


def _name(requirement: str) -> str:
    """`Jinja2>=3.1.4` -> `jinja2`, `toolkit[7z]` -> `toolkit` (normalised, PEP 503)."""
    return canonicalize_name(Requirement(requirement).name)


# The sandbox's distribution (sandbox/), which toolkit's `sandbox` extra names: its package.
SANDBOX = ROOT / "sandbox"
SANDBOX_PACKAGE = "toolkit_sandbox"


@functools.cache  # read by three tests (in one worker): each package parsed once
def _imports(package: Path = ROOT / "toolkit") -> dict[str, list[tuple[str, bool]]]:
    """Top-level module -> (file, imported at module level) for every import in `package`."""
    found: dict[str, list[tuple[str, bool]]] = {}
    for path in sorted(package.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        at_top = {id(node) for node in tree.body}
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            for name in names:
                found.setdefault(name.split(".")[0], []).append(
                    (str(path.relative_to(ROOT)), id(node) in at_top)
                )
    return found


def _project(root: Path = ROOT) -> dict[str, Any]:
    """The `[project]` table of `root`'s pyproject.toml."""
    return tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))["project"]


def _declared(root: Path = ROOT) -> tuple[set[str], dict[str, set[str]]]:
    project = _project(root)
    extras = {
        extra: {_name(r) for r in requirements}
        for extra, requirements in project["optional-dependencies"].items()
    }
    return {_name(r) for r in project["dependencies"]}, extras


def _left_out_here(root: Path = ROOT) -> set[str]:
    """The required distributions whose environment marker leaves them out of this
    interpreter (`markdown-it-pyrs; python_version < "3.13"`): not installed, by design."""
    return {
        canonicalize_name(r.name)
        for r in map(Requirement, _project(root)["dependencies"])
        if r.marker is not None and not r.marker.evaluate()
    }


def test_every_distribution_toolkit_imports_is_declared():
    required, extras = _declared()
    distributions = packages_distributions()
    left_out = _left_out_here()
    undeclared = {}
    for module in _imports():
        if module in sys.stdlib_module_names or module in ("toolkit", SANDBOX_PACKAGE):
            continue
        if module not in distributions and _name(module) in left_out:
            continue  # declared, for the interpreters it has a wheel for
        names = {_name(d) for d in distributions.get(module, [])}
        if not names & (required | extras.get("7z", set()) | extras.get("sql", set())):
            undeclared[module] = sorted(names) or "not installed"
    assert undeclared == {}


def test_a_module_of_an_extra_is_imported_only_where_it_is_used():
    required, extras = _declared()
    distributions = packages_distributions()
    optional = {
        module
        for module, names in distributions.items()
        if {_name(d) for d in names} & (extras.get("7z", set()) | extras.get("sql", set()))
        and not {_name(d) for d in names} & required
    }
    assert {"py7zr", "datafusion", "pyarrow"} <= optional
    loaded_with_a_module = sorted(
        f"{path}: {module}"
        for module, uses in _imports().items()
        if module in optional
        for path, at_top in uses
        if at_top
    )
    assert loaded_with_a_module == []


def test_the_sandbox_requires_this_toolkit_and_toolkit_imports_it_only_where_it_is_used():
    toolkit = _project(ROOT)
    sandbox = _project(SANDBOX)
    assert sandbox["name"] == "toolkit-sandbox" and sandbox["version"] == toolkit["version"]
    # This repository's toolkit, at its version exactly: another project holds the name
    # `toolkit` on PyPI, and no extra of toolkit's names the sandbox (none would be found).
    assert f"toolkit=={toolkit['version']}" in sandbox["dependencies"]
    named = {r for extra in toolkit["optional-dependencies"].values() for r in extra}
    assert not [r for r in named if _name(r) == "toolkit-sandbox"]
    assert (SANDBOX / SANDBOX_PACKAGE / "__init__.py").is_file()
    uses = _imports()[SANDBOX_PACKAGE]
    assert {path for path, _ in uses} == {"toolkit/commands/sandbox.py", "toolkit/commands/demo.py"}
    assert not [path for path, at_top in uses if at_top]


def test_every_distribution_the_sandbox_imports_is_declared_in_its_own_pyproject():
    required, extras = _declared(SANDBOX)
    assert "toolkit" in required  # its shared modules: serving, errors, sql_json, tls
    distributions = packages_distributions()
    undeclared = {}
    optional = set().union(*extras.values())
    for module, uses in _imports(SANDBOX / SANDBOX_PACKAGE).items():
        if module in sys.stdlib_module_names or module in ("toolkit", SANDBOX_PACKAGE):
            continue
        names = {_name(d) for d in distributions.get(module, [])}
        if not names & (required | optional):
            undeclared[module] = sorted(names) or "not installed"
        elif not names & required:  # an extra's module: imported where it is used only
            assert not [path for path, at_top in uses if at_top], module
    assert undeclared == {}


def test_the_dev_extra_brings_the_optional_parts_and_pins_the_checks():
    _, extras = _declared()
    assert "toolkit" in extras["dev"]  # toolkit[7z]: `make test` exports 7z archives
    project = _project(ROOT)
    pinned = {_name(r): r for r in project["optional-dependencies"]["dev"]}
    assert all(
        re.fullmatch(rf"{tool}==[0-9][0-9.]*", pinned[tool], re.IGNORECASE)
        for tool in ("ruff", "mypy", "zizmor")
    )
