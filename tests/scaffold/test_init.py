"""`toolkit init`: a project a writer can commit at once, in a new folder or an existing
repository, that never overwrites anything; and what commands say without toolkit.toml."""

from __future__ import annotations

import contextlib
import json
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
from toolkit.config import load_config
from toolkit.config.keys import KEY
from toolkit.config.sections import SECTIONS, declared_keys
from toolkit.config.templates import commented_toml, dotenv_example, short_toml
from toolkit.scaffold.files import MAKEFILE, WORKFLOW, ActionPin, ignored
from toolkit.scaffold.project import init_project

REPOSITORY = Path(__file__).parents[2]
PIN = ActionPin("toolkit-docs/toolkit", "0123456789abcdef0123456789abcdef01234567", "v0.1.0")
CREATED = [
    "toolkit.toml",
    "content/_welcome.md",
    ".gitignore",
    ".env.example",
    MAKEFILE,
    WORKFLOW,
]


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


def test_env_example_names_the_secrets_of_the_sections_in_use_only():
    text = dotenv_example()
    assert re.findall(r"^([A-Z_]+)=", text, flags=re.MULTILINE) == ["FOREM_API_KEY"]
    every = dotenv_example(tuple(SECTIONS))
    for _, _, declared in declared_keys():
        if declared.secret:
            assert f"\n{declared.env}=\n" in every


def test_the_short_toml_holds_what_a_blogger_sets_and_loads(tmp_path):
    text = short_toml("blog-posts")
    data = tomllib.loads(text)
    assert data == {"site": {"title": "My posts", "content_dir": "blog-posts"}}
    assert "toolkit config --all" in text and "# url = " in text
    assert len(text.splitlines()) < 15
    (tmp_path / "toolkit.toml").write_text(text)
    assert load_config(tmp_path / "toolkit.toml", env={}).site.content_dir == (
        tmp_path / "blog-posts"
    )


@pytest.mark.e2e
def test_nothing_a_writer_reads_speaks_of_interfaces(tmp_path):
    """The scaffold and the reference use the services' names, not the spec's labels."""
    init_project(tmp_path, action=PIN)
    reference = cli(tmp_path, "config", "--all")
    assert reference.exit_code == 0 and reference.stdout == commented_toml()
    written = [p.read_text() for p in tmp_path.rglob("*") if p.is_file()]
    for text in [*written, reference.stdout]:
        assert not re.search(r"\binterface [A-E]\b", text), text[:200]


@pytest.mark.e2e
def test_init_makes_a_project_that_works(tmp_path):
    result = cli(tmp_path, "init", "blog", "--no-workflow")
    assert result.exit_code == 0, result.output
    folder = tmp_path / "blog"
    created = [line.removeprefix("created blog/") for line in result.stdout.splitlines()]
    assert created == [name for name in CREATED if name != WORKFLOW]
    assert "skipped" not in result.stderr
    gitignore = (folder / ".gitignore").read_text().splitlines()
    for line in ("/site/", "/site-premium/", "/.toolkit/", ".env", "/site.zip", "/content.tar.gz"):
        assert line in gitignore
    # The sample is not a post; the project checks and builds, drafts included.
    new = cli(folder, "new", "Hello")
    assert new.exit_code == 0 and new.stdout.strip() == "content/hello.md"
    check = cli(folder, "check")
    assert check.exit_code == 0, check.output
    assert "1 post checked: 0 errors, 0 warnings" in check.stderr
    build = cli(folder, "build", "--drafts")
    assert build.exit_code == 0, build.output
    assert not (folder / "site" / "welcome").exists()
    assert (folder / "site" / "hello" / "index.html").is_file()
    # The sample, renamed, is a post like any other.
    (folder / "content" / "_welcome.md").rename(folder / "content" / "welcome.md")
    assert "2 posts checked: 0 errors" in cli(folder, "check").stderr


@pytest.mark.e2e
def test_what_init_writes_is_git_ignored_and_committable(tmp_path):
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.com"]
    subprocess.run([*git, "init", "-q", str(tmp_path)], check=True)
    assert [f.path for f in init_project(tmp_path, action=PIN).created] == CREATED
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
    result = cli(tmp_path, "init", "--no-workflow")
    assert result.exit_code == 0, result.output
    assert {p: p.read_bytes() for p in before} == before  # nothing changed
    assert result.stdout.splitlines() == ["created .env.example", f"created {MAKEFILE}"]
    skipped = result.stderr.splitlines()
    assert "adopted content/: 1 post" in skipped
    assert "skipped toolkit.toml: exists" in skipped
    assert "skipped content/_welcome.md: content/ already has posts" in skipped
    (line,) = [s for s in skipped if s.startswith("skipped .gitignore")]
    assert "/.toolkit/" in line and "/site/" not in line  # what it lacks, not what it has
    assert not (tmp_path / "content" / "_welcome.md").exists()
    # Run again: everything is there now, all skipped, still nothing changed.
    again = cli(tmp_path, "init", "--no-workflow")
    assert again.exit_code == 0 and again.stdout == ""
    assert len([s for s in again.stderr.splitlines() if s.startswith("skipped")]) == 5


