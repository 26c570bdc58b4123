"""Front matter that is valid YAML but does not say what its writer meant.

YAML reads a stray quote or a value broken over two lines without complaint, and the
post would go out wrong:

- `title: 'A Guide to Enhancing QA'` then, on the next line, `s Understanding of UX/UI:
  Tips and Insights'`: the title is cut, and the rest is a key holding spaces;
- `components. cover_image: ./assets/cover.png` under a `description:`: the text is a
  key glued to the end of the description, and the post has no cover;
- a quote left open (`title: 'Hello`) that closes only lines further down: the keys in
  between are read as part of the title.

Each is an error at its line, with the likely fix. A key written the way keys are
written (`heroImage`, `pubDate`, `devto_id`, `og:image`) is never one of them: an unknown
key is a warning of `rules.validate_post`. A key in quotes is written on purpose.

Most posts pay for one look at their keys and one regular expression over the block;
the YAML is composed again (for lines and quoting) only when one of them is suspect.
"""

from __future__ import annotations

import re

import yaml

from toolkit.content.fields import KNOWN_KEYS
from toolkit.content.front_matter import compose_front_matter
from toolkit.content.post import Post
from toolkit.content.problems import Problem
from toolkit.redact import quoted

SHOWN = 60  # characters of a key shown in a message
# A key holding spaces, ending like a sentence, or holding a quote: text, not a key.
_TEXT_KEY = re.compile(r"\s|[.,;!?]$|['\"]")
# A line at the left margin written like a key: `name:` then a space or the end.
_KEY_LINE = re.compile(r"^([A-Za-z_][\w-]*):(?:[ \t]|$)", re.MULTILINE)


def text_key(key: str) -> bool:
    """Whether a plain key reads like text rather than like a key."""
    return bool(_TEXT_KEY.search(key))


# `_TEXT_KEY` over every key at once, joined by NUL (which no key of a parsed post holds).
_TEXT_KEYS = re.compile(r"\s|[.,;!?](?:\x00|$)|['\"]")


def _suspect(post: Post) -> bool:
    """Whether the block may hold one of the cases: cheap, on what YAML gave (one search
    over the keys, one over the block's lines)."""
    if _TEXT_KEYS.search("\x00".join(k for k in post.meta if isinstance(k, str))):
        return True
    return not set(_KEY_LINE.findall(post.front_matter)) <= post.meta.keys()


def misread(post: Post) -> list[Problem]:
    """The problems of a front matter YAML reads otherwise than its writer meant."""
    if not post.front_matter or post.toml or not _suspect(post):  # TOML reads as written
        return []
    try:
        node = compose_front_matter(post.front_matter)
    except (yaml.YAMLError, RecursionError):  # pragma: no cover - parsed before
        return []
    if not isinstance(node, yaml.MappingNode):
        return []
    first = post.front_matter_line
    lines = post.front_matter.splitlines()
    problems: list[Problem] = []
    previous: tuple[str, int] | None = None  # the key before, and its line
    for key_node, value_node in node.value:
        if not isinstance(key_node, yaml.ScalarNode):
            previous = None
            continue
        key, line = str(key_node.value), first + key_node.start_mark.line
        if not key_node.style and text_key(key):  # plain: None, or "" from libyaml
            problems.append(Problem(post.key, line, _text_key_message(key, previous)))
        if isinstance(value_node, yaml.ScalarNode) and value_node.style in ("'", '"'):
            swallowed = _swallowed(lines, value_node)
            if swallowed:
                problems.append(
                    Problem(post.key, line, _open_quote_message(key, value_node, swallowed, first))
                )
        previous = (key, line)
    return problems


def _text_key_message(key: str, previous: tuple[str, int] | None) -> str:
    shown = quoted(key, SHOWN)
    why = "it holds spaces" if re.search(r"\s", key) else "it reads like text"
    if previous is None:
        return (
            f"front matter: {shown} is read as a key, but {why}; if it is one, write it "
            'in quotes ("a key": ...)'
        )
    before, before_line = quoted(previous[0], SHOWN, marks=False), previous[1]
    words = key.split()
    glued = words[-1] if len(words) > 1 else ""
    # A key toolkit knows after text, and no word of prose (it holds `_`, or a sentence
    # ends before it).
    if glued in KNOWN_KEYS and ("_" in glued or words[-2].endswith((".", "!", "?"))):
        return (
            f"front matter: {shown} is read as one key ({why}): the text before {glued} "
            f"continues {before} (line {before_line}), and this {glued} is not read; put "
            f"{glued}: at the start of a line of its own"
        )
    return (
        f"front matter: {shown} is read as a key ({why}), so {before} (line {before_line}) "
        f"stops before this line; write the whole of {before} on one line, in double "
        f'quotes ({before}: "..."), or, if this is a key, put it in quotes'
    )


def _swallowed(lines: list[str], value: yaml.ScalarNode) -> list[str]:
    """The keys, at the left margin, that a quoted value runs over."""
    start, end = value.start_mark.line, value.end_mark.line
    keys = []
    for index in range(start + 1, min(end, len(lines) - 1) + 1):
        match = _KEY_LINE.match(lines[index])
        if match:
            keys.append(match[1])
    return keys


def _open_quote_message(key: str, value: yaml.ScalarNode, keys: list[str], first: int) -> str:
    mark = value.style or "'"
    named = ", ".join(quoted(k, SHOWN, marks=False) for k in keys[:3])
    more = ", ..." if len(keys) > 3 else ""
    inside = "''" if mark == "'" else '\\"'
    return (
        f"front matter: {quoted(key, SHOWN, marks=False)}: the {mark} opened here closes only "
        f"on line {first + value.end_mark.line}, so {named}{more} "
        f"{'is' if len(keys) == 1 else 'are'} read as part of its text; close the quote on "
        f"this line (a {mark} inside is written {inside})"
    )
