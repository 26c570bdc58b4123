"""A writer's project as `toolkit init` makes it, end to end: posts already in a
repository adopted, the Makefile run by `make` against a sandbox started by
`toolkit sandbox` (its printed lines as the environment), the CI workflow, and what a
plain install (no `sql` extra) says."""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import yaml
from click.testing import CliRunner

from tests.support.git import git
from tests.support.running_cli import RunningCli
from toolkit import USER_AGENT
from toolkit.cli import main
from toolkit.scaffold.files import WORKFLOW, ActionPin
from toolkit.scaffold.project import init_project
from toolkit.tls import shared_context

PIN = ActionPin("toolkit-docs/toolkit", "0123456789abcdef0123456789abcdef01234567", "v0.1.0")
BIN = Path(sys.executable).parent
# What a plain install lacks: the `sql` extra, blocked as if it were not installed.
WITHOUT_SQL = "import sys; sys.modules['datafusion'] = None; sys.modules['pyarrow'] = None; "


def cli(folder: Path, *args: str):
    with contextlib.chdir(folder):
        return CliRunner().invoke(main, list(args), catch_exceptions=False)


def post(folder: Path, relative: str, title: str, *front: str, body: str = "Text.\n") -> Path:
    path = folder / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        "---\n" + f"title: {title}\n" + "".join(f"{f}\n" for f in front) + "---\n" + body
    )
    return path


# -- adopting what is there ----------------------------------------------------------------


def dev_to_git_repository(folder: Path) -> None:
    """Shaped like a dev-to-git repository: blog-posts/<name>/<name>.md with images and
    code beside them, dev-to-git.json naming each, a README at the top."""
    entries = []
    for number, name in enumerate(["intro-to-rxjs", "angular-forms", "draft-idea"], start=1):
        post(
            folder,
            f"blog-posts/{name}/{name}.md",
            name.replace("-", " ").title(),
            f"published: {'false' if 'draft' in name else 'true'}",
            "tags: angular, rxjs",
            body=f"# {name}\n\n![diagram](./assets/diagram.png)\n\n## Part\n\nText.\n",
        )
        (folder / "blog-posts" / name / "assets").mkdir()
        (folder / "blog-posts" / name / "assets" / "diagram.png").write_bytes(b"\x89PNG")
        entries.append(
            {"id": 1000 + number, "relativePathToArticle": f"./blog-posts/{name}/{name}.md"}
        )
    (folder / "blog-posts" / "intro-to-rxjs" / "code").mkdir()
    (folder / "blog-posts" / "intro-to-rxjs" / "code" / "example.ts").write_text("export {}\n")
    (folder / "dev-to-git.json").write_text(json.dumps(entries, indent=2))
    (folder / "README.md").write_text("# My dev.to posts\n")
    (folder / "package.json").write_text('{"name": "blog"}\n')


def test_init_in_a_dev_to_git_repository_adopts_its_folder(tmp_path):
    dev_to_git_repository(tmp_path)
    result = cli(tmp_path, "init", "--no-workflow")
    assert result.exit_code == 0, result.output
    assert "adopted blog-posts/: 3 posts (dev-to-git.json names 3)" in result.stderr.splitlines()
    assert 'content_dir = "blog-posts"' in (tmp_path / "toolkit.toml").read_text()
    assert not (tmp_path / "content").exists()  # no empty content/ beside the writer's folder
    assert not list(tmp_path.rglob("_welcome.md"))  # and no sample among the writer's posts
    assert "skipped blog-posts/_welcome.md: blog-posts/ already has posts" in result.stderr
    check = cli(tmp_path, "check")
    assert "3 posts checked" in check.stderr, check.output


