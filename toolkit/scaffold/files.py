"""The files `toolkit init` writes into a new project: `.gitignore`, the sample post,
the `Makefile`, and the GitHub workflow with the project's action pinned by the commit
of its release tag (`toolkit.config.templates` holds `toolkit.toml` and `.env.example`).
"""

from __future__ import annotations

import datetime as dt
import json
import re
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass, fields
from importlib import metadata
from pathlib import Path
from urllib.parse import unquote, urlsplit

from toolkit import PROJECT_URL, __version__
from toolkit.config.keys import ARCHIVE_FORMATS, EXPORT_SOURCES, KEY
from toolkit.config.sections import SiteConfig

CONTENT = "content"
WELCOME = "_welcome.md"  # under the content folder; `_`: not a post
WORKFLOW = ".github/workflows/toolkit.yml"
MAKEFILE = "Makefile"
DEV_TO_GIT = "dev-to-git.json"
# The actions the generated workflow uses besides the project's own, pinned by commit.
CHECKOUT = "actions/checkout@11bd71901bbe5b1630ceea73d27597364c9af683  # v4.2.2"
DEPLOY_PAGES = "actions/deploy-pages@d6db90164ac5ed86f2b6aed7e0febac5b3c0c03e  # v4.0.5"
MAKE_TARGETS = ("publish", "watch", "serve", "check", "build")
# A folder or branch name written into the generated files as it is.
SAFE_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_./-]{0,99}")


@dataclass(frozen=True)
class ActionPin:
    """The project's action as a workflow names it: `owner/name@commit  # version`."""

    repository: str  # owner/name on GitHub
    commit: str  # 40 hex digits
    version: str = f"v{__version__}"  # the release the commit is, for the comment

    @property
    def uses(self) -> str:
        return f"{self.repository}@{self.commit}"

    @property
    def pinned(self) -> str:
        """As a workflow writes it: the commit, then its version in a comment."""
        return f"{self.uses}  # {self.version}"


def _site_default(name: str) -> str:
    for item in fields(SiteConfig):
        if item.name == name:
            return str(item.metadata[KEY].default)
    raise KeyError(name)  # pragma: no cover - the names below are declared


def ignored() -> list[str]:
    """What the `.gitignore` of a new project holds: what toolkit writes, and `.env`."""
    archives = [f"/{source}.{fmt}" for source in EXPORT_SOURCES for fmt in ARCHIVE_FORMATS]
    return [
        f"/{_site_default('output_dir')}/",
        f"/{_site_default('premium_output_dir')}/",
        "/.toolkit/",
        ".env",
        *archives,
    ]


def gitignore_text() -> str:
    site, premium, state, env, *archives = ignored()
    return (
        "\n".join(
            [
                "# What toolkit writes: the built sites and its own state (run log, build manifest).",
                site,
                premium,
                state,
                "# Secrets (see .env.example).",
                env,
                "# `toolkit export`'s archive, by default <source>.<format> beside toolkit.toml.",
                *archives,
            ]
        )
        + "\n"
    )


def welcome_text(today: dt.date, content_dir: str = CONTENT) -> str:
    return f"""---
title: Welcome
published: false
date: "{today.isoformat()}"
tags: [meta]
---
This is a sample. Its name starts with `_`, so toolkit does not take it for a post:
nothing checks, builds or publishes it. Rename it (`{content_dir}/welcome.md`) to make
it a post, or delete it.

- `toolkit new "A title"` writes a new draft (`published: false`) in `{content_dir}/`.
- `make watch` (`toolkit watch`) shows the site, drafts included, at
  http://127.0.0.1:8000 and reloads it on every save.
- `make check` (`toolkit check`) validates every post the way the publishing API would.
- `make build` (`toolkit build`) builds the site into `site/`.
- `toolkit plan` says what `make publish` (`toolkit publish`) would do; publishing
  needs `FOREM_API_KEY` (see `.env.example`).

Set `published: true` when a post is ready.
"""


def makefile_text(team: bool = False) -> str:
    key = (
        "each writer's key, in the variable [writers] of toolkit.toml names"
        if team
        else "FOREM_API_KEY"
    )
    return f"""# This blog's everyday commands, each one line calling toolkit (installed as a tool:
# `toolkit` on PATH). `make watch PORT=8001` when port 8000 is taken.
TOOLKIT ?= toolkit
PORT ?= 8000

.PHONY: {" ".join(MAKE_TARGETS)}

# Send new and changed posts to dev.to (needs {key}: see .env.example).
publish:
	$(TOOLKIT) publish

# The site as you write, at http://127.0.0.1:$(PORT)/, drafts included; remote drafts kept up to date.
watch:
	$(TOOLKIT) watch --port $(PORT)

# The built site at http://127.0.0.1:$(PORT)/.
serve: build
	$(TOOLKIT) serve --port $(PORT)

# Every post checked, offline, the way the publishing API would.
check:
	$(TOOLKIT) check

# The site, into site/.
build:
	$(TOOLKIT) build
"""


