"""The layers of `toolkit` as import contracts (`[tool.importlinter]` in pyproject.toml):
`make test` fails, as `make lint` does, when an import climbs back up a layer or two
modules import each other."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

# Every test here starts a process or opens a socket (tests/support/plugin.py).
pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parent.parent


def lint_imports(cwd: Path) -> subprocess.CompletedProcess[str]:
    """`lint-imports` of this environment on `cwd`'s pyproject.toml, `toolkit` imported
    from `cwd` and `toolkit_sandbox` from `cwd/sandbox`."""
    tool = Path(sys.executable).parent / "lint-imports"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(cwd), str(cwd / "sandbox")])}
    return subprocess.run(
        [str(tool), "--no-cache"], cwd=cwd, env=env, text=True, capture_output=True, timeout=120
    )


def test_no_import_climbs_a_layer():
    result = lint_imports(ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert re.search(r"Contracts: [3-9] kept, 0 broken\.", result.stdout), result.stdout


@pytest.mark.parametrize(
    ("module", "line", "broken"),
    [
        # What toolkit.runlog.results did: the run log naming a command's result type.
        (
            "toolkit/runlog/times.py",
            "if TYPE_CHECKING:\n    from toolkit.sync.engine import PublishResult\n",
            "toolkit.runlog is not allowed to import toolkit.sync",
        ),
        # What toolkit.commands.mcp did: a command starting the MCP server that calls it.
        (
            "toolkit/commands/serve.py",
            "from toolkit.mcp import scopes\n",
            "toolkit.commands is not allowed to import toolkit.mcp",
        ),
        (
            "sandbox/toolkit_sandbox/limits.py",
            "from toolkit.clients.bounds import deadline\n",
            "toolkit_sandbox is not allowed to import toolkit.clients",
        ),
        # The product needing the sandbox's distribution outside `toolkit sandbox`/`demo`.
        (
            "toolkit/site/scan.py",
            "from toolkit_sandbox.forem import text\n",
            "toolkit is not allowed to import toolkit_sandbox",
        ),
        ("toolkit/site/scan.py", "import click\n", "toolkit.site is not allowed to import click"),
    ],
    ids=[
        "runlog-names-a-domain-result",
        "commands-import-mcp",
        "sandbox-imports-a-client",
        "toolkit-imports-the-sandbox",
        "site-imports-click",
    ],
)
def test_the_contracts_catch_an_import_that_climbs(tmp_path, module, line, broken):
    for package in ("toolkit", "sandbox/toolkit_sandbox"):
        shutil.copytree(
            ROOT / package, tmp_path / package, ignore=shutil.ignore_patterns("__pycache__")
        )
    shutil.copy(ROOT / "pyproject.toml", tmp_path)
    source = tmp_path / module
    text = source.read_text(encoding="utf-8")
    if "TYPE_CHECKING" in line and "import TYPE_CHECKING" not in text:
        line = "from typing import TYPE_CHECKING\n" + line
    source.write_text(text + "\n" + line, encoding="utf-8")
    result = lint_imports(tmp_path)
    assert result.returncode == 1, result.stdout + result.stderr
    assert broken in result.stdout, result.stdout


@pytest.mark.parametrize(
    ("module", "line", "broken"),
    [
        # What content/hosting.py did: naming rules.Unique, rules importing hosting back.
        (
            "toolkit/content/hosting.py",
            "if TYPE_CHECKING:\n    from toolkit.content.rules import Unique\n",
            "No cycles are allowed in toolkit.content.",
        ),
        # What sandbox/control.py did: naming the application that imports it.
        (
            "sandbox/toolkit_sandbox/control.py",
            "if TYPE_CHECKING:\n    from toolkit_sandbox.app import SandboxApp\n",
            "No cycles are allowed in toolkit_sandbox.",
        ),
    ],
    ids=["content-hosting-rules", "sandbox-control-app"],
)
def test_the_contracts_catch_an_import_cycle_within_a_package(tmp_path, module, line, broken):
    """Inside one package no layer is crossed, so only the acyclic contract sees these."""
    test_the_contracts_catch_an_import_that_climbs(tmp_path, module, line, broken)


def test_the_acyclic_contract_catches_a_cycle_planted_deep_in_a_package(tmp_path):
    """The contract of pyproject.toml, as written there, over a small package whose
    modules import each other in a loop two levels down; without the loop it is kept."""
    with (ROOT / "pyproject.toml").open("rb") as f:
        contracts = tomllib.load(f)["tool"]["importlinter"]["contracts"]
    (acyclic,) = [c for c in contracts if c["type"] == "acyclic_siblings"]
    lines = [
        "[tool.importlinter]",
        'root_package = "planted"',
        "",
        "[[tool.importlinter.contracts]]",
    ]
    for key, value in {**acyclic, "ancestors": ["planted"]}.items():
        lines.append(f"{key} = {json.dumps(value)}")
    (tmp_path / "pyproject.toml").write_text("\n".join(lines) + "\n", encoding="utf-8")
    package = tmp_path / "planted" / "inner"
    package.mkdir(parents=True)
    (tmp_path / "planted" / "__init__.py").write_text("", encoding="utf-8")
    (package / "__init__.py").write_text("", encoding="utf-8")
    (package / "a.py").write_text("from planted.inner import b\n", encoding="utf-8")
    (package / "b.py").write_text("from planted.inner import c\n", encoding="utf-8")
    (package / "c.py").write_text("x = 1\n", encoding="utf-8")

    kept = lint_imports(tmp_path)
    assert kept.returncode == 0, kept.stdout + kept.stderr

    (package / "c.py").write_text(
        "from typing import TYPE_CHECKING\n\nif TYPE_CHECKING:\n    from planted.inner import a\n",
        encoding="utf-8",
    )
    broken = lint_imports(tmp_path)
    assert broken.returncode == 1, broken.stdout + broken.stderr
    assert "No cycles are allowed in planted.inner." in broken.stdout, broken.stdout


# toolkit with the sandbox's distribution missing: every module imports, `--help` works,
# and the two commands that start the sandbox each say in one line how to install it.
WITHOUT_SANDBOX = """
import importlib, pkgutil, sys
sys.modules["toolkit_sandbox"] = None  # what an install without toolkit-sandbox finds
import toolkit
for module in pkgutil.walk_packages(toolkit.__path__, "toolkit."):
    if module.name != "toolkit.__main__":
        importlib.import_module(module.name)
