"""How to fix a YAML front matter that does not parse, when the mistake is a common one:
a value holding `: `, a key glued to the text before it, a quote ending a quoted value
early. Each hint is appended to the parser's own message ("" when it does not apply)."""

from __future__ import annotations

import json
import re

from toolkit.content.fields import KNOWN_KEYS
from toolkit.content.front_matter import SHOWN
from toolkit.redact import quoted


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
