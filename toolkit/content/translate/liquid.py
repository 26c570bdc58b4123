"""Liquid (Jekyll, Eleventy) as dev.to reads it: dev.to's own tags kept, the others
translated or left out."""

from __future__ import annotations

import re
from bisect import bisect_left

from toolkit.content.liquid import SUPPORTED
from toolkit.content.translate.rewriter import Rewriter
from toolkit.content.translate.scan import MAX_TOKEN, Token, escape_label, link_target, parse_params

# dev.to's Liquid tags, kept as written in a Liquid generator's post: those the site
# renders (`liquid.SUPPORTED`) and Forem's others (its app/liquid_tags). dev.to refuses an
# article holding a tag it does not know, so any other tag is left out.
DEVTO_TAGS = frozenset(SUPPORTED) | frozenset(
    {
        "katex", "endkatex", "raw", "endraw", "asciinema", "bandcamp", "blogcast", "bluesky",
        "card", "cta", "endcta", "forem", "gitlab", "golang", "huggingface", "jsitor",
        "kotlin", "listing", "livecodes", "loom", "nexttech", "organization", "parler",
        "poll", "runkit", "endrunkit", "stackery", "video", "twitch",
    }
)  # fmt: skip


class Liquid(Rewriter):
    """A Jekyll or Eleventy post: its Liquid tags and `{{ site.* }}` values."""

    def run(self) -> None:
        tokens = self._liquid_tokens()
        where: dict[str, list[int]] = {}  # a tag's name -> the indexes of its tokens
        for at, token in enumerate(tokens):
            where.setdefault(token.name, []).append(at)
        index = 0
        while index < len(tokens):
            token = tokens[index]
            index += 1
            name, args = token.name, token.text
            start, stop = token.start, token.stop
            if name in ("raw", "highlight", "comment"):
                end_name = "end" + name
                ends = where.get(end_name, [])
                found_at = bisect_left(ends, index)
                closing = ends[found_at] if found_at < len(ends) else None
                if closing is None:
                    if name != "raw":
                        self.note(start, f"{{% {name} %}} is not closed; left out")
                        self.replace(start, stop, "")
                    continue
                end = tokens[closing]
                index = closing + 1
                if name == "highlight":
                    lang = args.split()[0] if args.split() else ""
                    code = self.body[stop : end.start]
                    self.replace(start, end.stop, self.fence(start, end.stop, lang, code))
                elif name == "comment":
                    self.replace(start, end.stop, "")
                else:  # raw: kept as written, and what it holds is not read
                    self.replace(start, end.stop, self.body[start : end.stop])
                continue
            if name in ("post_url", "link"):
                self.replace(start, stop, self.page(start, name, args.strip()))
            elif name in ("twitter", "tweet") and args.strip().startswith("http"):
                found = re.search(r"/status(?:es)?/([0-9]{1,20})", args)
                if found:
                    self.replace(start, stop, f"{{% twitter {found.group(1)} %}}")
            elif name == "gist" and not args.strip().startswith("http"):
                positional, _ = parse_params(args)
                first = positional[0] if positional else ""
                file = positional[1] if len(positional) > 1 else ""
                self._gist(token, first, "", file)
            elif name in ("image", "img") and args.strip():
                # Eleventy's image shortcode: `{% image "./x.png", "Its alt text" %}`.
                words, _ = parse_params(args)
                positional = [w.rstrip(",") for w in words if w.rstrip(",")]
                alt = positional[1] if len(positional) > 1 else ""
                image = f"![{escape_label(alt)}]({link_target(positional[0])})"
                self.replace(start, stop, image)
            elif name not in DEVTO_TAGS:
                shown = f"{{% {name} %}}"
                self.note(start, f"{shown}: a Liquid tag dev.to does not know; left out")
                self.replace(start, stop, "")
        self._site_variables(hugo=False)
        self._escape_strays(("{{ site.", "{{site.", "{{- site.", "{{-site."))

    def _liquid_tokens(self) -> list[Token]:
        """`{% name args %}` on one line, outside code."""
        view = self.view
        tokens: list[Token] = []
        next_close = -2
        next_line = -2
        pos = 0
        while True:
            i = view.find("{%", pos)
            if i < 0:
                break
            if next_close != -1 and next_close < i + 2:
                next_close = view.find("%}", i + 2)
            if next_line != -1 and next_line < i:
                next_line = view.find("\n", i)
            j = next_close
            if j < 0 or (0 <= next_line < j) or j - i > MAX_TOKEN or self.crosses_code(i, j):
                pos = i + 2
                continue
            inner = view[i + 2 : j].strip().strip("-").strip()
            parts = inner.split(None, 1)
            if parts and re.fullmatch(r"[A-Za-z_][\w-]*", parts[0]):
                args = parts[1] if len(parts) > 1 else ""
                tokens.append(Token("tag", parts[0].lower(), i, j + 2, args, "{%", "%}"))
            pos = j + 2
        return tokens
