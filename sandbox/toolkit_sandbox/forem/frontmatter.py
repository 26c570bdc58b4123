"""The API's reading of a front matter block in `body_markdown` (reference/NOTES.md).

Forem first "fixes" the Markdown (quotes around an unquoted `title` and `description`,
CRLF -> LF, `#tag` lists to commas), then loads the block with Ruby's
`YAML.safe_load`: no aliases, no classes beyond strings, numbers, booleans, nil,
lists and maps. An unquoted date (`date: 2021-01-01`) is therefore an error
("Tried to load unspecified class: Date"), and a YAML syntax error comes back as a
422 with the parser's message. Both are reproduced here with PyYAML.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass, field
from typing import Any, TypeGuard, TypeVar

import yaml


class FrontMatterError(ValueError):
    """The block cannot be read; the message is what the API answers in its 422."""


@dataclass
class Parsed:
    front_matter: dict[str, Any] = field(default_factory=dict)
    content: str = ""  # the body without its front matter block


_BLOCK = re.compile(r"\A---[ \t]*\n(?:(.*?)\n)?---[ \t]*(?:\n|\Z)", re.DOTALL)
_FIRST_BLOCK = re.compile(r"-{3}.*?-{3}", re.DOTALL)


def _quote_section(markdown: str, section: str) -> str:
    """Forem's `add_quotes_to_section`: wrap an unquoted value in double quotes, so
    `title: Episode 2: the sequel` stays one string. Its pattern is not anchored to a
    line's start, as Forem's is not: `section: ` anywhere in the block (in another key's
    value, in a key such as `subtitle:`) is wrapped to its line's end, which can break
    the YAML (`title: 'A description: b'` becomes `title: 'A description: "b'"`)."""
    line = re.compile(rf"{section}: ?(.*?)(?:\r\n|\n)", re.DOTALL)

    def quote(match: re.Match[str]) -> str:
        value = match.group(1)
        if re.fullmatch(r'".*"|\'.*\'', value):
            return match.group(0)
        escaped = re.sub(r'(?<!\\)"', r'\\"', value)
        return f'{section}: "{escaped}"\n'

    return _FIRST_BLOCK.sub(lambda block: line.sub(quote, block.group(0)), markdown, count=1)


def fix(markdown: str) -> str:
    """Forem's MarkdownFixer, as far as it changes how the front matter reads."""
    text = _quote_section(markdown, "title")  # in the order of Forem's FixAll
    text = _quote_section(text, "description")
    text = _FIRST_BLOCK.sub(
        lambda block: re.sub(r"(?im)^published: ", "published: ", block.group(0)), text, count=1
    )
    text = text.replace("\r\n", "\n")
    # `tags: #a #b` -> `tags: a,b`
    text = re.sub(
        r"\ntags:.*\n",
        lambda m: ",".join(m.group(0).split(" #")).replace("#", "").replace(":,", ": "),
        text,
        count=1,
    )
    return text


class _SafeLoader(yaml.SafeLoader):
    """`safe_load` as Ruby's Psych does it: aliases are refused."""

    def compose_node(self, parent: yaml.Node | None, index: int) -> yaml.Node | None:
        if self.check_event(yaml.AliasEvent):
            raise FrontMatterError(
                "Alias parsing was not enabled. To enable it, pass `aliases: true` to "
                "`Psych::load` or `Psych::safe_load`."
            )
        return super().compose_node(parent, index)


def _reject_classes(value: Any) -> None:
    """Psych's safe_load allows no Date or Time; PyYAML builds them from unquoted
    timestamps, so find them and fail the way the API fails."""
    if isinstance(value, dt.datetime):
        raise FrontMatterError("Tried to load unspecified class: Time")
    if isinstance(value, dt.date):
        raise FrontMatterError("Tried to load unspecified class: Date")
    if isinstance(value, dict):
        for key, item in value.items():
            _reject_classes(key)
            _reject_classes(item)
    elif isinstance(value, list):
        for item in value:
            _reject_classes(item)


def _yaml_message(exc: yaml.YAMLError) -> str:
    if isinstance(exc, yaml.MarkedYAMLError):
        mark = exc.problem_mark or exc.context_mark
        problem = " ".join(part for part in (exc.problem, exc.context) if part)
        if mark is not None:
            return f"(<unknown>): {problem} at line {mark.line + 1} column {mark.column + 1}"
        return f"(<unknown>): {problem}"
    return f"(<unknown>): {exc}"


def parse(body_markdown: str) -> Parsed:
    """Split `body_markdown` into its front matter (a dict, maybe empty) and content.

    Raises FrontMatterError with the API's message when the block cannot be read.
    """
    text = fix(body_markdown)
    match = _BLOCK.match(text)
    if match is None:
        return Parsed({}, text)
    block, content = match.group(1) or "", text[match.end() :]
    try:
        data = yaml.load(block, Loader=_SafeLoader)  # a SafeLoader subclass
    except yaml.YAMLError as exc:
        raise FrontMatterError(_yaml_message(exc)) from None
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise FrontMatterError("front matter must be a YAML mapping of keys to values")
    _reject_classes(data)
    return Parsed({str(key): value for key, value in data.items()}, content)


T = TypeVar("T")


def present(value: T | None) -> TypeGuard[T]:
    """Ruby's `present?`: not nil, not false, not an empty or blank string/collection.
    (So a value that is present is not None.)"""
    if value is None or value is False:
        return False
    if isinstance(value, str):
        return bool(value.strip())
    if isinstance(value, list | dict):
        return bool(value)
    return True


def tag_names(value: Any) -> list[str]:
    """Tags as given (a list, or a comma-separated string), lower-cased and trimmed,
    the way acts-as-taggable-on parses them; not yet validated."""
    if value is None or value is False:
        return []
    items = value.split(",") if isinstance(value, str) else value
    if not isinstance(items, list):
        items = [items]
    names: list[str] = []
    for item in items:
        parts = item.split(",") if isinstance(item, str) else [str(item)]
        for part in parts:
            name = part.strip().lower()
            if name and name not in names:
                names.append(name)
    return names
