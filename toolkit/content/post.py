"""A post: one Markdown file with a YAML front matter block, parsed once.

The block is read through python-frontmatter's handler API: `PostHandler`, a
`frontmatter.YAMLHandler`, finds it with the handler's own boundary (`FM_BOUNDARY`) and
loads it with `FrontMatterLoader`, toolkit's bounded safe loader (with libyaml's parser when
available). `parse_post` places the boundaries itself rather than through
`frontmatter.loads`, which strips the text (its lines would no longer be the file's) and
splits without the positions a problem's `path:line` needs. The line of each key is worked out only when a problem has to be
reported, so building a thousand posts pays for one YAML parse each.

A post file comes from anyone who can open a pull request, so reading it is bounded: at
most `MAX_FILE_BYTES` per file and `MAX_FRONT_MATTER_CHARS` of front matter, nesting at
most `MAX_DEPTH` deep, aliases expanding to at most `MAX_EXPANDED` characters and values,
no explicit tags but the plain scalar ones (`ALLOWED_TAGS`). Anything else, and any value
YAML accepts but Python cannot hold (`date: 2024-02-30`), is a `PostError` with its line.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml
from frontmatter.default_handlers import YAMLHandler
from yaml.composer import Composer
from yaml.constructor import SafeConstructor
from yaml.events import (
    AliasEvent,
    CollectionEndEvent,
    CollectionStartEvent,
    Event,
    ScalarEvent,
)
from yaml.nodes import Node, ScalarNode
from yaml.resolver import Resolver

from toolkit import localfiles
from toolkit.content.problems import PostError, Problem
from toolkit.redact import quoted

if TYPE_CHECKING:  # pragma: no cover
    from yaml._yaml import Mark as CMark

try:  # libyaml's parser: the same events, ten times faster
    from yaml._yaml import CParser as _CParser

    CParser: type[_CParser] | None = _CParser
except ImportError:  # pragma: no cover - PyYAML built without libyaml
    CParser = None

# Limits on what a post may hold (the API's own limit on a body, 800 KB, is a rule of
# `toolkit check`; these keep a hostile file from hanging or exhausting a run).
MAX_FILE_BYTES = 8 * 1024 * 1024  # a post file; larger ones are not read at all
SHOWN = 40  # characters of a value, a tag or an anchor shown in a message
MAX_FRONT_MATTER_CHARS = 64 * 1024  # the YAML text between the --- lines
MAX_DEPTH = 32  # lists and mappings inside each other
MAX_EXPANDED = 256 * 1024  # characters plus values, with every alias expanded
MAX_INT_BITS = 1024  # larger integers cannot even be printed in decimal by Python
_YAML = "tag:yaml.org,2002:"
# Explicit tags a front matter may use: they only say which plain scalar a value is.
ALLOWED_TAGS = frozenset(
    _YAML + name for name in ("str", "int", "float", "bool", "null", "timestamp")
)

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
# `pinned: true` lists the post first on the site's home page; `id` is the article the
# post is bound to, as devto-cli writes it (`toolkit.sync.remote` reads it).
# `crosspost: true` sends a post that predates `[source] adopted` (`toolkit.sync.adoption`).
TOOLKIT_KEYS = ("premium", "slug", "organization_id", "pinned", "id", "crosspost")
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
                _toml_key_lines(self.front_matter, self.front_matter_line)
                if self.toml
                else _key_lines(self.front_matter, self.front_matter_line)
            )
        key = self.aliases.get(key, key)
        return self._lines.get(key, max(self.front_matter_line - 1, 1))


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


def started_at(exc: yaml.YAMLError, fm_line: int, line: int) -> str:
    """Where the construct the parser was reading began, when that is another line than
    the one reported (an unclosed `[` on line 4 is noticed only on line 5):
    ` (in the flow sequence started on line 4)`."""
    context = getattr(exc, "context", None)
    mark = getattr(exc, "context_mark", None)
    if not isinstance(context, str) or mark is None or fm_line + mark.line == line:
        return ""
    what = context.removeprefix("while parsing ").removeprefix("while scanning ")
    what = what.removeprefix("an ").removeprefix("a ")
    return f" (in the {what} started on line {fm_line + mark.line})"


class FrontMatterRefused(yaml.MarkedYAMLError):
    """Front matter that is YAML but that toolkit will not use; `problem` says why."""

    def __init__(self, problem: str, mark: yaml.Mark | CMark | None):
        # The stubs take only PyYAML's own Mark; libyaml's events carry yaml._yaml.Mark,
        # which has the same line and column.
        super().__init__(problem=problem, problem_mark=mark)  # type: ignore[arg-type]


def _tag_name(tag: str) -> str:
    return quoted("!!" + tag[len(_YAML) :] if tag.startswith(_YAML) else tag, SHOWN, marks=False)


class _Open:
    """A list or mapping being read: its size so far (aliases expanded) and its anchor."""

    __slots__ = ("size", "anchor")

    def __init__(self, anchor: str | None):
        self.size = 1
        self.anchor = anchor


class FrontMatterLoader(yaml.SafeLoader):
    """PyYAML's safe loader with limits, fed by libyaml's parser when it is there.

    The limits are checked on the parser's events, before a node is composed: libyaml's
    own composer recurses in C and crashes the process on deep nesting, and expanding a
    "billion laughs" of aliases takes gigabytes, so both are refused while reading. The
    composer is PyYAML's (its recursion is bounded by `MAX_DEPTH`), the constructor the
    safe one, with every error of a value turned into a `FrontMatterRefused` at its line.
    """

    # With libyaml, the instance's own: the parser's methods, bound.
    check_event: Callable[..., bool]
    peek_event: Callable[[], Event | None]

    def __init__(self, text: str):
        self._next_event: Callable[[], Event | None]
        if CParser is not None:
            parser = CParser(text)
            # The composer's lookahead goes straight to libyaml; only `get_event`, which
            # every event passes through once, is watched.
            self.check_event = parser.check_event
            self.peek_event = parser.peek_event
            self._next_event = parser.get_event
            Composer.__init__(self)
            SafeConstructor.__init__(self)
            Resolver.__init__(self)
        else:  # pragma: no cover - PyYAML built without libyaml
            super().__init__(text)
            self._next_event = super().get_event
        self._open: list[_Open] = []  # the lists and mappings being read, innermost last
        self._sizes: dict[str, int | None] = {}  # anchor -> expanded size (None: still open)
        self._expanded = 0

    # -- events, with the limits ---------------------------------------------------------

    def get_event(self) -> Event | None:
        event = self._next_event()
        if isinstance(event, ScalarEvent):
            if event.tag is not None:
                self._check_tag(event, event.tag)
            size = 1 + len(event.value)
            if event.anchor is not None:
                self._sizes[event.anchor] = size
            self._grow(size, event)
        elif isinstance(event, CollectionStartEvent):  # a sequence or a mapping
            if event.tag is not None:
                self._check_tag(event, event.tag)
            if len(self._open) >= MAX_DEPTH:
                raise FrontMatterRefused(
                    f"nested more than {MAX_DEPTH} levels deep", event.start_mark
                )
            if event.anchor is not None:
                self._sizes[event.anchor] = None
            self._open.append(_Open(event.anchor))
            self._grow(0, event)
        elif isinstance(event, CollectionEndEvent):
            closed = self._open.pop()
            if closed.anchor is not None:
                self._sizes[closed.anchor] = closed.size
            if self._open:  # its size was counted as it was read
                self._open[-1].size += closed.size
        elif isinstance(event, AliasEvent):
            anchor = event.anchor or ""  # an alias always names its anchor
            expanded = self._sizes.get(anchor, 0)
            if expanded is None:
                raise FrontMatterRefused(
                    f"the alias *{quoted(anchor, SHOWN, marks=False)} refers to a value that contains it",
                    event.start_mark,
                )
            self._grow(expanded, event)
        return event

    @staticmethod
    def _check_tag(event: Event, tag: str) -> None:
        if tag != "!" and (tag not in ALLOWED_TAGS or not isinstance(event, ScalarEvent)):
            raise FrontMatterRefused(
                f"the tag {_tag_name(tag)} is not allowed (only the plain scalar tags "
                "!!str, !!int, !!float, !!bool, !!null and !!timestamp are)",
                event.start_mark,
            )

    def _grow(self, size: int, event: Event) -> None:
        """Count a value of `size` (a list or mapping just opened: 1) in the one it lies in."""
        if self._open and size:
            self._open[-1].size += size
        self._expanded += size or 1
        if self._expanded > MAX_EXPANDED:
            raise FrontMatterRefused(
                f"too large once its aliases are expanded (more than {MAX_EXPANDED // 1024} K "
                "characters and values); use fewer aliases",
                event.start_mark,
            )

    def dispose(self) -> None:
        if CParser is None:  # pragma: no cover
            super().dispose()

    # -- values --------------------------------------------------------------------------

    def construct_object(self, node: Node, deep: bool = False) -> Any:
        try:
            return super().construct_object(node, deep)
        except yaml.YAMLError:
            raise
        except Exception as exc:  # a value Python cannot hold, at its line
            value = (
                quoted(node.value, SHOWN, marks=False)
                if isinstance(node.value, str)
                else "this value"
            )
            what = (
                "a valid date"
                if node.tag == _YAML + "timestamp"
                else f"a valid {_tag_name(node.tag)}"
            )
            why = (
                f" ({quoted(str(exc), 2 * SHOWN, marks=False)})"
                if isinstance(exc, ValueError)
                else ""
            )
            raise FrontMatterRefused(f"{value} is not {what}{why}", node.start_mark) from None

    def construct_yaml_int(self, node: ScalarNode) -> int:
        value = super().construct_yaml_int(node)
        if value.bit_length() > MAX_INT_BITS:
            raise FrontMatterRefused("a number too large to use", node.start_mark)
        return value


FrontMatterLoader.add_constructor(_YAML + "int", FrontMatterLoader.construct_yaml_int)
# A lone `=` is text, not YAML 1.1's "default value" tag that no constructor knows.
FrontMatterLoader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag != _YAML + "value"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


def load_front_matter(text: str) -> Any:
    """The front matter's value, within the limits; `yaml.YAMLError` when not."""
    loader = FrontMatterLoader(text)
    try:
        return loader.get_single_data()
    finally:
        loader.dispose()


