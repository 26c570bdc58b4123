"""dev.to's Liquid tags (`{% youtube dQw4w9WgXcQ %}`): which of them the site renders, and
what each one's argument must look like (`read_tag`), and where in a body they are read
(`prose`: code left out).

dev.to (Forem) turns a tag into an embed when it saves an article; the published body keeps
the tag as written, so the API renders it. The site renders a tag as a static equivalent
(`toolkit/site/liquid_render.py`): a link card, or a frame that loads only when the reader asks.
A tag is rendered where it stands in a paragraph, on a line of its own or in the middle of
a line (the paragraph is then split around it, as a browser splits dev.to's), never in
code. Its argument is hostile like the rest of a post: only a well-formed id or an http(s)
URL of the service the tag names is taken (a URL may hold `%`, `&`, `#` and be quoted);
any other tag, or argument, is shown as written and `toolkit check` warns about it once
(`liquid_scan.scan`).

`{% katex %}...{% endkatex %}` maths is `liquid_maths`'s.

The tags are those of Forem's editor guide (docs.forem.com, "Liquid tags"), with the
aliases dev.to accepts (`tweet`, `x`, `spoiler`, `collapsible`, `post`).
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from urllib.parse import urlsplit

# A tag as it is written: `{% name argument %}` (the argument may be empty, and may hold a
# `%` that does not end the tag: `file=src%2Fmain.ts`).
TAG = re.compile(r"\{%-?[ \t]*([A-Za-z_][\w-]*)(?:[ \t]+((?:[^%\n]|%(?!\}))*?))?[ \t]*-?%\}")
MAX_ARGUMENT = 500  # characters: longer is not an id or a URL anyone writes


def find_tags(pattern: re.Pattern[str], text: str) -> Iterator[re.Match[str]]:
    """The matches of `pattern` in `text`, as `pattern.finditer` gives them, in time linear
    in `text`. `pattern` is a tag's: from a `{%` to the first `%}` after it on its line
    (`TAG`, `liquid_maths.KATEX_OPEN`). `finditer` would try every `{%`, each reading to
    the end of its line when no `%}` closes it: a line of 10,000 unclosed openings was read
    10,000 times. Here the next `%}` and the next line break are each looked for once,
    moving forward only, and `pattern` is tried only on the span a match could cover."""
    close = eol = -1  # the next `%}`, the next line break (or the end)
    at = text.find("{%")
    while at != -1:
        if close < at + 2:  # a `%}` ending this tag starts after its `{%`
            close = text.find("%}", at + 2)
            if close == -1:
                return  # nothing closes this tag, nor any later one
        if eol < at:
            eol = text.find("\n", at)
            eol = len(text) if eol == -1 else eol
        if close < eol:
            match = pattern.fullmatch(text, at, close + 2)
            if match is not None:
                yield match
                at = text.find("{%", close + 2)
                continue
            at = text.find("{%", at + 1)
        else:  # no `%}` on this line: none of its tags is closed
            at = text.find("{%", eol)


_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")
_YOUTUBE_ID = re.compile(r"[A-Za-z0-9_-]{11}")
_DIGITS = re.compile(r"[0-9]{1,20}")
_NAME = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9_-]{0,38})")  # a user, an org, a repository
_REPO = re.compile(r"([A-Za-z0-9](?:[A-Za-z0-9-]{0,38}))/([A-Za-z0-9._-]{1,100})")
_TAG_NAME = re.compile(r"[A-Za-z0-9]{1,30}")
_DEV_PATH = re.compile(r"[A-Za-z0-9_-]{1,64}/[A-Za-z0-9_-]{1,200}")
_SPOTIFY = re.compile(r"spotify:(track|album|artist|playlist|episode|show):([A-Za-z0-9]{1,64})")
_SUMMARY_MAX = 200


@dataclass(frozen=True)
class Card:
    """A link card: a link to the thing, with the service's name."""

    url: str
    label: str
    service: str


@dataclass(frozen=True)
class Frame:
    """A frame the reader loads by asking: `frame` is loaded then, `url` links to it."""

    frame: str
    url: str
    label: str
    service: str


@dataclass(frozen=True)
class Opening:
    """`{% details summary %}`: a block that opens, with its summary."""

    summary: str


@dataclass(frozen=True)
class Closing:
    """`{% enddetails %}`."""


Rendering = Card | Frame | Opening | Closing
Renderer = Callable[[str], Rendering]

# Where a frame may load from: the site's script loads nothing else.
FRAME_PREFIXES = (
    "https://www.youtube-nocookie.com/embed/",
    "https://player.vimeo.com/video/",
    "https://codepen.io/",
    "https://codesandbox.io/embed/",
    "https://stackblitz.com/edit/",
    "https://jsfiddle.net/",
)

