"""`init`: start a project a writer can commit at once, in a new or an existing folder.

First it looks for posts already there (`adopt`): the folder a `dev-to-git.json` names
its files in, else a folder of front-matter Markdown (`content/`, `blog-posts/`,
`articles/`, `posts/`, or any other one at the top); `content_dir` then names it, and no
sample or empty `content/` is made beside it. Then it writes, each only when nothing is
at its path (an existing file is never overwritten, nor opened for writing; it is listed
as skipped, with why):

- `toolkit.toml`: the keys a blogger sets (title, url, where the posts are); every other
  one is printed by `toolkit config --all` (`toolkit.config.templates`);
- `content/_welcome.md`: a sample, when no posts were found; its name starts with `_`, so
  it is not a post (never checked, built or sent) until the writer renames it;
- `.gitignore`: what toolkit writes (the sites, `.toolkit/`, export archives) and `.env`;
- `.env.example`: the secret publishing needs, `FOREM_API_KEY`;
- `Makefile`: `publish`, `watch`, `serve`, `check`, `build`, each calling `toolkit`;
- `.github/workflows/toolkit.yml` (left out by `workflow=False`): pull requests checked,
  publishing on pushes to the default branch, the site on GitHub Pages when the
  repository turns it on, comments mirrored every day, all through the project's
  composite action (`action.yml`) pinned by the commit of its release tag.
"""

from __future__ import annotations

import datetime as dt
import errno
import json
import os
import re
import subprocess
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path, PurePosixPath
from urllib.parse import unquote, urlsplit

from toolkit import PROJECT_URL, __version__
from toolkit.config.keys import ARCHIVE_FORMATS, EXPORT_SOURCES
from toolkit.config.sections import DEFAULT_CONFIG_NAME, SiteConfig
from toolkit.config.templates import dotenv_example, short_toml
from toolkit.content.discover import walk_posts
from toolkit.errors import InitError
from toolkit.fsutil import describe_os_error

CONTENT = "content"
WELCOME = "_welcome.md"  # under the content folder; `_`: not a post
WORKFLOW = ".github/workflows/toolkit.yml"
MAKEFILE = "Makefile"
DEV_TO_GIT = "dev-to-git.json"
# Folders writers' tools keep posts in, looked at first (dev-to-git: blog-posts/,
# devto-cli: posts/ or articles/, Jekyll: _posts/).
KNOWN_FOLDERS = ("content", "blog-posts", "articles", "posts", "_posts", "blog")
# Folders never taken for a blog's posts.
NOT_POSTS = {"node_modules", "vendor", "site", "site-premium", "templates", "docs", "dist"}
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


@dataclass(frozen=True)
class InitFile:
    path: str  # relative to the project's folder, POSIX
    created: bool
    reason: str = ""  # why it was skipped


@dataclass(frozen=True)
class Adopted:
    """Posts found in the folder before init: where they are and what says so."""

    content_dir: str  # relative to the project's folder, POSIX
    posts: int  # front-matter posts under it
    with_id: int = 0  # of them, with an `id:` in the front matter (devto-cli)
    dev_to_git: int = 0  # entries of dev-to-git.json naming a file under it

    def describe(self) -> str:
        notes = []
        if self.dev_to_git:
            notes.append(f"{DEV_TO_GIT} names {self.dev_to_git}")
        if self.with_id:
            notes.append(f"{self.with_id} with an id:")
        extra = f" ({'; '.join(notes)})" if notes else ""
        plural = "" if self.posts == 1 else "s"
        return f"{self.content_dir}/: {self.posts} post{plural}{extra}"


@dataclass(frozen=True)
class InitResult:
    folder: Path
    files: list[InitFile] = field(default_factory=list)
    action: str | None = None  # `owner/name@commit` of the workflow's action, when written
    content_dir: str = CONTENT
    adopted: Adopted | None = None  # the posts that were already there
    enclosing: Path | None = None  # the toolkit.toml of a project this one is inside

    @property
    def created(self) -> list[InitFile]:
        return [f for f in self.files if f.created]

    @property
    def skipped(self) -> list[InitFile]:
        return [f for f in self.files if not f.created]


def _site_default(name: str) -> str:
    from dataclasses import fields

    from toolkit.config.keys import KEY

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


