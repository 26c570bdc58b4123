"""Markdown to HTML for the site: CommonMark with tables, strikethrough, footnotes, heading
anchors, GitHub's task lists and Pygments-highlighted code; dev.to's Liquid tags are
rendered after either engine (`liquid_render.render_tags`).

A post's body is rendered once, on its own; what depends on the rest of the site is left as
a placeholder and filled in when the page is put together (`resolve_links`), so the costly
part never has to be redone because another post changed. Two things are rewritten through
the renderer's tokens, never by searching the text:

- images and links to files relative to the post (or to the content folder, `/x.png`)
  point at the copy of the file in the output, seen from the post's page at `<slug>/`;
- links to another post (`other.md`, `../guide/setup.md#install`) point at that post's
  page, whatever its slug is when the page is written.

Code blocks and tables scroll inside themselves on a narrow screen, so each can take the
keyboard focus (`tabindex="0"`; a table sits in a labelled region): a reader who does not
use a mouse can still scroll them. The headings of levels 2 and 3 make the post's table of
contents (`Body.toc`), read from the tokens; every heading gets an `id` with dev.to's slug rule
and a permalink (`heading_anchors`).

Raw HTML in a body is cleaned with the comments' allow-list (`sanitize.clean_post_html`)
unless `[site] allow_raw_html` says the writer keeps it, the way Hugo leaves raw HTML out
by default. Only a body whose tokens hold raw HTML is cleaned: the renderer's own output is
safe already (markdown-it refuses `javascript:` and similar links), so every other body
is rendered exactly as it would be without the cleaning, at no cost.

Two engines, one output: markdown-it-pyrs (markdown-it in Rust, `markdown_fast`) parses a
post when it is installed and the post holds nothing it cannot write byte for byte as
markdown-it-py does; markdown-it-py, the reference, renders every other post (said in the
log: `toolkit build --verbose`). Either way the HTML is the same, so nothing that keys on a
rendered body (the build's manifest) depends on which engine wrote it.
"""

from __future__ import annotations

import contextlib
import hashlib
import html
import logging
import os
import re
from collections.abc import MutableMapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, urlsplit

from toolkit.content import images
from toolkit.content.discover import is_post_path
from toolkit.fsutil import quick_write
from toolkit.site.markdown_fast import (
    ANCHOR_LEVELS,
    PERMALINK_LABEL,
    PERMALINK_SYMBOL,
    TABLE_OPEN,
    FastMarkdown,
    Slugs,
    escape_html,
    parser,
    slugify,
    unique_slug,
)
from toolkit.site.markdown_fast_refusals import Unsupported
from toolkit.site.shapes import TocEntry

if TYPE_CHECKING:  # pragma: no cover
    from markdown_it import MarkdownIt
    from markdown_it.renderer import RendererHTML
    from markdown_it.rules_core import StateCore
    from markdown_it.token import Token
    from markdown_it.utils import EnvType, OptionsDict
    from pygments.formatters import HtmlFormatter
    from pygments.lexer import Lexer

log = logging.getLogger(__name__)

# The inline rules that start at a `[` (a link, an image, a footnote reference, an inline
# footnote) and need a `]` after it.
_LABEL_RULES = ("link", "image", "footnote_ref", "footnote_inline")


def closed_labels_only(md: MarkdownIt) -> None:
    """Each rule of `_LABEL_RULES` tries a label only where a `]` follows in the text it
    reads, as it would find: where none does, it fails as it would have, and nothing it
    leaves in the parser's cache is ever read by a label that could close. Without it, each
    `[` of `![![![...` looked for its label as deep as `maxNesting` lets it (some forty
    steps each: 100 KB took 5 s, 200 KB 14 s); with it, once."""
    ruler = md.inline.ruler
    for rule in ruler.__rules__:
        if rule.name in _LABEL_RULES:
            rule.fn = _when_a_label_can_close(rule.fn)
    ruler.__cache__ = None  # compiled again on first use


def _when_a_label_can_close(fn: Any) -> Any:
    def rule(state: Any, silent: bool) -> Any:
        last = getattr(state, "toolkit_last_close", None)
        if last is None:
            last = state.toolkit_last_close = state.src.rfind("]")
        if state.pos > last:
            return False
        return fn(state, silent)

    return rule


