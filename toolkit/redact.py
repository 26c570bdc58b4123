"""What a one-line message may show. Credentials written into a URL
(`https://user:password@host`) never reach output, logs or exception text: every message
that shows a URL shows it through `redact_url`. A value from outside (a name, a post's
field) is shown through `quoted`: in quotes, bounded, no control character left raw. A
service's own message is shown whole or cut at a word with an ellipsis (`clipped`)."""

from __future__ import annotations

import re

# scheme://userinfo@ — the userinfo ends at the last `@` before the path, query or fragment.
_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)[^/?#\s]*@")


def redact_url(url: str) -> str:
    """`url` with its user name and password replaced by `***`: `https://***@host/path`.
    Works on any text holding URLs too (a log line, an error message)."""
    if "@" not in url:
        return url
    return _USERINFO.sub(r"\1***@", url)


def clipped(text: str, limit: int) -> str:
    """`text` whole when it has at most `limit` characters; else cut at the last word
    boundary within them (within a word only when its first word is that long), with `…`."""
    if len(text) <= limit:
        return text
    cut = text[:limit]
    space = cut.rfind(" ")
    if space > 0 and not text[limit].isspace():
        cut = cut[:space]
    return cut.rstrip() + "…"


def quoted(text: str, limit: int, *, marks: bool = True) -> str:
    """`text` fit for a one-line message: whole, or cut at a word (`clipped`), quoted as
    Python's repr quotes it, so a control or invisible character shows escaped. Without
    `marks`, the same without the quotes around it (a name within a sentence, an id):
    printable characters as they are, any other escaped as repr escapes it."""
    cut = clipped(text, limit)
    if marks:
        return repr(cut)
    if cut.isprintable():
        return cut
    return "".join(char if char.isprintable() else repr(char)[1:-1] for char in cut)
