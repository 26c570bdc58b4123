"""A post: one Markdown file with a front matter block, parsed once.

The block is YAML between `---` lines or TOML between `+++` lines. The YAML one is read
through python-frontmatter's handler API: `PostHandler` (`toolkit.content.front_matter`), a
`frontmatter.YAMLHandler`, finds it with the handler's own boundary (`FM_BOUNDARY`) and
loads it with `FrontMatterLoader`, toolkit's bounded safe loader (with libyaml's parser when
available). `parse_post` places the boundaries itself rather than through
`frontmatter.loads`, which strips the text (its lines would no longer be the file's) and
splits without the positions a problem's `path:line` needs. The line of each key is worked out only when a problem has to be
reported, so building a thousand posts pays for one YAML parse each.

A post file comes from anyone who can open a pull request, so reading it is bounded: at
most `MAX_FILE_BYTES` per file, and its front matter within the limits of
`toolkit.content.front_matter`. Anything else, and any value YAML accepts but Python
cannot hold (`date: 2024-02-30`), is a `PostError` with its line.
"""

from __future__ import annotations

import datetime as dt
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from toolkit import localfiles
from toolkit.content.fields import parse_date, slugify, split_tags
from toolkit.content.front_matter import (
    HANDLER,
    MAX_DEPTH,
    MAX_FRONT_MATTER_CHARS,
    TOML_BOUNDARY,
    FrontMatterRefused,
    key_lines,
    load_toml_front_matter,
    started_at,
    toml_key_lines,
)
from toolkit.content.front_matter_hints import colon_hint, glued_hint, quote_hint
from toolkit.content.problems import PostError, Problem

MAX_FILE_BYTES = 8 * 1024 * 1024  # a post file; larger ones are not read at all


@dataclass(frozen=True)
class Reading:
    """How a post's front matter was read for dev.to, when it was written for another
    generator (`toolkit.content.sources` reads it)."""

    generator: str
    origins: dict[str, str] = field(default_factory=dict)  # field -> the key it came from
    held: str | None = None  # why the post is never sent, when it is not
    article_ref: str | None = None  # a dev.to slug or address naming its article
    ref_key: str | None = None  # the key that holds it
    opted_in: bool = False  # `crosspost: true`: sent though it predates the adoption
    waits: bool = False  # held only until its date: its problems still matter
    problems: tuple[Problem, ...] = ()
    unrendered: bool = False  # the generator writes no page for it: a draft on any site


