"""Cleaning HTML that comes from outside before it reaches a page: mirrored comments, and
the raw HTML of a post's body.

nh3 (the Rust `ammonia` sanitiser) keeps a fixed list of harmless tags and attributes and
drops the rest: no `<script>`, `<style>`, `<iframe>` or `<form>`, no event handler or
`style` attribute, no URL with a scheme other than http, https or mailto. Comments and
posts share that list. A comment keeps no relative URL pointing into our site, and every
link it keeps gets `rel="nofollow ugc noopener"`: the text is user generated, we vouch
for none of it. A post may also hold exactly what the site's own Markdown renderer
writes (heading anchors, footnotes, table alignment, code blocks and tables that take the
keyboard focus: `toolkit/site/markdown.py`; task lists' disabled checkboxes; the cards and
click-to-load frames of dev.to's Liquid tags: `toolkit/site/liquid_render.py`, whose frame URL
the theme's script loads only from the services it knows), and its relative links stay:
they are the writer's own.
"""

from __future__ import annotations

import re

import nh3

from toolkit.site.markdown_fast import PERMALINK_LABEL, is_theme_id

ALLOWED_TAGS = frozenset(
    {
        "a",
        "abbr",
        "b",
        "blockquote",
        "br",
        "code",
        "dd",
        "del",
        "details",
        "div",
        "dl",
        "dt",
        "em",
        "figcaption",
        "figure",
        "h1",
        "h2",
        "h3",
        "h4",
        "h5",
        "h6",
        "hr",
        "i",
        "img",
        "kbd",
        "li",
        "mark",
        "ol",
        "p",
        "pre",
        "q",
        "s",
        "span",
        "strong",
        "sub",
        "summary",
        "sup",
        "table",
        "tbody",
        "td",
        "th",
        "thead",
        "tr",
        "u",
        "ul",
    }
)
ALLOWED_ATTRIBUTES = {
    "a": {"href", "title"},
    "img": {"src", "alt", "title", "width", "height"},
    "code": {"class"},  # the language of a code block
    "pre": {"class"},
    "span": {"class"},  # highlighted code
    "td": {"colspan", "rowspan"},
    "th": {"colspan", "rowspan"},
    "ol": {"start"},
}
URL_SCHEMES = frozenset({"http", "https", "mailto"})

# What the Markdown renderer writes on top of the shared list. Classes are allowed by name
# (nh3's `allowed_classes`) and table alignment by exact value: raw HTML in a post gets
# these and nothing more.
# A post also keeps what dev.to's scrubber (Forem's RenderedMarkdownScrubber) keeps and a
# static page can carry safely: a few more tags, `id` and `title` on every element (a
# writer's own anchors: `<a name="figure1"></a>`, `<span id="note">`), `value` on a list
# item. An `id` or `name` that is one of the theme's own ids is dropped (`_post_attribute`).
POST_TAGS = ALLOWED_TAGS | {
    "section",
    "input",
    "label",
    "cite",
    "small",
    "tfoot",
    "time",
    "ruby",
    "rt",
    "rp",
}
_ANCHORED = {"id", "title"}
POST_ATTRIBUTES = {
    **{tag: set(_ANCHORED) for tag in POST_TAGS if tag not in ("input", "label")},
    **{tag: names | _ANCHORED for tag, names in ALLOWED_ATTRIBUTES.items()},
    "a": ALLOWED_ATTRIBUTES["a"] | _ANCHORED | {"name"},
    "li": _ANCHORED | {"value"},
    # A Liquid tag's frame, loaded on the reader's click: the theme's script loads only
    # the services of `content.liquid.FRAME_PREFIXES` (`site.liquid_render`).
    "div": _ANCHORED | {"data-frame"},
}
POST_CLASSES = {
    "a": {"header-anchor", "footnote-backref"},
    "sup": {"footnote-ref"},
    "hr": {"footnotes-sep"},
    "section": {"footnotes"},
    "ol": {"footnotes-list", "contains-task-list"},
    "li": {"footnote-item", "task-list-item"},
    "ul": {"contains-task-list"},
    "div": {"table-wrap", "embed-card", "embed-frame"},
}
_ALIGNMENTS = {f"text-align:{side}" for side in ("left", "center", "right")}
POST_ATTRIBUTE_VALUES = {
    "th": {"style": _ALIGNMENTS},
    "td": {"style": _ALIGNMENTS},
    "pre": {"tabindex": {"0"}},  # a code block scrolls: it takes the focus
    "a": {"aria-label": {PERMALINK_LABEL}},  # a heading's permalink
    "div": {
        "tabindex": {"0"},
        "role": {"region"},
        "aria-label": {"Table"},
        "class": {"table-wrap", "embed-card", "embed-frame"},
    },
    # A task list's checkbox, which the reader cannot change.
    "input": {
        "class": {"task-list-item-checkbox"},
        "type": {"checkbox"},
        "disabled": {"disabled"},
        "checked": {"checked"},
    },
}
# Elements whose content goes too: keeping a script's or a style sheet's text would only
# show code to the reader.
DROPPED_WITH_CONTENT = frozenset(
    {
        "script",
        "style",
        "iframe",
        "object",
        "embed",
        "template",
        "noscript",
        "form",
        "textarea",
        "select",
        "button",
    }
)
LINK_REL = "nofollow ugc noopener"