OPENING = ("details", "spoiler", "collapsible")
CLOSING = tuple("end" + name for name in OPENING)


class Invalid(ValueError):
    """A tag the site cannot render; the message says why (for `toolkit check`)."""


def _url(argument: str, *hosts: str) -> tuple[str, str, list[str]]:
    """An http(s) URL (the first word of `argument`) of one of `hosts` (any when none):
    the URL, its host and its path's parts."""
    word = argument.split()[0] if argument.split() else ""
    parts = urlsplit(word)
    host = (parts.hostname or "").lower()
    if parts.scheme not in ("http", "https") or not host or parts.username or parts.password:
        raise Invalid("needs an http(s) URL")
    if any(c in word for c in "\"'<>\\ \t") or not word.isprintable():
        raise Invalid("the URL holds characters a URL does not")
    if hosts and not any(host == h or host.endswith("." + h) for h in hosts):
        raise Invalid(f"needs a URL of {hosts[0]}")
    return word, host, [p for p in parts.path.split("/") if p]


def _first(argument: str) -> str:
    words = argument.split()
    if not words:
        raise Invalid("needs an argument")
    return words[0]


def _youtube(argument: str) -> Frame:
    word = _first(argument)
    video = word.split("?")[0]
    if word.startswith(("http://", "https://")):
        url, host, path = _url(word, "youtube.com", "youtu.be")
        query = urlsplit(url).query
        found = re.search(r"(?:^|&)v=([A-Za-z0-9_-]{11})(?:&|$)", query)
        if host.endswith("youtu.be") and path:
            video = path[0]
        elif found:
            video = found.group(1)
        elif len(path) == 2 and path[0] in ("embed", "shorts", "live"):
            video = path[1]
    if not _YOUTUBE_ID.fullmatch(video):
        raise Invalid("needs a YouTube video id (11 letters, digits, - or _)")
    return Frame(
        f"https://www.youtube-nocookie.com/embed/{video}",
        f"https://www.youtube.com/watch?v={video}",
        f"YouTube video {video}",
        "YouTube",
    )


def _vimeo(argument: str) -> Frame:
    word = _first(argument)
    if word.startswith(("http://", "https://")):
        _, _, path = _url(word, "vimeo.com")
        word = path[-1] if path else ""
    if not _DIGITS.fullmatch(word):
        raise Invalid("needs a Vimeo video number")
    return Frame(
        f"https://player.vimeo.com/video/{word}?dnt=1",
        f"https://vimeo.com/{word}",
        f"Vimeo video {word}",
        "Vimeo",
    )


def _codepen(argument: str) -> Frame:
    _, _, path = _url(argument, "codepen.io")
    if (
        len(path) < 3
        or path[1] not in ("pen", "embed", "full", "details")
        or not (_NAME.fullmatch(path[0]) and _ID.fullmatch(path[2]))
    ):
        raise Invalid("needs a pen's URL: https://codepen.io/USER/pen/ID")
    user, pen = path[0], path[2]
    return Frame(
        f"https://codepen.io/{user}/embed/{pen}?default-tab=result",
        f"https://codepen.io/{user}/pen/{pen}",
        f"CodePen {pen} by {user}",
        "CodePen",
    )


def _framed(frame: str, url: str, label: str, service: str, what: str) -> Renderer:
    """A frame of a service named by an id: `frame`, `url` and `label` hold `{}` for it."""

    def render(argument: str) -> Frame:
        word = _first(argument)
        if not _ID.fullmatch(word):
            raise Invalid(f"needs {what}")
        return Frame(frame.format(word), url.format(word), label.format(word), service)

    return render


def _jsfiddle(argument: str) -> Frame:
    _, _, path = _url(argument, "jsfiddle.net")
    path = [p for p in path if p != "embedded"]
    if not 1 <= len(path) <= 3 or not all(_ID.fullmatch(p) for p in path):
        raise Invalid("needs a fiddle's URL: https://jsfiddle.net/USER/ID")
    joined = "/".join(path)
    return Frame(
        f"https://jsfiddle.net/{joined}/embedded/",
        f"https://jsfiddle.net/{joined}",
        f"JSFiddle {joined}",
        "JSFiddle",
    )