@dataclass
class Post:
    path: Path  # absolute path of the file
    key: str  # project-relative POSIX path: how the user, the lock and the log name it
    source: str  # the whole file
    meta: dict[str, Any]  # the front matter, as YAML loaded it ({} when there is none)
    body: str  # the Markdown after the front matter
    front_matter: str = ""  # the raw text of the block (YAML, or TOML between +++ lines)
    front_matter_line: int = 1  # line of the file where the YAML text starts
    body_line: int = 1  # line of the file where the body starts
    # False for a Markdown file with no front matter block: not a post (a code sample's
    # README, notes); `toolkit check` says so once and everything else leaves it out.
    has_front_matter: bool = True
    # Written for another generator (`toolkit.content.sources`): how `meta` was read from
    # the front matter as written, and the written key of each field `meta` names.
    reading: Reading | None = field(default=None, repr=False)
    aliases: dict[str, str] = field(default_factory=dict, repr=False)
    toml: bool = False  # the block is TOML between `+++` lines (Hugo's), not YAML
    _lines: dict[str, int] | None = field(default=None, repr=False)

    # -- the front matter, read leniently; `rules.validate_post` says what is wrong ----

    @property
    def title(self) -> str:
        value = self.meta.get("title")
        return value.strip() if isinstance(value, str) else ""

    @property
    def published(self) -> bool:
        return self.meta.get("published") is True

    @property
    def premium(self) -> bool:
        return self.meta.get("premium") is True

    @property
    def pinned(self) -> bool:
        return self.meta.get("pinned") is True

    @property
    def tags(self) -> list[str]:
        seen: list[str] = []
        for tag in split_tags(self.meta.get("tags")):
            if tag.lower() not in seen:
                seen.append(tag.lower())
        return seen

    @property
    def description(self) -> str:
        value = self.meta.get("description")
        return value if isinstance(value, str) else ""

    @property
    def series(self) -> str | None:
        value = self.meta.get("series")
        return value if isinstance(value, str) and value.strip() else None

    @property
    def canonical_url(self) -> str | None:
        value = self.meta.get("canonical_url")
        return value if isinstance(value, str) and value.strip() else None

    @property
    def cover_image(self) -> str | None:
        value = self.meta.get("cover_image")
        return value if isinstance(value, str) and value.strip() else None

    @property
    def article_id(self) -> int | None:
        """The `id:` of the front matter (devto-cli's binding to an article), when valid."""
        value = self.meta.get("id")
        valid = isinstance(value, int) and not isinstance(value, bool) and value > 0
        return value if valid else None

    @property
    def organization_id(self) -> int | None:
        value = self.meta.get("organization_id")
        return value if isinstance(value, int) and not isinstance(value, bool) else None

    @property
    def date(self) -> dt.datetime | None:
        """The `date` key as an aware datetime (UTC when no offset was written)."""
        return parse_date(self.meta.get("date"))

    @property
    def slug(self) -> str:
        value = self.meta.get("slug")
        if isinstance(value, str) and value.strip():
            return value.strip()
        if self.path.stem == "index" and self.path.parent.name:  # a page bundle: its folder
            return slugify(self.path.parent.name)
        return slugify(self.path.stem)

    @property
    def held(self) -> str | None:
        """Why the post is never sent to the publishing API (a draft of the writer's site,
        a skip key, a date still to come), or None."""
        return self.reading.held if self.reading is not None else None

    @property
    def stem(self) -> str:
        return self.path.stem

    # -- where things are in the file --------------------------------------------------

    def key_named(self, name: str) -> str:
        """The front-matter key `name` was read from (`devtoId` for `id` in a Hugo post)."""
        return self.aliases.get(name, name)

    def line_of(self, key: str) -> int:
        """Line of a top-level front matter key; the block's first line when absent."""
        if self._lines is None:
            self._lines = (
                toml_key_lines(self.front_matter, self.front_matter_line)
                if self.toml
                else key_lines(self.front_matter, self.front_matter_line)
            )
        key = self.aliases.get(key, key)
        return self._lines.get(key, max(self.front_matter_line - 1, 1))


def _parse_toml(path: Path, key: str, source: str, opening: re.Match[str]) -> Post:
    """A post whose front matter is TOML between `+++` lines (Hugo's own form)."""
    closing = TOML_BOUNDARY.search(source, opening.end())
    if closing is None:
        raise PostError(Problem(key, 1, "front matter: the opening +++ has no closing +++"))
    fm_text = source[opening.end() : closing.start()].removeprefix("\n")
    body_start = closing.end()
    if source.startswith("\n", body_start):
        body_start += 1
    if len(fm_text) > MAX_FRONT_MATTER_CHARS:
        raise PostError(
            Problem(
                key,
                2,
                f"front matter: longer than {MAX_FRONT_MATTER_CHARS // 1024} KB, "
                "the most toolkit reads (is a closing +++ missing?)",
            )
        )
    try:
        meta = load_toml_front_matter(fm_text)
    except ValueError as exc:
        reason = str(exc).splitlines()[0] if str(exc) else "unreadable"
        at = re.search(r"\(at line (\d+)", reason)
        if at is not None:
            line = 1 + int(at.group(1))
        else:  # "at end of document": the block's last line
            line = 1 + max(len(fm_text.rstrip("\n").split("\n")), 1)
        raise PostError(Problem(key, line, f"front matter: invalid TOML: {reason}")) from None
    return Post(
        path=path,
        key=key,
        source=source,
        meta={str(k): v for k, v in meta.items()},
        body=source[body_start:],
        front_matter=fm_text,
        front_matter_line=2,
        body_line=source.count("\n", 0, body_start) + 1,
        toml=True,
    )