class PostHandler(YAMLHandler):
    """python-frontmatter's YAML handler, loading with `FrontMatterLoader` (bounded, safe).

    Its boundary (`FM_BOUNDARY`) is a line of three or more dashes: the opening one starts
    the file, the next one closes. `\\s*` may run over blank lines, so a match can stop
    before a newline (see `parse_post`)."""

    def load(self, fm: str, **kwargs: object) -> Any:
        """The front matter's value, within the limits; `yaml.YAMLError` when not."""
        return load_front_matter(fm)


HANDLER = PostHandler()


def compose_front_matter(text: str) -> yaml.Node | None:
    loader = FrontMatterLoader(text)
    try:
        return loader.get_single_node()
    finally:
        loader.dispose()


def _key_lines(front_matter: str, first_line: int) -> dict[str, int]:
    try:
        node = compose_front_matter(front_matter)
    except (yaml.YAMLError, RecursionError):
        return {}
    lines: dict[str, int] = {}
    if isinstance(node, yaml.MappingNode):
        for key_node, _ in node.value:
            if isinstance(key_node, yaml.ScalarNode):
                lines.setdefault(str(key_node.value), first_line + key_node.start_mark.line)
    return lines


# A top-level key of a TOML block: bare or quoted, before the first [table] header.
_TOML_KEY = re.compile(r"""^[ \t]*([A-Za-z0-9_-]+|"[^"\n]*"|'[^'\n]*')[ \t]*=""")
_TOML_TABLE = re.compile(r"^[ \t]*\[")
TOML_BOUNDARY = re.compile(r"^\+\+\+[ \t]*\r?$", re.MULTILINE)