def _github(argument: str) -> Card:
    word = _first(argument)
    if word.startswith(("http://", "https://")):
        _, _, path = _url(word, "github.com")
        if len(path) < 2:
            raise Invalid("needs a repository: OWNER/REPO")
        if len(path) >= 4 and path[2] in ("issues", "pull") and _DIGITS.fullmatch(path[3]):
            word = f"{path[0]}/{path[1]}"
            if not _REPO.fullmatch(word):
                raise Invalid("needs a repository: OWNER/REPO")
            kind = "issue" if path[2] == "issues" else "pull request"
            return Card(
                f"https://github.com/{word}/{path[2]}/{path[3]}",
                f"{word} {kind} #{path[3]}",
                "GitHub",
            )
        word = f"{path[0]}/{path[1]}"
    if not _REPO.fullmatch(word) or word.endswith((".", "/..")):
        raise Invalid("needs a repository: OWNER/REPO")
    return Card(f"https://github.com/{word}", word, "GitHub")


def _gist(argument: str) -> Card:
    url, _, path = _url(argument, "gist.github.com")
    if (
        len(path) < 2
        or not _NAME.fullmatch(path[0])
        or not re.fullmatch(r"[A-Za-z0-9]{1,40}", path[1])
    ):
        raise Invalid("needs a gist's URL: https://gist.github.com/USER/ID")
    return Card(
        f"https://gist.github.com/{path[0]}/{path[1]}",
        f"Gist {path[1]} by {path[0]}",
        "GitHub Gist",
    )


def _tweet(argument: str) -> Card:
    word = _first(argument)
    if word.startswith(("http://", "https://")):
        _, _, path = _url(word, "twitter.com", "x.com")
        word = path[2] if len(path) >= 3 and path[1] == "status" else ""
    if not _DIGITS.fullmatch(word):
        raise Invalid("needs a post's number (or its URL)")
    return Card(f"https://x.com/i/status/{word}", f"Post {word} on X", "X")


def _link(argument: str) -> Card:
    word = _first(argument)
    if _DEV_PATH.fullmatch(word):
        url = f"https://dev.to/{word}"
        return Card(url, url, "DEV")
    url, host, _ = _url(word)
    return Card(url, url, host.removeprefix("www."))


def _embed(argument: str) -> Card | Frame:
    url, host, path = _url(argument)
    for hosts, render in (
        (("youtube.com", "youtu.be"), _youtube),
        (("vimeo.com",), _vimeo),
        (("codepen.io",), _codepen),
        (("jsfiddle.net",), _jsfiddle),
        (("gist.github.com",), _gist),
        (("twitter.com", "x.com"), _tweet),
    ):
        if any(host == h or host.endswith("." + h) for h in hosts):
            return render(url)
    if host in ("github.com", "www.github.com"):
        return _github(url)
    return Card(url, url, host.removeprefix("www."))


def _url_card(*hosts: str, service: str) -> Renderer:
    def render(argument: str) -> Card:
        url, _, _ = _url(argument, *hosts)
        return Card(url, url, service)

    return render


def _named(pattern: re.Pattern[str], url: str, label: str, service: str, what: str) -> Renderer:
    def render(argument: str) -> Card:
        word = _first(argument)
        if not pattern.fullmatch(word):
            raise Invalid(f"needs {what}")
        return Card(url.format(word), label.format(word), service)

    return render


def _spotify(argument: str) -> Card:
    found = _SPOTIFY.fullmatch(_first(argument))
    if found is None:
        raise Invalid("needs a Spotify URI: spotify:episode:ID")
    kind, ident = found.groups()
    return Card(f"https://open.spotify.com/{kind}/{ident}", f"Spotify {kind} {ident}", "Spotify")


def _replit(argument: str) -> Card:
    found = re.fullmatch(r"@([A-Za-z0-9_-]{1,64})/([A-Za-z0-9_.-]{1,100})", _first(argument))
    if found is None:
        raise Invalid("needs @USER/REPL")
    return Card(
        f"https://replit.com/@{found.group(1)}/{found.group(2)}",
        f"Repl {found.group(2)} by {found.group(1)}",
        "Replit",
    )


def _details(argument: str) -> Opening:
    summary = " ".join(argument.split())
    if not summary:
        raise Invalid("needs a summary: {% details What it is about %}")
    if len(summary) > _SUMMARY_MAX:
        raise Invalid(f"a summary of at most {_SUMMARY_MAX} characters")
    return Opening(summary)


def _closing(argument: str) -> Closing:
    if argument.strip():
        raise Invalid("takes no argument")
    return Closing()