def test_init_in_a_devto_cli_repository_adopts_articles_with_their_ids(tmp_path):
    post(tmp_path, "articles/first-post.md", "First post", "published: true", "id: 1201")
    post(tmp_path, "articles/2023/second.md", "Second", "published: true", "id: 1202")
    post(tmp_path, "articles/new-one.md", "New one", "published: false")
    (tmp_path / "articles" / "README.md").write_text("Notes, not a post.\n")
    (tmp_path / "docs").mkdir()
    post(tmp_path, "docs/guide.md", "A guide, not the blog")
    result = cli(tmp_path, "init", "--no-workflow")
    assert result.exit_code == 0, result.output
    assert "adopted articles/: 3 posts (2 with an id:)" in result.stderr.splitlines()
    assert 'content_dir = "articles"' in (tmp_path / "toolkit.toml").read_text()
    assert not (tmp_path / "content").exists()


def test_init_finds_a_folder_of_posts_by_any_name(tmp_path):
    post(tmp_path, "writing/a.md", "A")
    post(tmp_path, "writing/b.md", "B")
    post(tmp_path, "notes/c.md", "C")
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "README.md").write_text("No front matter here.\n")
    result = cli(tmp_path, "init", "--no-workflow")
    assert "adopted writing/: 2 posts" in result.stderr.splitlines()


@pytest.mark.e2e
def test_hostile_names_never_reach_the_generated_files(tmp_path):
    post(tmp_path, "evil\nname: x/a.md", "A")
    subprocess.run(["git", "init", "-q", "-b", "main", str(tmp_path)], check=True)
    subprocess.run(
        ["git", "-C", str(tmp_path), "symbolic-ref", "HEAD", "refs/heads/x]\ny"], check=False
    )
    init_project(tmp_path, action=PIN)
    assert 'content_dir = "content"' in (tmp_path / "toolkit.toml").read_text()
    workflow = yaml.safe_load((tmp_path / WORKFLOW).read_text())
    assert workflow[True]["push"] == {"branches": ["main"]}


@pytest.mark.e2e
@pytest.mark.parametrize(
    "configured",
    ["../outside", "posts\n  evil: true", "ABSOLUTE", "a/../../b", "my posts", "linked"],
)
def test_an_existing_toml_naming_an_odd_content_dir_is_not_written_in_nor_named(
    tmp_path, configured
):
    """issue 43, 19: a toolkit.toml naming a folder init does not write in gets no sample
    at all, neither there nor in a `content/` it does not use."""
    blog = tmp_path / "blog"
    blog.mkdir()
    (tmp_path / "elsewhere").mkdir()
    (blog / "linked").symlink_to(tmp_path / "elsewhere")  # a folder leading out
    configured = configured.replace("ABSOLUTE", (tmp_path / "absolute").as_posix())
    (blog / "toolkit.toml").write_text(
        f"[site]\ncontent_dir = {json.dumps(configured)}\n", encoding="utf-8"
    )
    result = init_project(blog, action=PIN)
    assert result.content_dir == "content"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["blog", "elsewhere"]
    assert list((tmp_path / "elsewhere").iterdir()) == []  # nothing written outside
    assert not (blog / "content").exists() and not (blog / "my posts").exists()
    (sample,) = [f for f in result.files if f.path.endswith("_welcome.md")]
    assert not sample.created
    assert sample.reason.startswith("toolkit.toml names ")
    assert sample.reason.endswith(" as the content folder, not one init writes in")
    workflow = (blog / WORKFLOW).read_text()
    assert "evil" not in workflow and "content/_mirror/" in workflow
    assert yaml.safe_load(workflow)["jobs"]["mirror"]["permissions"] == {"contents": "write"}


@pytest.mark.e2e
def test_init_never_writes_through_a_folder_linked_out_of_the_project(tmp_path):
    """issue 43, 2: the sample and the workflow are not written into a repository's
    `content` or `.github` that are links to folders elsewhere."""
    blog, elsewhere = tmp_path / "blog", tmp_path / "elsewhere"
    blog.mkdir()
    elsewhere.mkdir()
    (blog / "content").symlink_to(elsewhere)
    (blog / ".github").symlink_to(elsewhere)
    result = init_project(blog, action=PIN)
    assert list(elsewhere.iterdir()) == []
    skipped = {f.path: f.reason for f in result.skipped}
    assert (
        skipped["content/_welcome.md"]
        == skipped[WORKFLOW]
        == ("its folder is a symlink leading out of the project; not written")
    )
    assert (blog / "toolkit.toml").is_file() and (blog / "Makefile").is_file()


