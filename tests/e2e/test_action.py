"""The composite action (`action.yml`): its shell steps, run here as a runner would run
them, publish a project made by `toolkit init` to the sandbox and push `toolkit.lock`
back to the repository's remote only when it changed.

Not run here: the `uses:` steps (setup-python, the cache). The venv the cache would
restore is this test's own, so the install step is the one a cache hit skips; installing
the checkout into a fresh venv is what the README's install line does."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.support.git import git
from toolkit.scaffold.files import ActionPin
from toolkit.scaffold.project import init_project

REPOSITORY = Path(__file__).parents[2]
ACTION = yaml.safe_load((REPOSITORY / "action.yml").read_text(encoding="utf-8"))
PIN = ActionPin("toolkit-docs/toolkit", "0123456789abcdef0123456789abcdef01234567")
EXPRESSION = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")


def value(expression: str, context: dict[str, str]) -> str:
    """A context reference (`inputs.config`, `steps.where.outputs.venv`), or references
    joined by `||` (the first that is set); '' when unset."""
    for name in expression.split("||"):
        if context.get(name.strip()):
            return context[name.strip()]
    return ""


TOKEN = re.compile(r"\s*(!cancelled\(\)|&&|\|\||\(|\)|([\w.-]+) (==|!=) '([^']*)')")


def condition(text: str | None, context: dict[str, str]) -> bool:
    """The `if:` conditions action.yml uses: `!cancelled()` and `X == 'v'` / `X != 'v'`
    joined by `&&` and `||`, in parentheses; read into a Python expression of booleans."""
    if text is None:
        return True
    text = EXPRESSION.sub(r"\1", text).strip()
    words, at = [], 0
    while at < len(text):
        match = TOKEN.match(text, at)
        assert match, f"action.yml: a condition this test cannot read: {text[at:]}"
        at = match.end()
        word = match[1]
        if word == "!cancelled()":
            words.append("True")
        elif word in ("&&", "||", "(", ")"):
            words.append({"&&": "and", "||": "or"}.get(word, word))
        else:
            equal = context.get(match[2], "") == match[4]
            words.append(str(equal == (match[3] == "==")))
    return bool(eval(" ".join(words)))  # only True, False, and, or, parentheses


def run_action(workdir: Path, tmp: Path, inputs: dict[str, str]) -> dict[str, str]:
    """Run the action's steps in `workdir`; the outputs of every step, as `steps.ID.outputs.X`."""
    context = {
        f"inputs.{name}": str(spec.get("default", "")) for name, spec in ACTION["inputs"].items()
    }
    context.update({f"inputs.{k}": v for k, v in inputs.items()})
    context["steps.python.outputs.python-version"] = f"{sys.version_info[0]}.{sys.version_info[1]}"
    context["steps.cache.outputs.cache-hit"] = "true"  # the venv below is restored
    summary = tmp / "summary.md"
    runner_temp = tmp / "runner"
    runner_temp.mkdir(exist_ok=True)
    venv = runner_temp / "toolkit-venv"
    if not venv.exists():
        venv.symlink_to(sys.prefix)
    base_env = {k: v for k, v in os.environ.items() if not k.startswith(("FOREM_", "GIT_"))}
    base_env.update(
        RUNNER_TEMP=str(runner_temp),
        RUNNER_OS="Linux",
        GITHUB_ACTION_PATH=str(REPOSITORY),
        GITHUB_STEP_SUMMARY=str(summary),
        GITHUB_SERVER_URL="https://github.com",
        GITHUB_REF_NAME="main",
    )
    for step in ACTION["runs"]["steps"]:
        if "run" not in step:
            assert step["uses"].split("@")[0] in (
                "actions/setup-python",
                "actions/cache",
                "actions/upload-pages-artifact",
            )
            continue
        if not condition(step.get("if"), context):
            continue
        output = tmp / f"output-{step['id']}"
        output.write_text("")
        env = {**base_env, "GITHUB_OUTPUT": str(output)}
        for name, text in step.get("env", {}).items():
            env[name] = EXPRESSION.sub(lambda m: value(m[1], context), str(text))
        assert step["shell"] == "bash"
        done = subprocess.run(
            ["bash", "-e", "-o", "pipefail", "-c", step["run"]],
            cwd=workdir,
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
        assert done.returncode == 0, f"step {step['name']}: {done.stdout}{done.stderr}"
        for line in output.read_text().splitlines():
            key, _, val = line.partition("=")
            context[f"steps.{step['id']}.outputs.{key}"] = val
    context["summary"] = summary.read_text() if summary.exists() else ""
    return context


@pytest.fixture
def repository(tmp_path):
    """A writer's repository made by `toolkit init`, pushed to a bare remote."""
    origin = tmp_path / "origin.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(origin))
    work = tmp_path / "blog"
    git(tmp_path, "init", "-q", "-b", "main", str(work))
    init_project(work, action=PIN)
    (work / "content" / "hello.md").write_text(
        "---\ntitle: Hello from the action\npublished: true\n---\nText.\n"
    )
    git(work, "add", ".")
    git(work, "commit", "-q", "-m", "start")
    git(work, "remote", "add", "origin", str(origin))
    git(work, "push", "-q", "origin", "main")
    return work


def test_the_action_publishes_and_pushes_the_lock_only_when_it_changed(
    repository, tmp_path, sandbox
):
    sandbox.reset()
    inputs = {"api-key": sandbox.demo_api_key, "base-url": sandbox.base_url}
    outputs = run_action(repository, tmp_path, inputs)
    assert outputs["steps.publish.outputs.published"] == "true"
    assert outputs["steps.lock.outputs.changed"] == "true"
    origin = tmp_path / "origin.git"
    log = git(origin, "log", "--format=%s %an", "main")
    assert log.splitlines()[0] == "Update toolkit.lock [skip ci] github-actions[bot]"
    pushed = git(origin, "show", "main:toolkit.lock")
    assert f'"server": "{sandbox.base_url}"' in pushed
    with sandbox.client() as client:
        titles = [
            a["title"] for a in client.get("/api/articles/me/all", params={"per_page": 1000}).json()
        ]
    assert titles.count("Hello from the action") == 1
    assert "Welcome" not in titles  # the sample is not a post

    # Nothing changed: nothing is committed.
    head = git(origin, "rev-parse", "main")
    again = run_action(repository, tmp_path, inputs)
    assert again["steps.lock.outputs.changed"] == "false"
    assert git(origin, "rev-parse", "main") == head


@pytest.mark.e2e
def test_without_an_api_key_the_action_says_so_and_succeeds(repository, tmp_path):
    outputs = run_action(repository, tmp_path, {"api-key": ""})
    assert outputs["steps.publish.outputs.published"] == "false"
    assert "steps.lock.outputs.changed" not in outputs  # the lock step did not run
    assert "Publishing skipped" in outputs["summary"]
    assert not (repository / "toolkit.lock").exists()


def test_only_the_steps_that_ask_the_api_get_the_key_and_only_the_push_the_token():
    for step in ACTION["runs"]["steps"]:
        env = " ".join(str(v) for v in step.get("env", {}).values())
        text = env + str(step.get("run", "")) + str(step.get("with", ""))
        asks = step.get("id") in ("check", "publish", "mirror")
        assert ("inputs.api-key" in text) == asks, step["name"]
        assert ("inputs.github-token" in text) == (step.get("id") == "lock"), step["name"]
        if "uses" in step:
            assert re.fullmatch(r"[\w-]+/[\w-]+@[0-9a-f]{40}", step["uses"])


def test_mode_check_checks_the_posts_and_plans_with_a_key(repository, tmp_path, sandbox):
    sandbox.reset()
    inputs = {"mode": "check", "api-key": sandbox.demo_api_key, "base-url": sandbox.base_url}
    outputs = run_action(repository, tmp_path, inputs)
    assert "steps.publish.outputs.published" not in outputs  # publishing did not run
    assert "Plan skipped" not in outputs["summary"]
    without = run_action(repository, tmp_path, {"mode": "check", "api-key": ""})
    assert "Plan skipped" in without["summary"]
    assert not (repository / "toolkit.lock").exists()  # nothing was published
    (repository / "content" / "broken.md").write_text("---\ntitle: [\n---\nText.\n")
    with pytest.raises(AssertionError, match="step Check"):
        run_action(repository, tmp_path, {"mode": "check", "api-key": ""})


def test_mode_mirror_commits_the_mirror_back(repository, tmp_path, sandbox):
    sandbox.reset()
    inputs = {"mode": "mirror", "api-key": sandbox.demo_api_key, "base-url": sandbox.base_url}
    outputs = run_action(repository, tmp_path, inputs)
    assert outputs["steps.mirror.outputs.paths"] == "./content/_mirror"
    assert outputs["steps.lock.outputs.changed"] == "true"
    origin = tmp_path / "origin.git"
    log = git(origin, "log", "--format=%s", "main")
    assert log.splitlines()[0] == "Mirror comments and the reading list [skip ci]"
    assert git(origin, "show", "main:content/_mirror/readinglist.json")


@pytest.mark.e2e
def test_mode_build_builds_the_site_for_pages(repository, tmp_path):
    outputs = run_action(repository, tmp_path, {"mode": "build"})
    assert outputs["steps.site.outputs.out"] == "./site"
    assert (repository / "site" / "hello" / "index.html").is_file()
    assert "steps.lock.outputs.changed" not in outputs  # nothing is pushed


@pytest.fixture
def team(tmp_path):
    """A team's repository made by `toolkit init` (posts/<login>/, one folder per writer),
    and a pull request's branch where jane-doe adds a post to her folder."""
    work = tmp_path / "team"
    git(tmp_path, "init", "-q", "-b", "main", str(work))
    for login in ("jane-doe", "bob"):
        (work / "posts" / login / "assets").mkdir(parents=True)
        (work / "posts" / login / f"{login}.md").write_text(f"---\ntitle: By {login}\n---\nText.\n")
    assert len(init_project(work, action=PIN).writers) == 2
    git(work, "add", ".")
    git(work, "commit", "-q", "-m", "start")
    base = git(work, "rev-parse", "HEAD").strip()
    git(work, "checkout", "-q", "-b", "jane")
    (work / "posts" / "jane-doe" / "new.md").write_text("---\ntitle: New of jane\n---\nText.\n")
    git(work, "add", ".")
    git(work, "commit", "-q", "-m", "jane's post")
    return work, base


def test_mode_check_of_a_team_checks_the_changed_folders_and_refuses_anothers(
    team, tmp_path, sandbox
):
    work, base = team
    sandbox.reset()
    inputs = {
        "mode": "check",
        "changed-from": base,
        "own-folder": "jane-doe",
        # Each writer's own key: a team's plan binds a writer's posts with theirs only.
        "api-keys": f"FOREM_API_KEY_JANE_DOE={sandbox.demo_api_key}\n"
        f"FOREM_API_KEY_BOB={sandbox.api_key('sam')}\n",
        "base-url": sandbox.base_url,
    }
    outputs = run_action(work, tmp_path, inputs)
    assert "Plan skipped" not in outputs["summary"]
    with pytest.raises(AssertionError, match="step Check") as refused:
        run_action(work, tmp_path, {**inputs, "own-folder": "bob"})
    assert "posts/jane-doe/new.md:1: jane-doe/ is another writer's folder than bob's" in str(
        refused.value
    )


@pytest.mark.e2e
def test_api_keys_are_one_writers_variable_a_line(team, tmp_path):
    work, _ = team
    # A fork's pull request: the secrets are empty, so nothing is asked of the API.
    empty = {"api-keys": "FOREM_API_KEY_JANE_DOE=\nFOREM_API_KEY_BOB=\n"}
    outputs = run_action(work, tmp_path, empty)
    assert outputs["steps.publish.outputs.published"] == "false"
    assert "Publishing skipped" in outputs["summary"]
    for line in ("PATH=/tmp/x", "BASH_ENV=/tmp/x", "LD_PRELOAD=/tmp/x.so", "no equals sign"):
        with pytest.raises(AssertionError, match="each line of api-keys is a writer's"):
            run_action(work, tmp_path, {"api-keys": f"FOREM_API_KEY_BOB=k\n{line}\n"})
