"""The fast path's writer (`markdown_fast`): markdown-it-pyrs's tree walked and written as
HTML exactly as markdown-it-py and the renderer's rules write it, or `Unsupported` raised
for what the walk meets that it does not know."""

from __future__ import annotations

import re
from collections.abc import Mapping, MutableMapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from toolkit.site.anchors import Slugs, slugify, unique_slug
from toolkit.site.markdown_fast_refusals import FOOTNOTE_DEF, MAX_DEPTH, Unsupported, web_url

if TYPE_CHECKING:  # pragma: no cover
    from markdown_it_pyrs import Node

    from toolkit.site.shapes import TocEntry

PERMALINK_SYMBOL = "#"
# A heading's permalink is read out by this name, not as "#".
PERMALINK_LABEL = "Link to this section"
ANCHOR_LEVELS = (1, 2, 3, 4, 5, 6)  # the headings that get an `id` and a permalink
TOC_LEVELS = (2, 3)
TABLE_OPEN = '<div class="table-wrap" tabindex="0" role="region" aria-label="Table">\n'

INLINE = frozenset(
    {
        "text",
        "text_special",
        "em",
        "strong",
        "strikethrough",
        "link",
        "image",
        "code_inline",
        "html_inline",
        "softbreak",
        "hardbreak",
        "autolink",
        "footnote_ref",
    }
)
_TEXT = ("text", "text_special")
_TAG_START = re.compile(r"<[A-Za-z/!?]")
_HTML_CHANGED = re.compile(r"\s*</?(?:search|source)(?![\w-])", re.IGNORECASE)
# HTML blocks that end at a marker of their own (CommonMark's kinds 1 to 5): when it is
# missing, the block runs to the end of its container, blank lines and all, where the
# two parsers part ways.
_RAW_TEXT_BLOCK = re.compile(r"\s*<(pre|script|style|textarea)(?![\w-])", re.IGNORECASE)
_BLOCK_ENDS = (("<!--", "-->"), ("<?", "?>"), ("<![CDATA[", "]]>"), ("<!", ">"))
# `*` or `_` that may open or close emphasis: not `_` inside a word, not `*` between spaces.
_DELIMITER = re.compile(r"(?<![^\W_])_|_(?![^\W_])|(?<!\s)\*|\*(?!\s)")
_SPACE = re.compile(r"\s+")
# A fence's info string that needs no unescaping and splits on plain spaces and tabs: the
# only kind written here (markdown-it-py unescapes and trims with the CommonMark sets).
_PLAIN_INFO = re.compile(r"[\x21-\x7e \t]*")
_INFO_SPLIT = re.compile(r"[ \t]+")
# Whitespace besides the space, the tab and the line break: markdown-it-py trims it from the
# ends of a paragraph, a heading or a table cell, the Rust port does not.
_ODD_SPACE = re.compile(r"[^\S \t\n]")
_ASCII_ODD_SPACES = "\v\f\r\x1c\x1d\x1e\x1f"


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
    return (
        raw.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")
    )


class Writer:
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
        self.slugs = Slugs()
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
            if any(label not in shown for label in FOOTNOTE_DEF.findall(self.source)):
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
                out.append(
                    '<pre tabindex="0"><code>'
                    + escape_html(node.meta["content"])
                    + "</code></pre>\n"
                )
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
        self.out.append(
            f' <a class="header-anchor" href="{escape_html(href)}" '
            f'aria-label="{PERMALINK_LABEL}">{PERMALINK_SYMBOL}</a></h{level}>\n'
        )
        if level in TOC_LEVELS:
            self.toc.append({"level": level, "id": slug, "text": _SPACE.sub(" ", title).strip()})

    def heading_text(self, nodes: Sequence[Node], parts: list[str]) -> list[str]:
        """The text of a heading as its anchor is made of it (`markdown.heading_anchors`):
        its text and inline code, a line break as one, an image's alt text left out."""
        for node in nodes:
            name = node.name
            if name == "text" or name == "text_special":
                parts.append(node.meta["content"])
            elif name == "code_inline":
                parts.extend(child.meta["content"] for child in node.children)
            elif name == "softbreak" or name == "hardbreak":
                parts.append("\n")
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
            self.out.append(
                f'<pre tabindex="0"><code class="{escape_html("language-" + lang)}">'
                f"{highlighted}</code></pre>\n"
            )
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
        return b"|" in self._bytes()[where[0] : where[1]]

    # -- inline ------------------------------------------------------------------------

    def content(self, nodes: Sequence[Node], depth: int) -> None:
        """The inline content of a block (paragraph, heading, table cell)."""
        self.emphasis = False  # whether emphasis has closed in this content yet
        if self.odd_spaces and nodes:
            first, last = nodes[0], nodes[-1]
            if (first.name in _TEXT and _ODD_SPACE.match(first.meta["content"][:1])) or (
                last.name in _TEXT and _ODD_SPACE.match(last.meta["content"][-1:])
            ):
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
        return where is None or b"\n" in self._bytes()[where[0] : where[1]]

    def _bytes(self) -> bytes:
        if self.source_bytes is None:
            self.source_bytes = self.source.encode("utf-8")
        return self.source_bytes

    def _before_parenthesis(self, node: Node) -> None:
        where = node.srcmap
        if where is None or self._bytes()[where[1] : where[1] + 1] == b"(":
            # A link or an image read from a reference right before a `(`: markdown-it-py
            # loses the text after it at times.
            raise Unsupported("a link right before (")

    def link(self, node: Node, depth: int) -> None:
        self._before_parenthesis(node)
        meta = node.meta
        href = web_url(meta["url"])
        if href:
            href = self.hooks.link_href(href, self.env)
        title = meta.get("title")
        self.out.append(
            f'<a href="{escape_html(href)}"'
            + (f' title="{escape_html(title)}"' if title else "")
            + ">"
        )
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
        src = web_url(meta["url"])
        if src:
            src = self.hooks.image_src(src, self.env)
        alt = "".join(self.alt_text(node.children, [], True))
        title = meta.get("title")
        self.out.append(
            f'<img src="{escape_html(src)}" alt="{escape_html(alt)}"'
            + (f' title="{escape_html(title)}"' if title else "")
            + " />"
        )

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
        self.out.append(
            f'<sup class="footnote-ref"><a href="#fn{ident}" id="fnref{refid}">[{refid}]</a></sup>'
        )

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
        out.append(
            '<hr class="footnotes-sep" />\n<section class="footnotes">\n'
            '<ol class="footnotes-list">\n'
        )
        for label, (number, count) in self.notes.items():
            ident = str(number + 1)
            out.append(f'<li id="fn{ident}" class="footnote-item">')
            found = definitions.get(label)
            children = (
                [c for c in found.children if c.name not in ("definition", "footnote_ref_anchor")]
                if found is not None
                else []
            )
            anchors = "".join(
                f' <a href="#fnref{ident}{f":{sub}" if sub else ""}" class="footnote-backref">'
                "\u21a9\ufe0e</a>"
                for sub in range(max(count, 1))
            )
            if children and children[-1].name == "paragraph":
                self.blocks(children[:-1], 2)
                out.append("<p>")
                self.content(
                    [c for c in children[-1].children if c.name != "footnote_ref_anchor"], 3
                )
                out.append(anchors + "</p>\n")
            else:
                self.blocks(children, 2)
                out.append(anchors)
            out.append("</li>\n")
        out.append("</ol>\n</section>\n")
