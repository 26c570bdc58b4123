"""`toolkit init`: a project a writer can commit at once, in a new folder or an existing
repository, that never overwrites anything; and what commands say without toolkit.toml."""

from __future__ import annotations

import contextlib
import os
import re
import shlex
import subprocess
import sys
import tomllib
from dataclasses import fields
from pathlib import Path

import pytest
from click.testing import CliRunner

from toolkit.cli import main
from toolkit.commands.init import WORKFLOW, ActionPin, ignored, init_project
from toolkit.config import load_config
from toolkit.config.keys import KEY
from toolkit.config.sections import SECTIONS, declared_keys
from toolkit.config.templates import commented_toml, dotenv_example

REPOSITORY = Path(__file__).parent.parent
PIN = ActionPin("toolkit-docs/toolkit", "0123456789abcdef0123456789abcdef01234567")
CREATED = ["toolkit.toml", "content/welcome.md", ".gitignore", ".env.example", WORKFLOW]


def cli(folder: Path, *args: str):
    """The real CLI run from `folder`, with no --config: as a writer types it."""
    with contextlib.chdir(folder):
        return CliRunner().invoke(main, list(args), catch_exceptions=False)


def uncommented(text: str) -> str:
    """The generated toolkit.toml with every key's line uncommented."""
    return re.sub(r"^# ([a-z_]+ = .*)$", r"\1", text, flags=re.MULTILINE)


def test_the_commented_toml_names_every_key_once_at_its_default():
    text = commented_toml()
    assert tomllib.loads(text) == {name: {} for name in SECTIONS}  # all commented out
    data = tomllib.loads(uncommented(text))
    for section, key, declared in declared_keys():
        if declared.secret:
            assert key not in data[section]
            assert (
                declared.env is not None and declared.env in text
            )  # named, with where it comes from instead
        elif declared.default is not None and not declared.default_from:
            assert data[section][key] == declared.default, f"{section}.{key}"
        else:
            assert key in data[section], f"{section}.{key}"
        assert declared.help.split(";")[0].split("(")[0].strip().split()[0] in text
    assert sum(len(v) for v in data.values()) == sum(1 for *_, k in declared_keys() if not k.secret)


def test_the_commented_toml_loads_and_uncommented_is_valid(tmp_path):
    (tmp_path / "toolkit.toml").write_text(commented_toml())
    loaded = load_config(tmp_path / "toolkit.toml", env={})
    defaults = load_config(tmp_path / "none.toml", env={}, missing_ok=True)
    for name in SECTIONS:
        assert getattr(loaded, name) == getattr(defaults, name)
    (tmp_path / "toolkit.toml").write_text(uncommented(commented_toml()))
    every = load_config(tmp_path / "toolkit.toml", env={})  # every example value is valid
    assert every.site.title == "My posts"


def test_the_commented_toml_follows_a_new_declaration(monkeypatch):
    """Generated, not written by hand: a key declared gets its line."""
    from dataclasses import dataclass

    from toolkit.config import keys, sections

    @dataclass(frozen=True)
    class Extra:
        """[extra]: a section declared for this test."""

        depth: int = keys.option(keys.POSITIVE_INT, default=3, help="How deep it goes.")

    monkeypatch.setitem(sections.SECTIONS, "extra", Extra)
    text = commented_toml()
    assert "[extra]\n\n# How deep it goes.\n# depth = 3\n" in text
    assert [f.name for f in fields(Extra)] == ["depth"] and KEY in fields(Extra)[0].metadata


def test_env_example_names_every_secret():
    text = dotenv_example()
    for _, _, declared in declared_keys():
        if declared.secret:
            assert f"\n{declared.env}=\n" in text
        elif declared.env:
            assert f"# {declared.env}=" in text


def test_init_makes_a_project_that_works(tmp_path):
    result = cli(tmp_path, "init", "blog")
    assert result.exit_code == 0, result.output
    folder = tmp_path / "blog"
    assert [line.removeprefix("created blog/") for line in result.stdout.splitlines()] == CREATED
    assert "skipped" not in result.stderr
    gitignore = (folder / ".gitignore").read_text().splitlines()
    for line in ("/site/", "/site-premium/", "/.toolkit/", ".env", "/site.zip", "/content.tar.gz"):
        assert line in gitignore
    # The welcome draft is valid, and the project builds, drafts included.
    new = cli(folder, "new", "Hello")
    assert new.exit_code == 0 and new.stdout.strip() == "content/hello.md"
    check = cli(folder, "check")
    assert check.exit_code == 0, check.output
    assert "2 posts checked: 0 errors, 0 warnings" in check.stderr
    build = cli(folder, "build", "--drafts")
    assert build.exit_code == 0, build.output
    assert (folder / "site" / "welcome" / "index.html").is_file()
    assert (folder / "site" / "hello" / "index.html").is_file()