# A link to another post until its slug is known: \x1a<post key>\x1a<#fragment>\x1a<href>\x1a
# (the href as written, kept for a post that is not on the site).
_PLACEHOLDER = re.compile("\x1a([^\x1a]*)\x1a([^\x1a]*)\x1a([^\x1a]*)\x1a")
_FIRST_PARAGRAPH = re.compile(r"<p>(.*?)</p>", re.DOTALL)
_TAG = re.compile(r"<[^>]+>")
_SPACE = re.compile(r"\s+")
EXCERPT_LENGTH = 200


TOC_LEVELS = ("h2", "h3")  # the headings listed in a post's table of contents


@dataclass
class Body:
    html: str  # may hold link placeholders: see `resolve_links`
    excerpt: str  # plain text of the first paragraph, shortened
    links: list[str] = field(default_factory=list)  # keys of the posts it links to
    toc: list[TocEntry] = field(default_factory=list)  # headings h2 and h3, in order


def excerpt_of(body_html: str, limit: int = EXCERPT_LENGTH) -> str:
    """The first paragraph as plain text, cut at a word boundary."""
    match = _FIRST_PARAGRAPH.search(body_html)
    if not match:
        return ""
    text = _SPACE.sub(" ", html.unescape(_TAG.sub("", match.group(1)))).strip()
    if len(text) <= limit:
        return text
    cut = text[:limit].rsplit(" ", 1)[0].rstrip(",;:.-–— ")
    return cut + "…"


def resolve_links(body_html: str, slugs: dict[str, str], prefix: str = "../") -> str:
    """Fill in the links to other posts; a post that is not on the site keeps its link."""
    if "\x1a" not in body_html:
        return body_html

    def replace(match: re.Match[str]) -> str:
        # The placeholder sits in an attribute, already HTML-escaped by the renderer.
        key, fragment, written = match.groups()
        slug = slugs.get(html.unescape(key))
        return written if slug is None else f"{prefix}{slug}/{fragment}"

    return _PLACEHOLDER.sub(replace, body_html)


def table_of_contents(tokens: Sequence[Token]) -> list[TocEntry]:
    """The headings of levels 2 and 3 with their anchors, as plain text (the heading's own
    `#` permalink left out)."""
    toc: list[TocEntry] = []
    for index, token in enumerate(tokens):
        if token.type != "heading_open" or token.tag not in TOC_LEVELS:
            continue
        anchor = token.attrGet("id")
        inline = tokens[index + 1] if index + 1 < len(tokens) else None
        if not isinstance(anchor, str) or inline is None or not inline.children:
            continue
        text, permalink = [], False
        for child in inline.children:
            if child.type == "link_open" and child.attrGet("class") == "header-anchor":
                permalink = True
            elif child.type == "link_close" and permalink:
                permalink = False
            elif child.type in ("text", "code_inline") and not permalink:
                text.append(child.content)
            elif child.type in ("softbreak", "hardbreak"):
                text.append(" ")
        toc.append(
            {
                "level": int(token.tag[1]),
                "id": anchor,
                "text": _SPACE.sub(" ", "".join(text)).strip(),
            }
        )
    return toc


def heading_anchors(state: StateCore) -> None:
    """markdown-it-py's core rule giving every heading an `id` with dev.to's slug rule and a
    permalink after its text: `<h2 id="a-reflector">A - Reflector <a class="header-anchor"
    href="#a-reflector">#</a></h2>` (the fast path writes the same)."""
    from markdown_it.token import Token

    tokens = state.tokens
    slugs = Slugs()
    for index, token in enumerate(tokens):
        if token.type != "heading_open" or int(token.tag[1]) not in ANCHOR_LEVELS:
            continue
        inline = tokens[index + 1]
        children = inline.children if inline.children is not None else []
        title = "".join(
            "\n" if child.type in ("softbreak", "hardbreak") else child.content
            for child in children
            if child.type in ("text", "code_inline", "softbreak", "hardbreak")
        )
        slug = unique_slug(slugify(title), slugs)
        token.attrSet("id", slug)
        link_open = Token("link_open", "a", 1)
        link_open.attrSet("class", "header-anchor")
        link_open.attrSet("href", f"#{slug}")
        children.extend(
            [
                Token("text", "", 0, content=" "),
                link_open,
                Token("html_block", "", 0, content=PERMALINK_SYMBOL),
                Token("link_close", "a", -1),
            ]
        )
        inline.children = children