def makefile_text() -> str:
    return """# This blog's everyday commands, each one line calling toolkit (installed as a tool:
# `toolkit` on PATH). `make watch PORT=8001` when port 8000 is taken.
TOOLKIT ?= toolkit
PORT ?= 8000

.PHONY: publish watch serve check build

# Send new and changed posts to dev.to (needs FOREM_API_KEY: see .env.example).
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


def workflow_text(pin: ActionPin, branch: str = "main", content_dir: str = CONTENT) -> str:
    def expr(text: str) -> str:
        return "${{ " + text + " }}"

    key = expr("secrets.FOREM_API_KEY")
    return f"""# toolkit's workflow for this blog (written by toolkit init):
# - a pull request: every post checked (problems as annotations on the files), and what
#   publishing would do (with the FOREM_API_KEY secret);
# - a push to {branch}: new and changed posts published, toolkit.lock committed back;
# - the site on GitHub Pages, once you turn it on: Settings, Pages, Source "GitHub
#   Actions", then the repository variable TOOLKIT_PAGES set to true (Settings, Secrets
#   and variables, Actions, Variables);
# - every day: comments and the reading list mirrored into {content_dir}/_mirror/.
# Add the FOREM_API_KEY secret (Settings, Secrets and variables, Actions); without it
# the jobs say so in their summary and succeed.
name: toolkit
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
    steps:
      - uses: {CHECKOUT}
        with:
          persist-credentials: false
      - uses: {pin.pinned}
        with:
          mode: check
          api-key: {key}

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
    steps:
      - uses: {CHECKOUT}
        with:
          persist-credentials: false
      - uses: {pin.pinned}
        with:
          mode: publish
          api-key: {key}

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
    steps:
      - uses: {CHECKOUT}
        with:
          persist-credentials: false
      - uses: {pin.pinned}
        with:
          mode: mirror
          api-key: {key}
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


# -- finding the posts already there ------------------------------------------------------


def _is_post(path: Path) -> tuple[bool, bool]:
    """Whether a file starts with a front matter, and whether that holds an `id:` key."""
    try:
        with path.open("rb") as handle:
            head = handle.read(8192)
    except OSError:
        return False, False
    text = head.decode("utf-8", errors="replace").lstrip("\ufeff")
    if not text.startswith("---"):
        return False, False
    lines = text.splitlines()
    if not lines or lines[0].strip() != "---":
        return False, False
    for line in lines[1:]:
        if line.strip() in ("---", "..."):
            break
        if re.match(r"id\s*:\s*\S", line):
            return True, True
    return True, False


def _count_posts(folder: Path) -> tuple[int, int]:
    """Front-matter posts under `folder`, and how many of them hold an `id:`."""
    try:
        paths = walk_posts(folder) if folder.is_dir() else []
    except OSError:  # a folder that cannot be read: its posts, if any, are not known
        return 0, 0
    posts = with_id = 0
    for path in paths:
        is_post, has_id = _is_post(path)
        posts += is_post
        with_id += has_id
    return posts, with_id


def _dev_to_git_folder(folder: Path) -> tuple[str, int] | None:
    """The folder holding the files `dev-to-git.json` names (their nearest common
    parent, inside the project), and how many entries name a file. A map toolkit cannot
    read adopts nothing here (`toolkit check` and `plan` say what is wrong with it)."""
    from toolkit.errors import SyncError
    from toolkit.sync.devtogit import read_map

    try:
        mapping = read_map(folder)
    except (SyncError, OSError):
        return None
    names = [
        PurePosixPath(key)
        for key in mapping
        if all(SAFE_NAME.fullmatch(part) for part in PurePosixPath(key).parts[:-1])
    ]
    if not names:
        return None
    common = list(names[0].parent.parts)
    for name in names[1:]:
        parent = name.parent.parts
        size = 0
        while size < min(len(common), len(parent)) and common[size] == parent[size]:
            size += 1
        common = common[:size]
    if not common:  # posts at the top, or in folders with nothing in common
        return None
    return "/".join(common), len(names)


def adopt(folder: Path) -> Adopted | None:
    """The posts already in `folder`, if any: the folder `dev-to-git.json` names, else the
    first of `KNOWN_FOLDERS` holding posts, else the top-level folder with the most
    front-matter posts."""
    if not folder.is_dir():
        return None
    mapped = _dev_to_git_folder(folder)
    if mapped is not None:
        where, named = mapped
        posts, with_id = _count_posts(folder / where)
        return Adopted(where, posts, with_id, named)
    for name in KNOWN_FOLDERS:
        posts, with_id = _count_posts(folder / name)
        if posts:
            return Adopted(name, posts, with_id)
    best: Adopted | None = None
    try:
        entries = sorted(os.scandir(folder), key=lambda e: e.name)
    except OSError:
        return None
    for entry in entries:
        if entry.name.startswith((".", "_")) or entry.name in NOT_POSTS:
            continue
        if not SAFE_NAME.fullmatch(entry.name):
            continue
        if not entry.is_dir(follow_symlinks=False):
            continue
        posts, with_id = _count_posts(Path(entry.path))
        if posts and (best is None or posts > best.posts):
            best = Adopted(entry.name, posts, with_id)
    return best