RENDERERS: dict[str, Renderer] = {
    "embed": _embed,
    "link": _link,
    "post": _link,
    "youtube": _youtube,
    "vimeo": _vimeo,
    "codepen": _codepen,
    "codesandbox": _framed(
        "https://codesandbox.io/embed/{}",
        "https://codesandbox.io/s/{}",
        "CodeSandbox {}",
        "CodeSandbox",
        "a sandbox id",
    ),
    "stackblitz": _framed(
        "https://stackblitz.com/edit/{}?embed=1",
        "https://stackblitz.com/edit/{}",
        "StackBlitz project {}",
        "StackBlitz",
        "a project id",
    ),
    "jsfiddle": _jsfiddle,
    "github": _github,
    "gist": _gist,
    "twitter": _tweet,
    "tweet": _tweet,
    "x": _tweet,
    "user": _named(_NAME, "https://dev.to/{}", "{} on DEV", "DEV", "a user name"),
    "tag": _named(_TAG_NAME, "https://dev.to/t/{}", "#{} on DEV", "DEV", "a tag name"),
    "devcomment": _named(
        re.compile(r"[a-z0-9]{1,16}"),
        "https://dev.to/comment/{}",
        "Comment {} on DEV",
        "DEV",
        "a comment id",
    ),
    "podcast": _url_card("dev.to", service="DEV"),
    "instagram": _named(
        _ID, "https://www.instagram.com/p/{}/", "Instagram post {}", "Instagram", "a post id"
    ),
    "twitch": _named(_ID, "https://clips.twitch.tv/{}", "Twitch clip {}", "Twitch", "a clip id"),
    "glitch": _named(
        _ID, "https://glitch.com/~{}", "Glitch project {}", "Glitch", "a project name"
    ),
    "speakerdeck": _named(
        _ID, "https://speakerdeck.com/player/{}", "Speaker Deck {}", "Speaker Deck", "a deck id"
    ),
    "slideshare": _named(
        _ID,
        "https://www.slideshare.net/slideshow/embed_code/key/{}",
        "SlideShare {}",
        "SlideShare",
        "a slideshow key",
    ),
    "soundcloud": _url_card("soundcloud.com", service="SoundCloud"),
    "spotify": _spotify,
    "replit": _replit,
    "dotnetfiddle": _url_card("dotnetfiddle.net", service=".NET Fiddle"),
    "wikipedia": _url_card("wikipedia.org", service="Wikipedia"),
    "reddit": _url_card("reddit.com", service="Reddit"),
    "medium": _url_card("medium.com", service="Medium"),
    "stackoverflow": _named(
        _DIGITS,
        "https://stackoverflow.com/q/{}",
        "Stack Overflow {}",
        "Stack Overflow",
        "a question number",
    ),
    **{name: _details for name in OPENING},
    **{name: _closing for name in CLOSING},
}
SUPPORTED = tuple(sorted(RENDERERS))


def read_tag(name: str, argument: str) -> Rendering:
    """What the tag `name` with `argument` renders as; `Invalid` when the site cannot."""
    render = RENDERERS.get(name.lower())
    if render is None:
        raise Invalid("the site does not render this tag")
    if len(argument) > MAX_ARGUMENT:
        raise Invalid("an argument that long is not an id or a URL")
    argument = argument.strip()
    if len(argument) >= 2 and argument[0] == argument[-1] and argument[0] in "\"'":
        argument = argument[1:-1].strip()  # `{% embed "https://..." %}`
    return render(argument)


def prose(body: str) -> str:
    """`body` with its fenced code blocks and code spans blanked (same length, line breaks
    kept): what is left is where tags are read."""
    if "`" not in body and "~~~" not in body:
        return body
    from toolkit.content.images import code_mask

    lines = body.split("\n")
    mask = code_mask(body)
    return "\n".join(
        " " * len(line) if inside else code_spans(line)
        for line, inside in zip(lines, mask, strict=True)
    )


_BACKTICKS = re.compile(r"`+")


def code_spans(line: str) -> str:
    """`line` with its code spans blanked (their tags are shown as written, on dev.to too):
    a run of backticks opens one that the next run of the same length closes, as
    CommonMark reads them; a run that none closes is text. Each run is looked at once (a
    line of runs of falling lengths had each one read to the line's end: 720 KB took
    minutes)."""
    if "`" not in line:
        return line
    runs = [(run.start(), run.end()) for run in _BACKTICKS.finditer(line)]
    of_length: dict[int, list[int]] = {}  # the runs of each length, in order
    for index, (start, end) in enumerate(runs):
        of_length.setdefault(end - start, []).append(index)
    pieces: list[str] = []
    at = index = 0
    while index < len(runs):
        start, end = runs[index]
        same = of_length[end - start]
        after = bisect.bisect_right(same, index)
        if after == len(same):
            index += 1  # nothing closes it: text
            continue
        closing = same[after]
        pieces.append(line[at:start])
        pieces.append(" " * (runs[closing][1] - start))
        at = runs[closing][1]
        index = closing + 1
    pieces.append(line[at:])
    return "".join(pieces)
