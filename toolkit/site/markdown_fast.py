"""The fast path of `markdown`: markdown-it-pyrs (markdown-it in Rust) parses, and its tree is
written here as HTML exactly as markdown-it-py and the renderer's rules write it.

Why a writer of our own: markdown-it-pyrs renders in Rust but takes no render rules from
Python, and its HTML differs from markdown-it-py's in places (heading anchors, footnote
numbers, an image's alt text, an autolink's text). Its tree (`Node`: name, attrs, children,
meta, srcmap) carries everything the rules need, so walking it costs a fraction of
markdown-it-py's parse and render together.

markdown-it-py stays the reference. What the fast path cannot write byte for byte it refuses
with `Unsupported`, and the post is rendered by markdown-it-py instead: syntax whose parse
is known to differ, syntax that crashes the Rust parser, and anything the walk meets that it
does not know. The tests render posts of every kind with both and require the same bytes.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping, MutableMapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:  # pragma: no cover
    from markdown_it_pyrs import MarkdownIt, Node

    from toolkit.site.markdown import TocEntry

# markdown-it-py's `maxNesting` (20) stops parsing deeper blocks and inlines, where the Rust
# parser goes on; well below it, the two agree. A tree this deep is left to the reference.
MAX_DEPTH = 12
PERMALINK_SYMBOL = "#"
# A heading's permalink is read out by this name, not as "#".
PERMALINK_LABEL = "Link to this section"
ANCHOR_LEVELS = (2, 3, 4)  # the headings that get an `id` and a permalink
TOC_LEVELS = (2, 3)
TABLE_OPEN = '<div class="table-wrap" tabindex="0" role="region" aria-label="Table">\n'

INLINE = frozenset({
    "text", "text_special", "em", "strong", "strikethrough", "link", "image", "code_inline",
    "html_inline", "softbreak", "hardbreak", "autolink", "footnote_ref",
})
_TEXT = ("text", "text_special")
_TAG_START = re.compile(r"<[A-Za-z/!?]")
_NEW_HTML_TAG = re.compile(r"<(?:![a-z]|/?(?i:search)(?![\w-]))")
_LINE_START = re.compile(r"(?:[ \t]*(?:>|[-*+](?=[ \t])|\d{1,9}[.)](?=[ \t])))*[ \t]*")
_HTML_CHANGED = re.compile(r"\s*</?(?:search|source)(?![\w-])", re.IGNORECASE)
# HTML blocks that end at a marker of their own (CommonMark's kinds 1 to 5): when it is
# missing, the block runs to the end of its container, blank lines and all, where the
# two parsers part ways.
_RAW_TEXT_BLOCK = re.compile(r"\s*<(pre|script|style|textarea)(?![\w-])", re.IGNORECASE)
_BLOCK_ENDS = (("<!--", "-->"), ("<?", "?>"), ("<![CDATA[", "]]>"), ("<!", ">"))
# `*` or `_` that may open or close emphasis: not `_` inside a word, not `*` between spaces.
_DELIMITER = re.compile(r"(?<![^\W_])_|_(?![^\W_])|(?<!\s)\*|\*(?!\s)")
_NEWLINES = re.compile(r"\r\n?")
_SPACE = re.compile(r"\s+")
# markdown-it-py's heading slug (mdit_py_plugins.anchors.slugify), kept in step by the tests.
_NOT_SLUG = re.compile(r"[^\w\u4e00-\u9fff\- ]")
# A fence's info string that needs no unescaping and splits on plain spaces and tabs: the
# only kind written here (markdown-it-py unescapes and trims with the CommonMark sets).
_PLAIN_INFO = re.compile(r"[\x21-\x7e \t]*")
_INFO_SPLIT = re.compile(r"[ \t]+")
# A footnote definition's label, as markdown-it-py's footnote rule reads it.
_FOOTNOTE_DEF = re.compile(r"\[\^([^\]\s]+)\]:")
_BACKTICKS = re.compile(r"`+")
# Whitespace besides the space, the tab and the line break: markdown-it-py trims it from the
# ends of a paragraph, a heading or a table cell, the Rust port does not.
_ODD_SPACE = re.compile(r"[^\S \t\n]")
_ASCII_ODD_SPACES = "\v\f\r\x1c\x1d\x1e\x1f"
_DELIMITER_RUN = re.compile(r"[*_~]+")
# Text that starts a paragraph and nothing else, after at most three spaces.
_PLAIN_START = re.compile(
    r"""[ ]{0,3}(?:[^\W\d_]|\d+(?![\d.)])|[^\x00-\x7f]|[\[!()"'|&\\$%@/{};,.?:^]"""
    r"""|`(?!``)|[*_]+(?=[^\s*_])|~~(?=[^\s~])|<(?=[A-Za-z][A-Za-z0-9+.-]{1,31}:|[\w.+-]+@))""")
_HEADING = re.compile(r"[ ]{0,3}#{1,6}(?:[ \t]|$)")
_CELL_PIPE = re.compile(r"(?<!\\)\|")  # a pipe that parts table cells (not `\|`)
# Whether a line starts a quote, or may be a table's rule (`\n` first: found fast).
_ANY_QUOTE = re.compile(r"\n[ ]{0,3}>")
_ANY_RULE = re.compile(r"\n[ \t|:-]*-[ \t|:-]*(?=\n|$)")
_TABLE_RULE = re.compile(r"[ \t]*\|?[ \t]*:?-+:?[ \t]*(?:\|[ \t]*:?-+:?[ \t]*)*\|?[ \t]*")
# Where a quote's markers end, with the one space after the last that belongs to them.
_QUOTE_PREFIX = re.compile(r"(?:[ ]{0,3}>)+ ?")
_WEB_HOST = re.compile(r"(?:[Hh][Tt][Tt][Pp][Ss]?:)?//([^/?#]*)")  # a web address's host
_BRACKET = re.compile(r"\\.|[\[\]]|\n[ \t]*\n")  # an escape, a bracket, a blank line
# Markup whose backticks the code span rule never sees: an HTML tag or an autolink, a
# link's destination (and title).
_HIDING = re.compile(r"<|\]\(")
_TITLE = re.compile(r"""[ \t]*(?:"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*')[ \t]*\)""")
_FENCE_OPEN = re.compile(r"( *)(`{3,}(?=[^`]*$)|~{3,}).*")


class Unsupported(Exception):  # noqa: N818 - a reason, not an error
    """A post the fast path does not write as markdown-it-py does; the message says why."""


class Hooks(Protocol):
    """The renderer's own rules, shared by both paths (`markdown.MarkdownRenderer`)."""

    def highlight(self, code: str, lang: str, attrs: str) -> str: ...
    def link_href(self, href: str, env: MutableMapping[str, Any]) -> str: ...
    def image_src(self, src: str, env: MutableMapping[str, Any]) -> str: ...


@dataclass
class Rendered:
    html: str
    toc: list[TocEntry] = field(default_factory=list)
    raw_html: bool = False  # whether the post holds raw HTML (as `markdown.has_raw_html`)


def escape_html(raw: str) -> str:
    """markdown-it's `escapeHtml`: &, <, > and " (not the single quote)."""
    return raw.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace(
        '"', "&quot;")


def slugify(title: str) -> str:
    return _NOT_SLUG.sub("", title.lower().replace(" ", "-"))


def unique_slug(slug: str, slugs: set[str]) -> str:
    unique, i = slug, 1
    while unique in slugs:
        unique = f"{slug}-{i}"
        i += 1
    slugs.add(unique)
    return unique


def parser() -> MarkdownIt | None:
    """A configured markdown-it-pyrs parser, or None when it cannot be imported."""
    try:
        from markdown_it_pyrs import MarkdownIt
    except ImportError:
        return None
    return MarkdownIt("commonmark").enable_many(["table", "strikethrough", "footnote"])


def refuse_source(body: str) -> str | None:
    """Why the source alone keeps a post off the fast path (None: it does not)."""
    if body.count("[") > 16 and any(part.count("[") > 16 and _bracket_depth(part) > 16
                                    for part in body.split("\n\n")):
        # markdown-it-py gives up on links nested deeper than its `maxNesting`.
        return "brackets nested too deeply"
    if "[ ]" in body or "[x]" in body or "[X]" in body:
        # A task list item (`- [ ] to do`): markdown-it-py's tasklists plugin writes its
        # checkbox, the Rust port has no such rule here.
        return "a task list"
    if "^[" in body:
        # Inline footnotes: markdown-it-pyrs numbers them its own way, and an unclosed one
        # crashes it.
        return "inline footnote ^[...]"
    labels = set()
    for match in _FOOTNOTE_DEF.finditer(body):
        if match.start() and body[match.start() - 1] != "\n":
            # Indented, or in a quote or a list: the Rust port misreads where it starts.
            return "a footnote definition not at the start of a line"
        if match.group(1) in labels:
            return "a footnote defined twice"  # markdown-it-py keeps the last, Rust the first
        labels.add(match.group(1))
        if not _PLAIN_START.match(body, match.end()):
            # A footnote whose text starts with a block (code, HTML, a list...) or on the
            # next line: the Rust port reads it from another column.
            return "a footnote that does not start with text"
    if "<" in body and any(_LINE_START.fullmatch(body, body.rfind("\n", 0, tag.start()) + 1,
                                                 tag.start())
                           for tag in _NEW_HTML_TAG.finditer(body)):
        # An HTML block only CommonMark 0.31 (markdown-it-py) starts there: it may end a
        # paragraph, or a code span, that the Rust port carries on.
        return "an HTML block of CommonMark 0.31"
    lines = body.split("\n")
    if ">" in body and _ANY_QUOTE.search("\n" + body) and _lazy_block(lines):
        # A line after a quote that starts another block (a list from 2., say) ends the
        # quote in markdown-it-py and carries on its paragraph in the Rust port.
        return "a quote followed by another block"
    if "|" in body and _ANY_RULE.search(body):  # a rule has a header line above it
        reason = _refuse_tables(lines)
        if reason is not None:
            return reason
    if not body.isascii() and _symbol_beside_delimiter(body):
        return "emphasis beside a Unicode symbol"
    if "~~~" in body and any("~~~" in line and not _fence_line(lines, index)
                             for index, line in enumerate(lines)):
        # markdown-it-py splits a run of three or more tildes into strikethrough
        # delimiters its own way.
        return "a run of tildes"
    if "`" in body and "[" in body and _loose_backticks(lines):
        # A `[` before a backtick run that closes nowhere crashes the Rust parser
        # (markdown-it 0.6 `code_pair`): refused before it is parsed.
        return "an unclosed code span"
    return None


def _bracket_depth(body: str) -> int:
    """How deep `[`s nest in `body` (a paragraph's at most, its blank line ending it)."""
    deepest = depth = 0
    for match in _BRACKET.finditer(body):
        char = match.group()
        if char == "[":
            depth += 1
            deepest = max(deepest, depth)
        elif char == "]":
            depth = max(0, depth - 1)
        else:
            depth = 0
    return deepest


def _symbol_beside_delimiter(body: str) -> bool:
    """Whether an emphasis or strikethrough delimiter stands beside a Unicode symbol:
    CommonMark 0.31 (markdown-it-py) counts those as punctuation there, 0.30 (the Rust
    port) does not."""
    for match in _DELIMITER_RUN.finditer(body):
        start, end = match.start(), match.end()
        for char in (body[start - 1] if start else "", body[end:end + 1]):
            if char and not char.isascii() and unicodedata.category(char).startswith("S"):
                return True
    return False


def _refuse_tables(lines: list[str]) -> str | None:
    """Tables where markdown-it-py and the Rust port part ways: where one starts (the
    Rust port reads a table after the other blocks, and lets one interrupt a quote's lazy
    line), and where it ends (markdown-it-py ends it at a line that starts another block);
    a rule without `|`, and an escaped `|` right before a `|`, which they split otherwise."""
    for index, line in enumerate(lines):
        if index == 0 or "|" not in lines[index - 1] or not _TABLE_RULE.fullmatch(line):
            continue  # markdown-it-py wants a `|` in the header
        if "|" not in line:
            return "a table whose rule has no |"
        if not _PLAIN_START.match(lines[index - 1]):
            return "a table whose header starts like another block"
        for above in reversed(lines[:index - 1]):
            if not above.strip() or _HEADING.match(above):
                break
            if not _PLAIN_START.match(above):
                return "a table right after a quote or a list"
        rows = [lines[index - 1]]
        for row in lines[index + 1:]:
            if not row.strip():
                break
            if not _PLAIN_START.match(row):
                return "a table row that starts like another block"
            rows.append(row)
        if any("\\||" in row for row in rows):
            return "a table cell ending in \\|"
    return None


def _lazy_block(lines: list[str]) -> bool:
    """Whether a line with fewer `>`s than a line before it (no blank line between)
    starts anything but text after them: the lazy line of a quote, or a block."""
    depth = 0  # the most `>`s of the lines before, since a blank line
    for line in lines:
        if not line.strip():
            depth = 0
            continue
        quote = _QUOTE_PREFIX.match(line)
        markers = quote.group().count(">") if quote is not None else 0
        rest = line[quote.end():] if quote is not None else line
        if markers < depth and rest.strip() and not _PLAIN_START.match(rest):
            return True
        depth = max(depth, markers)
    return False


def _loose_backticks(lines: list[str]) -> bool:
    """Whether a backtick run might stay unclosed in its inline content.

    An inline content (a paragraph, a heading, a table cell) holds whole stretches of
    lines between unescaped `|`s, so a run closed by the next run of its length within
    such a stretch is closed there too (code spans pair left to right). A run that markup
    may hide from the code span rule (in an HTML tag, an autolink, a link's destination)
    leaves the others in doubt. A fence's own lines are not inline content."""
    for index, line in enumerate(lines):
        if "`" not in line or ("```" in line and _fence_line(lines, index)):
            continue
        if "\\`" in line:
            return True  # an escaped backtick, or a backslash ending a code span
        for segment in _CELL_PIPE.split(line) if "|" in line else (line,):
            if "`" in segment and _unclosed(segment):
                return True
    return False


def _unclosed(segment: str) -> bool:
    if "``" not in segment:  # single backticks, pairing in turn
        parts = segment.split("`")
        if len(parts) % 2 == 0:
            return True
        if "<" not in segment and "](" not in segment:
            return False
        at = 0
        for index, part in enumerate(parts):
            if index % 2 == 0 and ("<" in part or "](" in part):  # outside code
                for markup in _HIDING.finditer(part):
                    if "`" in _held(segment, at + markup.start(), markup.group()):
                        return True
            at += len(part) + 1
        return False
    runs = list(_BACKTICKS.finditer(segment))
    spans: list[tuple[int, int]] = []  # the code spans, from opening to closing run
    while runs:
        opening = runs.pop(0)
        length = len(opening.group())
        closing = next((i for i, run in enumerate(runs) if len(run.group()) == length), None)
        if closing is None:
            return True
        spans.append((opening.start(), runs[closing].end()))
        del runs[: closing + 1]
    for markup in _HIDING.finditer(segment):
        at = markup.start()
        if any(start <= at < end for start, end in spans):
            continue  # code
        if "`" in _held(segment, at, markup.group()):
            return True
    return False


def _held(segment: str, at: int, markup: str) -> str:
    """What the markup at `at` may hold: up to its end, or the whole rest of the segment
    when that end is in doubt."""
    if markup == "<":
        end = segment.find(">", at)
        held = segment[at:] if end < 0 else segment[at:end]
        return segment[at:] if "'" in held or '"' in held else held
    depth, index = 0, at + 2  # a link's destination, and its title
    if segment.startswith("<", index):  # a destination in <...>
        index = segment.find(">", index) + 1
        if index == 0:
            return segment[at:]
    while index < len(segment):
        char = segment[index]
        if char == "\\":
            index += 1
        elif char == "(":
            depth += 1
        elif char == ")":
            if depth == 0:
                return segment[at:index]
            depth -= 1
        elif char in " \t":
            title = _TITLE.match(segment, index)
            return segment[at:title.end()] if title is not None else segment[at:]
        elif char in "\"'<":
            break
        index += 1
    return segment[at:]


def _fence_line(lines: list[str], index: int) -> bool:
    """Whether `lines[index]` is surely a fence's own line, never inline content: a
    fence line indented by at most three spaces (it opens a fence, or sits in a block
    that is not inline), or one right after a blank line (no paragraph goes on after a
    blank line). In a quote, the same holds of what follows its `>`s."""
    line, previous = lines[index], lines[index - 1] if index else ""
    quote = _QUOTE_PREFIX.match(line)
    if quote is not None:
        line = line[quote.end():]
        previous = previous[quote.end():] if previous.startswith(quote.group()) else ""
    opening = _FENCE_OPEN.fullmatch(line.expandtabs(4))
    if opening is None:
        return False
    if len(opening.group(1)) <= 3 or not previous.strip():
        return True
    return quote is None and _below_a_fence(lines, index, opening.group(1))


def _below_a_fence(lines: list[str], index: int, indent: str) -> bool:
    """Whether a fence line indented by `indent` (four spaces or more) has above it a fence
    line that is surely one, at the same indent, with only blank or deeper lines between.
    That opener sits in a container (a list item) whose content starts at most three
    spaces to its left, or opens indented code; the lines between keep the container
    open, so this line is a fence line in it too, or code."""
    for above in range(index - 1, -1, -1):
        line = lines[above].expandtabs(4)
        if not line.strip():
            continue
        if not line.startswith(indent):
            return False
        if line[len(indent)] in "`~":
            previous = lines[above - 1] if above else ""
            if not previous.strip() and _FENCE_OPEN.fullmatch(line) is not None:
                return True
    return False


def _web_url(url: str) -> str:
    """`url` as both parsers write it: markdown-it-py writes a web address's host outside
    ASCII in punycode, the Rust port %-escaped."""
    if "%" in url:
        host = _WEB_HOST.match(url)
        if host is not None and "%" in host.group(1):
            raise Unsupported("a link to a host outside ASCII")
    return url


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
        return _Writer(self.hooks, env, body).document(root)


class _Writer:
    """One post's walk: the HTML as it is written, and what is learnt on the way."""

    def __init__(self, hooks: Hooks, env: MutableMapping[str, Any], source: str):
        self.hooks = hooks
        self.env = env
        self.source = source
        self.source_bytes: bytes | None = None  # `source` as the tree's srcmaps count it
        if source.isascii():
            odd_spaces = any(char in source for char in _ASCII_ODD_SPACES)
        else:
            odd_spaces = _ODD_SPACE.search(source) is not None
        self.odd_spaces = odd_spaces  # whether `content` must look at the ends' spaces
        self.out: list[str] = []
        self.toc: list[TocEntry] = []
        self.slugs: set[str] = set()
        self.raw_html = False
        self.emphasis = False
        self.quoted = 0  # how many quotes the walk is in
        # footnotes: Rust's ref_id -> (number - 1, nth reference to it), and by label the
        # number and the count of references
        self.refs: dict[int, tuple[int, int]] = {}
        self.notes: dict[str, list[int]] = {}

    def document(self, root: Node) -> Rendered:
        children = root.children
        container = None
        if children and children[-1].name == "footnote_container":
            container = children[-1]
            children = children[:-1]
            self._number_footnotes(root, container)
        if "]:" in self.source:
            shown = {d.meta.get("label") for d in container.children} if container else set()
            if any(label not in shown for label in _FOOTNOTE_DEF.findall(self.source)):
                # markdown-it-py reads the references in a footnote nobody refers to,
                # and lists the footnotes they name; the Rust port drops it unread. (And
                # a definition it did not read, inside a paragraph, is one of those.)
                raise Unsupported("a footnote that is never referred to")
        self.blocks(children, 1)
        if container is not None:
            self.footnotes(container)
        return Rendered("".join(self.out), self.toc, self.raw_html)

    # -- blocks ------------------------------------------------------------------------

    def blocks(self, nodes: Sequence[Node], depth: int) -> None:
        """Block nodes; a run of inline nodes among them is a tight list item's paragraph,
        which markdown-it-py hides (`after_hidden`: the block after it starts on a new
        line when markdown-it-py's `renderToken` writes it)."""
        if depth > MAX_DEPTH:
            raise Unsupported("nested too deeply")
        out = self.out
        after_hidden = False
        run: list[Node] = []
        for node in nodes:
            name = node.name
            if name in INLINE:
                run.append(node)
                continue
            if run:
                self.content(run, depth)
                run = []
                after_hidden = True
            if name == "definition":
                continue  # a link reference definition: no token, nothing written
            lf = "\n" if after_hidden else ""
            after_hidden = False
            if name == "paragraph":
                out.append(lf + "<p>")
                self.content(node.children, depth + 1)
                out.append("</p>\n")
            elif name == "heading" or name == "lheading":
                self.heading(node, lf, depth)
            elif name == "fence":
                self.fence(node.meta)
            elif name == "code_block":
                out.append('<pre tabindex="0"><code>' + escape_html(node.meta["content"])
                           + "</code></pre>\n")
            elif name == "bullet_list" or name == "ordered_list":
                self.list_block(node, name, lf, depth)
            elif name == "blockquote":
                children = [c for c in node.children if c.name != "definition"]
                if children:
                    out.append(lf + "<blockquote>\n")
                    self.quoted += 1
                    self.blocks(children, depth + 1)
                    self.quoted -= 1
                    out.append("</blockquote>\n")
                else:
                    out.append(lf + "<blockquote></blockquote>\n")
            elif name == "hr":
                out.append(lf + "<hr />\n")
            elif name == "html_block":
                self.raw_html = True
                out.append(self.html(node.meta["content"], block=True))
            elif name == "table":
                self.table(node, lf, depth)
            else:
                raise Unsupported(f"{name} block")
        if run:
            self.content(run, depth)

    def heading(self, node: Node, lf: str, depth: int) -> None:
        level = node.meta["level"]
        if not isinstance(level, int) or not 1 <= level <= 6:
            raise Unsupported("heading level")
        children = node.children
        if level not in ANCHOR_LEVELS:
            self.out.append(f"{lf}<h{level}>")
            self.content(children, depth + 1)
            self.out.append(f"</h{level}>\n")
            return
        title = "".join(self.heading_text(children, []))
        slug = unique_slug(slugify(title), self.slugs)
        self.out.append(f'{lf}<h{level} id="{escape_html(slug)}">')
        self.content(children, depth + 1)
        href = self.hooks.link_href(f"#{slug}", self.env)
        self.out.append(f' <a class="header-anchor" href="{escape_html(href)}" '
                        f'aria-label="{PERMALINK_LABEL}">{PERMALINK_SYMBOL}</a></h{level}>\n')
        if level in TOC_LEVELS:
            self.toc.append({"level": level, "id": slug,
                             "text": _SPACE.sub(" ", title).strip()})

    def heading_text(self, nodes: Sequence[Node], parts: list[str]) -> list[str]:
        """The text of a heading as markdown-it-py's anchors plugin reads it: its text and
        inline code, an image's alt text left out."""
        for node in nodes:
            name = node.name
            if name == "text" or name == "text_special":
                parts.append(node.meta["content"])
            elif name == "code_inline":
                parts.extend(child.meta["content"] for child in node.children)
            elif name in ("em", "strong", "strikethrough", "link", "autolink"):
                self.heading_text(node.children, parts)
        return parts

    def fence(self, meta: Mapping[str, Any]) -> None:
        info = meta["info"]
        if not _PLAIN_INFO.fullmatch(info) or "\\" in info or "&" in info:
            raise Unsupported("a code fence's info string")
        content = meta["content"]
        info = info.strip(" \t")
        lang, attrs = "", ""
        if info:
            parts = _INFO_SPLIT.split(info, maxsplit=1)
            lang = parts[0]
            attrs = parts[1] if len(parts) == 2 else ""
        highlighted = self.hooks.highlight(content, lang, attrs) or escape_html(content)
        if highlighted.startswith("<pre"):
            self.out.append(highlighted + "\n")
        elif info:
            self.out.append(f'<pre tabindex="0"><code class="{escape_html("language-" + lang)}">'
                            f"{highlighted}</code></pre>\n")
        else:
            self.out.append(f'<pre tabindex="0"><code>{highlighted}</code></pre>\n')

    def list_block(self, node: Node, name: str, lf: str, depth: int) -> None:
        out = self.out
        if name == "bullet_list":
            out.append(lf + "<ul>\n")
        else:
            start = node.meta["start"]
            out.append(lf + (f'<ol start="{start}">\n' if start != 1 else "<ol>\n"))
        for item in node.children:
            if item.name != "list_item":
                raise Unsupported(f"{item.name} in a list")
            children = [c for c in item.children if c.name != "definition"]
            if not children:
                out.append("<li></li>\n")
                continue
            out.append("<li>" if children[0].name in INLINE else "<li>\n")
            self.blocks(children, depth + 2)
            out.append("</li>\n")
        out.append("</ul>\n" if name == "bullet_list" else "</ol>\n")

    def table(self, node: Node, lf: str, depth: int) -> None:
        aligns = node.meta["alignments"]
        if len(aligns) == 1 and not self._header_has_pipe(node):
            # markdown-it-py wants a `|` in a table's header line; the Rust port does not.
            raise Unsupported("a table without a | in its header")
        styles = [f' style="text-align:{a}"' if a != "none" else "" for a in aligns]
        out = self.out
        out.append(TABLE_OPEN + lf + "<table>\n")
        for section in node.children:
            if section.name not in ("thead", "tbody"):
                raise Unsupported(f"{section.name} in a table")
            cell = "th" if section.name == "thead" else "td"
            out.append(f"<{section.name}>\n")
            for row in section.children:
                out.append("<tr>\n")
                cells = row.children
                for column, style in enumerate(styles):
                    out.append(f"<{cell}{style}>")
                    if column < len(cells):
                        self.content(cells[column].children, depth + 4)
                    out.append(f"</{cell}>\n")
                out.append("</tr>\n")
            out.append(f"</{section.name}>\n")
        out.append("</table>\n</div>\n")

    def html(self, content: str, block: bool = False) -> str:
        if block and self.quoted and "\t" in self.source:
            # A tab after a quote's `>` is kept in an HTML block by markdown-it-py, made
            # spaces by the Rust port.
            raise Unsupported("an HTML block in a quote, with tabs")
        if _HTML_CHANGED.match(content):
            # The block tags CommonMark 0.31 changed (`search` in, `source` out).
            raise Unsupported("raw HTML read differently by CommonMark 0.30 and 0.31")
        if block:
            raw_text = _RAW_TEXT_BLOCK.match(content)
            if raw_text is not None:
                if f"</{raw_text.group(1).lower()}>" not in content.lower():
                    raise Unsupported("an HTML block without its end")
                return content
            start = content.lstrip()
            for opening, end in _BLOCK_ENDS:
                if start.startswith(opening):
                    if end not in start:
                        raise Unsupported("an HTML block without its end")
                    break
        return content

    def _header_has_pipe(self, table: Node) -> bool:
        head = table.children[0] if table.children else None
        rows = head.children if head is not None and head.name == "thead" else []
        where = rows[0].srcmap if rows else None
        if where is None:
            return False
        return b"|" in self._bytes()[where[0]:where[1]]

    # -- inline ------------------------------------------------------------------------

    def content(self, nodes: Sequence[Node], depth: int) -> None:
        """The inline content of a block (paragraph, heading, table cell)."""
        self.emphasis = False  # whether emphasis has closed in this content yet
        if self.odd_spaces and nodes:
            first, last = nodes[0], nodes[-1]
            if (first.name in _TEXT and _ODD_SPACE.match(first.meta["content"][:1])) or (
                    last.name in _TEXT and _ODD_SPACE.match(last.meta["content"][-1:])):
                raise Unsupported("whitespace other than spaces at the ends of a paragraph")
        self.inline(nodes, depth)

    def inline(self, nodes: Sequence[Node], depth: int) -> None:
        if depth > MAX_DEPTH:
            raise Unsupported("nested too deeply")
        out = self.out
        for node in nodes:
            name = node.name
            if name == "text":
                text = node.meta["content"]
                if "<" in text and _TAG_START.search(text):
                    # Raw HTML of CommonMark 0.31 (markdown-it-py) that 0.30 (the Rust
                    # port) reads as text: `<!-->`, `<!doctype`.
                    raise Unsupported("text that may be raw HTML")
                if self.emphasis and ("*" in text or "_" in text) and _DELIMITER.search(text):
                    # Once emphasis has closed, the Rust port matches the delimiters that
                    # follow in the same paragraph differently at times (what it does with
                    # the rest of a closing run, or with a run it skipped): a delimiter it
                    # left as text may be emphasis in markdown-it-py.
                    raise Unsupported("emphasis delimiters after emphasis")
                out.append(escape_html(text))
            elif name == "text_special":
                out.append(escape_html(node.meta["content"]))
            elif name == "softbreak":
                out.append("\n")
            elif name == "code_inline":
                if self.quoted and self._spans_lines(node):
                    # markdown-it-py keeps the indentation of a quote's lazy line in a
                    # code span, the Rust port drops it.
                    raise Unsupported("a code span over lines of a quote")
                code = "".join(child.meta["content"] for child in node.children)
                if code.isspace():
                    # Spaces alone are kept whole by markdown-it-py, trimmed by Rust.
                    raise Unsupported("a code span of spaces")
                out.append("<code>" + escape_html(code) + "</code>")
            elif name == "em" or name == "strong" or name == "strikethrough":
                tag = "s" if name == "strikethrough" else name
                out.append(f"<{tag}>")
                self.inline(node.children, depth + 1)
                out.append(f"</{tag}>")
                self.emphasis = True
            elif name == "link":
                self.link(node, depth)
            elif name == "image":
                self.image(node)
            elif name == "hardbreak":
                out.append("<br />\n")
            elif name == "html_inline":
                self.raw_html = True
                out.append(self.html(node.meta["content"]))
            elif name == "autolink":
                self.autolink(node)
            elif name == "footnote_ref":
                self.footnote_ref(node)
            elif name == "footnote_ref_anchor":
                continue  # written by `footnotes`, where markdown-it-py puts it
            else:
                raise Unsupported(f"{name} inline")

    def _spans_lines(self, node: Node) -> bool:
        where = node.srcmap
        return where is None or b"\n" in self._bytes()[where[0]:where[1]]

    def _bytes(self) -> bytes:
        if self.source_bytes is None:
            self.source_bytes = self.source.encode("utf-8")
        return self.source_bytes

    def _before_parenthesis(self, node: Node) -> None:
        where = node.srcmap
        if where is None or self._bytes()[where[1]:where[1] + 1] == b"(":
            # A link or an image read from a reference right before a `(`: markdown-it-py
            # loses the text after it at times.
            raise Unsupported("a link right before (")

    def link(self, node: Node, depth: int) -> None:
        self._before_parenthesis(node)
        meta = node.meta
        href = _web_url(meta["url"])
        if href:
            href = self.hooks.link_href(href, self.env)
        title = meta.get("title")
        self.out.append(f'<a href="{escape_html(href)}"'
                        + (f' title="{escape_html(title)}"' if title else "") + ">")
        self.inline(node.children, depth + 1)
        self.out.append("</a>")

    def autolink(self, node: Node) -> None:
        url = node.meta["url"]
        text = "".join(child.meta["content"] for child in node.children)
        # markdown-it-py decodes %-escapes and punycode in the text; Rust keeps them.
        if "%" in text or "xn--" in text.lower() or not text.isascii():
            raise Unsupported("an autolink with escapes")
        if url:
            url = self.hooks.link_href(url, self.env)
        self.out.append(f'<a href="{escape_html(url)}">{escape_html(text)}</a>')

    def image(self, node: Node) -> None:
        self._before_parenthesis(node)
        meta = node.meta
        src = _web_url(meta["url"])
        if src:
            src = self.hooks.image_src(src, self.env)
        alt = "".join(self.alt_text(node.children, [], True))
        title = meta.get("title")
        self.out.append(f'<img src="{escape_html(src)}" alt="{escape_html(alt)}"'
                        + (f' title="{escape_html(title)}"' if title else "") + " />")

    def alt_text(self, nodes: Sequence[Node], parts: list[str], joined: bool) -> list[str]:
        """An image's alt text as markdown-it-py's `renderInlineAsText` writes it: text,
        code and raw HTML, markup left out. (The escapes and entities of an image inside
        an image's alt text are not joined to its text there, so they are left out too.)"""
        for node in nodes:
            name = node.name
            if name == "text":
                parts.append(node.meta["content"])
            elif name == "text_special":
                meta = node.meta
                if joined or meta.get("info") == "autolink":
                    parts.append(meta["content"])
            elif name == "code_inline":
                parts.extend(child.meta["content"] for child in node.children)
            elif name == "html_inline":
                parts.append(node.meta["content"])
            elif name == "softbreak" or name == "hardbreak":
                parts.append("\n")
            elif name == "image":
                self._before_parenthesis(node)
                self.alt_text(node.children, parts, False)
            elif name in ("em", "strong", "strikethrough", "link"):
                if name == "link":
                    self._before_parenthesis(node)
                self.alt_text(node.children, parts, joined)
            elif name == "autolink":
                text = "".join(child.meta["content"] for child in node.children)
                if "%" in text or "xn--" in text.lower() or not text.isascii():
                    raise Unsupported("an autolink with escapes")
                parts.append(text)
            elif name != "footnote_ref":
                raise Unsupported(f"{name} in an image")
        return parts

    # -- footnotes ---------------------------------------------------------------------

    def _number_footnotes(self, root: Node, container: Node) -> None:
        """Number the footnotes as markdown-it-py does: in the order of their first
        reference in the source, every reference counted (in an image's alt text too)."""
        if any(node.name == "footnote_ref" for node in container.walk()):
            raise Unsupported("a footnote that refers to another")
        found = []
        for node in root.walk():
            if node.name == "footnote_ref":
                if node.srcmap is None:
                    raise Unsupported("a footnote reference without a position")
                found.append((node.srcmap[0], node.meta))
        for _, meta in sorted(found, key=lambda item: item[0]):
            label = meta.get("label")
            if not isinstance(label, str):
                raise Unsupported("a footnote reference without a label")
            note = self.notes.get(label)
            if note is None:
                note = self.notes[label] = [len(self.notes), 0]
            self.refs[meta["ref_id"]] = (note[0], note[1])
            note[1] += 1

    def footnote_ref(self, node: Node) -> None:
        found = self.refs.get(node.meta["ref_id"])
        if found is None:
            raise Unsupported("a footnote reference out of place")
        number, sub = found
        ident = str(number + 1)
        refid = f"{ident}:{sub}" if sub > 0 else ident
        self.out.append(f'<sup class="footnote-ref"><a href="#fn{ident}" id="fnref{refid}">'
                        f"[{refid}]</a></sup>")

    def footnotes(self, container: Node) -> None:
        definitions: dict[str, Node] = {}
        for definition in container.children:
            label = definition.meta.get("label")
            if definition.name != "footnote_def" or not isinstance(label, str):
                raise Unsupported("a footnote of another kind")
            definitions[label] = definition
        if not self.notes:
            return
        out = self.out
        out.append('<hr class="footnotes-sep" />\n<section class="footnotes">\n'
                   '<ol class="footnotes-list">\n')
        for label, (number, count) in self.notes.items():
            ident = str(number + 1)
            out.append(f'<li id="fn{ident}" class="footnote-item">')
            found = definitions.get(label)
            children = [c for c in found.children
                        if c.name not in ("definition", "footnote_ref_anchor")
                        ] if found is not None else []
            anchors = "".join(
                f' <a href="#fnref{ident}{f":{sub}" if sub else ""}" class="footnote-backref">'
                "\u21a9\ufe0e</a>" for sub in range(max(count, 1)))
            if children and children[-1].name == "paragraph":
                self.blocks(children[:-1], 2)
                out.append("<p>")
                self.content([c for c in children[-1].children
                              if c.name != "footnote_ref_anchor"], 3)
                out.append(anchors + "</p>\n")
            else:
                self.blocks(children, 2)
                out.append(anchors)
            out.append("</li>\n")
        out.append("</ol>\n</section>\n")
