"""A post: one Markdown file with a YAML front matter block, parsed once.

python-frontmatter finds and loads the block (with libyaml when available); the line of
each key is worked out only when a problem has to be reported, so building a thousand
posts pays for one YAML parse each.
"""

from __future__ import annotations

import datetime as dt
import re
import unicodedata
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

import frontmatter
import yaml

from toolkit.content.problems import PostError, Problem

HANDLER = frontmatter.YAMLHandler()

# Front matter keys the publishing API honours, in the order toolkit writes them.
FOREM_KEYS = (
    "title",
    "published",
    "description",
    "tags",
    "canonical_url",
    "cover_image",
    "series",
    "date",
)
# Keys only toolkit reads; never sent to the API.
TOOLKIT_KEYS = ("premium", "slug", "organization_id")
KNOWN_KEYS = frozenset(FOREM_KEYS + TOOLKIT_KEYS)


def slugify(text: str) -> str:
    """`Hello, World!` -> `hello-world`; ASCII only, so it is safe in any URL."""
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    slug = re.sub(r"[^a-z0-9]+", "-", ascii_text.lower()).strip("-")
    return slug or "post"


def split_tags(value: Any) -> list[str]:
    """Tags as written (a list, or a comma-separated string), trimmed; not yet validated."""
    if value is None:
        return []
    items = value.split(",") if isinstance(value, str) else value
    if not isinstance(items, list):
        return [str(items)]
    return [str(item).strip() for item in items if str(item).strip()]


@dataclass
class Post:
    path: Path  # absolute path of the file
    key: str  # project-relative POSIX path: how the user, the lock and the log name it
    source: str  # the whole file
    meta: dict[str, Any]  # the front matter, as YAML loaded it ({} when there is none)
    body: str  # the Markdown after the front matter
    front_matter: str = ""  # the raw YAML text of the block
    front_matter_line: int = 1  # line of the file where the YAML text starts
    body_line: int = 1  # line of the file where the body starts
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
        return slugify(self.path.stem)

    @property
    def stem(self) -> str:
        return self.path.stem

    # -- where things are in the file --------------------------------------------------

    def line_of(self, key: str) -> int:
        """Line of a top-level front matter key; the block's first line when absent."""
        if self._lines is None:
            self._lines = _key_lines(self.front_matter, self.front_matter_line)
        return self._lines.get(key, max(self.front_matter_line - 1, 1))

    @cached_property
    def content_hash(self) -> str:
        import hashlib

        return hashlib.sha256(self.source.encode("utf-8")).hexdigest()


def parse_date(value: Any) -> dt.datetime | None:
    if isinstance(value, dt.datetime):
        return value if value.tzinfo else value.replace(tzinfo=dt.UTC)
    if isinstance(value, dt.date):
        return dt.datetime(value.year, value.month, value.day, tzinfo=dt.UTC)
    if isinstance(value, str) and value.strip():
        try:
            parsed = dt.datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
        except ValueError:
            return None
        return parsed if parsed.tzinfo else parsed.replace(tzinfo=dt.UTC)
    return None


def _key_lines(front_matter: str, first_line: int) -> dict[str, int]:
    try:
        node = yaml.compose(front_matter, Loader=yaml.SafeLoader)
    except yaml.YAMLError:
        return {}
    lines: dict[str, int] = {}
    if isinstance(node, yaml.MappingNode):
        for key_node, _ in node.value:
            if isinstance(key_node, yaml.ScalarNode):
                lines.setdefault(str(key_node.value), first_line + key_node.start_mark.line)
    return lines


def parse_post(path: Path, key: str, source: str) -> Post:
    """Parse a post's text; raise `PostError` (with the file line) when it cannot be used."""
    if source.startswith("\ufeff"):
        source = source[1:]
    if not HANDLER.detect(source):
        return Post(path=path, key=key, source=source, meta={}, body=source)
    boundaries = HANDLER.FM_BOUNDARY.finditer(source)
    opening = next(boundaries)
    closing = next(boundaries, None)
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
    try:
        meta = HANDLER.load(fm_text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
        line = fm_line + mark.line if mark is not None else fm_line
        reason = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise PostError(Problem(key, line, f"front matter: invalid YAML: {reason}")) from None
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


def load_post(path: Path, key: str) -> Post:
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise PostError(Problem(key, 1, f"cannot read the file: {exc.strerror}")) from None
    return post_from_bytes(path, key, data)


def post_from_bytes(path: Path, key: str, data: bytes) -> Post:
    """A post from the bytes of its file (for callers that also digest those bytes)."""
    try:
        source = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise PostError(Problem(key, line, "not valid UTF-8 text")) from None
    return parse_post(path, key, source.replace("\r\n", "\n"))
