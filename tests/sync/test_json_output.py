"""`--json` on every command that reports a result: one JSON document on stdout and
nothing else there (its result type), and on an expected failure the same
`{"ok": false, "error", "errors"}` document as every other `--json` command."""

from __future__ import annotations

import json

import pytest


def document(result) -> dict:
    """The whole of stdout, parsed: anything else there makes this fail."""
    return json.loads(result.stdout)


def test_check_json_gives_the_problems_and_counts(site):
    site.post("good", "A good one", published=True)
    site.write("content/bad.md", "---\ntitle: Bad\ntags: [a, b, c, d, e]\n---\nText.\n")
    result = site.run("check", "--json")
    assert result.exit_code == 1
    found = document(result)
    assert found["ok"] is False and found["files"] == 2 and found["errors"] == 1
    (problem,) = found["problems"]
    assert problem["path"] == "content/bad.md" and problem["severity"] == "error"
    assert problem["text"].startswith("content/bad.md:")
    assert "content/bad.md:" not in result.stderr.replace(problem["text"], "")  # said once


@pytest.mark.e2e
def test_build_json_gives_the_report(site):
    site.post("one", "One post", published=True)
    site.post("draft", "A draft", published=False)
    found = document(site.run("build", "--json"))
    assert found["ok"] is True and found["posts"] == 1 and found["written"] > 0
    assert found["output_dir"] == "site" and found["drafts_left_out"] == 1
    again = document(site.run("build", "--json"))
    assert again["written"] == 0 and again["unchanged"] == found["written"]


def test_new_json_gives_the_path_and_title(site):
    result = site.run("new", "Hello, JSON", "--json")
    assert result.exit_code == 0, result.output
    assert document(result) == {"ok": True, "path": "content/hello-json.md", "title": "Hello, JSON"}
    assert (site.content / "hello-json.md").is_file()


def test_new_json_failure_is_the_error_document(site):
    site.post("taken", "Taken title")
    result = site.run("new", "Taken title", "--json")
    assert result.exit_code == 1
    failed = document(result)
    assert failed["ok"] is False and "Taken title" in failed["error"]
    assert failed["errors"] == [failed["error"]]


def test_pull_json_gives_what_was_done_to_each_post(site, env):
    result = site.run("pull", "--json", env=env)
    assert result.exit_code == 0, result.stderr
    found = document(result)
    assert found["ok"] is True and found["lock_wait"] is None
    created = [p for p in found["posts"] if p["action"] == "created"]
    assert created and found["summary"]["created"] == len(created)
    for post in created:
        assert (site.root / post["path"]).is_file() and post["article_id"] > 0
    again = document(site.run("pull", "--json", env=env))
    assert again["summary"]["created"] == 0
    assert again["summary"]["unchanged"] == len(created)


def test_mirror_json_gives_the_counts_and_files(site, env):
    result = site.run("mirror", "--json", env=env)
    assert result.exit_code == 0, result.stderr
    found = document(result)
    assert found["ok"] is True and found["requests"] > 0
    assert found["comments"]["fetched"] > 0 and found["readinglist_items"] > 0
    assert found["changed"] and all(f["change"] == "created" for f in found["changed"])
    for changed in found["changed"]:
        assert (site.root / changed["path"]).is_file()
    again = document(site.run("mirror", "comments", "--json", env=env))
    assert again["changed"] == [] and again["readinglist_items"] is None


@pytest.mark.parametrize("command", ["check", "build", "pull", "mirror", "new"])
def test_a_failure_before_the_result_is_the_error_document(make_project, command):
    project = make_project('[site]\ntitle = "x"\nbogus = 1\n')  # toolkit.toml refused
    args = [command, "A title"] if command == "new" else [command]
    result = project.run(*args, "--json")
    assert result.exit_code == 1
    failed = document(result)
    assert failed["ok"] is False and "bogus" in failed["error"]
    assert failed["error"] in result.stderr


def test_a_subcommand_of_a_group_fails_with_the_error_document_too(make_project):
    project = make_project('[site]\ntitle = "x"\nbogus = 1\n')
    result = project.run("mcp", "clients", "--json")
    assert result.exit_code == 1
    assert document(result)["ok"] is False


def test_without_json_a_failure_prints_no_document(make_project):
    project = make_project('[site]\ntitle = "x"\nbogus = 1\n')
    result = project.run("check")
    assert result.exit_code == 1 and result.stdout == ""
