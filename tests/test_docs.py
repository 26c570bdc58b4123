"""Every command is documented: its row in the README's Commands table names every
argument and option it has, its help explains each option and ends with examples that
run it; and every test the documents name is where they say. Each check returns the
problems it found, so that the checks themselves are tested on documentation known to be
wrong (a check that cannot fail proves nothing)."""

from __future__ import annotations

import re
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from toolkit.cli import COMMANDS, main

TESTS = Path(__file__).parent
README = (TESTS.parent / "README.md").read_text(encoding="utf-8")
# The documents that name tests, by their path in the project.
NAMING_TESTS = ("README.md", "CONTRIBUTING.md", "sandbox/toolkit_sandbox/README.md")
SHARED = {"--verbose", "--quiet", "--help"}  # on every command; the README lists them once
ENV_ASSIGNMENT = r"(?:[A-Z_][A-Z0-9_]*=\S*\s+)*"  # `FOREM_BASE_URL=... toolkit publish`


def command(name: str) -> click.Command:
    found = main.get_command(click.Context(main), name)
    assert found is not None, name
    return found


def commands_table(readme: str) -> dict[str, str]:
    """The rows of the README's Commands table by command: `| \\`toolkit NAME ...\\` | ... |`."""
    section = readme.split("\n## Commands\n", 1)[1].split("\n## ", 1)[0]
    rows = re.findall(r"^\| `toolkit ([a-z]+)([^`]*)` \|.*$", section, re.MULTILINE)
    return {name: synopsis for name, synopsis in rows}


def readme_problems(readme: str, name: str) -> list[str]:
    """What the README's row of `toolkit NAME` lacks."""
    synopsis = commands_table(readme).get(name)
    if synopsis is None:
        return [f"README.md: no row `| \\`toolkit {name} ...\\` |` in the Commands table"]
    problems = []
    for param in command(name).params:
        if isinstance(param, click.Argument):
            choices = getattr(param.type, "choices", None)
            shown = "\\|".join(choices) if choices else param.metavar or (param.name or "").upper()
            if shown not in synopsis:
                problems.append(f"README.md: toolkit {name}: argument {shown} is missing")
        elif isinstance(param, click.Option):
            names = [o for o in param.opts + param.secondary_opts if o.startswith("--")]
            if (
                names
                and not SHARED & set(names)
                and not any(re.search(rf"{re.escape(o)}(?![\w-])", synopsis) for o in names)
            ):
                problems.append(f"README.md: toolkit {name}: option {names[0]} is missing")
    return problems


def help_problems(cmd: click.Command, name: str) -> list[str]:
    """What the `--help` of `toolkit NAME` lacks: a description, the help of each option,
    and an Example section whose every line runs `toolkit NAME`."""
    problems = []
    if not cmd.help or len(cmd.help.strip()) < 40:
        problems.append(f"toolkit {name}: no help text")
    for param in cmd.params:
        if isinstance(param, click.Option) and not param.help:
            problems.append(f"toolkit {name}: option {param.opts[0]} has no help")
    result = CliRunner().invoke(cmd, ["--help"], prog_name=f"toolkit {name}")
    if result.exit_code != 0:
        return [*problems, f"toolkit {name} --help: exit code {result.exit_code}"]
    example = re.search(r"\n  Examples?:\n((?:    .*\n)+)", result.output)
    if example is None:
        return [*problems, f"toolkit {name} --help: no Example section"]
    for line in example[1].splitlines():
        if not re.match(rf"^    {ENV_ASSIGNMENT}toolkit {name}(\s|$)", line):
            problems.append(f"toolkit {name} --help: example does not run it: {line.strip()}")
    return problems


# A test file under tests/ with its folder (`sync/test_pull.py`, `tests/e2e/test_x.py`),
# a test of it (`sync/test_pull.py::test_y`), or another test of the file named last on the
# line (`::test_z`).
TEST_REFERENCE = re.compile(
    r"(?<![\w./-])(?:tests/)?(?P<file>(?:[a-z0-9_]+/)*test_[a-z0-9_]+\.py)?::(?P<test>test_\w+)"
    r"|(?<![\w./-])(?:tests/)?(?P<path>(?:[a-z0-9_]+/)+test_[a-z0-9_]+\.py)"
)


