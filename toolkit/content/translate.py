"""Bodies as dev.to reads them: a post written for another generator, translated.

A blog kept with Hugo, Jekyll, Eleventy, Astro or Next holds its generator's syntax in
its posts; dev.to would show it as text (or refuse a Liquid tag it does not know). What
`translate` does, outside fenced code and code spans (code shows syntax as written):

- Hugo shortcodes, `{{< name ... >}}` and `{{% name ... %}}`, named or positional
  parameters, closing `{{< /name >}}`: `youtube`, `vimeo` become dev.to's tags of the same
  name, `x`/`tweet`/`twitter` its `{% twitter id %}`, `gist` its `{% gist URL %}`,
  `figure` an image with its caption, `highlight` a fenced block, `ref`/`relref` the
  absolute address of the page named, `details` dev.to's `{% details %}`; `comment` is
  removed with what it holds; `{{</* name */>}}` (Hugo's way to show one) becomes a code
  span. Hugo's `{{ .Site.BaseURL }}` becomes the site's address.
- Liquid (Jekyll, Eleventy): `{% highlight lang %}...{% endhighlight %}` a fenced block,
  `{% post_url NAME %}` and `{% link PATH %}` the page's address, `{% comment %}` removed,
  `{% raw %}` kept (dev.to reads it); `{{ site.baseurl }}`, `{{ site.url }}` and the
  `relative_url`/`absolute_url`/`url` filters expanded; dev.to's own tags kept.
- MDX (`.mdx` files): `import`/`export` statements and `{/* comments */}` removed;
  components (a capitalised element) translated when dev.to has the embed (`<YouTube>`,
  `<Tweet>`, `<Vimeo>`, `<Gist>`, `<Image>`/`<Picture>` as an image), else removed with
  their children kept.

Anything else of the generator's (an unknown shortcode, tag or component) is removed and
named in a `Note`: the post is still sent. Every scanner here is linear in the body's size:
delimiters are found with `str.find` and each search resumes where the last one stopped.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Callable
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from toolkit.content.images import code_mask
from toolkit.content.liquid import SUPPORTED
from toolkit.redact import quoted

MAX_TOKEN = 4000  # characters of one shortcode, tag or component: longer is text
_YOUTUBE_ID = re.compile(r"[A-Za-z0-9_-]{11}")
_DIGITS = re.compile(r"[0-9]{1,20}")
_GIST_USER = re.compile(r"[A-Za-z0-9](?:-?[A-Za-z0-9]){0,38}")
_GIST_ID = re.compile(r"[A-Za-z0-9]{1,40}")
_FILE_NAME = re.compile(r"[\w.-]{1,200}")

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


@dataclass(frozen=True)
class Note:
    """What the translation could not carry over, at a 1-based line of the body."""

    line: int
    message: str


@dataclass(frozen=True)
class Site:
    """What translating asks of the project: the writer's site and its pages.

    `url`: the site's address (`[source] url`, with Jekyll's `baseurl` path); `page_of`:
    the absolute address of the page of another post named as the generator names it
    (a Hugo `ref` path, a Jekyll `post_url` name), or None when no post has that name."""

    url: str | None = None
    page_of: Callable[[str], str | None] = field(default=lambda _name: None)

    @property
    def origin(self) -> str:
        if not self.url:
            return ""
        parts = urlsplit(self.url)
        return f"{parts.scheme}://{parts.netloc}" if parts.scheme and parts.netloc else ""

    @property
    def base_path(self) -> str:
        """Jekyll's `baseurl`: the path the site is served under, without a final `/`."""
        return urlsplit(self.url).path.rstrip("/") if self.url else ""


@dataclass
class Translation:
    """The translated body, what was left out, and where each part came from."""

    body: str
    notes: list[Note]
    # (start in `body`, start in the source, copied): a copied piece maps offset for
    # offset, a replaced one to the start of what it replaced.
    pieces: list[tuple[int, int, bool]] = field(default_factory=list)
    source_lines: list[int] = field(default_factory=lambda: [0])  # where the source's lines start

    def line_map(self) -> list[int]:
        """For each line of the translated body (index 0: line 1), the source's line: one
        walk, as the pieces and the source's lines are both in order."""
        lines: list[int] = []
        piece = source_line = 0
        pieces, starts = self.pieces or [(0, 0, True)], self.source_lines
        for start in _line_starts(self.body):
            while piece + 1 < len(pieces) and pieces[piece + 1][0] <= start:
                piece += 1
            out_start, in_start, copied = pieces[piece]
            offset = in_start + (start - out_start) if copied else in_start
            while source_line + 1 < len(starts) and starts[source_line + 1] <= offset:
                source_line += 1
            lines.append(source_line + 1)
        return lines