def _toml_key_lines(front_matter: str, first_line: int) -> dict[str, int]:
    lines: dict[str, int] = {}
    for index, line in enumerate(front_matter.split("\n")):
        if _TOML_TABLE.match(line):
            break
        found = _TOML_KEY.match(line)
        if found is not None:
            lines.setdefault(found.group(1).strip("\"'"), first_line + index)
    return lines


def load_toml_front_matter(text: str) -> dict[str, Any]:
    """A TOML front matter block's value; `ValueError` when it cannot be read (a nesting
    too deep for the parser is one too)."""
    import tomllib

    try:
        return tomllib.loads(text)
    except RecursionError:
        raise ValueError("nested too deeply") from None


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


def colon_hint(front_matter: str, index: int) -> str:
    """How to fix the most common YAML mistake of a front matter: a value holding `: `
    (`title: Part 1: Setup`), which YAML reads as a second key. Quoting the value fixes it;
    the hint shows the line quoted ("" when line `index` is not such a line)."""
    lines = front_matter.splitlines()
    if not 0 <= index < len(lines):
        return ""
    name, _, value = lines[index].partition(":")
    value = value.strip()
    if not name.strip() or ": " not in value or value[0] in "\"'[{":
        return ""
    quoted = json.dumps(value, ensure_ascii=False)  # a valid YAML double-quoted string
    return f"; a value with ': ' in it must be quoted: {name.strip()}: {quoted}"