def _configured_content_dir(folder: Path) -> str | None:
    """`[site] content_dir` of a `toolkit.toml` already there, when it says one."""
    import tomllib

    try:
        data = tomllib.loads((folder / DEFAULT_CONFIG_NAME).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    site = data.get("site")
    value = site.get("content_dir") if isinstance(site, dict) else None
    return value if isinstance(value, str) and value else None


def init_project(
    folder: Path,
    *,
    workflow: bool = True,
    action: ActionPin | None = None,
    today: dt.date | None = None,
) -> InitResult:
    """Write what a new project needs into `folder` (made when missing), never over a file
    that exists, adopting the posts already there. `action`: the action the workflow uses
    (default: `installed_action()`)."""
    if folder.exists() and not folder.is_dir():
        raise InitError(f"{folder}: not a folder")
    adopted = adopt(folder)
    content_dir = _configured_content_dir(folder) or (adopted.content_dir if adopted else CONTENT)
    planned: list[tuple[str, str | None, str]] = []  # path, text (None: skip), reason
    planned.append((DEFAULT_CONFIG_NAME, short_toml(content_dir), ""))
    welcome = f"{content_dir}/{WELCOME}"
    if adopted is not None or _count_posts(folder / content_dir)[0]:
        planned.append((welcome, None, f"{content_dir}/ already has posts"))
    else:
        planned.append((welcome, welcome_text(today or dt.date.today(), content_dir), ""))
    planned.append((".gitignore", gitignore_text(), ""))
    planned.append((".env.example", dotenv_example(), ""))
    planned.append((MAKEFILE, makefile_text(), ""))
    pin = None
    if workflow:
        pin, why = (action, "") if action is not None else installed_action()
        planned.append(
            (WORKFLOW, workflow_text(pin, default_branch(folder), content_dir), "")
            if pin
            else (WORKFLOW, None, why)
        )
    files = []
    for relative, text, reason in planned:
        path = folder / relative
        if path.exists() or path.is_symlink():
            files.append(InitFile(relative, False, _why_kept(path, relative)))
        elif text is None:
            files.append(InitFile(relative, False, reason))
        else:
            files.append(_create(path, relative, text))
    written = any(f.created and f.path == WORKFLOW for f in files)
    enclosing = None
    if any(f.created and f.path == DEFAULT_CONFIG_NAME for f in files):
        from toolkit.config.loading import find_config

        enclosing = find_config(folder.absolute().parent)[0]
    return InitResult(
        folder, files, pin.uses if pin and written else None, content_dir, adopted, enclosing
    )


def _why_kept(path: Path, relative: str) -> str:
    if relative == ".gitignore" and path.is_file():
        try:
            have = set(path.read_text(encoding="utf-8", errors="replace").splitlines())
        except OSError:
            have = set()
        missing = [
            line
            for line in ignored()
            if line not in have and line.strip("/") not in have and line.lstrip("/") not in have
        ]
        if missing:
            shown = " ".join(missing[:4]) + (" ..." if len(missing) > 4 else "")
            return f"exists; it may want these lines: {shown}"
    if relative == MAKEFILE and path.is_file():
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            text = ""
        missing = [
            name
            for name in MAKE_TARGETS
            if not re.search(rf"^{name}\s*:(?!=)", text, flags=re.MULTILINE)
        ]
        if missing:
            return (
                f"exists; it may want these targets: {' '.join(missing)} "
                f"(each one line: `toolkit <target>`)"
            )
    return "exists"


def _create(path: Path, relative: str, text: str) -> InitFile:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("x", encoding="utf-8", newline="\n") as handle:  # never over a file
            handle.write(text)
    except FileExistsError as exc:
        if os.path.lexists(path):
            return InitFile(relative, False, "exists")
        # a folder on the way is a file: say which, with the usual wording
        raise InitError(
            describe_os_error(
                OSError(errno.ENOTDIR, "Not a directory", os.fspath(exc.filename or path.parent))
            )
        ) from None
    except OSError as exc:
        raise InitError(describe_os_error(exc)) from None
    return InitFile(relative, True)