from toolkit.cli import main
main(sys.argv[1:], prog_name="toolkit")
"""


def without_the_sandbox(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`toolkit ARGS` in `cwd`, every module of toolkit imported first, with the sandbox's
    distribution missing."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("FOREM_", "TOOLKIT_"))}
    return subprocess.run(
        [sys.executable, "-c", WITHOUT_SANDBOX, *args],
        cwd=cwd,
        env=env,
        text=True,
        capture_output=True,
        timeout=120,
    )


@pytest.mark.parametrize(
    "args", [("sandbox", "--memory", "--port", "0"), ("demo",)], ids=["sandbox", "demo"]
)
def test_toolkit_without_the_sandbox_says_how_to_install_it(tmp_path, args):
    from toolkit.commands.sandbox import NOT_INSTALLED

    (tmp_path / "toolkit.toml").write_text('[site]\ntitle = "Blog"\n', encoding="utf-8")
    run = without_the_sandbox(tmp_path, *args)
    assert run.returncode == 1, run.stdout + run.stderr
    assert run.stderr == f"Error: {NOT_INSTALLED}\n", run.stderr
    assert "Traceback" not in run.stdout + run.stderr
    assert not (tmp_path / ".toolkit" / "demo").exists()  # refused before anything is made


def test_toolkit_without_the_sandbox_imports_every_module_and_helps(tmp_path):
    helped = without_the_sandbox(tmp_path, "--help")
    assert helped.returncode == 0 and "sandbox" in helped.stdout, helped.stderr