def reference_problems(document: str, text: str, tests: Path = TESTS) -> list[str]:
    """The test files and tests `text` names that are not in `tests`."""
    problems = []
    for number, line in enumerate(text.splitlines(), 1):
        current = None
        for found in TEST_REFERENCE.finditer(line):
            path = found["file"] or found["path"]
            if path is not None:
                path = path.removeprefix("tests/")
                current = path if (tests / path).is_file() else None
                if current is None:
                    problems.append(f"{document}:{number}: no tests/{path}")
            name = found["test"]
            if name is None or (path is not None and current is None):
                continue
            if current is None:
                problems.append(f"{document}:{number}: ::{name} follows no test file")
            elif not re.search(rf"^(?:async )?def {name}\(", (tests / current).read_text(), re.M):
                problems.append(f"{document}:{number}: no {name} in tests/{current}")
    return problems


@pytest.mark.parametrize("document", NAMING_TESTS)
def test_every_test_a_document_names_is_where_it_says(document):
    text = (TESTS.parent / document).read_text(encoding="utf-8")
    assert reference_problems(document, text) == []


def test_a_test_named_at_a_wrong_place_is_found():
    text = (
        "`sync/test_pull.py::test_nothing_here`, `::test_pull_then_publish_writes_nothing`\n"
        "`test_pull.py::test_pull_then_publish_writes_nothing`\n"
        "`tests/nowhere/test_pull.py`, `::test_orphan`\n"
    )
    assert reference_problems("DOC.md", text) == [
        "DOC.md:1: no test_nothing_here in tests/sync/test_pull.py",
        "DOC.md:2: no tests/test_pull.py",
        "DOC.md:3: no tests/nowhere/test_pull.py",
        "DOC.md:3: ::test_orphan follows no test file",
    ]


@pytest.mark.parametrize("name", list(COMMANDS))
def test_command_has_its_row_in_the_readme(name):
    assert readme_problems(README, name) == []


@pytest.mark.parametrize("name", list(COMMANDS))
def test_command_help_explains_every_option_with_examples(name):
    assert help_problems(command(name), name) == []


def test_every_row_of_the_table_is_a_command():
    assert list(commands_table(README)) == list(COMMANDS)  # and in the order of --help


def test_top_level_help_lists_every_command():
    result = CliRunner().invoke(main, ["--help"])
    listed = re.findall(r"^  ([a-z]+)\s", result.output.split("Commands:", 1)[1], re.MULTILINE)
    assert listed == list(COMMANDS)


@pytest.mark.parametrize("name", list(COMMANDS))
def test_the_summary_in_the_list_of_commands_is_the_commands_own(name):
    """`toolkit --help` lists the summaries of `COMMANDS` without importing the commands:
    each must be the first sentence of the command's own help."""
    assert COMMANDS[name][1] == command(name).get_short_help_str(limit=10_000)


# -- the checks above can fail, for every command ------------------------------------------


@pytest.mark.parametrize("name", list(COMMANDS))
def test_a_missing_row_is_found(name):
    rows = [line for line in README.splitlines() if line.startswith(f"| `toolkit {name}")]
    assert len(rows) == 1
    without = README.replace(rows[0] + "\n", "")
    assert readme_problems(without, name) == [
        f"README.md: no row `| \\`toolkit {name} ...\\` |` in the Commands table"
    ]


@pytest.mark.parametrize(
    "name",
    [
        n
        for n in COMMANDS
        if any(isinstance(p, click.Option) and not SHARED & set(p.opts) for p in command(n).params)
        or any(isinstance(p, click.Argument) for p in command(n).params)
    ],
)
def test_a_missing_option_or_argument_is_found(name):
    (row,) = [line for line in README.splitlines() if line.startswith(f"| `toolkit {name}")]
    synopsis = row.split("`")[1]
    stripped = re.sub(r"\s*\[[^\]]*\]", "", synopsis)  # every [optional part] taken out
    stripped = re.sub(r" [A-Z]+(\.\.\.)?", "", stripped)  # and the arguments
    stripped = re.sub(r" [a-z.]+(\\\|[a-z.]+)+", "", stripped)  # and a choice (bash\|zsh)
    problems = readme_problems(README.replace(synopsis, stripped), name)
    assert problems and all(p.startswith(f"README.md: toolkit {name}: ") for p in problems)


@pytest.mark.parametrize("name", list(COMMANDS))
def test_a_bad_help_is_found(name):
    real = command(name)
    bare = click.Command(name, params=[click.Option(["--thing"])], help="Too short.")
    assert help_problems(bare, name) == [
        f"toolkit {name}: no help text",
        f"toolkit {name}: option --thing has no help",
        f"toolkit {name} --help: no Example section",
    ]
    wrong = click.Command(
        name, params=real.params, help=(real.help or "").replace(f"toolkit {name}", "toolkit other")
    )
    problems = help_problems(wrong, name)
    examples = (real.help or "").split("Example:", 1)[1].strip().splitlines()
    assert len(problems) == len(examples) > 0
    assert all(p.startswith(f"toolkit {name} --help: example does not run it: ") for p in problems)