def parse_post(path: Path, key: str, source: str) -> Post:
    """Parse a post's text; raise `PostError` (with the file line) when it cannot be used."""
    if source.startswith("\ufeff"):
        source = source[1:]
    opening = HANDLER.FM_BOUNDARY.match(source)
    if opening is None and (toml := TOML_BOUNDARY.match(source)) is not None:
        return _parse_toml(path, key, source, toml)
    if opening is None:
        return Post(path=path, key=key, source=source, meta={}, body=source, has_front_matter=False)
    closing = HANDLER.FM_BOUNDARY.search(source, opening.end())
    if closing is None:
        raise PostError(Problem(key, 1, "front matter: the opening --- has no closing ---"))
    fm_text = source[opening.end() : closing.start()]
    fm_line = source.count("\n", 0, opening.end()) + 1
    if fm_text.startswith("\n"):  # the boundary match may stop before its newline
        fm_text, fm_line = fm_text[1:], fm_line + 1
    body_start = closing.end()
    if source.startswith("\n", body_start):
        body_start += 1
    body_line = source.count("\n", 0, body_start) + 1
    if len(fm_text) > MAX_FRONT_MATTER_CHARS:
        raise PostError(
            Problem(
                key,
                fm_line,
                f"front matter: longer than {MAX_FRONT_MATTER_CHARS // 1024} KB, "
                "the most toolkit reads (is a closing --- missing?)",
            )
        )
    try:
        meta = HANDLER.load(fm_text)
    except FrontMatterRefused as exc:
        line = fm_line + exc.problem_mark.line if exc.problem_mark is not None else fm_line
        raise PostError(Problem(key, line, f"front matter: {exc.problem}")) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
        line = fm_line + mark.line if mark is not None else fm_line
        reason = getattr(exc, "problem", None) or (str(exc).splitlines() or ["unreadable"])[0]
        if "nesting depth" in reason:  # libyaml's own limit, far above ours, met first
            # when its scanner reads ahead of the events (`[[[[...`)
            raise PostError(
                Problem(key, line, f"front matter: nested more than {MAX_DEPTH} levels deep")
            ) from None
        hint = ""  # after where the construct started
        if "mapping values are not allowed" in reason and mark is not None:
            reason += glued_hint(fm_text, mark.line, mark.column) or colon_hint(fm_text, mark.line)
        elif mark is not None:
            hint = quote_hint(fm_text, mark.line)
        context = getattr(exc, "context", None)
        if isinstance(context, str) and "quoted scalar" in context and "end of stream" in reason:
            hint = "; that quote is never closed (inside '...', a ' is written '')"
        reason += started_at(exc, fm_line, line) + hint
        raise PostError(Problem(key, line, f"front matter: invalid YAML: {reason}")) from None
    except RecursionError:  # pragma: no cover - MAX_DEPTH keeps the composer shallow
        raise PostError(Problem(key, fm_line, "front matter: nested too deeply")) from None
    if meta is None:
        meta = {}
    if not isinstance(meta, dict):
        raise PostError(Problem(key, fm_line, "front matter: must be a mapping of keys to values"))
    meta = {str(k): v for k, v in meta.items()}
    return Post(
        path=path,
        key=key,
        source=source,
        meta=meta,
        body=source[body_start:],
        front_matter=fm_text,
        front_matter_line=fm_line,
        body_line=body_line,
    )


def read_post_file(path: Path | str, key: str) -> tuple[os.stat_result, bytes]:
    """The stat and bytes of a post file, or `PostError`: a file larger than
    `MAX_FILE_BYTES` is refused before it is read, and one that is not a regular file
    (a FIFO, a device) is never waited on."""
    try:
        return localfiles.read_regular(path, MAX_FILE_BYTES)
    except localfiles.TooLarge as exc:
        raise PostError(_too_large(key, exc.size)) from None
    except localfiles.NotRegularFile as exc:
        raise PostError(Problem(key, 1, f"not a regular file ({exc.kind}), skipped")) from None
    except OSError as exc:
        reason = exc.strerror or str(exc)
        raise PostError(Problem(key, 1, f"cannot read the file: {reason}")) from None


def _too_large(key: str, size: int) -> Problem:
    return Problem(
        key,
        1,
        f"the file is {size / 1024 / 1024:.1f} MB; toolkit reads posts of "
        f"at most {MAX_FILE_BYTES // 1024 // 1024} MB (and the API takes 800 KB)",
    )


def load_post(path: Path, key: str) -> Post:
    _, data = read_post_file(path, key)
    return post_from_bytes(path, key, data)


def post_from_bytes(path: Path, key: str, data: bytes) -> Post:
    """A post from the bytes of its file (for callers that also digest those bytes)."""
    if len(data) > MAX_FILE_BYTES:
        raise PostError(_too_large(key, len(data)))
    try:
        source = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise PostError(Problem(key, line, "not valid UTF-8 text")) from None
    return parse_post(path, key, source.replace("\r\n", "\n"))
