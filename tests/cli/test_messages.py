"""First steps that explain themselves: the messages a new writer meets, each as said."""

from __future__ import annotations

import contextlib
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from toolkit import __version__
from toolkit.cli import main
from toolkit.scaffold.files import ignored

REPOSITORY = Path(__file__).parents[2]


def sandbox_env(sandbox) -> dict[str, str]:
    sandbox.reset()
    return {"FOREM_BASE_URL": sandbox.base_url, "FOREM_API_KEY": sandbox.demo_api_key}


@pytest.mark.e2e
def test_build_says_how_many_drafts_it_left_out_and_how_to_see_them(project):
    project.post("live", "Live", published=True)
    project.post("one", "Draft one")
    project.post("two", "Draft two", published=False)
    result = project.run("build")
    assert result.exit_code == 0, result.output
    assert (
        "2 drafts (published: false) left out: toolkit build --drafts includes them, "
        "toolkit watch shows them as you write"
    ) in result.stderr
    shown = project.run("build", "--drafts")
    assert shown.exit_code == 0 and "left out" not in shown.stderr
    again = project.run("build")  # incremental, nothing to write: still said
    assert "2 drafts (published: false) left out" in again.stderr


def test_a_mistyped_command_gets_did_you_mean():
    result = CliRunner().invoke(main, ["biuld"])
    assert result.exit_code == 2
    assert "No such command 'biuld'. Did you mean 'build'?" in result.output
    far = CliRunner().invoke(main, ["zzzz"])
    assert far.exit_code == 2 and "Did you mean" not in far.output


def test_plan_that_finds_a_problem_does_not_say_anything_was_kept(project, sandbox):
    project.post("bad", "x" * 200)  # a title over 128 characters: an error
    result = project.run("plan", env=sandbox_env(sandbox))
    assert result.exit_code == 1
    assert "1 post(s) would fail; nothing was written" in result.stderr
    assert "kept" not in result.output


def test_mirror_says_created_for_new_files_and_updated_for_changed_ones(project, sandbox):
    env = sandbox_env(sandbox)
    first = project.run("mirror", "readinglist", env=env)
    assert first.exit_code == 0, first.output
    assert "created content/_mirror/readinglist.json" in first.stdout
    assert "updated" not in first.stdout
    readinglist = project.content / "_mirror" / "readinglist.json"
    readinglist.write_text("[]\n")  # stale: the next mirror rewrites it
    second = project.run("mirror", "readinglist", env=env)
    assert "updated content/_mirror/readinglist.json" in second.stdout


def test_the_mcp_server_reports_toolkits_version(project):
    from toolkit.config import load_config
    from toolkit.mcp.events import EventRecorder
    from toolkit.mcp.server import ToolkitMCP

    server = ToolkitMCP(load_config(project.root / "toolkit.toml", env={}), EventRecorder())
    options = server.create_initialization_options()
    assert (options.server_name, options.server_version) == ("toolkit", __version__)


@pytest.mark.e2e
def test_exports_default_archive_is_git_ignored_here_and_in_new_projects():
    names = [line.lstrip("/") for line in ignored() if not line.endswith("/") and line != ".env"]
    assert "site.zip" in names and "content.tar.gz" in names
    done = subprocess.run(
        ["git", "check-ignore", "--no-index", *names],
        cwd=REPOSITORY,
        capture_output=True,
        text=True,
        check=False,
    )
    assert sorted(done.stdout.split()) == sorted(names)


def test_a_refused_api_key_names_the_variable_and_where_it_was_read_from(project, sandbox):
    project.post("hello", "Hello", published=True)
    env = {"FOREM_BASE_URL": sandbox_env(sandbox)["FOREM_BASE_URL"]}
    (project.root / ".env").write_text("FOREM_API_KEY=not-the-right-key\n")
    (project.root / ".env").chmod(0o600)
    from_file = project.run("publish", env=env)
    assert from_file.exit_code == 1
    assert "the API key was refused (check FOREM_API_KEY, read from .env)" in from_file.stderr
    from_environment = project.run("plan", env={**env, "FOREM_API_KEY": "also-wrong"})
    assert from_environment.exit_code == 1
    assert (
        "the API key was refused (check FOREM_API_KEY, read from the environment)"
        in from_environment.stderr
    )
    assert "not-the-right-key" not in from_file.output + from_environment.output


@pytest.mark.e2e
def test_a_port_that_is_taken_names_port_and_the_make_variable(project):
    import socket

    project.post("live", "Live", published=True)
    assert project.run("build").exit_code == 0
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        for command, target in (("serve", "serve"), ("watch", "watch")):
            args = [command, "--port", str(port)] + (["--no-push"] if command == "watch" else [])
            result = project.run(*args)
            assert result.exit_code == 1, result.output
            assert (
                f"another program has port {port}: choose another with --port {port + 1}; "
                f"with make: make {target} PORT={port + 1}"
            ) in result.stderr
    makefile = (REPOSITORY / "Makefile").read_text()
    assert "PORT ?= 8000" in makefile
    assert "toolkit serve --port $(PORT)" in makefile and "toolkit watch --port $(PORT)" in makefile
    # The Makefile of a writer's project (toolkit init) takes the same variable.
    from toolkit.scaffold.files import makefile_text

    made = makefile_text()
    assert "PORT ?= 8000" in made
    assert "serve --port $(PORT)" in made and "watch --port $(PORT)" in made


def test_json_is_printed_on_failure_too(project, tmp_path):
    import json

    project.post("live", "Live", published=True)
    for args in (["publish", "--json"], ["plan", "--json"], ["export", "--json"]):
        result = project.run(*args, env={})  # no API key
        assert result.exit_code == 1, args
        document = json.loads(result.stdout)  # one JSON document, and nothing else there
        assert document["ok"] is False and document["errors"], args
        assert result.stderr.startswith("Error: ")
        assert document["error"] == result.stderr.splitlines()[0].removeprefix("Error: ")
    with contextlib.chdir(tmp_path):
        bare = CliRunner().invoke(main, ["plan", "--json"])
    assert bare.exit_code == 1
    error = json.loads(bare.stdout)["error"]
    assert error.startswith(f"no toolkit.toml in {tmp_path} or its parents up to ")
    assert error.endswith(": run toolkit init (or pass --config)")
    plain = project.run("publish", env={})
    assert plain.exit_code == 1 and plain.stdout == ""  # without --json: stderr only


def test_a_yaml_error_names_where_the_broken_construct_started(project):
    project.write("content/list.md", "---\ntitle: Hi\ntags: [a,\n  b\ndescription: x\n---\nText.\n")
    project.write("content/quote.md", '---\ntitle: "Hi\ndescription: x\n---\nText.\n')
    result = project.run("check")
    assert result.exit_code == 1
    assert (
        "content/list.md:5: front matter: invalid YAML: did not find expected ',' or ']' "
        "(in the flow sequence started on line 3)"
    ) in result.stdout
    assert (
        "content/quote.md:4: front matter: invalid YAML: found unexpected end of stream "
        "(in the quoted scalar started on line 2)"
    ) in result.stdout
