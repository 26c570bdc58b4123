"""MDX as dev.to reads it: statements and comments removed, components translated or
removed with their children kept."""

from __future__ import annotations

import re

from toolkit.content.translate.rewriter import Rewriter
from toolkit.content.translate.scan import MAX_TOKEN, YOUTUBE_ID, escape_label, link_target


class Mdx(Rewriter):
    """An `.mdx` post: its statements, `{/* comments */}` and components."""

    def run(self) -> None:
        body, view = self.body, self.view
        imported: dict[str, str] = {}  # a name imported from an image file -> its path
        # Statements: `import`/`export` at the start of a line, up to where their brackets
        # close at the end of a line.
        line_start = 0
        n = len(body)
        while line_start < n:
            line_end = view.find("\n", line_start)
            line_end = n if line_end < 0 else line_end
            head = view[line_start : line_start + 7]
            if head.startswith(("import ", "export ")) or head in ("import{", "export{"):
                stop = self._statement_end(line_start)
                statement = body[line_start:stop]
                found = re.match(
                    r"""import\s+([A-Za-z_$][\w$]*)\s+from\s+["']([^"'\n]+\.(?:png|jpe?g|gif|webp|svg|avif))["']""",
                    statement,
                )
                if found:
                    imported[found.group(1)] = found.group(2)
                self.replace(line_start, min(stop + 1, n), "")
                line_start = stop + 1
                continue
            line_start = line_end + 1
        self._mdx_elements(imported)

    def _statement_end(self, start: int) -> int:
        """The offset of the line break ending the statement that starts at `start`: where
        its brackets are closed at the end of a line that continues nothing, else before
        a blank line or code (MDX ends an `import`/`export` block at a blank line). One
        forward scan: the caller goes on after it."""
        view, n = self.view, len(self.view)
        depth = 0
        quote = ""
        i = start
        while i < n:
            char = view[i]
            if char == "\n":
                if quote != "`":
                    quote = ""  # a '...' or "..." string ends with its line
                after = view.find("\n", i + 1)
                following = view[i + 1 : n if after < 0 else after]
                if not following.strip() or self.crosses_code(i, i + 2):
                    return i
                if depth <= 0:
                    tail = view[max(start, i - 8) : i].rstrip()
                    if not tail.endswith((",", "=", "+", "-", "(", "{", "[", ":", "?", "&", "|")):
                        return i
            elif quote:
                if char == "\\":
                    i += 1
                elif char == quote:
                    quote = ""
            elif char in "\"'`":
                quote = char
            elif char in "([{":
                depth += 1
            elif char in ")]}":
                depth -= 1
            i += 1
        return n

    def _mdx_elements(self, imported: dict[str, str]) -> None:
        view, body = self.view, self.body
        pos = 0
        # The next `{/*`, `*/}` and `<` found (-1: none is), each searched again only
        # once the scan has passed it.
        next_comment = next_close = next_tag = -2
        while True:
            if next_comment != -1 and next_comment < pos:
                next_comment = view.find("{/*", pos)
            if next_tag != -1 and next_tag < pos:
                next_tag = view.find("<", pos)
            j = next_tag
            i = next_comment
            if i >= 0 and (j < 0 or i < j):
                if next_close != -1 and next_close < i + 3:
                    next_close = view.find("*/}", i + 3)
                if next_close < 0 or next_close - i > MAX_TOKEN or self.crosses_code(i, next_close):
                    pos = i + 3
                    continue
                self.replace(i, next_close + 3, "")
                pos = next_close + 3
                continue
            if j < 0:
                break
            found = _ELEMENT.match(view, j)
            if found is None:
                pos = j + 1
                continue
            end = _tag_end(view, found.end())
            if end < 0 or self.crosses_code(j, end):
                # Not a tag: what the scan passed over is text (never scanned again).
                pos = -end if end < 0 else found.end()
                continue
            if found.group(1) == "/":
                self.replace(j, end, "")  # the children stay
            else:
                attributes = _attributes(body[found.end() : end - 1])
                self.replace(j, end, self._component(j, found.group(2), attributes, imported))
            pos = end

    def _component(
        self, offset: int, name: str, attributes: dict[str, str], imported: dict[str, str]
    ) -> str:
        key = name.lower().split(".")[-1]

        def first(*names: str) -> str:
            for attr in names:
                if attributes.get(attr):
                    return attributes[attr].strip()
            return ""

        if key in ("youtube", "youtubeembed", "liteyoutube", "liteyoutubeembed", "youtubevideo"):
            video = first("id", "videoid", "video", "url", "src")
            found = re.search(r"(?:v=|youtu\.be/|embed/)([A-Za-z0-9_-]{11})", video)
            video = found.group(1) if found else video
            if YOUTUBE_ID.fullmatch(video):
                return f"{{% youtube {video} %}}"
        elif key in ("tweet", "twitter", "tweetembed", "xembed", "xpost", "statictweet"):
            post = first("id", "tweetid", "tweetlink", "url", "src")
            found = re.search(r"([0-9]{1,20})/?$", post)
            if found:
                return f"{{% twitter {found.group(1)} %}}"
        elif key in ("vimeo", "vimeoembed"):
            video = first("id", "videoid", "url", "src")
            found = re.search(r"([0-9]{1,20})/?$", video)
            if found:
                return f"{{% vimeo {found.group(1)} %}}"
        elif key in ("gist", "githubgist"):
            url = first("url", "src", "id", "gist")
            found = re.search(r"([A-Za-z0-9-]{1,39})/([A-Za-z0-9]{1,40})/?$", url)
            if found:
                return f"{{% gist https://gist.github.com/{found.group(1)}/{found.group(2)} %}}"
        elif key in ("image", "img", "picture", "figure"):
            src = first("src", "image")
            src = imported.get(src.strip("{}").strip(), src) if src.startswith("{") else src
            if src and not src.startswith("{"):
                alt = first("alt", "title")
                return f"![{escape_label(alt)}]({link_target(src)})"
        self.note(offset, f"<{name}>: a component dev.to has no equivalent for; left out")
        return ""


