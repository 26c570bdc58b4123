"""A new project: start one a writer can commit at once, in a new or an existing folder.

First it looks for posts already there (`adopt`): the folder a `dev-to-git.json` names
its files in, else a folder of front-matter Markdown (`content/`, `blog-posts/`,
`articles/`, `posts/`, or any other one at the top); `content_dir` then names it, and no
sample or empty `content/` is made beside it. Then it writes, each only when nothing is
at its path (an existing file is never overwritten, nor opened for writing; it is listed
as skipped, with why):

- `toolkit.toml`: the keys a blogger sets (title, url, where the posts are); every other
  one is printed by `toolkit config --all` (`toolkit.config.templates`); in a team's
  repository (`team.find_writers`: one folder per writer under the posts folder), the
  `[writers]` table, one line per writer naming the variable of their key;
- `content/_welcome.md`: a sample, when no posts were found; its name starts with `_`, so
  it is not a post (never checked, built or sent) until the writer renames it;
- `.gitignore`: what toolkit writes (the sites, `.toolkit/`, export archives) and `.env`;
- `.env.example`: the secret publishing needs, `FOREM_API_KEY` (and each writer's);
- `Makefile`: `publish`, `watch`, `serve`, `check`, `build`, each calling `toolkit`;
- `.github/workflows/toolkit.yml` (left out by `workflow=False`): pull requests checked,
  publishing on pushes to the default branch, the site on GitHub Pages when the
  repository turns it on, comments mirrored every day, all through the project's
  composite action (`action.yml`) pinned by the commit of its release tag; for a team,
  the pull request's writers' folders checked (and, with a repository variable, one
  editing another writer's folder refused), publishing with every writer's secret.
"""

from __future__ import annotations

import datetime as dt
import errno
import os
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from toolkit import localfiles
from toolkit.config.loading import find_config
from toolkit.config.sections import DEFAULT_CONFIG_NAME
from toolkit.config.templates import dotenv_example, short_toml, toml_key
from toolkit.content.discover import WITH_MDX, walk_posts
from toolkit.errors import InitError
from toolkit.fsutil import describe_os_error
from toolkit.redact import quoted
from toolkit.scaffold.adopt import (
    Adopted,
    adopt,
    configured_content_dir,
    count_posts,
    named_content_dir,
)
from toolkit.scaffold.files import (
    CONTENT,
    MAKE_TARGETS,
    MAKEFILE,
    WELCOME,
    WORKFLOW,
    ActionPin,
    default_branch,
    gitignore_text,
    ignored,
    installed_action,
    makefile_text,
    welcome_text,
    workflow_text,
)
from toolkit.scaffold.generators import Detected, detect, source_toml
from toolkit.scaffold.team import WriterFolder, find_writers

