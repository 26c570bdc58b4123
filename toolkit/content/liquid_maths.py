"""`{% katex %}...{% endkatex %}` (display) and `{% katex inline %}...{% endkatex %}`: TeX
in a post, found in its body (`find_maths`, code left out) and rendered to MathML when the
site is built (`mathml`, with latex2mathml): read from the post's source, so Markdown never
touches the TeX; a TeX error shows the source in a box, and `check` says which
(`liquid_scan`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from toolkit.content.liquid import Invalid, find_tags, prose

# `{% katex %}` (`{% katex inline %}` for inline) and its `{% endkatex %}`: the TeX is what
# lies between, over lines if need be.
KATEX_OPEN = re.compile(r"\{%-?[ \t]*katex(?![\w-])((?:[^%\n]|%(?!\}))*?)-?%\}")
KATEX_CLOSE = re.compile(r"\{%-?[ \t]*endkatex[ \t]*-?%\}")
KATEX_NAMES = ("katex", "endkatex")
MAX_TEX = 20_000  # characters of one formula


@dataclass(frozen=True)
class Maths:
    """One `{% katex %}` of a body: where it is (`start`, `end`: offsets of the body), its
    TeX and whether it is inline."""

    start: int
    end: int
    tex: str
    inline: bool


def find_maths(body: str, text: str | None = None) -> list[Maths]:
    """The `{% katex %}` tags of `body`, code left out (`text`: `prose(body)`, if known)."""
    if "katex" not in body:
        return []
    text = prose(body) if text is None else text
    found: list[Maths] = []
    at = 0
    for opening in find_tags(KATEX_OPEN, text):
        if opening.start() < at:
            continue  # in the formula before
        closing = KATEX_CLOSE.search(text, opening.end())
        if closing is None:  # nor does any later one close
            break
        inline = "inline" in opening.group(1).split()
        found.append(
            Maths(opening.start(), closing.end(), body[opening.end() : closing.start()], inline)
        )
        at = closing.end()
    return found


_UNKNOWN_COMMAND = re.compile(r"<m[io]>(\\[A-Za-z]+)</m[io]>")
_WORDS = re.compile(r"(?<!^)(?=[A-Z])")


def mathml(tex: str, inline: bool) -> str:
    """The MathML of a formula; `Invalid`, saying what is wrong, for TeX it cannot render."""
    from latex2mathml.converter import convert

    if len(tex) > MAX_TEX:
        raise Invalid(f"a formula of more than {MAX_TEX} characters")
    try:
        rendered = convert(tex.strip(), display="inline" if inline else "block")
    except Exception as exc:  # latex2mathml's errors name the problem by their class
        words = _WORDS.sub(" ", type(exc).__name__.removesuffix("Error")).lower()
        raise Invalid(f"TeX error: {words or 'unreadable'}") from None
    unknown = _UNKNOWN_COMMAND.search(rendered)
    if unknown is not None:
        raise Invalid(f"TeX error: unknown command {unknown.group(1)}")
    return rendered
