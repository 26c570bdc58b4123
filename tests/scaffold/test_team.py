"""A team's repository: one folder per writer under the posts folder. `toolkit init`
recognises it and writes the writers' table, the secrets to add and the team's workflow;
`toolkit check --changed-from` checks what a pull request changes, and `--own-folder`
refuses a change to another writer's folder."""

from __future__ import annotations

import contextlib
import json
import re
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from tests.support.git import git
from toolkit.cli import main
from toolkit.config import load_config
from toolkit.config.sections import writer_variable
from toolkit.errors import ConfigError
from toolkit.scaffold.files import WORKFLOW, ActionPin
from toolkit.scaffold.project import init_project

PIN = ActionPin("toolkit-docs/toolkit", "0123456789abcdef0123456789abcdef01234567", "v0.1.0")
WRITERS = {"jane-doe": 3, "bob": 2, "li.wei": 1}
VARIABLES = {
    "jane-doe": "FOREM_API_KEY_JANE_DOE",
    "bob": "FOREM_API_KEY_BOB",
    "li.wei": "FOREM_API_KEY_LI_WEI",
}


def team_repository(root: Path) -> Path:
    """A team's repository as such teams keep it: posts/<login>/*.md, with
    posts/<login>/assets/ beside them, and a README at the top."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "README.md").write_text("# Our team's posts\n")
    for login, count in WRITERS.items():
        folder = root / "posts" / login
        (folder / "assets").mkdir(parents=True)
        (folder / "assets" / "cover.png").write_bytes(b"\x89PNG\r\n")
        for number in range(count):
            (folder / f"{login}-{number}.md").write_text(
                f"---\ntitle: Post {number} of {login}\nid: {100 + number}\n"
                "cover_image: ./assets/cover.png\n---\nText.\n"
            )
    return root


def cli(folder: Path, *args: str):
    with contextlib.chdir(folder):
        return CliRunner().invoke(main, list(args), catch_exceptions=False)


def test_init_recognises_a_team_and_lists_each_writers_secret(tmp_path):
    root = team_repository(tmp_path / "team")
    result = cli(root, "init", "--no-workflow")
    assert result.exit_code == 0, result.output
    assert "adopted posts/: 6 posts (6 with an id:)" in result.stderr
    assert (
        "team: 3 writers, one folder each under posts/; each publishes with their own key "
        "([writers] in toolkit.toml)"
    ) in result.stderr
    listed = re.findall(
        r"^  (FOREM_API_KEY_\w+) +(posts/\S+/) \((\d) posts?\)$", result.stderr, re.M
    )
    assert listed == [
        ("FOREM_API_KEY_BOB", "posts/bob/", "2"),
        ("FOREM_API_KEY_JANE_DOE", "posts/jane-doe/", "3"),
        ("FOREM_API_KEY_LI_WEI", "posts/li.wei/", "1"),
    ]
    text = (root / "toolkit.toml").read_text()
    assert (
        "[writers]\n"
        "# one folder per writer under the posts folder; each writer's posts are published with the\n"
        "# key in the named environment variable\n"
        'bob = "FOREM_API_KEY_BOB"\n'
        'jane-doe = "FOREM_API_KEY_JANE_DOE"\n'
        '"li.wei" = "FOREM_API_KEY_LI_WEI"\n'
    ) in text
    assert '[forem]\n# organization = "acme"          # optional\n' in text
    config = load_config(root / "toolkit.toml", env={})
    assert config.writers is not None and dict(config.writers.variables) == VARIABLES
    assert config.site.content_dir == root / "posts"
    example = (root / ".env.example").read_text()
    assert all(f"\n{variable}=\n" in example for variable in VARIABLES.values())
    assert not (root / "posts" / "_welcome.md").exists()


def test_init_json_carries_the_writers(tmp_path):
    root = team_repository(tmp_path / "team")
    result = cli(root, "init", "--no-workflow", "--json")
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    assert document["writers"] == [
        {"folder": "bob", "variable": "FOREM_API_KEY_BOB", "posts": 2},
        {"folder": "jane-doe", "variable": "FOREM_API_KEY_JANE_DOE", "posts": 3},
        {"folder": "li.wei", "variable": "FOREM_API_KEY_LI_WEI", "posts": 1},
    ]


@pytest.mark.parametrize(
    "layout",
    [
        {"posts/a.md": True, "posts/jane/x.md": True, "posts/bob/y.md": True},  # a post at the top
        {"posts/2023/x.md": True, "posts/2024/y.md": True},  # years: one writer's archive
        {"posts/jane/x.md": True, "posts/jane/assets/a.png": False},  # one writer only
        {"posts/jane/x.md": True, "posts/images/y.md": True},  # images/ is no writer
    ],
)
def test_init_takes_other_layouts_for_one_writers_blog(tmp_path, layout):
    for name, is_post in layout.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("---\ntitle: T\n---\nText.\n" if is_post else "x")
    result = init_project(tmp_path, workflow=False)
    assert result.adopted is not None and result.writers == ()
    assert "[writers]" not in (tmp_path / "toolkit.toml").read_text()


def test_a_writers_default_variable_is_the_folder_upper_cased():
    assert writer_variable("jane-doe") == "FOREM_API_KEY_JANE_DOE"
    assert writer_variable("Li.Wei_2") == "FOREM_API_KEY_LI_WEI_2"


def test_a_writers_variable_must_be_a_variable_name(tmp_path):
    (tmp_path / "toolkit.toml").write_text(
        '[writers]\njane = "FOREM API KEY"\n"../x" = "FOREM_API_KEY_X"\nbob = 3\n'
    )
    with pytest.raises(ConfigError) as raised:
        load_config(tmp_path / "toolkit.toml", env={})
    assert raised.value.problems == [
        'toolkit.toml: writers.jane: must be the name of an environment variable, e.g. "FOREM_API_KEY_JANE"',
        "toolkit.toml: writers.../x: a writer is one folder name under the posts folder",
        'toolkit.toml: writers.bob: must be the name of an environment variable, e.g. "FOREM_API_KEY_BOB"',
    ]


# -- the team's workflow -------------------------------------------------------------------


def team_workflow(tmp_path: Path) -> tuple[str, dict]:
    root = team_repository(tmp_path / "team")
    init_project(root, action=PIN)
    text = (root / WORKFLOW).read_text()
    return text, yaml.safe_load(text)


def action_step(job: dict) -> dict:
    [step] = [s for s in job["steps"] if s.get("uses", "").startswith("toolkit-docs/toolkit@")]
    return step


@pytest.mark.e2e
def test_the_team_workflow_publishes_in_one_job_with_every_writers_secret(tmp_path):
    text, workflow = team_workflow(tmp_path)
    assert workflow["permissions"] == {}
    assert "toJSON" not in text and "secrets.FOREM_API_KEY }}" not in text
    keys = {f"{variable}=${{{{ secrets.{variable} }}}}" for variable in sorted(VARIABLES.values())}
    for name in ("publish", "mirror", "check"):
        job = workflow["jobs"][name]
        assert "strategy" not in job  # one job whatever the number of writers
        lines = action_step(job)["with"]["api-keys"].splitlines()
        assert set(lines) == keys and len(lines) == len(keys)
    assert workflow["jobs"]["publish"]["permissions"] == {"contents": "write"}
    assert all(variable in text.split("name: toolkit")[0] for variable in VARIABLES.values())


@pytest.mark.e2e
def test_the_team_workflow_checks_only_the_changed_folders_and_can_refuse_others(tmp_path):
    _, workflow = team_workflow(tmp_path)
    check = workflow["jobs"]["check"]
    assert check["if"] == "github.event_name == 'pull_request'"
    assert check["permissions"] == {"contents": "read"}
    checkout = check["steps"][0]
    assert checkout["with"] == {"persist-credentials": False, "fetch-depth": 0}
    step = action_step(check)["with"]
    assert step["mode"] == "check"
    assert step["changed-from"] == "${{ github.event.pull_request.base.sha }}"
    assert step["own-folder"] == (
        "${{ vars.TOOLKIT_OWN_FOLDER_ONLY == 'true' && github.event.pull_request.user.login || '' }}"
    )
    for job in workflow["jobs"].values():  # untrusted values never inline in a shell line
        assert all("run" not in step for step in job["steps"])


# -- check --changed-from, --own-folder ----------------------------------------------------


@pytest.fixture
def pull_request(tmp_path):
    """A team's repository on `main`, and a branch where bob changes a post of his and
    one of jane-doe's (a mistake), with a broken post in jane-doe's folder."""
    root = team_repository(tmp_path / "team")
    init_project(root, workflow=False)
    config = root / "toolkit.toml"  # the assets are served from the repository
    text = config.read_text().replace(
        'content_dir = "posts"\n',
        'content_dir = "posts"\nassets_base_url = "https://example.com/raw"\n',
    )
    config.write_text(text)
    git(tmp_path, "init", "-q", "-b", "main", str(root))
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "start")
    git(root, "checkout", "-q", "-b", "bob-edits")
    with (root / "posts" / "bob" / "bob-0.md").open("a") as handle:
        handle.write("More text.\n")
    (root / "posts" / "jane-doe" / "jane-doe-1.md").write_text("---\ntitle: [\n---\nText.\n")
    git(root, "commit", "-q", "-am", "bob's edits")
    return root


@pytest.mark.e2e
def test_check_changed_from_checks_only_the_changed_writers_folders(pull_request):
    (pull_request / "posts" / "li.wei" / "li.wei-0.md").write_text("---\ntitle: [\n---\n")
    git(pull_request, "stash", "-q")  # li.wei's broken post is not in the change set
    result = cli(pull_request, "check", "--changed-from", "main")
    assert result.exit_code == 1
    problems = [line for line in result.output.splitlines() if line.startswith("posts/")]
    assert [line.split(":")[0] for line in problems] == ["posts/jane-doe/jane-doe-1.md"]
    assert "5 posts checked: 1 error" in result.output  # bob's 2 and jane-doe's 3


@pytest.mark.e2e
def test_own_folder_refuses_a_change_to_another_writers_folder(pull_request):
    result = cli(pull_request, "check", "--changed-from", "main", "--own-folder", "Bob")
    assert result.exit_code == 1
    assert (
        "posts/jane-doe/jane-doe-1.md:1: jane-doe/ is another writer's folder than Bob's "
        "(--own-folder): each writer changes only their own posts"
    ) in result.output.splitlines()
    assert not any(
        "posts/bob/" in line and "another writer" in line for line in result.output.splitlines()
    )


@pytest.mark.e2e
def test_own_folder_of_the_writer_who_changed_only_their_own_folder_passes(pull_request):
    git(pull_request, "checkout", "-q", "main", "--", "posts/jane-doe")
    git(pull_request, "commit", "-q", "-m", "only bob's")
    result = cli(pull_request, "check", "--changed-from", "main", "--own-folder", "bob")
    assert result.exit_code == 0, result.output
    assert "2 posts checked: 0 errors" in result.output


@pytest.mark.e2e
def test_a_writers_folder_removed_by_the_change_is_not_checked(pull_request):
    git(pull_request, "rm", "-q", "-r", "posts/li.wei")
    git(pull_request, "checkout", "-q", "main", "--", "posts/jane-doe")
    git(pull_request, "commit", "-q", "-m", "li.wei leaves")
    result = cli(pull_request, "check", "--changed-from", "main")
    assert result.exit_code == 0, result.output
    assert "2 posts checked: 0 errors" in result.output


@pytest.mark.e2e
def test_changed_from_an_unknown_revision_is_one_error_line(pull_request):
    result = cli(pull_request, "check", "--changed-from", "no-such-branch")
    assert result.exit_code == 1
    assert result.output == (
        "Error: --changed-from: 'no-such-branch' is no commit of this repository "
        "(in CI, check out its history: fetch-depth: 0)\n"
    )
    usage = cli(pull_request, "check", "--own-folder", "bob")
    assert usage.exit_code == 2 and "--own-folder needs --changed-from" in usage.output


@pytest.mark.e2e
def test_a_hostile_file_name_in_another_writers_folder_is_printed_escaped(pull_request):
    name = "posts/jane-doe/x\n::error::forged.md"
    (pull_request / name).write_text("---\ntitle: X\n---\n")
    result = cli(pull_request, "check", "--changed-from", "main", "--own-folder", "bob")
    assert result.exit_code == 1
    assert "posts/jane-doe/x\\n::error::forged.md:1: jane-doe/ is another writer's folder" in (
        result.output
    )
    assert not any(line.startswith("::error::forged") for line in result.output.splitlines())


@pytest.mark.e2e
def test_init_again_after_a_writer_joins_names_what_to_add(tmp_path):
    root = team_repository(tmp_path / "team")
    init_project(root, action=PIN)
    (root / "posts" / "new-comer").mkdir()
    (root / "posts" / "new-comer" / "hello.md").write_text("---\ntitle: Hello\n---\nText.\n")
    result = cli(root, "init", "--no-workflow")
    assert (
        'skipped toolkit.toml: exists; it may want these writers: new-comer = "FOREM_API_KEY_NEW_COMER"'
    ) in result.stderr.splitlines()
    again = init_project(root, action=PIN)
    [workflow] = [f for f in again.files if f.path == WORKFLOW]
    assert workflow.reason == (
        "exists; it may want these writers: "
        "FOREM_API_KEY_NEW_COMER=${{ secrets.FOREM_API_KEY_NEW_COMER }}"
    )


def test_a_teams_env_example_and_makefile_name_the_writers_keys_not_forem_api_key(tmp_path):
    root = team_repository(tmp_path / "team")
    assert cli(root, "init", "--no-workflow").exit_code == 0
    example = (root / ".env.example").read_text()
    # A writer filling in FOREM_API_KEY would see their posts skipped: their own line
    # comes first, and FOREM_API_KEY says what it is for in a team's repository.
    assert example.index("FOREM_API_KEY_BOB=") < example.index("\nFOREM_API_KEY=")
    assert "fill\n# in your own line only" in example
    project_key = example[: example.index("\nFOREM_API_KEY=")].rsplit("\n\n", 1)[1]
    assert project_key.startswith("# Only for posts directly in the posts folder")
    assert "DEV API Keys)." not in project_key
    makefile = (root / "Makefile").read_text()
    assert "needs each writer's key, in the variable [writers] of toolkit.toml names" in makefile
    assert "needs FOREM_API_KEY" not in makefile


def test_writers_are_listed_in_one_order_whatever_the_case_of_their_folders(tmp_path):
    root = tmp_path / "team"
    for login in ("carol", "Bob42", "alice"):
        folder = root / "posts" / login
        folder.mkdir(parents=True)
        (folder / f"{login}-post.md").write_text(f"---\ntitle: By {login}\n---\nText.\n")
    assert cli(root, "init", "--no-workflow").exit_code == 0

    shown = cli(root, "config")
    rows = re.findall(r"^writers\.(\S+):", shown.stdout, re.M)
    assert rows == ["alice", "Bob42", "carol"]
    assert "The API key of the writer whose posts are in posts/Bob42/." in shown.stdout
    project_key = shown.stdout.split("forem.api_key:")[1].splitlines()[1]
    assert project_key.strip().startswith("Only for posts directly in the posts folder")

    published = cli(root, "publish")  # no writer's key is set: nothing is sent
    assert published.exit_code == 1
    skipped = re.findall(r"(\S+): FOREM_API_KEY_\w+ is not set", published.output)
    assert skipped == ["alice", "Bob42", "carol"]