def workflow_text(
    pin: ActionPin,
    branch: str = "main",
    content_dir: str = CONTENT,
    writers: Mapping[str, str] | None = None,
) -> str:
    """The workflow of a blog; of a team's repository when `writers` (folder -> variable
    of the writer's key) is given: see `team_header`."""

    def expr(text: str) -> str:
        return "${{ " + text + " }}"

    def keys() -> str:
        """The action's key inputs: the project's one, or every writer's, each named."""
        if not writers:
            return f"          api-key: {expr('secrets.FOREM_API_KEY')}"
        lines = [f"{v}={expr('secrets.' + v)}" for v in dict.fromkeys(writers.values())]
        return "          api-keys: |\n" + "\n".join(f"            {line}" for line in lines)

    def steps(mode: str) -> str:
        """A job's steps: the repository checked out, then the action in `mode` with the key."""
        if mode == "check" and writers:  # the pull request's changes, against its base
            checkout = "          persist-credentials: false\n          fetch-depth: 0"
            scope = (
                f"\n          changed-from: {expr('github.event.pull_request.base.sha')}"
                "\n          own-folder: "
                + expr(
                    "vars.TOOLKIT_OWN_FOLDER_ONLY == 'true' && "
                    "github.event.pull_request.user.login || ''"
                )
            )
        else:
            checkout, scope = "          persist-credentials: false", ""
        return f"""    steps:
      - uses: {CHECKOUT}
        with:
{checkout}
      - uses: {pin.pinned}
        with:
          mode: {mode}{scope}
{keys()}"""

    header = (
        team_header(branch, content_dir, writers)
        if writers
        else f"""# toolkit's workflow for this blog (written by toolkit init):
# - a pull request: every post checked (problems as annotations on the files), and what
#   publishing would do (with the FOREM_API_KEY secret);
# - a push to {branch}: new and changed posts published, toolkit.lock committed back;
# - the site on GitHub Pages, once you turn it on: Settings, Pages, Source "GitHub
#   Actions", then the repository variable TOOLKIT_PAGES set to true (Settings, Secrets
#   and variables, Actions, Variables);
# - every day: comments and the reading list mirrored into {content_dir}/_mirror/.
# Add the FOREM_API_KEY secret (Settings, Secrets and variables, Actions); without it
# the jobs say so in their summary and succeed.
"""
    )
    return f"""{header}name: toolkit
on:
  pull_request:
  push:
    branches: [{branch}]
  schedule:
    - cron: "23 5 * * *"
  workflow_dispatch:

# Nothing by default; each job asks for what it needs.
permissions: {{}}

jobs:
  check:
    name: Check the posts
    if: github.event_name == 'pull_request'
    runs-on: ubuntu-latest
    timeout-minutes: 15
    permissions:
      contents: read
{steps("check")}

  publish:
    name: Publish
    if: github.event_name == 'push' || github.event_name == 'workflow_dispatch'
    runs-on: ubuntu-latest
    timeout-minutes: 30
    # One publish at a time: a second one waits for the first.
    concurrency:
      group: toolkit-publish
      cancel-in-progress: false
    permissions:
      contents: write  # to push toolkit.lock back
{steps("publish")}

  site:
    name: Build the site
    if: vars.TOOLKIT_PAGES == 'true' && (github.event_name == 'push' || github.event_name == 'workflow_dispatch')
    runs-on: ubuntu-latest
    timeout-minutes: 30
    permissions:
      contents: read
    steps:
      - uses: {CHECKOUT}
        with:
          persist-credentials: false
          fetch-depth: 0  # a post's date can come from its first commit
      # The site built with its .toolkit/ cache restored, and handed to Pages.
      - uses: {pin.pinned}
        with:
          mode: build

  pages:
    name: Deploy the site to GitHub Pages
    needs: site
    runs-on: ubuntu-latest
    timeout-minutes: 10
    concurrency:
      group: toolkit-pages
      cancel-in-progress: false
    permissions:
      pages: write  # to deploy the site
      id-token: write  # to prove the deployment comes from this workflow
    environment:
      name: github-pages
      url: {expr("steps.deployment.outputs.page_url")}
    steps:
      - id: deployment
        uses: {DEPLOY_PAGES}

  mirror:
    name: Mirror comments and the reading list
    if: github.event_name == 'schedule' || github.event_name == 'workflow_dispatch'
    runs-on: ubuntu-latest
    timeout-minutes: 30
    concurrency:
      group: toolkit-publish
      cancel-in-progress: false
    permissions:
      contents: write  # to push {content_dir}/_mirror/ back
{steps("mirror")}
"""


