"""Which files are posts: `.md` files under the content folder, skipping `_` and `.` names
and what `[content] exclude` names (gitignore-style patterns relative to the content
folder, matched by `pathspec` as git matches a `.gitignore`, in time linear in the path:
`config.keys.exclude_spec`). A `.md` file without a front matter is not a post either;
that is known once it is read (`Post.has_front_matter`).

A post is a regular file, or a symlink to one inside the project (`toolkit.localfiles`).
A symlink leading outside the project, a FIFO or a device is skipped without being
opened, and returned with the reason for `toolkit check` to report, as the site's scan
reports it. A symlinked folder inside the project is not walked (nor by the scan).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

from toolkit import localfiles
from toolkit.errors import ContentError

if TYPE_CHECKING:  # pragma: no cover
    from toolkit.config import Config

# Whether a path under the content folder (POSIX, relative to it; a folder with a final
# `/`) is excluded.
Excluded = Callable[[str], bool]


def _nothing(relative: str) -> bool:
    return False


@lru_cache(maxsize=8)
def exclusion(patterns: tuple[str, ...] | None) -> Excluded:
    """What `[content] exclude` leaves out, as a predicate on content-relative paths."""
    if not patterns:
        return _nothing
    from toolkit.config.keys import exclude_spec

    return exclude_spec(patterns).match_file


def excluded_by(config: Config) -> Excluded:
    return exclusion(config.content.exclude)


def _relative(path: str | Path, content_dir: Path) -> str | None:
    text, root = str(path), str(content_dir)
    if not text.startswith(root + os.sep):
        return None
    rest = text[len(root) + 1 :]
    return rest.replace(os.sep, "/") if os.sep != "/" else rest


Skipped = list[tuple[Path, str]]  # (path, why it was not read)

POST_SUFFIX = ".md"
# The names of post files: Markdown, and in a project written for a generator
# (`post_suffixes`) MDX and Jekyll's `.markdown` too.
MARKDOWN = (POST_SUFFIX,)
WITH_MDX = (".md", ".mdx", ".markdown")
# Markdown by another name (`.MD`, `.markdown`): never a post (unless the generator
# reads it), but said to be left out, since a writer meant it for one.
MARKDOWN_SUFFIXES = (".md", ".markdown")


def post_suffixes(config: Config) -> tuple[str, ...]:
    """The endings of the project's post files: `.mdx` and `.markdown` too when `[source]`
    names a generator (Astro, Next and Eleventy read MDX; Jekyll's posts are often
    `.markdown`)."""
    return MARKDOWN if config.source.generator == "devto" else WITH_MDX


def reading_key(config: Config) -> str:
    """What `sources.reader` depends on besides the post, as text: another one, and every
    post is read again (the site's records, `check`'s index of the other posts)."""
    if config.source.generator == "devto" and not any(
        (config.source.id_key, config.source.skip_key, config.source.adopted)
    ):
        return ""
    return repr((config.source, sorted(config.forem.tags or ())))


def misnamed(name: str, suffixes: tuple[str, ...] = MARKDOWN) -> bool:
    """Whether a file name says Markdown (`a.MD`, `a.markdown`) but not an ending posts
    have (`suffixes`)."""
    return not name.endswith(suffixes) and name.lower().endswith(MARKDOWN_SUFFIXES)


def _hidden(name: str) -> bool:
    return name.startswith(("_", "."))


def walk_posts(
    folder: Path,
    folders: tuple[str, ...] = (),
    skipped: Skipped | None = None,
    *,
    content_dir: Path | None = None,
    excluded: Excluded = _nothing,
    suffixes: tuple[str, ...] = MARKDOWN,
    others: list[Path] | None = None,
) -> list[Path]:
    """Every post under `folder`, sorted, so that every run sees them in the same order.

    `folders`: where a symlink may lead (by default `folder` itself); what is refused is
    added to `skipped` when given. `excluded` is asked about each path relative to
    `content_dir` (default `folder`); an excluded folder is not walked. `others`, when
    given, gets the Markdown files whose names keep them from being posts (`misnamed`).
    """
    folders = folders or localfiles.project_folders(folder)
    refused: Skipped = [] if skipped is None else skipped
    base = content_dir or folder
    found: list[str] = []
    stack = [str(folder)]
    while stack:
        with os.scandir(stack.pop()) as entries:
            for entry in entries:
                if _hidden(entry.name):
                    continue
                if excluded is not _nothing:
                    relative = _relative(entry.path, base)
                    if relative is not None and excluded(
                        relative + "/" if entry.is_dir(follow_symlinks=False) else relative
                    ):
                        continue
                if entry.is_dir(follow_symlinks=False):
                    stack.append(entry.path)
                    continue
                if entry.is_file(follow_symlinks=False):
                    if entry.name.endswith(suffixes):
                        found.append(entry.path)
                    elif others is not None and misnamed(entry.name, suffixes):
                        others.append(Path(entry.path))
                    continue
                kind, _, reason = localfiles.classify_entry(entry, folders)
                if kind == localfiles.FILE and entry.name.endswith(suffixes):
                    found.append(entry.path)
                elif (
                    kind == localfiles.FILE
                    and others is not None
                    and misnamed(entry.name, suffixes)
                ):
                    others.append(Path(entry.path))
                elif reason:  # what the site's scan reports too
                    refused.append((Path(entry.path), reason))
    if os.name == "nt":  # pragma: no cover - parts compared without case there
        return sorted(Path(path) for path in found)
    # In the order of the paths' parts, as `sorted` orders POSIX `Path`s, on the strings:
    # sorting a thousand `Path`s costs more than making them.
    found.sort(key=lambda path: path.split(os.sep))
    return [Path(path) for path in found]


def is_post_path(
    path: Path,
    content_dir: Path,
    excluded: Excluded = _nothing,
    suffixes: tuple[str, ...] = MARKDOWN,
) -> bool:
    """Whether `path` (absolute) would be a post of `content_dir` (if it has a front matter)."""
    try:
        parts = path.relative_to(content_dir).parts
    except ValueError:
        return False
    if path.suffix not in suffixes or any(_hidden(part) for part in parts):
        return False
    return excluded is _nothing or not excluded("/".join(parts))


def _named_inside(named: Path, folders: tuple[str, ...]) -> bool:
    """Whether the name `named` (absolute) lies in one of `folders` by one of the folders
    on its way: the name itself with its folder resolved, or any folder above it."""
    place = os.path.join(os.path.realpath(named.parent), named.name)
    return localfiles.within(place, folders) or any(
        localfiles.within(os.path.realpath(parent), folders) for parent in named.parents
    )


def find_posts(
    content_dir: Path,
    paths: Iterable[str | Path] = (),
    folders: tuple[str, ...] = (),
    skipped: Skipped | None = None,
    excluded: Excluded = _nothing,
    suffixes: tuple[str, ...] = MARKDOWN,
    others: list[Path] | None = None,
) -> list[Path]:
    """The posts named by `paths` (files or folders), or all of `content_dir` when none.

    `folders` are the real paths a symlink may lead into (`localfiles.config_folders`;
    by default the content folder); what is refused goes to `skipped` when given. A path
    named outright is taken as named, unless it is a symlink from inside the project to
    outside it, or a file of the content folder that `excluded` leaves out. `others`, when
    given, gets the Markdown files of the folders walked that are not posts by their name.
    """
    folders = folders or localfiles.project_folders(content_dir)
    refused: Skipped = [] if skipped is None else skipped
    paths = list(paths)
    if not paths:
        if not content_dir.is_dir():
            raise ContentError(f"{content_dir}: the content folder does not exist")
        return walk_posts(
            content_dir, folders, refused, excluded=excluded, suffixes=suffixes, others=others
        )
    found: set[Path] = set()
    for given in paths:
        named = Path(os.path.abspath(given))
        path = named.resolve()
        if not localfiles.within(str(path), folders) and _named_inside(named, folders):
            # under the project by its name, out of it through a symlink on the way
            refused.append((named, localfiles.outside_message(str(named))))
            continue
        kind, _, reason = localfiles.classify_path(path, folders)
        if kind == localfiles.FOLDER:
            found.update(
                walk_posts(
                    path,
                    folders,
                    refused,
                    content_dir=content_dir,
                    excluded=excluded,
                    suffixes=suffixes,
                    others=others,
                )
            )
        elif kind == localfiles.FILE:
            relative = _relative(path, content_dir)
            if relative is None or excluded is _nothing or not excluded(relative):
                found.add(path)
        elif reason:
            refused.append((named, reason))
        else:
            raise ContentError(f"{given}: no such file or folder")
    return sorted(found)