@pytest.mark.e2e
def test_an_existing_toml_naming_a_nested_content_dir_is_kept(tmp_path):
    (tmp_path / "toolkit.toml").write_text('[site]\ncontent_dir = "src/posts/"\n')
    post(tmp_path, "src/posts/a.md", "A")
    result = init_project(tmp_path, action=PIN)
    assert result.content_dir == "src/posts"
    assert "src/posts/_mirror/" in (tmp_path / WORKFLOW).read_text()


def test_the_next_step_is_a_line_a_shell_runs_for_any_folder_name(tmp_path):
    result = cli(tmp_path, "init", "my blog", "--no-workflow")
    assert result.exit_code == 0
    assert "next: cd 'my blog' && toolkit new \"My first post\"" in result.stderr
    post(tmp_path, "old posts/posts/a.md", "A")
    adopted = cli(tmp_path, "init", "old posts", "--no-workflow")
    assert "adopted old posts/posts/: 1 post" in adopted.stderr.splitlines()
    assert "next: cd 'old posts' && toolkit check, then toolkit plan" in adopted.stderr


def test_a_dev_to_git_map_pointing_outside_adopts_nothing_outside(tmp_path):
    (tmp_path / "dev-to-git.json").write_text(
        json.dumps([{"id": 1, "relativePathToArticle": "../elsewhere/x.md"}, "junk", 7])
    )
    result = cli(tmp_path, "init", "--no-workflow")
    assert result.exit_code == 0 and "adopted" not in result.stderr
    assert 'content_dir = "content"' in (tmp_path / "toolkit.toml").read_text()
    assert (tmp_path / "content" / "_welcome.md").is_file()


# -- the sandbox as dev.to, in one step ------------------------------------------------------


def exported(lines: list[str]) -> dict[str, str]:
    """The environment the `export` lines of `toolkit sandbox` set."""
    env: dict[str, str] = {}
    for line in lines:
        words = shlex.split(line)
        if words[:1] == ["export"]:
            env.update(word.split("=", 1) for word in words[1:])  # type: ignore[misc]
    return env


def ready(line: str) -> bool:
    return line.startswith(("Press Ctrl-C", "Error"))


@contextlib.contextmanager
def sandbox_running(folder: Path, *args: str) -> Iterator[tuple[list[str], dict[str, str]]]:
    """`toolkit sandbox --memory` (the real CLI, in this process: tests/support/running_cli.py):
    what it printed until ready or refused, and the environment its `export` lines set."""
    with RunningCli("sandbox", "--memory", "--port", "0", *args, cwd=folder) as running:
        lines = until_ready(running)
        yield lines, exported(lines)


def until_ready(running: RunningCli) -> list[str]:
    """What the sandbox printed until ready to serve, or until it refused."""

    def printed() -> list[str] | None:
        for number, line in enumerate(running.lines):
            if ready(line):
                return running.lines[: number + 1]
        return None

    return running.until(printed)


