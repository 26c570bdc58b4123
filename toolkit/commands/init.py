"""`init`: start a project a writer can commit at once, in a new or an existing folder.

What it writes, each only when nothing is at its path (an existing file is never
overwritten, nor opened for writing; it is listed as skipped, with why):

- `toolkit.toml`: every key commented out at its default, with a line on what it does,
  made from the configuration's declarations (`toolkit.config.templates.commented_toml`);
- `content/welcome.md`: a welcome draft, unless `content/` already holds posts;
- `.gitignore`: what toolkit writes (the sites, `.toolkit/`, export archives) and `.env`;
- `.env.example`: the secrets toolkit reads, by name;
- `.github/workflows/publish.yml`: publish on every push to the default branch with the
  project's composite action (`action.yml`), pinned by commit (left out by `workflow=False`).
"""

from __future__ import annotations

import datetime as dt
import errno
import json
import os
import subprocess
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from urllib.parse import unquote, urlsplit

from toolkit import PROJECT_URL
from toolkit.config.keys import ARCHIVE_FORMATS, EXPORT_SOURCES
from toolkit.config.sections import DEFAULT_CONFIG_NAME, SiteConfig
from toolkit.config.templates import commented_toml, dotenv_example
from toolkit.content.discover import walk_posts
from toolkit.errors import InitError
from toolkit.fsutil import describe_os_error

WELCOME = "content/welcome.md"
WORKFLOW = ".github/workflows/publish.yml"
# The actions the generated workflow uses besides the project's own, pinned by commit.
CHECKOUT = "actions/checkout@11bd71901bbe5b1630ceea73d27597364c9af683  # v4.2.2"


@dataclass(frozen=True)
class ActionPin:
    """The project's action as a workflow names it: `owner/name@commit`."""

    repository: str  # owner/name on GitHub
    commit: str  # 40 hex digits

    @property
    def uses(self) -> str:
        return f"{self.repository}@{self.commit}"


@dataclass(frozen=True)
class InitFile:
    path: str  # relative to the project's folder, POSIX
    created: bool
    reason: str = ""  # why it was skipped


@dataclass(frozen=True)
class InitResult:
    folder: Path
    files: list[InitFile] = field(default_factory=list)
    action: str | None = None  # `owner/name@commit` of the workflow's action, when written

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


def welcome_text(today: dt.date) -> str:
    return f"""---
title: Welcome
published: false
date: "{today.isoformat()}"
tags: [meta]
---
This is a draft (`published: false`): it stays off the site and is sent to the
publishing API as a draft only. Make it yours, or delete it.

- `toolkit new "A title"` writes a new draft in `content/`.
- `toolkit watch` shows the site, drafts included, at http://127.0.0.1:8000 and
  reloads it on every save.
- `toolkit check` validates every post the way the publishing API would.
- `toolkit build` builds the site into `site/` (`--drafts` to include drafts).
- `toolkit plan` says what `toolkit publish` would do; publishing needs
  `FOREM_API_KEY` (see `.env.example`).

Set `published: true` when a post is ready.
"""


def workflow_text(pin: ActionPin) -> str:
    return f"""# Publish content/ on every push to the default branch, and commit toolkit.lock back
# when it changed. Add the FOREM_API_KEY secret under Settings, Secrets and variables,
# Actions; without it the job says so in its summary and succeeds.
name: publish
on:
  push:
  workflow_dispatch:

# One publish at a time: a second one waits for the first.
concurrency:
  group: publish-${{{{ github.repository }}}}
  cancel-in-progress: false

# Nothing by default; the job asks for what it needs.
permissions: {{}}

jobs:
  publish:
    if: github.ref_name == github.event.repository.default_branch
    runs-on: ubuntu-latest
    timeout-minutes: 30
    permissions:
      contents: write  # to push toolkit.lock back
    steps:
      - uses: {CHECKOUT}
        with:
          persist-credentials: false
      # toolkit's own action, pinned by commit: install, cache, publish, commit the lock.
      - uses: {pin.uses}
        with:
          api-key: ${{{{ secrets.FOREM_API_KEY }}}}
"""


def _github_repository(url: str) -> str | None:
    parts = urlsplit(url.removeprefix("git+"))
    if parts.hostname != "github.com":
        return None
    path = parts.path.strip("/").removesuffix(".git").split("/")
    return "/".join(path[:2]) if len(path) >= 2 else None


def _is_commit(text: str) -> bool:
    return len(text) == 40 and all(c in "0123456789abcdef" for c in text)


def installed_action() -> tuple[ActionPin | None, str]:
    """The project's action at the commit this toolkit was installed from, and, when it
    cannot be known, why: installed from a git URL (pip and pipx record the commit), or
    from a git checkout (its HEAD)."""
    default_repository = _github_repository(PROJECT_URL) or "toolkit-docs/toolkit"
    # The installed one: a source tree's toolkit.egg-info may come first on sys.path.
    direct = next(
        (
            text
            for dist in metadata.distributions(name="toolkit")
            if (text := dist.read_text("direct_url.json"))
        ),
        None,
    )
    try:
        info = json.loads(direct) if direct else {}
    except ValueError:
        info = {}
    url = info.get("url", "") if isinstance(info, dict) else ""
    vcs = info.get("vcs_info") if isinstance(info, dict) else None
    if isinstance(vcs, dict) and _is_commit(str(vcs.get("commit_id", ""))):
        repository = _github_repository(url) or default_repository
        return ActionPin(repository, str(vcs["commit_id"])), ""
    if url.startswith("file://"):
        folder = Path(unquote(urlsplit(url).path))
        try:
            done = subprocess.run(
                ["git", "-C", str(folder), "rev-parse", "HEAD"],
                capture_output=True,
                text=True,
                timeout=10,
                check=False,
            )
        except (OSError, subprocess.SubprocessError):
            done = None
        commit = done.stdout.strip() if done is not None and done.returncode == 0 else ""
        if _is_commit(commit):
            return ActionPin(default_repository, commit), ""
    return None, (
        "the commit of toolkit's action is not known (toolkit was not installed "
        "from git); install it with pipx install git+" + PROJECT_URL + ", or use --no-workflow"
    )


def _has_posts(folder: Path) -> bool:
    try:
        return folder.is_dir() and bool(walk_posts(folder))
    except OSError:  # a folder that cannot be read: its posts, if any, are not known
        return False


def init_project(
    folder: Path,
    *,
    workflow: bool = True,
    action: ActionPin | None = None,
    today: dt.date | None = None,
) -> InitResult:
    """Write what a new project needs into `folder` (made when missing), never over a file
    that exists. `action`: the action the workflow uses (default: `installed_action()`)."""
    if folder.exists() and not folder.is_dir():
        raise InitError(f"{folder}: not a folder")
    planned: list[tuple[str, str | None, str]] = []  # path, text (None: skip), reason
    planned.append((DEFAULT_CONFIG_NAME, commented_toml(), ""))
    if _has_posts(folder / "content"):
        planned.append((WELCOME, None, "content/ already has posts"))
    else:
        planned.append((WELCOME, welcome_text(today or dt.date.today()), ""))
    planned.append((".gitignore", gitignore_text(), ""))
    planned.append((".env.example", dotenv_example(), ""))
    pin = None
    if workflow:
        pin, why = (action, "") if action is not None else installed_action()
        planned.append((WORKFLOW, workflow_text(pin), "") if pin else (WORKFLOW, None, why))
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
    return InitResult(folder, files, pin.uses if pin and written else None)


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
