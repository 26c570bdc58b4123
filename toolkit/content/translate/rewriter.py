"""The translation's result (`Translation`, `Note`), what it asks of the project (`Site`),
and `Rewriter`: the pieces every generator's translation shares."""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Callable
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from toolkit.content.translate.scan import Token, last_at_most, line_starts, masked_code
from toolkit.redact import quoted

_GIST_USER = re.compile(r"[A-Za-z0-9](?:-?[A-Za-z0-9]){0,38}")
_GIST_ID = re.compile(r"[A-Za-z0-9]{1,40}")
_FILE_NAME = re.compile(r"[\w.-]{1,200}")


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
        for start in line_starts(self.body):
            while piece + 1 < len(pieces) and pieces[piece + 1][0] <= start:
                piece += 1
            out_start, in_start, copied = pieces[piece]
            offset = in_start + (start - out_start) if copied else in_start
            while source_line + 1 < len(starts) and starts[source_line + 1] <= offset:
                source_line += 1
            lines.append(source_line + 1)
        return lines


def identity(body: str) -> Translation:
    return Translation(body, [], [(0, 0, True)], line_starts(body))


class Rewriter:
    """Builds the translated body from pieces of the source and replacements."""

    def __init__(self, body: str, site: Site) -> None:
        self.body = body
        self.view, self.code_starts = masked_code(body)
        self.site = site
        self.edits: list[tuple[int, int, str]] = []  # (start, stop, text) of the source
        self.notes: list[tuple[int, str]] = []  # (source offset, message)

    def run(self) -> None:
        """Record the generator's edits (each generator's subclass)."""
        raise NotImplementedError

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
        starts = line_starts(self.body)
        notes = [Note(last_at_most(starts, at) + 1, message) for at, message in self.notes]
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

    def _unknown(self, token: Token, why: str) -> None:
        shown = f"{token.opener} {token.name[:60]} {token.closer}"
        self.note(token.start, f"{shown}: {why}; left out (what it holds is kept)")
        self.replace(token.start, token.stop, "")

    def _gist(self, token: Token, user: str, gist: str, file: str) -> None:
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

    def _escape_strays(self, openers: tuple[str, ...]) -> None:
        """What opens the generator's syntax and was not read as such (never closed, or
        too long) is written with `&#123;` for its `{`: shown the same, read as text."""
        for opener in openers:
            index = self.view.find(opener)
            while index >= 0:
                self.replace(index, index + 1, "&#123;")
                index = self.view.find(opener, index + len(opener))

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