@contextlib.contextmanager
def sandbox_process(folder: Path, prelude: str) -> Iterator[tuple[list[str], dict[str, str]]]:
    """`toolkit sandbox --memory` in a process of its own, `prelude` run first: what it
    printed until ready, and the environment its `export` lines set."""
    code = prelude + "from toolkit.__main__ import run; import sys; sys.argv[0] = 'toolkit'; run()"
    process = subprocess.Popen(
        [sys.executable, "-c", code, "sandbox", "--memory", "--port", "0"],
        cwd=folder,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    lines: list[str] = []
    try:
        assert process.stdout is not None
        for line in process.stdout:
            lines.append(line.rstrip("\n"))
            if ready(line):
                break
        yield lines, exported(lines)
    finally:
        process.send_signal(signal.SIGINT)
        process.communicate(timeout=30)


def remote_titles(env: dict[str, str]) -> list[str]:
    with httpx.Client(
        base_url=env["FOREM_BASE_URL"],
        headers={"api-key": env["FOREM_API_KEY"], "User-Agent": USER_AGENT},
        verify=shared_context(),
    ) as client:
        answer = client.get("/api/articles/me/all", params={"per_page": 1000})
        answer.raise_for_status()
        return sorted(a["title"] for a in answer.json())


@pytest.mark.e2e
def test_make_publish_against_the_sandbox_sends_the_writers_posts_not_the_sample(tmp_path):
    """The README's "Use it for your blog", walked: init, posts, `toolkit check` from a
    subfolder, `make publish` as CI runs it (images served from the pushed commit), then a
    pull that gives every file back as it was written."""
    assert cli(tmp_path, "init", "blog").exit_code == 0
    blog = tmp_path / "blog"
    git(blog, "init", "-q", "-b", "main")
    post(
        blog,
        "content/hello.md",
        "Hello",
        "published: true",
        "tags: [intro]",
        body="A picture:\n\n![the view](./images/view.png)\n",
    )
    (blog / "content" / "images").mkdir()
    (blog / "content" / "images" / "view.png").write_bytes(b"\x89PNG")
    post(
        blog, "content/2024/notes/second.md", "Second post", "published: false", "date: 2024-05-01"
    )
    with sandbox_running(tmp_path, "--no-seed", "--rate-window", "1") as (lines, env):
        exports = [line for line in lines if line.strip().startswith("export ")]
        assert [shlex.split(line)[1].split("=")[0] for line in exports] == [
            "FOREM_BASE_URL",
            "CLOUDCONVERT_BASE_URL",
            "LICENSE_BASE_URL",
            "LOGS_BASE_URL",
        ]
        assert {
            "FOREM_API_KEY",
            "CLOUDCONVERT_API_KEY",
            "LICENSE_API_TOKEN",
            "LOGS_PASSWORD",
        } <= set(env)
        assert remote_titles(env) == []  # --no-seed: the demo account holds nothing
        run_env = {
            **{k: v for k, v in os.environ.items() if not k.startswith(("FOREM_", "MAKE"))},
            **env,
            "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}",  # toolkit installed as a tool
        }
        git(blog, "add", "-A")
        git(blog, "commit", "-q", "-m", "posts")
        ci_env = {  # as in CI: the pushed commit's raw files host the images
            **run_env,
            "GITHUB_ACTIONS": "true",
            "GITHUB_REPOSITORY": "writer/blog",
            "GITHUB_SHA": git(blog, "rev-parse", "HEAD").strip(),
        }
        # From a subfolder, as a writer in content/ would: the project is found above.
        checked = subprocess.run(
            ["toolkit", "check"], cwd=blog / "content", env=ci_env, capture_output=True, text=True
        )
        assert checked.returncode == 0, checked.stdout + checked.stderr
        for target in ("check", "publish"):
            done = subprocess.run(
                ["make", target], cwd=blog, env=ci_env, capture_output=True, text=True
            )
            assert done.returncode == 0, f"make {target}: {done.stdout}{done.stderr}"
        assert remote_titles(env) == ["Hello", "Second post"]  # and no "Welcome"
        lock = json.loads((blog / "toolkit.lock").read_text())
        assert env["FOREM_BASE_URL"] in json.dumps(lock)
        git(blog, "add", "-A")
        git(blog, "commit", "-q", "-m", "toolkit.lock")

        # The image reached the API absolute; the pull gives the writer's file back.
        pulled = subprocess.run(
            ["toolkit", "pull", "--overwrite"],
            cwd=blog / "content",
            env=ci_env,
            capture_output=True,
            text=True,
        )
        assert pulled.returncode == 0, pulled.stdout + pulled.stderr
        assert git(blog, "status", "--porcelain", "--", "content") == ""


@pytest.mark.e2e
def test_the_sandbox_writes_its_lines_as_a_projects_env_and_keeps_a_writers(tmp_path):
    assert cli(tmp_path, "init", "blog", "--no-workflow").exit_code == 0
    blog = tmp_path / "blog"
    with sandbox_running(blog, "--no-seed", "--env-file", ".env") as (lines, env):
        assert "Written to .env too." in lines
        assert oct((blog / ".env").stat().st_mode & 0o777) == "0o600"
        shown = cli(blog, "config", "--json")
        keys = {k["name"]: k for k in json.loads(shown.stdout)}
        assert keys["forem.base_url"]["value"] == env["FOREM_BASE_URL"]
        assert keys["forem.base_url"]["origin"] == "FOREM_BASE_URL in .env"
        assert keys["forem.api_key"]["value"] == "set"
        # A shell sources the same file.
        sourced = subprocess.run(
            ["sh", "-c", '. ./.env && printf %s "$FOREM_API_KEY"'],
            cwd=blog,
            capture_output=True,
            text=True,
            check=True,
        )
        assert sourced.stdout == env["FOREM_API_KEY"]
    # A .env the sandbox did not write is never overwritten.
    (blog / ".env").write_text("FOREM_API_KEY=the-real-one\n")
    with sandbox_running(blog, "--env-file", ".env") as (lines, _):
        assert lines[-1].startswith("Error: .env: exists and was not written by toolkit sandbox")
    assert (blog / ".env").read_text() == "FOREM_API_KEY=the-real-one\n"


@pytest.mark.e2e
def test_the_sandbox_rewrites_only_an_env_file_whose_whole_content_is_its_own(tmp_path):
    """The README suggests putting the real key into the `.env` the sandbox wrote: from
    then on it is the writer's, and the next `toolkit sandbox --env-file .env` keeps it."""
    with sandbox_running(tmp_path, "--no-seed", "--env-file", ".env") as (lines, _):
        assert "Written to .env too." in lines
    ours = (tmp_path / ".env").read_text()
    with sandbox_running(tmp_path, "--no-seed", "--env-file", ".env") as (lines, _):
        assert "Written to .env too." in lines  # its own, untouched: rewritten
    assert (tmp_path / ".env").read_text().splitlines()[0] == ours.splitlines()[0]
    for changed in (
        ours + "FOREM_API_KEY=the-real-one\n",
        ours.replace("export FOREM_API_KEY=", "export FOREM_API_KEY=the-real-one #"),
    ):
        (tmp_path / ".env").write_text(changed)
        with sandbox_running(tmp_path, "--no-seed", "--env-file", ".env") as (lines, _):
            assert lines[-1].startswith("Error: .env: changed since toolkit sandbox wrote it")
        assert (tmp_path / ".env").read_text() == changed


def test_the_sandbox_keeps_no_state_through_a_toolkit_folder_linked_elsewhere(tmp_path):
    """issue 43, 5: `.toolkit` committed as a symlink; the sandbox's default database
    is never made through it."""
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "blog").mkdir()
    (tmp_path / "blog" / ".toolkit").symlink_to(tmp_path / "elsewhere")
    with RunningCli("sandbox", "--port", "0", "--no-seed", cwd=tmp_path / "blog") as running:
        lines = until_ready(running)
    assert lines[-1] == (
        "Error: .toolkit: a symlink where toolkit keeps its own files, which it never "
        "follows; remove the link (or choose --db)"
    )
    assert list((tmp_path / "elsewhere").iterdir()) == []


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_the_env_file_is_never_a_fifo_and_is_made_private_in_a_new_folder(tmp_path):
    from toolkit_sandbox.envfile import write_env_file
    from toolkit_sandbox.server import SandboxError

    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    with pytest.raises(SandboxError, match="pipe: not a regular file"):
        write_env_file(fifo, [("publishing", {"FOREM_API_KEY": "k"})])
    one_line = tmp_path / "one-line"
    one_line.write_text("# Written by toolkit sandbox: what points a project at it." + "x" * 10**6)
    with pytest.raises(SandboxError, match="one-line: exists and was not written"):
        write_env_file(one_line, [("publishing", {"FOREM_API_KEY": "k"})])
    nested = tmp_path / "deep" / "er" / ".env"
    write_env_file(nested, [("publishing", {"FOREM_API_KEY": "k k"})])
    assert oct(nested.stat().st_mode & 0o777) == "0o600"
    assert nested.read_text().splitlines()[-2] == "export FOREM_API_KEY='k k'"
    nested.chmod(0o640)  # rewritten: the writer's mode kept
    write_env_file(nested, [("publishing", {"FOREM_API_KEY": "other"})])
    assert oct(nested.stat().st_mode & 0o777) == "0o640"
    assert "other" in nested.read_text()