def clean_html(fragment: str, base_url: str | None = None) -> str:
    """A fragment of untrusted HTML made safe to put in a page as it is.

    A relative URL in it meant something on the site it came from, nothing on ours: it is
    resolved against `base_url` (that site) when given, and dropped otherwise.
    """
    return nh3.clean(
        fragment,
        tags=set(ALLOWED_TAGS),
        clean_content_tags=set(DROPPED_WITH_CONTENT),
        attributes={tag: set(names) for tag, names in ALLOWED_ATTRIBUTES.items()},
        url_schemes=set(URL_SCHEMES),
        link_rel=LINK_REL,
        strip_comments=True,
        url_relative=("rewrite_with_base", base_url) if base_url else "deny",
    )


# The MathML a `{% katex %}` formula is written as (latex2mathml's presentation markup):
# its elements and their layout attributes, never `href` or `style`, which TeX's `\\href`
# and `\\style` would put there, nor an HTML element `\\text{...}` would carry.
MATHML_TAGS = frozenset(
    {
        "math", "semantics", "annotation", "mrow", "mi", "mo", "mn", "ms", "mtext", "mspace",
        "mfrac", "msqrt", "mroot", "mstyle", "merror", "mpadded", "mphantom", "menclose",
        "msub", "msup", "msubsup", "munder", "mover", "munderover", "mmultiscripts",
        "mprescripts", "none", "mtable", "mtr", "mtd", "mlabeledtr",
    }
)  # fmt: skip
MATHML_ATTRIBUTES = frozenset(
    {
        "xmlns", "display", "displaystyle", "scriptlevel", "mathvariant", "mathsize",
        "mathcolor", "mathbackground", "fence", "separator", "stretchy", "symmetric",
        "largeop", "movablelimits", "accent", "accentunder", "form", "lspace", "rspace",
        "minsize", "maxsize", "linethickness", "notation", "width", "height", "depth",
        "voffset", "linebreak", "columnalign", "rowalign", "columnspacing", "rowspacing",
        "columnlines", "rowlines", "frame", "framespacing", "equalrows", "equalcolumns",
        "rowspan", "columnspan", "encoding",
    }
)  # fmt: skip


_MATHML_TAG = re.compile(r"<(/?)([a-z]+)((?:[ ]+[a-z]+=\"[^\"<>]*\")*)[ ]*/?>")
_MATHML_ATTRIBUTE = re.compile(r"([a-z]+)=")


def _plain_mathml(markup: str) -> bool:
    """Whether every element and attribute of `markup` is on the MathML lists (as
    latex2mathml writes a formula without `\\href`, `\\style` or HTML in its text)."""
    at = 0
    while (start := markup.find("<", at)) != -1:
        tag = _MATHML_TAG.match(markup, start)
        if tag is None or tag.group(2) not in MATHML_TAGS:
            return False
        if any(name not in MATHML_ATTRIBUTES for name in _MATHML_ATTRIBUTE.findall(tag.group(3))):
            return False
        at = tag.end()
    return True


def clean_mathml(markup: str) -> str:
    """A formula's MathML made safe to put in a page: MathML's elements and layout
    attributes only (the TeX is the post's, as hostile as the rest of it). Markup with
    nothing else is kept as it is written; any other goes through nh3."""
    if _plain_mathml(markup):
        return markup
    return nh3.clean(
        markup,
        tags=set(MATHML_TAGS),
        clean_content_tags=set(DROPPED_WITH_CONTENT),
        attributes={"*": set(MATHML_ATTRIBUTES)},
        url_schemes=set(),
        link_rel=None,
        strip_comments=True,
    )


def _post_attribute(element: str, attribute: str, value: str) -> str | None:
    """nh3's filter of a post's attributes: an anchor that would take an id of the theme's
    page (`#content`, `#comments`) is dropped, so the page's own links keep their target."""
    if attribute in ("id", "name") and is_theme_id(value):
        return None
    return value


def clean_post_html(fragment: str) -> str:
    """A post's rendered body, its raw HTML made safe: what the renderer wrote survives,
    with the same meaning (nh3 writes it out again, so `<br />` becomes `<br>`)."""
    return nh3.clean(
        fragment,
        tags=set(POST_TAGS),
        clean_content_tags=set(DROPPED_WITH_CONTENT),
        attributes={tag: set(names) for tag, names in POST_ATTRIBUTES.items()},
        allowed_classes={tag: set(names) for tag, names in POST_CLASSES.items()},
        tag_attribute_values={
            tag: {name: set(values) for name, values in attrs.items()}
            for tag, attrs in POST_ATTRIBUTE_VALUES.items()
        },
        url_schemes=set(URL_SCHEMES),
        link_rel=None,
        strip_comments=True,
        url_relative="pass_through",
        attribute_filter=_post_attribute,
    )