OUT_OF_PROJECT = "its folder is a symlink leading out of the project; not written"


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
    content_dir: str = CONTENT
    adopted: Adopted | None = None  # the posts that were already there
    enclosing: Path | None = None  # the toolkit.toml of a project this one is inside
    # A team's repository: one folder per writer under the posts folder, each writer's
    # key in its own variable (a secret to add in CI); () for one writer's blog.
    writers: tuple[WriterFolder, ...] = ()
    source: Detected | None = None  # the generator of the blog found there, and what was read

    @property
    def created(self) -> list[InitFile]:
        return [f for f in self.files if f.created]

    @property
    def skipped(self) -> list[InitFile]:
        return [f for f in self.files if not f.created]


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
    source = detect(folder, today)  # a step of its own: the generator's files, read
    adopted = adopt(folder) if source is None else _adopted_for(folder, source)
    configured = configured_content_dir(folder)
    named = named_content_dir(folder)
    content_dir = configured or (adopted.content_dir if adopted else CONTENT)
    # A team's repository: recognised in the folder of the posts adopted.
    writers = find_writers(folder / content_dir) if adopted is not None else ()
    variables = {writer.folder: writer.variable for writer in writers}
    planned: list[tuple[str, str | None, str]] = []  # path, text (None: skip), reason
    title = source.title if source is not None and source.title else "My posts"
    toml = short_toml(content_dir, title=title, writers=variables)
    toml += source_toml(source) if source is not None else ""
    planned.append((DEFAULT_CONFIG_NAME, toml, ""))
    welcome = f"{content_dir}/{WELCOME}"
    if named is not None and configured is None:  # the sample goes nowhere else
        planned.append(
            (
                welcome,
                None,
                f"{DEFAULT_CONFIG_NAME} names {quoted(named, 100)} as the content folder, "
                "not one init writes in",
            )
        )
    elif adopted is not None or count_posts(folder / content_dir, folder)[0]:
        planned.append((welcome, None, f"{content_dir}/ already has posts"))
    else:
        planned.append((welcome, welcome_text(today or dt.date.today(), content_dir), ""))
    planned.append((".gitignore", gitignore_text(), ""))
    planned.append((".env.example", dotenv_example(writers=variables), ""))
    planned.append((MAKEFILE, makefile_text(team=bool(variables)), ""))
    pin = None
    if workflow:
        pin, why = (action, "") if action is not None else installed_action()
        planned.append(
            (WORKFLOW, workflow_text(pin, default_branch(folder), content_dir, variables), "")
            if pin
            else (WORKFLOW, None, why)
        )
    files = []
    for relative, text, reason in planned:
        path = folder / relative
        if path.exists() or path.is_symlink():
            files.append(InitFile(relative, False, _why_kept(path, relative, variables)))
        elif text is None:
            files.append(InitFile(relative, False, reason))
        elif localfiles.leads_out(folder, path.parent):  # a committed link to elsewhere
            files.append(InitFile(relative, False, OUT_OF_PROJECT))
        else:
            files.append(_create(path, relative, text))
    written = any(f.created and f.path == WORKFLOW for f in files)
    enclosing = None
    if any(f.created and f.path == DEFAULT_CONFIG_NAME for f in files):
        enclosing = find_config(folder.absolute().parent)[0]
    return InitResult(
        folder,
        files,
        pin.uses if pin and written else None,
        content_dir,
        adopted,
        enclosing,
        writers,
        source if any(f.created and f.path == DEFAULT_CONFIG_NAME for f in files) else None,
    )


def _adopted_for(folder: Path, source: Detected) -> Adopted | None:
    """The posts of a generator's blog: its posts folder (`.mdx` files too)."""
    where = folder / source.content_dir
    if localfiles.leads_out(folder, where):  # a link out of the project: not its posts
        return None
    try:
        paths = walk_posts(where, suffixes=WITH_MDX) if where.is_dir() else []
    except OSError:
        return None
    return Adopted(source.content_dir, len(paths)) if paths else None


def _why_kept(path: Path, relative: str, writers: dict[str, str]) -> str:
    if writers and relative in (DEFAULT_CONFIG_NAME, WORKFLOW) and path.is_file():
        lacking = _writers_missing(path, relative, writers)
        if lacking:
            return f"exists; it may want these writers: {lacking}"
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


def _writers_missing(path: Path, relative: str, writers: dict[str, str]) -> str:
    """The writers' folders an existing toolkit.toml's [writers] lacks, or the variables
    the workflow does not name, as lines to add ("" when none is missing)."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""
    if relative == WORKFLOW:
        lacking = [v for v in dict.fromkeys(writers.values()) if f"secrets.{v} " not in text]
        shown = [f"{v}=${{{{ secrets.{v} }}}}" for v in lacking]
    else:
        try:
            table = tomllib.loads(text).get("writers")
        except ValueError:
            return ""
        have = table if isinstance(table, dict) else {}
        shown = [f'{toml_key(f)} = "{v}"' for f, v in writers.items() if f not in have]
    return " ".join(shown[:4]) + (f" (and {len(shown) - 4} more)" if len(shown) > 4 else "")


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