def focusable_pre(html_text: str) -> str:
    """A rendered code block that takes the keyboard focus, so it can be scrolled
    (highlighted blocks are written so by `_highlight`)."""
    if html_text.startswith("<pre>"):
        return '<pre tabindex="0">' + html_text[5:]
    return html_text


def has_raw_html(tokens: Sequence[Token]) -> bool:
    """Whether markdown-it found raw HTML (a block, or a tag inside a paragraph)."""
    for token in tokens:
        if token.type == "html_block":
            return True
        if token.children and any(child.type == "html_inline" for child in token.children):
            return True
    return False


def clean_raw_html(body_html: str, placeholders: list[str]) -> str:
    """`body_html` with its raw HTML cleaned, the renderer's link placeholders kept.

    Raw HTML could write a placeholder of its own, whose fallback link (`javascript:...`)
    would come back when links are filled in; so only the renderer's placeholders keep
    their \x1a marks (swapped for a random marker while nh3 runs) and every other \x1a,
    written as a character or as `&#26;`, is dropped.
    """
    from toolkit.site.sanitize import clean_post_html

    marker = "_" + os.urandom(8).hex()  # "_": never read as a URL scheme (secrets.token_hex)
    for placeholder in set(placeholders):
        written = escape_html(placeholder)  # as the renderer wrote it in the attribute
        body_html = body_html.replace(written, written.replace("\x1a", marker))
    cleaned = clean_post_html(body_html.replace("\x1a", "")).replace("\x1a", "")
    return cleaned.replace(marker, "\x1a")