def identity(body: str) -> Translation:
    return Translation(body, [], [(0, 0, True)], _line_starts(body))


def translates(generator: str, *, mdx: bool = False) -> bool:
    """Whether a post of `generator` (an `.mdx` file when `mdx`) is translated at all."""
    return mdx or generator in ("hugo", "jekyll", "eleventy")


def translate(
    body: str, generator: str, site: Site | None = None, *, mdx: bool = False
) -> Translation:
    """`body` as dev.to reads it (module doc); a dev.to-style post is returned unchanged."""
    if not translates(generator, mdx=mdx):
        return identity(body)
    rewriter = _Rewriter(body, site or Site())
    if mdx:
        rewriter.mdx()
    elif generator == "hugo":
        rewriter.hugo()
    else:
        rewriter.liquid()
    return rewriter.finish()


def _line_starts(text: str) -> list[int]:
    starts = [0]
    index = text.find("\n")
    while index >= 0:
        starts.append(index + 1)
        index = text.find("\n", index + 1)
    return starts


def _last_at_most(values: list[int], value: int) -> int:
    """The index of the last of the sorted `values` at most `value` (0 when none is)."""
    low, high = 0, len(values) - 1
    while low < high:
        mid = (low + high + 1) // 2
        if values[mid] <= value:
            low = mid
        else:
            high = mid - 1
    return low


def masked(body: str) -> str:
    """`body` with fenced code blocks and code spans blanked (same length, line breaks
    kept), in one linear pass: where the generator's syntax is read."""
    return masked_code(body)[0]


def masked_code(body: str) -> tuple[str, list[int]]:
    """`masked(body)`, and the offsets where its blanked code starts (sorted): something
    read from the rest may not reach over code."""
    lines = body.split("\n")
    mask = code_mask(body)
    out: list[str] = []
    starts: list[int] = []
    offset = 0
    for line, inside in zip(lines, mask, strict=True):
        if inside:
            if line:
                starts.append(offset)
            out.append(" " * len(line))
        else:
            spans = code_spans(line)
            starts.extend(offset + start for start, _ in spans)
            out.append(_blank(line, spans))
        offset += len(line) + 1
    return "\n".join(out), starts


def _blank(line: str, spans: list[tuple[int, int]]) -> str:
    if not spans:
        return line
    parts: list[str] = []
    cursor = 0
    for start, stop in spans:
        parts += [line[cursor:start], " " * (stop - start)]
        cursor = stop
    parts.append(line[cursor:])
    return "".join(parts)


def code_spans(line: str) -> list[tuple[int, int]]:
    """The code spans of `line` as (start, stop): a run of n backticks opens a span that
    the next run of exactly n closes. Linear: each run's length is looked up in an index
    of the runs that follow it."""
    if "`" not in line:
        return []
    runs: list[tuple[int, int]] = []  # (start, length) of each backtick run
    index = line.find("`")
    while index >= 0:
        end = index
        while end < len(line) and line[end] == "`":
            end += 1
        runs.append((index, end - index))
        index = line.find("`", end)
    # next_same[i]: the next run after i of the same length (built backwards).
    next_same: list[int | None] = [None] * len(runs)
    last: dict[int, int] = {}
    for i in range(len(runs) - 1, -1, -1):
        next_same[i] = last.get(runs[i][1])
        last[runs[i][1]] = i
    spans: list[tuple[int, int]] = []
    i = 0
    while i < len(runs):
        closer = next_same[i]
        if closer is None:
            i += 1
            continue
        spans.append((runs[i][0], runs[closer][0] + runs[closer][1]))
        i = closer + 1
    return spans


# -- parameters -------------------------------------------------------------------------


