"""Hugo's shortcodes (`{{< name >}}`, `{{% name %}}`) as dev.to reads them."""

from __future__ import annotations

import re

from toolkit.content.translate.rewriter import Rewriter
from toolkit.content.translate.scan import (
    DIGITS,
    MAX_TOKEN,
    YOUTUBE_ID,
    Token,
    code_span,
    escape_label,
    link_target,
    link_title,
    parse_params,
)


class Hugo(Rewriter):
    """A Hugo post: its shortcodes and `{{ .Site.BaseURL }}`."""

    def run(self) -> None:
        tokens = self._hugo_tokens()
        pairs = _pair(tokens)
        closed = set(pairs.values())
        skip_until = -1
        for index, token in enumerate(tokens):
            if token.start < skip_until:
                continue
            closing = pairs.get(index)
            if token.kind == "literal":
                inner = token.text.strip()[2:-2].strip()
                self.replace(
                    token.start, token.stop, code_span(f"{token.opener} {inner} {token.closer}")
                )
            elif token.kind == "close":
                if index not in closed:
                    self.note(token.start, f"`{{{{< /{token.name} >}}}}` closes nothing; left out")
                closes = self._hugo_close(token) if index in closed else ""
                self.replace(token.start, token.stop, closes)
            else:
                end = tokens[closing] if closing is not None else None
                done = self._hugo_open(token, end)
                if done is not None and end is not None:
                    skip_until = end.stop
        self._site_variables(hugo=True)
        self._escape_strays(("{{<", "{{%", "{{ site.", "{{site."))

    def _hugo_tokens(self) -> list[Token]:
        view = self.view
        tokens: list[Token] = []
        next_close: dict[str, int] = {}
        pos = 0
        while True:
            i = view.find("{{", pos)
            if i < 0:
                break
            opener = view[i + 2 : i + 3]
            if opener not in ("<", "%"):
                pos = i + 1
                continue
            closer = (">" if opener == "<" else "%") + "}}"
            j = next_close.get(opener, -2)
            if j != -1 and j < i + 3:
                j = view.find(closer, i + 3)
                next_close[opener] = j
            if j < 0 or j - i > MAX_TOKEN or self.crosses_code(i, j):
                pos = i + 3
                continue
            inner = view[i + 3 : j]
            stripped = inner.strip()
            if stripped.startswith("/*") and stripped.endswith("*/"):
                tokens.append(Token("literal", "", i, j + 3, inner, "{{" + opener, closer))
            elif stripped.startswith("/"):
                name = stripped[1:].strip().split(None, 1)[0] if stripped[1:].strip() else ""
                tokens.append(Token("close", name.lower(), i, j + 3, "", "{{" + opener, closer))
            else:
                self_closed = stripped.endswith("/")
                text = stripped[:-1] if self_closed else stripped
                parts = text.split(None, 1)
                name = parts[0] if parts else ""
                kind = "self" if self_closed else "open"
                args = parts[1] if len(parts) > 1 else ""
                tokens.append(Token(kind, name.lower(), i, j + 3, args, "{{" + opener, closer))
            pos = j + 3
        return tokens

    def _hugo_close(self, token: Token) -> str:
        if token.name == "details":
            return "{% enddetails %}"
        return ""

    def _hugo_open(self, token: Token, end: Token | None) -> str | None:
        """Replace an opening (or self-closed) shortcode; returns non-None when the pair's
        inner text was consumed as well."""
        positional, named = parse_params(token.text)
        name = token.name

        def arg(*keys: str, at: int = 0) -> str:
            for key in keys:
                if named.get(key):
                    return named[key].strip()
            return positional[at].strip() if len(positional) > at else ""

        start, stop = token.start, token.stop
        if name == "youtube":
            video = arg("id")
            if YOUTUBE_ID.fullmatch(video):
                self.replace(start, stop, f"{{% youtube {video} %}}")
            else:
                self._unknown(token, "needs a YouTube video id")
        elif name == "vimeo":
            video = arg("id")
            if DIGITS.fullmatch(video):
                self.replace(start, stop, f"{{% vimeo {video} %}}")
            else:
                self._unknown(token, "needs a Vimeo video number")
        elif name in ("x", "tweet", "twitter"):
            post = named.get("id", "").strip()
            if not post:
                post = next((p for p in reversed(positional) if DIGITS.fullmatch(p)), "")
            if DIGITS.fullmatch(post):
                self.replace(start, stop, f"{{% twitter {post} %}}")
            else:
                self._unknown(token, "needs a post's id")
        elif name == "gist":
            self._gist(token, arg("user", at=0), arg("id", at=1), arg("file", at=2))
        elif name == "instagram":
            post_id = arg("id")
            if re.fullmatch(r"[A-Za-z0-9_-]{1,64}", post_id):
                self.replace(start, stop, f"{{% instagram {post_id} %}}")
            else:
                self._unknown(token, "needs a post's id")
        elif name == "figure":
            self.replace(start, stop, self._figure(named))
        elif name in ("ref", "relref"):
            path = arg("path")
            self.replace(start, stop, self.page(start, name, path))
        elif name == "details":
            summary = " ".join(arg("summary").split()) or "Details"
            if end is None:
                self._unknown(token, "is not closed")
            else:
                self.replace(start, stop, f"{{% details {summary} %}}")
        elif name == "highlight" and end is not None:
            lang = arg("lang", "language")
            code = self.body[stop : end.start]
            self.replace(start, end.stop, self.fence(start, end.stop, lang, code))
            return "consumed"
        elif name == "comment" and end is not None:
            self.replace(start, end.stop, "")
            return "consumed"
        else:
            self._unknown(token, "a shortcode dev.to has no equivalent for")
        return None

    def _figure(self, named: dict[str, str]) -> str:
        src = named.get("src", "").strip()
        alt = named.get("alt") or named.get("title") or ""
        title = named.get("title", "")
        image = f"![{escape_label(alt)}]({link_target(src)}{link_title(title)})"
        link = named.get("link", "").strip()
        if link:
            image = f"[{image}]({link_target(link)})"
        caption = " ".join(named.get("caption", "").split())
        attr = " ".join(named.get("attr", "").split())
        if attr:
            attrlink = named.get("attrlink", "").strip()
            attr = f"[{escape_label(attr)}]({link_target(attrlink)})" if attrlink else attr
            caption = f"{caption} {attr}".strip()
        return f"{image}\n*{caption}*" if caption else image


def _pair(tokens: list[Token]) -> dict[int, int]:
    """Opening token index -> its closing token index (Hugo's nesting, by name)."""
    stacks: dict[str, list[int]] = {}
    pairs: dict[int, int] = {}
    for index, token in enumerate(tokens):
        if token.kind == "open":
            stacks.setdefault(token.name, []).append(index)
        elif token.kind == "close" and stacks.get(token.name):
            pairs[stacks[token.name].pop()] = index
    return pairs
