"""The content model: finding posts, parsing them, checking them, and their API payload.

Importing the package loads `problems` and `discover`, not YAML: a site build with
nothing to do uses `ProblemList` and must not pay for YAML. The parts that read posts are
imported on first use (`Post`, `Payload` and `load_post` through the module's
`__getattr__`).
"""

from __future__ import annotations

import importlib
import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from toolkit.content.discover import excluded_by, find_posts, post_suffixes, reading_key
from toolkit.content.problems import PostError, Problem, ProblemList, Severity
from toolkit.localfiles import config_folders
from toolkit.redact import quoted

if TYPE_CHECKING:  # pragma: no cover
    from collections.abc import Iterable
    from pathlib import Path

    from toolkit.config import Config
    from toolkit.content.bodies import SourceBodies
    from toolkit.content.payload import Payload
    from toolkit.content.post import Post, load_post

__all__ = [
    "CheckReport",
    "Payload",
    "Post",
    "PostError",
    "Problem",
    "Severity",
    "check",
    "load_post",
    "load_posts",
    "load_project_post",
    "payload_for",
]

# Re-exported names -> the submodule that defines them (which loads YAML).
_ON_USE = {"Payload": "payload", "Post": "post", "load_post": "post"}

if not TYPE_CHECKING:  # for mypy, the names are the ones imported above

    def __getattr__(name: str) -> Any:
        module = _ON_USE.get(name)
        if module is None:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        return getattr(importlib.import_module(f"{__name__}.{module}"), name)


NOT_A_POST = (
    "not a post: no front matter (a --- block with a title) at its top; left out "
    "(add one to make it a post)"
)
MISNAMED = "not a post: posts are `.md` files; left out (rename it to {name} to make it a post)"


@dataclass
class CheckReport(ProblemList):
    posts: list[Post] = field(default_factory=list)  # the posts that could be parsed
    problems: list[Problem] = field(default_factory=list)
    files: int = 0  # how many files were looked at


def _foreign_writer(config: Config, path: Path) -> str | None:
    """Why the post at `path` is refused when it is a symlink into another writer's folder
    (it would reach dev.to with the key of a writer who did not write it), or None."""
    if config.writers is None or not path.is_symlink():
        return None
    from toolkit.content.accounts import writer_folder

    content = config.site.content_dir
    real_content = os.path.realpath(content)

    def writer_of(place: str) -> str | None:  # the writer of a real path, if any
        inside = os.path.relpath(place, real_content)
        return None if inside.startswith("..") else writer_folder(config, content / inside)

    named = writer_of(os.path.join(os.path.realpath(path.parent), path.name))
    real = writer_of(os.path.realpath(path))
    if named == real:
        return None
    owner = f"{quoted(real, 100)}/" if real is not None else "outside the writers' folders"
    return (
        f"a symlink to a post of {owner}: it is refused, never published with the key "
        "of the folder holding the link (move the post, or publish it from its folder)"
    )


def load_posts(
    config: Config, paths: Iterable[str | Path] = ()
) -> tuple[list[Post], list[Problem]]:
    """Parse the posts; a post that cannot be parsed becomes a problem, the rest go on.
    Files skipped unread (a symlink leading outside the project, a FIFO) are warnings; a
    Markdown file without a front matter is not a post, said once as a note, and so is
    one named `.MD` or `.markdown`."""
    from toolkit.content.post import load_post
    from toolkit.content.sources import reader

    posts: list[Post] = []
    problems: list[Problem] = []
    skipped: list[tuple[Path, str]] = []
    misnamed: list[Path] = []
    found = find_posts(
        config.site.content_dir,
        paths,
        config_folders(config),
        skipped,
        excluded_by(config),
        suffixes=post_suffixes(config),
        others=misnamed,
    )
    read = reader(config)
    for path in found:
        foreign = _foreign_writer(config, path)
        if foreign is not None:
            problems.append(Problem(config.relative(path), 1, foreign, Severity.ERROR))
            continue
        try:
            post = load_post(path, config.relative(path))
        except PostError as exc:
            problems.append(exc.problem)
            continue
        if post.has_front_matter:
            post = read(post)
            if post.reading is not None:
                problems += post.reading.problems
            posts.append(post)
        else:
            problems.append(Problem(post.key, 1, NOT_A_POST, Severity.NOTE))
    problems += [
        Problem(config.relative(path), 1, reason, Severity.WARNING) for path, reason in skipped
    ]
    problems += [
        Problem(
            config.relative(path),
            1,
            MISNAMED.format(name=quoted(path.stem + ".md", 100)),
            Severity.NOTE,
        )
        for path in misnamed
    ]
    return posts, problems