def parse_params(text: str) -> tuple[list[str], dict[str, str]]:
    """Hugo's (and a Liquid tag's) parameters: words, `"quoted"` and `` `raw` `` strings,
    `key=value` pairs. One pass."""
    positional: list[str] = []
    named: dict[str, str] = {}
    i, n = 0, len(text)
    while i < n:
        while i < n and text[i].isspace():
            i += 1
        if i >= n:
            break
        key = None
        start = i
        while i < n and not text[i].isspace() and text[i] not in "=\"'`":
            i += 1
        if i < n and text[i] == "=" and i > start:
            key = text[start:i]
            i += 1
        else:
            i = start
        value, i = _value(text, i)
        if key is None:
            positional.append(value)
        else:
            named[key.lower()] = value
    return positional, named


def _value(text: str, i: int) -> tuple[str, int]:
    n = len(text)
    if i < n and text[i] in "\"'`":
        quote = text[i]
        out: list[str] = []
        i += 1
        while i < n and text[i] != quote:
            if text[i] == "\\" and quote != "`" and i + 1 < n:
                i += 1
            out.append(text[i])
            i += 1
        return "".join(out), i + 1
    start = i
    while i < n and not text[i].isspace():
        i += 1
    return text[start:i], i


# -- the rewriter -------------------------------------------------------------------------


