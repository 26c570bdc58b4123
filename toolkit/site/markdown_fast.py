"""The fast path of `markdown`: markdown-it-pyrs (markdown-it in Rust) parses, and its tree is
written here as HTML exactly as markdown-it-py and the renderer's rules write it.

Why a writer of our own: markdown-it-pyrs renders in Rust but takes no render rules from
Python, and its HTML differs from markdown-it-py's in places (heading anchors, footnote
numbers, an image's alt text, an autolink's text). Its tree (`Node`: name, attrs, children,
meta, srcmap) carries everything the rules need, so walking it costs a fraction of
markdown-it-py's parse and render together.

markdown-it-py stays the reference. What the fast path cannot write byte for byte it refuses
with `Unsupported`, and the post is rendered by markdown-it-py instead: syntax whose parse
is known to differ, syntax that crashes the Rust parser (the checks of the source are in
`markdown_fast_refusals`), and anything the walk meets that it does not know. The tests
render posts of every kind with both and require the same bytes.
"""

from __future__ import annotations

import re
from collections.abc import MutableMapping
from typing import Any

from toolkit.site.anchors import Slugs, is_theme_id, slugify, unique_slug
from toolkit.site.markdown_fast_refusals import Unsupported, refuse_source
from toolkit.site.markdown_fast_writer import (
    ANCHOR_LEVELS,
    PERMALINK_LABEL,
    PERMALINK_SYMBOL,
    TABLE_OPEN,
    Hooks,
    Rendered,
    Writer,
    escape_html,
)

# markdown-it-pyrs, when it can be imported; without it markdown-it-py renders every post.
RUST_PORT: type[MarkdownIt] | None
try:
    from markdown_it_pyrs import MarkdownIt
except ImportError:
    RUST_PORT = None
else:
    RUST_PORT = MarkdownIt

__all__ = [
    "ANCHOR_LEVELS",
    "PERMALINK_LABEL",
    "PERMALINK_SYMBOL",
    "TABLE_OPEN",
    "FastMarkdown",
    "Hooks",
    "Rendered",
    "Slugs",
    "Unsupported",
    "escape_html",
    "is_theme_id",
    "parser",
    "slugify",
    "unique_slug",
]

_NEWLINES = re.compile(r"\r\n?")


def parser() -> MarkdownIt | None:
    """A configured markdown-it-pyrs parser, or None when it cannot be imported."""
    if RUST_PORT is None:
        return None
    return RUST_PORT("commonmark").enable_many(["table", "strikethrough", "footnote"])


class FastMarkdown:
    """Renders one post at a time; `render` raises `Unsupported` for what it leaves to
    markdown-it-py."""

    def __init__(self, md: MarkdownIt, hooks: Hooks):
        self.md = md
        self.hooks = hooks

    def render(self, body: str, env: MutableMapping[str, Any]) -> Rendered:
        # markdown-it-py's first step (`normalize`), which the Rust port does otherwise.
        if "\r" in body:
            body = _NEWLINES.sub("\n", body)
        if "\0" in body:
            body = body.replace("\0", "\ufffd")
        reason = refuse_source(body)
        if reason is not None:
            raise Unsupported(reason)
        try:
            root = self.md.tree(body)
        except BaseException as exc:
            # A panic of the Rust parser (pyo3's PanicException, a BaseException): the
            # checks above keep the ones known away; any other leaves the post to the
            # reference, its message printed by Rust on stderr.
            if type(exc).__name__ != "PanicException":
                raise
            raise Unsupported("the fast parser failed") from None
        if not body.endswith("\n"):
            # markdown-it-py drops a last line's break, or a last blank line, from a code
            # or HTML block that runs to the end; the Rust parser keeps them.
            for node in root.walk():
                if node.name in ("fence", "code_block", "html_block"):
                    raise Unsupported("a code or HTML block without a line break at the end")
        return Writer(self.hooks, env, body).document(root)