def glued_hint(front_matter: str, index: int, column: int) -> str:
    """How to fix a key glued to the text before it (`components. cover_image: ./c.png`):
    the word before the `:` YAML stopped at is a key toolkit knows, after other text, and
    not a word of prose (it holds `_`, or a sentence ends before it); the hint says to
    start a line with it ("" when that is not so)."""
    lines = front_matter.splitlines()
    if not 0 <= index < len(lines):
        return ""
    before = lines[index][:column].rstrip()
    words = before.split()
    if len(words) < 2 or words[-1] not in KNOWN_KEYS or before.lstrip().startswith(words[-1]):
        return ""
    key = words[-1]
    if "_" not in key and not words[-2].endswith((".", "!", "?")):
        return ""
    return f"; {key}: is glued to the text before it: put {key}: at the start of a line of its own"


_QUOTED_VALUE = re.compile(r"^\s*(?:- +)?([^\s:#'\"][^:#]*?):[ \t]+(['\"])(.*)$")


def _closing_quote(text: str, mark: str) -> int | None:
    """Where the value in quotes starting `text` closes: its first quote that is not
    doubled (`''`) or escaped (`\\"`); None when it is left open."""
    index = 1
    while index < len(text):
        char = text[index]
        if mark == '"' and char == "\\":
            index += 2
            continue
        if char == mark:
            if mark == "'" and text.startswith("''", index):
                index += 2
                continue
            return index
        index += 1
    return None


def quote_hint(front_matter: str, index: int) -> str:
    """How to fix a value in quotes that a quote inside it ends early (`title: 'QA's
    guide'`), which YAML reads as a value with text after it: the line with the value
    quoted the other way when its last character closes it, else how a quote is written
    inside quotes ("" when line `index` is not such a line)."""
    lines = front_matter.splitlines()
    if not 0 <= index < len(lines):
        return ""
    match = _QUOTED_VALUE.match(lines[index])
    if match is None:
        return ""
    name, mark, rest = match[1].strip(), match[2], match[3].rstrip()
    text = mark + rest
    closing = _closing_quote(text, mark)
    if closing is None or not text[closing + 1 :].strip():
        return ""  # left open, or closed at the end: not this mistake
    before = quoted(text[max(1, closing - 12) : closing], SHOWN)
    hint = f"; the {mark} after {before} ends the quoted value"
    value = text[1:-1]
    if text.endswith(mark) and value.isprintable() and name.isprintable():
        if mark == "'":
            fixed = json.dumps(value.replace("''", "'"), ensure_ascii=False)
            return f"{hint}; quote it with double quotes: {name}: {fixed}"
        if "\\" not in value:
            fixed = "'" + value.replace("'", "''") + "'"
            return f"{hint}; quote it with single quotes: {name}: {fixed}"
    inside = "''" if mark == "'" else '\\"'
    return f"{hint}; a {mark} inside {mark}...{mark} is written {inside}"


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
