"""What the terminal says: public or draft in a plan, the URLs of what publish wrote, a
conflict told once, the fix of a YAML mistake, pull --overwrite touching only what
differs, and progress on a terminal only."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys

import pytest

from tests.support.sync_helpers import web_edit


def test_plan_says_for_each_post_whether_it_will_be_public_or_a_draft(site, env):
    site.post("out", "Out in the open", published=True)
    site.post("wip", "Work in progress", published=False)
    assert site.run("publish", env=env).exit_code == 0
    site.post("new", "Brand new", published=False)
    plan = site.run("plan", env=env)
    assert plan.exit_code == 0, plan.output
    lines = plan.stdout.splitlines()
    assert "→ unchanged public content/out.md  " in "\n".join(lines)  # every post, unchanged too
    assert any(line.startswith("→ unchanged draft  content/wip.md  ") for line in lines)
    assert any(
        line.startswith("→ create    draft  content/new.md  new post as a draft") for line in lines
    )
    document = json.loads(site.run("plan", "--json", env=env).stdout)
    assert {p["path"]: p["published"] for p in document["posts"]} == {
        "content/new.md": False,
        "content/out.md": True,
        "content/wip.md": False,
    }


def test_publish_prints_the_url_of_each_article_it_writes(site, env):
    site.post("one", "First one", published=True)
    site.post("two", "Second one", published=False)
    result = site.run("publish", env=env)
    assert result.exit_code == 0, result.output
    lock = json.loads((site.root / "toolkit.lock").read_text())["posts"]
    for key, kind in (("content/one.md", "public"), ("content/two.md", "draft ")):
        url = lock[key]["url"]
        assert url.startswith("http")
        assert f"✓ create    {kind} {key}  created article {lock[key]['article_id']}: {url}" in (
            result.output
        )
    site.post("one", "First one", "Edited.\n", published=True)
    updated = site.run("publish", "--json", env=env)
    posts = {p["path"]: p for p in json.loads(updated.stdout)["posts"]}
    assert posts["content/one.md"]["action"] == "update"
    assert posts["content/one.md"]["url"] == lock["content/one.md"]["url"]
    assert posts["content/one.md"]["published"] is True


def test_a_conflict_is_reported_once(site, env, sandbox):
    site.post("note", "A note", "Mine.\n", published=True)
    assert site.run("publish", env=env).exit_code == 0
    article_id = json.loads((site.root / "toolkit.lock").read_text())["posts"]["content/note.md"][
        "article_id"
    ]
    web_edit(sandbox, article_id, "---\ntitle: A note\npublished: true\n---\nTheirs.\n")
    for command in ("plan", "publish"):
        result = site.run(command, env=env)
        assert result.exit_code == 1
        assert result.output.count("was edited on the website since the last publish") == 1, (
            result.output
        )
    quiet = site.run("publish", "-q", env=env)  # no per-post lines: the summary tells it
    assert quiet.output.count("was edited on the website since the last publish") == 1


def test_an_unquoted_colon_in_front_matter_says_how_to_fix_it(project):
    project.write("content/part.md", "---\ntitle: Part 1: Setup\npublished: false\n---\nText.\n")
    result = project.run("check")
    assert result.exit_code == 1
    assert (
        "content/part.md:2: front matter: invalid YAML: mapping values are not allowed "
        "in this context; a value with ': ' in it must be quoted: "
        'title: "Part 1: Setup"'
    ) in result.output
    # The quoted line it suggests is valid.
    project.write("content/part.md", '---\ntitle: "Part 1: Setup"\npublished: false\n---\nText.\n')
    assert project.run("check").exit_code == 0


def test_pull_overwrite_rewrites_only_the_posts_that_differ(site, env, sandbox):
    site.post("alpha", "Alpha", "A.\n", published=True, tags="one, two", date="2024-01-01")
    site.post("beta", "Beta", "B.\n", published=False, description="Beta post.")
    site.post("gamma", "Gamma", "C.\n", published=True, slug="the-gamma")
    assert site.run("publish", env=env).exit_code == 0
    lock = json.loads((site.root / "toolkit.lock").read_text())["posts"]
    web_edit(
        sandbox,
        lock["content/beta.md"]["article_id"],
        "---\ntitle: Beta\npublished: false\n---\nEdited on the web.\n",
    )
    before = {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in site.content.glob("*.md")}
    result = site.run("pull", "--overwrite", env=env)
    assert result.exit_code == 0, result.output
    assert "overwritten content/beta.md" in result.output
    assert "content/alpha.md" not in result.output and "content/gamma.md" not in result.output
    after = {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in site.content.glob("*.md")}
    assert after["alpha.md"] == before["alpha.md"] and after["gamma.md"] == before["gamma.md"]
    assert b"Edited on the web." in after["beta.md"][0]


def run_on_a_terminal(args: list[str], cwd, env: dict[str, str]) -> str:
    """What a command writes to a terminal (a pseudo-terminal), escape codes included."""
    master, slave = pty.openpty()
    process = subprocess.Popen(
        [sys.executable, "-m", "toolkit", *args],
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        stdout=slave,
        stderr=slave,
        env={**os.environ, "TERM": "xterm", "COLUMNS": "120", **env},
    )
    os.close(slave)
    output = b""
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # the command ended and closed its side
            break
        if not chunk:
            break
        output += chunk
    os.close(master)
    process.wait(timeout=60)
    return output.decode("utf-8", errors="replace")


@pytest.mark.e2e  # a process on a real terminal (a pty), and one on pipes
def test_progress_shows_on_a_terminal_and_not_with_quiet_or_off_one(site, env):
    site.post("one", "First one", published=True)
    shown = run_on_a_terminal(["publish"], site.root, env)
    assert "reading the account's articles" in shown and "publishing" in shown
    assert "✓ create" in shown
    quiet = run_on_a_terminal(["publish", "-q"], site.root, env)
    assert "reading the account" not in quiet and "publishing" not in quiet
    for command in (["check"], ["pull"]):
        on_terminal = run_on_a_terminal(command, site.root, env)
        assert ("checking the posts" if command == ["check"] else "pull: reading") in on_terminal
        piped = subprocess.run(
            [sys.executable, "-m", "toolkit", *command],
            cwd=site.root,
            capture_output=True,
            text=True,
            env={**os.environ, **env},
            timeout=60,
        )
        assert "checking the posts" not in piped.stderr and "pull: reading" not in piped.stderr
        assert "\x1b[" not in piped.stderr + piped.stdout