class _Rewriter:
    """Builds the translated body from pieces of the source and replacements."""

    def __init__(self, body: str, site: Site) -> None:
        self.body = body
        self.view, self.code_starts = masked_code(body)
        self.site = site
        self.edits: list[tuple[int, int, str]] = []  # (start, stop, text) of the source
        self.notes: list[tuple[int, str]] = []  # (source offset, message)

    def replace(self, start: int, stop: int, text: str) -> None:
        """Put `text` in place of the source's `start:stop`."""
        self.edits.append((start, stop, text))

    def note(self, offset: int, message: str) -> None:
        """Say what was left out; what the body holds is shown escaped (`redact.quoted`)."""
        self.notes.append((offset, quoted(message, 240, marks=False)))

    def finish(self) -> Translation:
        """Apply the edits in order; one overlapping an earlier one is dropped."""
        out: list[str] = []
        pieces: list[tuple[int, int, bool]] = []
        size = cursor = 0

        def emit(text: str, source: int, copied: bool) -> None:
            nonlocal size
            if text:
                pieces.append((size, source, copied))
                out.append(text)
                size += len(text)

        for start, stop, text in sorted(self.edits, key=lambda e: (e[0], -e[1])):
            if start < cursor:
                continue
            emit(self.body[cursor:start], cursor, True)
            emit(text, start, False)
            cursor = stop
        emit(self.body[cursor:], cursor, True)
        starts = _line_starts(self.body)
        notes = [Note(_last_at_most(starts, at) + 1, message) for at, message in self.notes]
        return Translation("".join(out), sorted(notes, key=lambda n: n.line), pieces, starts)

    # -- helpers --

    def crosses_code(self, start: int, stop: int) -> bool:
        """Whether code lies between `start` and `stop` (the syntax read never spans it)."""
        index = bisect_left(self.code_starts, start)
        return index < len(self.code_starts) and self.code_starts[index] < stop

    def at_line_start(self, offset: int) -> bool:
        return offset == 0 or self.body[offset - 1] == "\n"

    def fence(self, start: int, stop: int, lang: str, code: str) -> str:
        """A fenced block of `code` standing where `start:stop` was."""
        code = code[1:] if code.startswith("\n") else code
        code = code[:-1] if code.endswith("\n") else code
        longest, run = 0, 0
        for char in code:
            run = run + 1 if char == "`" else 0
            longest = max(longest, run)
        ticks = "`" * max(3, longest + 1)
        lang = re.sub(r"[^\w+#.-]", "", lang)[:40]
        block = f"{ticks}{lang}\n{code}\n{ticks}"
        if not self.at_line_start(start):
            block = "\n" + block
        if stop < len(self.body) and self.body[stop] != "\n":
            block += "\n"
        return block

    def page(self, offset: int, what: str, name: str) -> str:
        """The address of the post `name` names (`#anchor` kept), or `name` with a note."""
        path, _, anchor = name.partition("#")
        if not path and anchor:
            return name  # `{{< ref "#part" >}}`: a part of this page
        url = self.site.page_of(path) if path else None
        if url is None:
            shown = name[:80]
            self.note(
                offset, f"{what} {shown!r}: no post of that name; its link is left as written"
            )
            return name
        return f"{url}#{anchor}" if anchor else url

    def site_path(self, path: str) -> str:
        """Jekyll's `relative_url`: the site's base path and `path`."""
        if not path or re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:|^//", path):
            return path
        return self.site.base_path + "/" + path.lstrip("/")

    # -- Hugo --

    def hugo(self) -> None:
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
                    token.start, token.stop, _code_span(f"{token.opener} {inner} {token.closer}")
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

    def _hugo_tokens(self) -> list[_Token]:
        view = self.view
        tokens: list[_Token] = []
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
                tokens.append(_Token("literal", "", i, j + 3, inner, "{{" + opener, closer))
            elif stripped.startswith("/"):
                name = stripped[1:].strip().split(None, 1)[0] if stripped[1:].strip() else ""
                tokens.append(_Token("close", name.lower(), i, j + 3, "", "{{" + opener, closer))
            else:
                self_closed = stripped.endswith("/")
                text = stripped[:-1] if self_closed else stripped
                parts = text.split(None, 1)
                name = parts[0] if parts else ""
                kind = "self" if self_closed else "open"
                args = parts[1] if len(parts) > 1 else ""
                tokens.append(_Token(kind, name.lower(), i, j + 3, args, "{{" + opener, closer))
            pos = j + 3
        return tokens

    def _hugo_close(self, token: _Token) -> str:
        if token.name == "details":
            return "{% enddetails %}"
        return ""

    def _hugo_open(self, token: _Token, end: _Token | None) -> str | None:
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
            if _YOUTUBE_ID.fullmatch(video):
                self.replace(start, stop, f"{{% youtube {video} %}}")
            else:
                self._unknown(token, "needs a YouTube video id")
        elif name == "vimeo":
            video = arg("id")
            if _DIGITS.fullmatch(video):
                self.replace(start, stop, f"{{% vimeo {video} %}}")
            else:
                self._unknown(token, "needs a Vimeo video number")
        elif name in ("x", "tweet", "twitter"):
            post = named.get("id", "").strip()
            if not post:
                post = next((p for p in reversed(positional) if _DIGITS.fullmatch(p)), "")
            if _DIGITS.fullmatch(post):
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

    def _unknown(self, token: _Token, why: str) -> None:
        shown = f"{token.opener} {token.name[:60]} {token.closer}"
        self.note(token.start, f"{shown}: {why}; left out (what it holds is kept)")
        self.replace(token.start, token.stop, "")

    def _gist(self, token: _Token, user: str, gist: str, file: str) -> None:
        if "/" in user and not gist:
            user, _, gist = user.partition("/")
        if not gist and _GIST_ID.fullmatch(user):
            user, gist = "", user
        if _GIST_ID.fullmatch(gist) and (not user or _GIST_USER.fullmatch(user)):
            if not user:  # dev.to's tag needs the owner: a link reaches it all the same
                self.replace(token.start, token.stop, f"https://gist.github.com/{gist}")
                return
            option = f" file={file}" if file and _FILE_NAME.fullmatch(file) else ""
            url = f"https://gist.github.com/{user}/{gist}"
            self.replace(token.start, token.stop, f"{{% gist {url}{option} %}}")
        else:
            self._unknown(token, "needs a gist's owner and id")

    def _figure(self, named: dict[str, str]) -> str:
        src = named.get("src", "").strip()
        alt = named.get("alt") or named.get("title") or ""
        title = named.get("title", "")
        image = f"![{_escape_label(alt)}]({_target(src)}{_title(title)})"
        link = named.get("link", "").strip()
        if link:
            image = f"[{image}]({_target(link)})"
        caption = " ".join(named.get("caption", "").split())
        attr = " ".join(named.get("attr", "").split())
        if attr:
            attrlink = named.get("attrlink", "").strip()
            attr = f"[{_escape_label(attr)}]({_target(attrlink)})" if attrlink else attr
            caption = f"{caption} {attr}".strip()
        return f"{image}\n*{caption}*" if caption else image

    # -- Liquid (Jekyll, Eleventy) --

    def liquid(self) -> None:
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
                image = f"![{_escape_label(alt)}]({_target(positional[0])})"
                self.replace(start, stop, image)
            elif name not in DEVTO_TAGS:
                shown = f"{{% {name} %}}"
                self.note(start, f"{shown}: a Liquid tag dev.to does not know; left out")
                self.replace(start, stop, "")
        self._site_variables(hugo=False)
        self._escape_strays(("{{ site.", "{{site.", "{{- site.", "{{-site."))

    def _escape_strays(self, openers: tuple[str, ...]) -> None:
        """What opens the generator's syntax and was not read as such (never closed, or
        too long) is written with `&#123;` for its `{`: shown the same, read as text."""
        for opener in openers:
            index = self.view.find(opener)
            while index >= 0:
                self.replace(index, index + 1, "&#123;")
                index = self.view.find(opener, index + len(opener))

    def _liquid_tokens(self) -> list[_Token]:
        """`{% name args %}` on one line, outside code."""
        view = self.view
        tokens: list[_Token] = []
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
                tokens.append(_Token("tag", parts[0].lower(), i, j + 2, args, "{%", "%}"))
            pos = j + 2
        return tokens

    # -- `{{ ... }}`: the site's address --

    def _site_variables(self, *, hugo: bool) -> None:
        """Expand the site's address where the body names it."""
        view = self.view
        pos = 0
        next_close = -2
        while True:
            i = view.find("{{", pos)
            if i < 0:
                break
            if view[i + 2 : i + 3] in ("<", "%"):
                pos = i + 3
                continue
            if next_close != -1 and next_close < i + 2:
                next_close = view.find("}}", i + 2)
            j = next_close
            if j < 0 or j - i > 300 or self.crosses_code(i, j):
                pos = i + 2
                continue
            expression = view[i + 2 : j].strip().strip("-").strip()
            value = self._expression(i, expression, hugo)
            if value is not None:
                stop = j + 2
                if value.endswith("/") and view[stop : stop + 1] == "/":
                    stop += 1  # `{{ .Site.BaseURL }}/images/x.png`: one slash
                self.replace(i, stop, value)
            pos = j + 2

    def _expression(self, offset: int, expression: str, hugo: bool) -> str | None:
        compact = " ".join(expression.split())
        if hugo:
            if compact in (".Site.BaseURL", "site.BaseURL", ".Site.BaseURL | absURL"):
                return (self.site.url.rstrip("/") + "/") if self.site.url else "/"
            if compact.startswith((".Site.", "site.")):
                self.note(offset, f"{{{{ {compact[:60]} }}}}: a site value; left out")
                return ""
            return None
        if compact == "site.baseurl":
            return self.site.base_path
        if compact == "site.url":
            return self.site.origin
        found = re.fullmatch(r"""(["'])(.*?)\1\s*\|\s*(relative_url|absolute_url|url)""", compact)
        if found:
            path = self.site_path(found.group(2))
            if found.group(3) == "absolute_url" and path.startswith("/"):
                return self.site.origin + path
            return path
        if compact.startswith("site."):
            self.note(offset, f"{{{{ {compact[:60]} }}}}: a site value; left out")
            return ""
        return None

    # -- MDX --

    def mdx(self) -> None:
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
            if _YOUTUBE_ID.fullmatch(video):
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
                return f"![{_escape_label(alt)}]({_target(src)})"
        self.note(offset, f"<{name}>: a component dev.to has no equivalent for; left out")
        return ""