_ELEMENT = re.compile(r"<(/?)([A-Z][\w]*(?:\.[A-Za-z_]\w*)*)(?=[\s/>])")


def _tag_end(view: str, start: int) -> int:
    """Where the tag whose name ends at `start` ends (after its `>`), or, negated, where
    the scan stopped without finding it: attribute values in quotes or braces may hold
    `>`; a `<` outside them, a blank line or `MAX_TOKEN` characters end the search."""
    depth = 0
    quote = ""
    limit = min(len(view), start + MAX_TOKEN)
    i = start
    while i < limit:
        char = view[i]
        if quote:
            if char == quote:
                quote = ""
        elif depth:
            if char == "{":
                depth += 1
            elif char == "}":
                depth -= 1
            elif char in "\"'`":
                quote = char
        elif char in "\"'":
            quote = char
        elif char == "{":
            depth = 1
        elif char == ">":
            return i + 1
        elif char == "<" or (char == "\n" and view.startswith("\n", i + 1)):
            return -i
        i += 1
    return -max(i, start)


def _attributes(text: str) -> dict[str, str]:
    """A JSX tag's attributes: `a="v"`, `a='v'`, `a={expression}` (kept with its braces
    when not a string), bare `a`."""
    found: dict[str, str] = {}
    i, n = 0, len(text)
    while i < n:
        while i < n and (text[i].isspace() or text[i] in "/>"):
            i += 1
        start = i
        while i < n and (text[i].isalnum() or text[i] in "_-:"):
            i += 1
        name = text[start:i].lower()
        if not name:
            i += 1
            continue
        if i < n and text[i] == "=":
            i += 1
            if i < n and text[i] in "\"'":
                quote = text[i]
                end = text.find(quote, i + 1)
                end = n if end < 0 else end
                found[name] = text[i + 1 : end]
                i = end + 1
            elif i < n and text[i] == "{":
                depth, j = 0, i
                while j < n:
                    if text[j] == "{":
                        depth += 1
                    elif text[j] == "}":
                        depth -= 1
                        if depth == 0:
                            break
                    j += 1
                inner = text[i + 1 : j].strip()
                if len(inner) >= 2 and inner[0] == inner[-1] and inner[0] in "\"'`":
                    found[name] = inner[1:-1]
                else:
                    found[name] = "{" + inner + "}"
                i = j + 1
        else:
            found[name] = ""
    return found