def test_a_writers_makefile_is_kept_and_the_missing_targets_named(tmp_path):
    (tmp_path / "Makefile").write_text("check:\n\tnpm test\nall: check\n")
    result = cli(tmp_path, "init", "--no-workflow")
    assert result.exit_code == 0
    assert (tmp_path / "Makefile").read_text() == "check:\n\tnpm test\nall: check\n"
    assert (
        "skipped Makefile: exists; it may want these targets: publish watch serve build "
        "(each one line: `toolkit <target>`)"
    ) in result.stderr.splitlines()


@pytest.mark.e2e
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
    assert sorted(status.splitlines()) == [
        "?? .env.example",
        "?? .gitignore",
        "?? Makefile",
        "?? toolkit.toml",
    ]
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


def test_without_toolkit_toml_a_command_says_where_it_looked(tmp_path):
    (tmp_path / ".git").mkdir()  # the repository's root: the search stops there
    inner = tmp_path / "notes" / "drafts"
    inner.mkdir(parents=True)
    for args in (["build"], ["check"], ["new", "Hello"], ["plan"]):
        result = cli(inner, *args)
        assert result.exit_code == 1, args
        assert result.stderr == (
            f"Error: no toolkit.toml in {inner} or its parents up to {tmp_path} "
            "(the repository root): run toolkit init (or pass --config)\n"
        )
    assert sorted(p.name for p in tmp_path.rglob("*")) == [".git", "drafts", "notes"]


@pytest.mark.e2e
def test_the_project_is_found_from_a_subfolder_as_git_finds_its_repository(tmp_path):
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.com"]
    subprocess.run([*git, "init", "-q", str(tmp_path)], check=True)
    assert cli(tmp_path, "init", "blog", "--no-workflow").exit_code == 0
    blog = tmp_path / "blog"
    (blog / "content" / "notes").mkdir()
    (blog / "content" / "notes" / "one.md").write_text("---\ntitle: One\n---\nText.\n")
    here = cli(blog / "content" / "notes", "check")
    assert here.exit_code == 0, here.output
    assert "1 post checked" in here.stderr
    new = cli(blog / "content", "new", "From a subfolder")
    assert new.exit_code == 0 and new.stdout.strip() == "content/from-a-subfolder.md"
    assert (blog / "content" / "from-a-subfolder.md").is_file()
    assert not (blog / "content" / ".toolkit").exists()  # state kept at the project's root
    # The repository's root ends the search: a toolkit.toml above it is not this project.
    outer = tmp_path / "outer"
    outer.mkdir()
    (outer / "toolkit.toml").write_text('[site]\ntitle = "Outer"\n')
    subprocess.run([*git, "init", "-q", str(outer / "repo")], check=True)
    assert cli(outer / "repo", "check").exit_code == 1
    # --config still wins.
    other = cli(blog / "content", "--config", str(outer / "toolkit.toml"), "config")
    assert other.exit_code == 0
    assert other.stdout.startswith('site.title = "Outer"  (from toolkit.toml)\n')


def test_init_inside_a_project_warns_that_it_nests_one(tmp_path):
    (tmp_path / ".git").mkdir()
    assert cli(tmp_path, "init", "--no-workflow").exit_code == 0
    inner = cli(tmp_path / "content", "init", "--no-workflow")
    assert inner.exit_code == 0
    assert f"Warning: {tmp_path / 'toolkit.toml'} already makes {tmp_path} a project" in (
        inner.stderr
    )
    assert "Warning" not in cli(tmp_path / "content", "init", "--no-workflow").stderr  # made


def test_toolkit_config_shows_the_defaults_without_toolkit_toml(tmp_path):
    result = cli(tmp_path, "config")
    assert result.exit_code == 0
    assert result.stdout.startswith('site.title = "My posts"  (from default)\n')
    assert "no toolkit.toml found; these are the defaults" in result.stderr
    assert list(tmp_path.iterdir()) == []  # no run log either


