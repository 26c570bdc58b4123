"""The publish workflow builds the premium site when the LICENSE_API_TOKEN secret is set,
and otherwise the public one, saying so in the job summary. The check step's script is
run here as the runner runs it (bash, with GITHUB_OUTPUT and GITHUB_STEP_SUMMARY)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
import yaml

# Every test here starts a process or opens a socket (tests/support/plugin.py).
pytestmark = pytest.mark.e2e

WORKFLOW = Path(__file__).resolve().parents[2] / ".github" / "workflows" / "publish.yml"


def steps() -> dict[str, dict]:
    job = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))["jobs"]["publish"]
    return {step.get("name", ""): step for step in job["steps"]}


def run_check(tmp_path: Path, token: str) -> tuple[str, str]:
    output, summary = tmp_path / "output", tmp_path / "summary"
    output.write_text(""), summary.write_text("")
    script = steps()["Check for the licence token"]["run"]
    subprocess.run(
        ["bash", "-e", "-c", script],
        check=True,
        env={
            "LICENSE_API_TOKEN": token,
            "GITHUB_OUTPUT": str(output),
            "GITHUB_STEP_SUMMARY": str(summary),
            "PATH": "/usr/bin:/bin",
        },
    )
    return output.read_text(), summary.read_text()


def test_with_the_secret_the_premium_site_is_built(tmp_path):
    output, summary = run_check(tmp_path, "ya29.secret")
    assert output == "present=true\n" and summary == ""
    premium = steps()["Build the premium site"]
    assert premium["run"].strip() == ".venv/bin/toolkit build --premium"
    assert premium["env"] == {"LICENSE_API_TOKEN": "${{ secrets.LICENSE_API_TOKEN }}"}
    assert "steps.license.outputs.present == 'true'" in premium["if"]
    assert "env" not in steps()["Install toolkit"]  # installing never sees the token


def test_without_it_the_public_site_is_built_and_the_summary_says_so(tmp_path):
    output, summary = run_check(tmp_path, "")
    assert output == "present=false\n"
    assert "Public site built instead of the premium one" in summary
    assert "`LICENSE_API_TOKEN` secret is not set" in summary
    public = steps()["Build the public site"]
    assert public["run"] == "make site PYTHON=python" and "env" not in public
    assert "steps.license.outputs.present == 'false'" in public["if"]
