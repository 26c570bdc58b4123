"""Every command is documented: help text with an example, and a mention in the README."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from toolkit.cli import COMMANDS, main

README = (Path(__file__).parent.parent / "README.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_command_has_help_with_an_example(name):
    result = CliRunner().invoke(main, [name, "--help"])
    assert result.exit_code == 0, result.output
    command = main.get_command(None, name)
    assert command.help and len(command.help.strip()) > 40, f"{name} has no help text"
    assert "Example:" in result.output, f"`toolkit {name} --help` shows no example"
    assert f"toolkit {name}" in result.output.split("Example:", 1)[1]


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_command_is_in_the_readme(name):
    assert f"toolkit {name}" in README, f"README.md does not mention `toolkit {name}`"


def test_top_level_help_lists_every_command():
    result = CliRunner().invoke(main, ["--help"])
    for name in COMMANDS:
        assert name in result.output
