"""A front matter block read within limits: YAML through `FrontMatterLoader` (the
handler python-frontmatter calls, `PostHandler`), TOML through `tomllib`, and the line of
each top-level key for a problem's `path:line`.

A post file comes from anyone who can open a pull request, so reading it is bounded: at
most `MAX_FRONT_MATTER_CHARS` of front matter, nesting at most `MAX_DEPTH` deep, aliases
expanding to at most `MAX_EXPANDED` characters and values, no explicit tags but the plain
scalar ones (`ALLOWED_TAGS`). Anything else is a `yaml.YAMLError` (`FrontMatterRefused`
when the text is YAML but toolkit will not use it).
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Callable
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


def key_lines(front_matter: str, first_line: int) -> dict[str, int]:
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


def toml_key_lines(front_matter: str, first_line: int) -> dict[str, int]:
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

    try:
        return tomllib.loads(text)
    except RecursionError:
        raise ValueError("nested too deeply") from None