def test_what_init_writes_is_git_ignored_and_committable(tmp_path):
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.com"]
    subprocess.run([*git, "init", "-q", str(tmp_path)], check=True)
    assert cli(tmp_path, "init").exit_code == 0
    assert cli(tmp_path, "build", "--drafts").exit_code == 0
    (tmp_path / ".env").write_text("FOREM_API_KEY=x\n")
    for archive in ("site.zip", "content.tar.gz"):
        (tmp_path / archive).write_bytes(b"")
    status = subprocess.run(
        [*git, "status", "--porcelain", "-uall"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    listed = sorted(line[3:] for line in status.splitlines())
    assert listed == sorted(CREATED)  # the site, .toolkit/, .env, archives: ignored


def test_init_overwrites_nothing_and_lists_what_it_skipped(tmp_path):
    (tmp_path / "content").mkdir()
    (tmp_path / "content" / "old.md").write_text("---\ntitle: Old\n---\nOld text.\n")
    (tmp_path / "toolkit.toml").write_text('[site]\ntitle = "Mine"\n')
    (tmp_path / ".gitignore").write_text("node_modules/\n/site/\n")
    before = {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}
    result = cli(tmp_path, "init")
    assert result.exit_code == 0, result.output
    assert {p: p.read_bytes() for p in before} == before  # nothing changed
    assert result.stdout.splitlines() == ["created .env.example", f"created {WORKFLOW}"]
    skipped = result.stderr.splitlines()
    assert "skipped toolkit.toml: exists" in skipped
    assert "skipped content/welcome.md: content/ already has posts" in skipped
    (line,) = [s for s in skipped if s.startswith("skipped .gitignore")]
    assert "/.toolkit/" in line and "/site/" not in line  # what it lacks, not what it has
    assert not (tmp_path / "content" / "welcome.md").exists()
    # Run again: everything is there now, all skipped, still nothing changed.
    again = cli(tmp_path, "init")
    assert again.exit_code == 0 and again.stdout == ""
    assert len([s for s in again.stderr.splitlines() if s.startswith("skipped")]) == 5


def test_init_in_an_existing_repository_with_posts(tmp_path):
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.com"]
    subprocess.run([*git, "init", "-q", str(tmp_path)], check=True)
    (tmp_path / "content").mkdir()
    (tmp_path / "content" / "first.md").write_text("---\ntitle: First\npublished: true\n---\nHi.\n")
    (tmp_path / "README.md").write_text("My blog\n")
    subprocess.run([*git, "add", "."], cwd=tmp_path, check=True)
    subprocess.run([*git, "commit", "-q", "-m", "posts"], cwd=tmp_path, check=True)
    result = cli(tmp_path, "init", "--no-workflow")
    assert result.exit_code == 0, result.output
    assert not (tmp_path / ".github").exists()
    status = subprocess.run(
        [*git, "status", "--porcelain", "-uall"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert sorted(status.splitlines()) == ["?? .env.example", "?? .gitignore", "?? toolkit.toml"]
    check = cli(tmp_path, "check")
    assert check.exit_code == 0 and "1 post checked" in check.stderr


def test_init_into_a_file_is_one_error_line(tmp_path):
    (tmp_path / "taken").write_text("")
    result = cli(tmp_path, "init", "taken")
    assert result.exit_code != 0
    assert "Traceback" not in result.output


@pytest.mark.skipif(
    sys.platform == "win32" or (hasattr(os, "geteuid") and os.geteuid() == 0),
    reason="root writes into read-only folders",
)
def test_init_into_a_read_only_folder_says_the_path_what_and_a_hint(tmp_path):
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        result = cli(tmp_path, "init", "locked", "--no-workflow")
    finally:
        locked.chmod(0o700)
    assert result.exit_code == 1
    assert result.stderr == (
        "Error: locked/toolkit.toml: permission denied (check the "
        "permissions of the file and of its folder)\n"
    )
    assert "Traceback" not in result.output


def test_a_file_where_the_content_folder_goes_is_said_not_taken_for_the_post(tmp_path):
    (tmp_path / "content").write_text("not a folder\n", encoding="utf-8")
    result = cli(tmp_path, "init", "--no-workflow")
    assert result.exit_code == 1
    errors = [line for line in result.stderr.splitlines() if line.startswith("Error:")]
    assert len(errors) == 1 and "content" in errors[0] and "not a directory" in errors[0]
    assert "welcome.md: exists" not in result.output
    assert "Traceback" not in result.output


def test_without_toolkit_toml_a_command_says_to_run_init(tmp_path):
    for args in (["build"], ["check"], ["new", "Hello"], ["plan"]):
        result = cli(tmp_path, *args)
        assert result.exit_code == 1, args
        assert result.stderr == "Error: no toolkit.toml here: run toolkit init (or pass --config)\n"
    assert list(tmp_path.iterdir()) == []


def test_toolkit_config_shows_the_defaults_without_toolkit_toml(tmp_path):
    result = cli(tmp_path, "config")
    assert result.exit_code == 0
    assert result.stdout.startswith('site.title = "My posts"  (from default)\n')
    assert "no toolkit.toml here: run toolkit init" in result.stderr
    assert list(tmp_path.iterdir()) == []  # no run log either


def test_the_workflow_uses_the_action_pinned_by_commit(tmp_path):
    result = init_project(tmp_path, action=PIN)
    assert result.action == PIN.uses
    text = (tmp_path / WORKFLOW).read_text()
    uses = re.findall(r"uses: (\S+)", text)
    assert uses and all(re.fullmatch(r"[\w.-]+/[\w.-]+@[0-9a-f]{40}", u) for u in uses)
    assert PIN.uses in uses
    assert "${{ secrets.FOREM_API_KEY }}" in text


def test_the_installed_toolkit_pins_its_own_commit(tmp_path):
    """Installed from this checkout (`make install`): the workflow names its HEAD."""
    head = subprocess.run(
        ["git", "-C", str(REPOSITORY), "rev-parse", "HEAD"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    result = init_project(tmp_path)
    assert result.action == f"toolkit-docs/toolkit@{head}"


@pytest.mark.parametrize("what", ["action", "workflow"])
def test_action_and_workflow_pass_zizmor(tmp_path, what):
    if what == "action":
        target = REPOSITORY / "action.yml"
    else:
        init_project(tmp_path, action=PIN)
        target = tmp_path / WORKFLOW
    zizmor = Path(sys.executable).parent / "zizmor"
    done = subprocess.run(
        [str(zizmor), "--offline", "--min-severity", "medium", str(target)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_gitignore_holds_every_default_archive():
    from toolkit.config.keys import ARCHIVE_FORMATS, EXPORT_SOURCES

    lines = ignored()
    for source in EXPORT_SOURCES:
        for fmt in ARCHIVE_FORMATS:
            assert f"/{source}.{fmt}" in lines


# -- the README's "use it for your blog", run as written ----------------------------------

README = (REPOSITORY / "README.md").read_text(encoding="utf-8")


def blog_commands(readme: str) -> list[str]:
    """The commands of the README's "Use it for your blog" block, comments taken out."""
    section = readme.split("\n## Use it for your blog\n", 1)[1].split("\n## ", 1)[0]
    block = section.split("```sh\n", 1)[1].split("```", 1)[0]
    return [line.split("  #", 1)[0].strip() for line in block.splitlines() if line.strip()]


def run_blog_commands(commands: list[str], folder: Path) -> list[str]:
    """Run the README's commands from `folder` as a writer would; the problems found.
    The install line is the checkout's own install (this test runs the installed toolkit);
    `toolkit serve` serves until stopped: it is asked for its help instead."""
    problems = []
    for command in commands:
        words = command.split()
        if words[:2] in (["pipx", "install"], ["uv", "tool"]):
            continue
        if words[0] == "cd":
            folder = folder / words[1]
            continue
        if words[0] != "toolkit":
            problems.append(f"not a toolkit command: {command}")
            continue
        args = shlex.split(command)[1:]
        if args[0] == "serve":
            args.append("--help")
        result = cli(folder, *args)
        if result.exit_code != 0:
            problems.append(f"{command}: exit {result.exit_code}: {result.output.strip()}")
    return problems


def test_the_readme_blog_path_works_as_written(tmp_path):
    commands = blog_commands(README)
    assert commands[0].startswith("pipx install git+https://github.com/toolkit-docs/toolkit")
    assert [c.split()[1] for c in commands if c.startswith("toolkit ")] == [
        "init",
        "new",
        "check",
        "build",
        "serve",
    ]
    assert run_blog_commands(commands, tmp_path) == []
    assert (tmp_path / "my-blog" / "site" / "hello" / "index.html").is_file()


def test_a_wrong_readme_blog_command_is_found(tmp_path):
    commands = [
        c.replace("toolkit check", "toolkit check --no-such-option") for c in blog_commands(README)
    ]
    problems = run_blog_commands(commands, tmp_path)
    assert len(problems) == 1 and problems[0].startswith("toolkit check --no-such-option: exit 2")
