"""The layers of `toolkit` as import contracts (`[tool.importlinter]` in pyproject.toml):
`make test` fails, as `make lint` does, when an import climbs back up a layer."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def lint_imports(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`lint-imports` of this environment, on the configuration found in `cwd`."""
    tool = Path(sys.executable).parent / "lint-imports"
    env = {**os.environ, "PYTHONPATH": str(cwd)}
    return subprocess.run([str(tool), "--no-cache", *args], cwd=cwd, env=env, text=True,
                          capture_output=True, timeout=120)


def test_no_import_climbs_a_layer():
    result = lint_imports(ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert re.search(r"Contracts: [3-9] kept, 0 broken\.", result.stdout), result.stdout


def test_the_layer_check_can_fail(tmp_path):
    """A lower layer importing a higher one (what `toolkit.runlog.results` did with the
    domain's result types) breaks the contract."""
    package = tmp_path / "layered"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "commands.py").write_text("from layered import runlog\n")
    (package / "runlog.py").write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n"
        "    from layered.commands import x\n")
    (tmp_path / ".importlinter").write_text(
        "[importlinter]\nroot_package = layered\n\n"
        "[importlinter:contract:layers]\nname = layers\ntype = layers\n"
        "containers = layered\nlayers =\n    commands\n    runlog\n")
    result = lint_imports(tmp_path, "--config", ".importlinter")
    assert result.returncode == 1, result.stdout + result.stderr
    assert "layered.runlog -> layered.commands" in result.stdout, result.stdout