@dataclass(frozen=True)
class _Token:
    kind: str  # open, close, self, literal, tag
    name: str
    start: int
    stop: int
    text: str  # the parameters
    opener: str
    closer: str


def _pair(tokens: list[_Token]) -> dict[int, int]:
    """Opening token index -> its closing token index (Hugo's nesting, by name)."""
    stacks: dict[str, list[int]] = {}
    pairs: dict[int, int] = {}
    for index, token in enumerate(tokens):
        if token.kind == "open":
            stacks.setdefault(token.name, []).append(index)
        elif token.kind == "close" and stacks.get(token.name):
            pairs[stacks[token.name].pop()] = index
    return pairs


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


def _code_span(text: str) -> str:
    """`text` as a code span, its backticks kept (the fence is one longer than any run)."""
    longest = run = 0
    for char in text:
        run = run + 1 if char == "`" else 0
        longest = max(longest, run)
    ticks = "`" * (longest + 1)
    return f"{ticks} {text} {ticks}"


def _escape_label(text: str) -> str:
    return re.sub(r"([\[\]\\])", r"\\\1", " ".join(text.split()))


def _target(url: str) -> str:
    if any(c.isspace() or c in "()<>" for c in url):
        return "<" + url.replace("<", "%3C").replace(">", "%3E") + ">"
    return url


def _title(title: str) -> str:
    title = " ".join(title.split())
    return ' "' + title.replace('"', '\\"') + '"' if title else ""
