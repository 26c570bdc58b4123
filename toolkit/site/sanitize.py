"""Cleaning HTML that comes from outside (mirrored comments) before it reaches a page.

nh3 (the Rust `ammonia` sanitiser) keeps a fixed list of harmless tags and attributes and
drops the rest: no `<script>`, `<style>`, `<iframe>` or `<form>`, no event handler or
`style` attribute, no URL with a scheme other than http, https or mailto, no relative URL
left pointing into our site. Every link it keeps gets `rel="nofollow ugc noopener"`: the
text is user generated, we vouch for none of it.
"""

from __future__ import annotations

import nh3

ALLOWED_TAGS = frozenset({
    "a", "abbr", "b", "blockquote", "br", "code", "dd", "del", "details", "div", "dl", "dt",
    "em", "figcaption", "figure", "h1", "h2", "h3", "h4", "h5", "h6", "hr", "i", "img",
    "kbd", "li", "mark", "ol", "p", "pre", "q", "s", "span", "strong", "sub", "summary",
    "sup", "table", "tbody", "td", "th", "thead", "tr", "u", "ul",
})
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
# Elements whose content goes too: keeping a script's or a style sheet's text would only
# show code to the reader.
DROPPED_WITH_CONTENT = frozenset({"script", "style", "iframe", "object", "embed", "template",
                                  "noscript", "form", "textarea", "select", "button"})
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