def team_header(branch: str, content_dir: str, writers: Mapping[str, str]) -> str:
    """The comment atop a team's workflow: what each job does, and the secrets to add."""
    secrets = "\n".join(f"#   {v}" for v in dict.fromkeys(writers.values()))
    return f"""# toolkit's workflow for this team's repository (written by toolkit init): one folder
# per writer under {content_dir}/, each writer's posts published with their own key.
# - a pull request: only the writers' folders it changes are checked (problems as
#   annotations on the files), then what publishing would do. With the repository
#   variable TOOLKIT_OWN_FOLDER_ONLY set to true (Settings, Secrets and variables,
#   Actions, Variables), a pull request that changes another writer's folder than its
#   author's (the folder named as the author's GitHub login) fails;
# - a push to {branch}: new and changed posts published, each with its writer's key (one
#   job for every writer), toolkit.lock committed back;
# - the site on GitHub Pages, once you turn it on: Settings, Pages, Source "GitHub
#   Actions", then the repository variable TOOLKIT_PAGES set to true;
# - every day: comments and reading lists mirrored into {content_dir}/_mirror/.
# Add one secret per writer (Settings, Secrets and variables, Actions), as [writers] in
# toolkit.toml names them; a writer whose secret is missing is skipped, and said:
{secrets}
# A writer who joins: their folder, a line in [writers], their secret, and their line in
# each api-keys list below.
"""


def _git(folder: Path, *args: str) -> str | None:
    """A git command's output in `folder`, or None when it fails (no git, no repository)."""
    try:
        done = subprocess.run(
            ["git", "-C", str(folder), *args],
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def default_branch(folder: Path) -> str:
    """The branch the workflow publishes from: the remote's default branch, else the one
    checked out, else git's `init.defaultBranch`, else `main`."""
    if not folder.is_dir():
        return "main"
    remote = _git(folder, "symbolic-ref", "--quiet", "--short", "refs/remotes/origin/HEAD")
    names = [remote.split("/", 1)[1]] if remote and "/" in remote else []
    for args in (("symbolic-ref", "--quiet", "--short", "HEAD"), ("config", "init.defaultBranch")):
        names.append(_git(folder, *args) or "")
    # A name goes into the workflow's YAML as it is: only the plain ones.
    return next((name for name in names if SAFE_NAME.fullmatch(name)), "main")


def _github_repository(url: str) -> str | None:
    parts = urlsplit(url.removeprefix("git+"))
    if parts.hostname != "github.com":
        return None
    path = parts.path.strip("/").removesuffix(".git").split("/")
    return "/".join(path[:2]) if len(path) >= 2 else None


def _is_commit(text: str) -> bool:
    return len(text) == 40 and all(c in "0123456789abcdef" for c in text)


def installed_action() -> tuple[ActionPin | None, str]:
    """The project's action at a published commit, with its version, for the installed
    toolkit (`action_pin` of what pip recorded of its origin); and, when none is known,
    why."""
    # The installed one: a source tree's toolkit.egg-info may come first on sys.path.
    direct = next(
        (
            text
            for dist in metadata.distributions(name="toolkit")
            if (text := dist.read_text("direct_url.json"))
        ),
        None,
    )
    return action_pin(direct)


def action_pin(direct_url: str | None) -> tuple[ActionPin | None, str]:
    """The rule: the commit of the release tag `v<version>` of the installed toolkit,
    `direct_url` being what pip records of where it came from (PEP 610). Installed from
    GitHub (pip and pipx record the commit), that commit, which GitHub served; installed
    from a git checkout, the commit its tag `v<version>` names there (never an unpushed
    HEAD). Else None, and why."""
    default_repository = _github_repository(PROJECT_URL) or "toolkit-docs/toolkit"
    tag = f"v{__version__}"
    try:
        info = json.loads(direct_url) if direct_url else {}
    except ValueError:
        info = {}
    url = info.get("url", "") if isinstance(info, dict) else ""
    url = url if isinstance(url, str) else ""
    vcs = info.get("vcs_info") if isinstance(info, dict) else None
    repository = _github_repository(url)
    if repository and isinstance(vcs, dict) and _is_commit(str(vcs.get("commit_id", ""))):
        requested = str(vcs.get("requested_revision") or "")
        version = requested if re.fullmatch(r"v\d+(\.\d+)*", requested) else tag
        return ActionPin(repository, str(vcs["commit_id"]), version), ""
    if url.startswith("file://"):
        folder = Path(unquote(urlsplit(url).path))
        commit = _git(folder, "rev-parse", "--verify", "--quiet", f"{tag}^{{commit}}") or ""
        if _is_commit(commit):
            return ActionPin(default_repository, commit, tag), ""
    return None, (
        f"the commit of toolkit's action is not known (toolkit {tag} was not installed "
        f"from GitHub nor from a checkout holding the tag {tag}); install it with pipx "
        f"install git+{PROJECT_URL}@{tag}, or use --no-workflow"
    )