# -- the CI workflow -----------------------------------------------------------------------


@pytest.mark.e2e
def test_the_workflow_checks_pull_requests_publishes_the_default_branch_and_deploys_pages(
    tmp_path,
):
    subprocess.run(["git", "init", "-q", "-b", "trunk", str(tmp_path)], check=True)
    init_project(tmp_path, action=PIN)
    workflow = yaml.safe_load((tmp_path / WORKFLOW).read_text())
    triggers = workflow[True]  # YAML 1.1 reads `on` as true
    assert "pull_request" in triggers and triggers["push"] == {"branches": ["trunk"]}
    assert "schedule" in triggers
    assert workflow["permissions"] == {}
    jobs = workflow["jobs"]

    def modes(job: str) -> list[str]:
        return [
            s["with"]["mode"] for s in jobs[job]["steps"] if "toolkit-docs" in s.get("uses", "")
        ]

    assert jobs["check"]["if"] == "github.event_name == 'pull_request'"
    assert modes("check") == ["check"] and jobs["check"]["permissions"] == {"contents": "read"}
    assert "pull_request" not in jobs["publish"]["if"] and modes("publish") == ["publish"]
    assert modes("site") == ["build"] and "vars.TOOLKIT_PAGES" in jobs["site"]["if"]
    assert jobs["pages"]["needs"] == "site"
    assert jobs["pages"]["permissions"] == {"pages": "write", "id-token": "write"}
    assert jobs["pages"]["steps"][0]["uses"].startswith("actions/deploy-pages@")
    assert modes("mirror") == ["mirror"] and "schedule" in jobs["mirror"]["if"]
    # Each job asks for no more than it needs: writes only where something is pushed.
    writers = {name for name, job in jobs.items() if "write" in job["permissions"].values()}
    assert writers == {"publish", "pages", "mirror"}


