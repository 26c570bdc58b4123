"""`toolkit completion SHELL` prints click's completion script, and the script's callback
(`_TOOLKIT_COMPLETE`) completes toolkit's lazily imported commands and their options."""

from __future__ import annotations

import pytest


@pytest.mark.e2e
def test_bash_script_holds_the_complete_function(project):
    result = project.run("completion", "bash")
    assert result.exit_code == 0, result.output
    script = result.stdout
    assert "_toolkit_completion()" in script
    assert "complete -o nosort -F _toolkit_completion toolkit" in script
    assert "_TOOLKIT_COMPLETE=bash_complete" in script
    assert result.stderr == ""


@pytest.mark.parametrize(
    ("shell", "marker"),
    [("zsh", "#compdef toolkit"), ("fish", "complete --no-files --command toolkit")],
)
def test_zsh_and_fish_scripts(project, shell, marker):
    result = project.run("completion", shell)
    assert result.exit_code == 0, result.output
    assert marker in result.stdout and f"_TOOLKIT_COMPLETE={shell}_complete" in result.stdout


def test_an_unknown_shell_is_a_usage_error(project):
    result = project.run("completion", "tcsh")
    assert result.exit_code == 2
    assert "'tcsh' is not one of 'bash', 'zsh', 'fish'" in result.output


def complete(project, words: str) -> list[str]:
    """What the script's callback answers for the command line `words` (the cursor at its
    end), as bash asks it."""
    from click.testing import CliRunner

    from toolkit.cli import main

    parts = words.split(" ")
    result = CliRunner().invoke(
        main,
        [],
        prog_name="toolkit",
        env={
            "_TOOLKIT_COMPLETE": "bash_complete",
            "COMP_WORDS": words,
            "COMP_CWORD": str(len(parts) - 1),
        },
    )
    assert result.exit_code == 0, result.output
    return [line.split(",", 1)[1] for line in result.stdout.splitlines()]


def test_the_script_completes_commands_options_and_choices(project):
    assert complete(project, "toolkit pu") == ["publish", "pull"]
    assert "--json" in complete(project, "toolkit check --")
    assert complete(project, "toolkit completion ") == ["bash", "zsh", "fish"]