class HighlightCache:
    """Code blocks as Pygments highlighted them, kept in a folder between builds: a
    rebuild of a post whose code did not change needs no lexer (making one compiles its
    rules: some 40 ms for Python). One file per block, named by the digest of the
    Pygments version, the language and the code, holding the digest of the HTML and the
    HTML (a file cut short is not taken). Only a lexer of Pygments itself is kept (a
    plugin's may change without Pygments' version); `writable` is off in the workers of
    a big build, which would write a file for every block."""

    def __init__(self, folder: Path):
        self.folder = folder
        self.writable = True
        self._present: bool | None = None  # whether the folder is there (looked once)

    def _path(self, lang: str, code: str) -> Path:
        from toolkit.site.theme_files import pygments_version

        key = f"{pygments_version()}\0{lang}\0{code}".encode()
        return self.folder / hashlib.blake2b(key, digest_size=16).hexdigest()

    def get(self, lang: str, code: str) -> str | None:
        if self._present is None:
            self._present = self.folder.is_dir()
        if not self._present:
            return None
        try:  # a symlink planted under a block's name is not followed
            fd = os.open(self._path(lang, code), os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
            with os.fdopen(fd, "rb") as handle:
                digest, _, html = handle.read().partition(b"\n")
        except OSError:
            return None
        if hashlib.blake2b(html, digest_size=16).hexdigest().encode() != digest:
            return None
        return html.decode("utf-8")

    def put(self, lang: str, code: str, lexer: Lexer, html: str) -> None:
        if not self.writable or not type(lexer).__module__.startswith("pygments.lexers."):
            return
        data = html.encode("utf-8")
        digest = hashlib.blake2b(data, digest_size=16).hexdigest().encode()
        with contextlib.suppress(OSError):  # a cache: the page is right without it
            quick_write(self._path(lang, code), digest + b"\n" + data)
            self._present = True


class MarkdownRenderer:
    """Renders posts, any number of them: markdown-it-pyrs where it can (`fast`), else
    markdown-it-py, configured once each."""

    def __init__(
        self,
        content_dir: Path,
        key_prefix: str,
        page_prefix: str = "../",
        *,
        allow_raw_html: bool = False,
        say_fallbacks: bool = True,
        highlights: HighlightCache | None = None,
    ):
        self.content_dir = content_dir
        self.key_prefix = key_prefix  # project-relative path of content_dir, e.g. "content/"
        self.page_prefix = page_prefix  # from a post's page back to the site's root
        self.allow_raw_html = allow_raw_html  # [site] allow_raw_html: keep it as written
        # Whether a post left to markdown-it-py is said (at INFO): not by a second
        # renderer of the same posts (the full-content feed's), which would say it again.
        self.say_fallbacks = say_fallbacks
        self._lexers: dict[str, Lexer | None] = {}  # None: no lexer of that name
        self.highlights = highlights  # code highlighted by earlier builds
        self._formatter: HtmlFormatter[str] | None = None
        self._md: MarkdownIt | None = None
        rust = parser()
        self.fast = FastMarkdown(rust, self) if rust is not None else None  # None: no Rust

    @property
    def md(self) -> MarkdownIt:
        """markdown-it-py with the renderer's rules, made when a post first needs it."""
        if self._md is None:
            from markdown_it import MarkdownIt
            from mdit_py_plugins.footnote import footnote_plugin
            from mdit_py_plugins.tasklists import tasklists_plugin

            md = MarkdownIt("commonmark", {"highlight": self.highlight})
            md.enable(["table", "strikethrough"])
            md.use(footnote_plugin)
            md.core.ruler.push("heading_anchors", heading_anchors)
            # GitHub's task lists: `- [ ]` and `- [x]` as checkboxes a reader cannot change,
            # each in a <label> with its item's text (named for assistive technology).
            md.use(tasklists_plugin, label=True)
            closed_labels_only(md)
            # markdown-it binds a render rule to its renderer: plain functions, then.
            md.add_render_rule("image", lambda renderer, *args: self._image(renderer, *args))
            md.add_render_rule(
                "link_open", lambda renderer, *args: self._link_open(renderer, *args)
            )
            md.add_render_rule(
                "fence", lambda renderer, *args: focusable_pre(renderer.fence(*args))
            )
            md.add_render_rule(
                "code_block", lambda renderer, *args: focusable_pre(renderer.code_block(*args))
            )
            md.add_render_rule(
                "table_open", lambda renderer, *args: TABLE_OPEN + renderer.renderToken(*args)
            )
            md.add_render_rule(
                "table_close", lambda renderer, *args: renderer.renderToken(*args) + "</div>\n"
            )
            self._md = md
        return self._md

    def render(self, body: str, post_path: Path) -> Body:
        if self.fast is not None:
            try:
                return self.render_fast(body, post_path)
            except Unsupported as exc:
                if self.say_fallbacks:
                    log.info("%s: rendered with markdown-it-py (%s)", self._shown(post_path), exc)
            except Exception as exc:
                # A change of the Rust parser's tree must not fail a post the reference
                # renders: said as a warning, since it is a defect of the fast path.
                if self.say_fallbacks:
                    log.warning(
                        "%s: rendered with markdown-it-py (the fast path failed: %s)",
                        self._shown(post_path),
                        type(exc).__name__,
                    )
        return self.render_reference(body, post_path)

    def render_fast(self, body: str, post_path: Path) -> Body:
        """`render` with markdown-it-pyrs alone; `Unsupported` says why it cannot."""
        if self.fast is None:
            raise Unsupported("markdown-it-pyrs is not installed")
        env = self._env(post_path)
        body = self._take_maths(body, env)
        fast = self.fast.render(body, env)
        return self._finish(fast.html, env, fast.toc, raw_html=fast.raw_html)

    def render_reference(self, body: str, post_path: Path) -> Body:
        """`render` with markdown-it-py alone: the reference the fast path is held to."""
        env = self._env(post_path)
        body = self._take_maths(body, env)
        tokens = self.md.parse(body, env)
        body_html = self.md.renderer.render(tokens, self.md.options, env)
        return self._finish(
            body_html, env, table_of_contents(tokens), raw_html=has_raw_html(tokens)
        )

    @staticmethod
    def _env(post_path: Path) -> dict[str, Any]:
        return {"post_path": post_path, "links": [], "placeholders": [], "formulas": []}

    @staticmethod
    def _take_maths(body: str, env: dict[str, Any]) -> str:
        """`body` with its `{% katex %}` tags taken out (`liquid_render.extract_maths`)."""
        if "{%" not in body or "katex" not in body:
            return body
        from toolkit.site.liquid_render import extract_maths

        body, env["formulas"] = extract_maths(body)
        return body

    def _finish(
        self, body_html: str, env: dict[str, Any], toc: list[TocEntry], *, raw_html: bool
    ) -> Body:
        # Raw HTML is cleaned first: what the Liquid tags write is the renderer's own.
        if raw_html and not self.allow_raw_html:
            body_html = clean_raw_html(body_html, env["placeholders"])
        if "{%" in body_html or env["formulas"]:  # Liquid tags
            from toolkit.site.liquid_render import put_maths, render_tags, without_marks

            body_html = put_maths(render_tags(body_html), env["formulas"])
            for entry in toc:
                entry["text"] = without_marks(entry["text"], env["formulas"])
        return Body(
            html=body_html, excerpt=excerpt_of(body_html), links=sorted(set(env["links"])), toc=toc
        )

    def _shown(self, post_path: Path) -> str:
        """A post as the build's report names it: `content/guide/setup.md`."""
        try:
            return self.key_prefix + post_path.relative_to(self.content_dir).as_posix()
        except ValueError:
            return str(post_path)

    # -- code -------------------------------------------------------------------------

    def _lexer(self, lang: str) -> Lexer | None:
        if lang not in self._lexers:
            from pygments.lexers import get_lexer_by_name
            from pygments.util import ClassNotFound

            try:
                self._lexers[lang] = get_lexer_by_name(lang)
            except ClassNotFound:
                self._lexers[lang] = None
        return self._lexers[lang]

    def highlight(self, code: str, lang: str, attrs: str) -> str:
        """A fenced block highlighted by Pygments, or "" for markdown-it's plain block."""
        if not lang:
            return ""
        cached = self.highlights.get(lang.lower(), code) if self.highlights is not None else None
        if cached is None:
            lexer = self._lexer(lang.lower())
            if lexer is None:
                return ""  # markdown-it writes a plain, escaped code block
            from pygments import highlight

            if self._formatter is None:
                from pygments.formatters import HtmlFormatter

                self._formatter = HtmlFormatter(nowrap=True)
            cached = highlight(code, lexer, self._formatter)
            if self.highlights is not None:
                self.highlights.put(lang.lower(), code, lexer, cached)
        return (
            f'<pre class="highlight" tabindex="0"><code class="language-{escape_html(lang)}">'
            f"{cached}</code></pre>\n"
        )

    # -- images and links ---------------------------------------------------------------

    def _local_target(self, url: str, post_path: Path) -> tuple[Path, str] | None:
        """The file a relative URL names, and the URL's `#fragment` (or None)."""
        if not images.is_relative(url):
            return None
        target = images.resolve(url, post_path, self.content_dir)
        fragment = urlsplit(url).fragment
        return target, f"#{fragment}" if fragment else ""

    def _asset_url(self, url: str, post_path: Path) -> str:
        found = self._local_target(url, post_path)
        if found is None:
            return url
        relative = images.asset_path(found[0], self.content_dir)
        if relative is None:
            return url
        return self.page_prefix + quote(relative) + found[1]

    def image_src(self, src: str, env: MutableMapping[str, Any]) -> str:
        """An image's `src`: its copy in the output when it is a file of the content."""
        return self._asset_url(src, env["post_path"])

    def link_href(self, href: str, env: MutableMapping[str, Any]) -> str:
        """A link's `href`: a placeholder for a post (`resolve_links`), the copy in the
        output for a file of the content, else as written."""
        found = self._local_target(href, env["post_path"])
        if found is None:
            return href
        target, fragment = found
        if not is_post_path(target, self.content_dir):
            return self._asset_url(href, env["post_path"])
        key = self.key_prefix + target.relative_to(self.content_dir).as_posix()
        env["links"].append(key)
        # The original link stays as the fallback for a post not on the site.
        placeholder = f"\x1a{key}\x1a{fragment}\x1a{href}\x1a"
        env["placeholders"].append(placeholder)
        return placeholder

    def _image(
        self,
        renderer: RendererHTML,
        tokens: Sequence[Token],
        idx: int,
        options: OptionsDict,
        env: EnvType,
    ) -> str:
        token = tokens[idx]
        src = token.attrGet("src")
        if isinstance(src, str):
            token.attrSet("src", self.image_src(src, env))
        return renderer.image(tokens, idx, options, env)

    def _link_open(
        self,
        renderer: RendererHTML,
        tokens: Sequence[Token],
        idx: int,
        options: OptionsDict,
        env: EnvType,
    ) -> str:
        token = tokens[idx]
        href = token.attrGet("href")
        if isinstance(href, str) and href:
            token.attrSet("href", self.link_href(href, env))
        if token.attrGet("class") == "header-anchor":
            token.attrSet("aria-label", PERMALINK_LABEL)
        return renderer.renderToken(tokens, idx, options, env)