# -- a plain install: the `sql` extra left out -----------------------------------------------
# Each in a process of its own, whose modules never held the extra: this one's may have.


@pytest.mark.e2e
def test_logs_local_without_the_sql_extra_says_which_extra_in_one_line(tmp_path):
    assert cli(tmp_path, "init", "--no-workflow").exit_code == 0
    code = WITHOUT_SQL + "from toolkit.__main__ import run; run()"
    done = subprocess.run(
        [sys.executable, "-c", code, "logs", "--local", "SELECT * FROM toolkit"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 1
    assert done.stdout == ""
    assert done.stderr.splitlines() == [
        "Error: the local SQL engine (DataFusion, pyarrow) is not installed; it is the sql "
        "extra: pip install 'toolkit[sql]'"
    ]


@pytest.mark.e2e
def test_the_sandbox_without_the_sql_extra_starts_and_says_the_log_service_is_left_out(tmp_path):
    with sandbox_process(tmp_path, WITHOUT_SQL) as (lines, env):
        assert lines[-1] == "Press Ctrl-C to stop."
        assert any(
            "log stream (/api/v1) left out" in line and "toolkit[sql]" in line for line in lines
        )
        assert "LOGS_BASE_URL" not in env and "FOREM_API_KEY" in env
        assert remote_titles(env)  # the publishing API answers (seeded)


@pytest.mark.parametrize("extra", ["sql"])
def test_the_dev_extras_bring_the_sql_extra(extra):
    import tomllib

    project = tomllib.loads((Path(__file__).parents[2] / "pyproject.toml").read_text())
    deps = project["project"]["dependencies"]
    assert not any(d.startswith(("datafusion", "pyarrow")) for d in deps)
    assert any(
        d.startswith("datafusion") for d in project["project"]["optional-dependencies"][extra]
    )
    assert any(
        f"{extra}" in d
        for d in project["project"]["optional-dependencies"]["dev"]
        if d.startswith("toolkit[")
    )