def load_project_post(config: Config, path: Path, key: str) -> Post:
    """One post of the project as `publish` reads it: parsed, then read for the generator
    `[source]` names (`sources.read_post`); `PostError` when it cannot be parsed."""
    from toolkit.content.post import load_post
    from toolkit.content.sources import reader

    return reader(config)(load_post(path, key))


def check(config: Config, paths: Iterable[str | Path] = ()) -> CheckReport:
    """Every problem of the posts named (all of `content/` by default), offline.

    Titles, slugs and canonical URLs must be unique across the whole content folder, so
    those rules always look at every post even when only some were named (the others
    through `unique_index`, which parses a post again only when its file changed).
    """
    from toolkit.content.hosting import canonical_home, image_host
    from toolkit.content.rules import validate_posts
    from toolkit.content.unique_index import KnownPost, known_posts

    paths = list(paths)
    posts, problems = load_posts(config, paths)
    others: list[KnownPost] = []
    if paths and config.site.content_dir.is_dir():
        # The other posts' titles, slugs and canonical URLs, parsed only when changed.
        named = {p.path for p in posts}
        rest = [
            (path, config.relative(path))
            for path in find_posts(
                config.site.content_dir,
                (),
                config_folders(config),
                None,
                excluded_by(config),
                post_suffixes(config),
            )
            if path not in named
        ]
        from toolkit.content.sources import reader

        others = known_posts(config.state_dir, rest, reader(config), reading_key(config))
    problems += validate_posts(
        posts,
        config.site.content_dir,
        image_host=image_host(config),
        canonical_home=canonical_home(config),
        others=others,
        bodies=bodies_of(config),
    )
    from toolkit.content.dates import series_notes

    problems += series_notes(posts, config)
    problems = _kept_home(posts, _waiting(posts, problems))
    unparsed = {p.path for p in problems if p.is_error} - {p.key for p in posts}
    return CheckReport(posts=posts, problems=sorted(problems), files=len(posts) + len(unparsed))


def _waiting(posts: list[Post], problems: list[Problem]) -> list[Problem]:
    """Without the future date of a post that waits for it (`[source]`: sent by the first
    publish after it, never before): the API never sees that date in the future."""
    from toolkit.content.rules import FUTURE

    waiting = {
        (post.key, post.line_of("date"))
        for post in posts
        if post.reading is not None and post.reading.waits
    }
    if not waiting:
        return problems
    return [p for p in problems if not ((p.path, p.line) in waiting and p.message.endswith(FUTURE))]


def _kept_home(posts: list[Post], problems: list[Problem]) -> list[Problem]:
    """The errors of a post the writer keeps off dev.to for good (a draft of their site, a
    skip key) as warnings: they are the publishing API's, and it is never sent."""
    held = {
        post.key: post.held
        for post in posts
        if post.held and post.reading is not None and not post.reading.waits
    }
    if not held:
        return problems
    return [
        Problem(
            p.path, p.line, f"{p.message} (never sent: {held[p.path]})", Severity.WARNING, p.kind
        )
        if p.is_error and p.path in held
        else p
        for p in problems
    ]


def payload_for(post: Post, config: Config) -> Payload:
    from toolkit.content.hosting import canonical_home, image_host
    from toolkit.content.payload import build_payload

    return build_payload(
        post,
        config.site.content_dir,
        canonical_home=canonical_home(config),
        assets_base_url=image_host(config).base_url,
        # `[forem] organization` (looked up by the publish) wins over organization_id.
        organization_id=config.forem.organization_id if config.forem.organization is None else None,
        bodies=bodies_of(config),
    )


_BODIES: list[tuple[Config, SourceBodies | None]] = []  # the last project's, reused


def bodies_of(config: Config) -> SourceBodies | None:
    """The project's `bodies.SourceBodies` (None for dev.to-style posts), made once per
    config: its index of post names is read once however many posts name others."""
    if config.source.generator == "devto":
        return None
    if _BODIES and _BODIES[0][0] is config:
        return _BODIES[0][1]
    from toolkit.content.bodies import source_bodies

    made = source_bodies(config)
    _BODIES[:] = [(config, made)]
    return made