@pytest.mark.e2e
def test_the_workflow_uses_the_action_pinned_by_commit_with_its_version(tmp_path):
    result = init_project(tmp_path, action=PIN)
    assert result.action == PIN.uses
    text = (tmp_path / WORKFLOW).read_text()
    uses = re.findall(r"uses: (\S+)(.*)", text)
    assert uses and all(re.fullmatch(r"[\w.-]+/[\w.-]+@[0-9a-f]{40}", u) for u, _ in uses)
    assert all(re.fullmatch(r"  # v\d+\.\d+\.\d+", comment) for _, comment in uses)
    assert (PIN.uses, "  # v0.1.0") in uses
    assert "${{ secrets.FOREM_API_KEY }}" in text


def _checkout(tmp_path: Path, tag: str | None) -> Path:
    """A git checkout of toolkit, with the release tag or without it, as pip records an
    install from a folder."""
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.com"]
    folder = tmp_path / "toolkit-src"
    subprocess.run([*git, "init", "-q", str(folder)], check=True)
    subprocess.run([*git, "commit", "-q", "--allow-empty", "-m", "release"], cwd=folder, check=True)
    if tag:
        subprocess.run([*git, "tag", tag], cwd=folder, check=True)
    subprocess.run([*git, "commit", "-q", "--allow-empty", "-m", "later"], cwd=folder, check=True)
    return folder


@pytest.mark.e2e
def test_from_a_checkout_the_action_is_pinned_to_the_release_tag_never_its_head(tmp_path):
    import json

    from toolkit import __version__
    from toolkit.scaffold.files import action_pin

    folder = _checkout(tmp_path, f"v{__version__}")
    tagged = subprocess.run(
        ["git", "-C", str(folder), "rev-parse", "HEAD~1"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    recorded = {"url": folder.as_uri(), "dir_info": {"editable": True}}  # as pip records it
    pin, why = action_pin(json.dumps(recorded))
    assert pin is not None and why == ""
    assert pin.commit == tagged and pin.pinned.endswith(f"  # v{__version__}")
    # Without the tag (an unreleased checkout): no pin, and why.
    untagged = _checkout(tmp_path / "other", None)
    pin, why = action_pin(json.dumps({"url": untagged.as_uri(), "dir_info": {}}))
    assert pin is None and f"v{__version__}" in why and "--no-workflow" in why
    # Installed from GitHub: the commit GitHub served, with the tag asked for.
    commit = "89abcdef" * 5
    github = {
        "url": "https://github.com/toolkit-docs/toolkit",
        "vcs_info": {"vcs": "git", "commit_id": commit, "requested_revision": "v0.1.0"},
    }
    pin, _ = action_pin(json.dumps(github))
    assert pin is not None and pin.pinned == f"toolkit-docs/toolkit@{commit}  # v0.1.0"
    assert action_pin(None)[0] is None


@pytest.mark.e2e
@pytest.mark.parametrize("what", ["action", "workflow", "team workflow"])
def test_action_and_workflow_pass_zizmor(tmp_path, what):
    if what == "action":
        target = REPOSITORY / "action.yml"
    else:
        if what == "team workflow":  # one folder per writer: every writer's secret, named
            for writer in ("jane-doe", "bob", "li.wei"):
                (tmp_path / "posts" / writer / "assets").mkdir(parents=True)
                (tmp_path / "posts" / writer / "a.md").write_text("---\ntitle: A\n---\n")
        result = init_project(tmp_path, action=PIN)
        assert len(result.writers) == (3 if what == "team workflow" else 0)
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


@pytest.mark.e2e
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


@pytest.mark.e2e
def test_a_wrong_readme_blog_command_is_found(tmp_path):
    commands = [
        c.replace("toolkit check", "toolkit check --no-such-option") for c in blog_commands(README)
    ]
    problems = run_blog_commands(commands, tmp_path)
    assert len(problems) == 1 and problems[0].startswith("toolkit check --no-such-option: exit 2")


def test_init_json_says_what_was_written_and_adopted(tmp_path):
    (tmp_path / "articles").mkdir()
    (tmp_path / "articles" / "one.md").write_text("---\ntitle: One\nid: 12\n---\nText.\n")
    with contextlib.chdir(tmp_path):
        result = CliRunner().invoke(main, ["init", "--no-workflow", "--json"])
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)  # one document on stdout, nothing else there
    assert document["content_dir"] == "articles"
    assert document["adopted"] == {
        "content_dir": "articles",
        "posts": 1,
        "with_id": 1,
        "dev_to_git": 0,
    }
    written = {f["path"] for f in document["files"] if f["created"]}
    assert {"toolkit.toml", ".gitignore", ".env.example", "Makefile"} <= written
