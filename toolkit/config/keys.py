"""What a configuration key is: the rule its value follows and its declaration.

A `Rule` says what a value may be (`check`, returning a problem or None) and what a
valid value becomes (`resolve`: a path against the project's folder, a `Secret`, ...);
`option(rule, ...)` and `secret(env, ...)` declare a key as a field of its section's
dataclass (`toolkit.config.sections`), with the `Key` under `KEY` in its metadata.
`Secret` is the credential type every secret key becomes.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from toolkit.redact import quoted, redact_url

if TYPE_CHECKING:  # pragma: no cover
    from pathspec import GitIgnoreSpec

KEY = "toolkit.key"  # field metadata: the key's declaration


class Secret:
    """A credential that never shows itself in output, logs or exception text."""

    __slots__ = ("_value",)

    def __init__(self, value: str):
        self._value = value

    def reveal(self) -> str:
        return self._value

    def __repr__(self) -> str:
        return "Secret('********')"

    __str__ = __repr__

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Secret) and other._value == self._value

    def __hash__(self) -> int:
        return hash(self._value)


# --- rules: what a value may be, and what it becomes -----------------------------------

Check = Callable[[Any], str | None]  # returns a problem, or None when the value is fine


def _string(value: Any) -> str | None:
    return None if isinstance(value, str) else "must be a string"


def _nonempty_string(value: Any) -> str | None:
    if not isinstance(value, str) or not value.strip():
        return "must be a non-empty string"
    return None


def _http_url(value: Any) -> str | None:
    if not isinstance(value, str):
        return "must be a string"
    try:
        parts = urlsplit(value)
    except ValueError:  # a broken `[` host
        return f"must be an absolute http(s) URL, not {redact_url(value)!r}"
    if parts.scheme not in ("http", "https") or not parts.netloc:
        return f"must be an absolute http(s) URL, not {redact_url(value)!r}"
    if parts.query or parts.fragment:
        return "must not carry a query or fragment"
    return None


# An http(s) URL as it may be spliced into what is sent and what the site writes (a
# Markdown image target, an attribute, a feed): a host name or an IPv6 address, a port,
# and a path of characters that need no escaping anywhere: no user:password@, query,
# fragment, quote, bracket, backslash, space or control character, a `%` only as `%XX`.
_HOST = r"(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*|\[[0-9A-Fa-f:.]{2,45}\])"
_PORT = r"(?::(?:[1-9][0-9]{0,4}))?"
_ORIGIN = re.compile(rf"https?://{_HOST}{_PORT}")
_PATH = re.compile(r"(?:/(?:[A-Za-z0-9._~!$&*+,;=:@-]|%[0-9A-Fa-f]{2})*)*")


def _origin_end(value: str) -> int | None:
    """Where the origin `value` starts with ends, or None when it starts with none."""
    origin = _ORIGIN.match(value)
    if origin is None or (origin.end() < len(value) and value[origin.end()] != "/"):
        return None
    port = origin.group().rsplit(":", 1)[-1]
    if port.isdigit() and int(port) > 65535:
        return None
    return origin.end()


def _public_url(value: Any) -> str | None:
    """An http(s) URL spliced into what is sent (`_PATH`'s characters only)."""
    problem = _http_url(value)
    if problem is not None:
        return problem
    parts = urlsplit(value)
    if parts.username is not None or parts.password is not None:
        return "must not carry a user or password"
    end = _origin_end(value)
    if end is None:
        return f"must be an http(s) URL of a host (and port), not {quoted(value, 80)}"
    if _PATH.fullmatch(value, end) is None:
        return (
            f"{quoted(value, 80)} holds a character a URL must escape (a space, quote, "
            "bracket or backslash: write it as %XX)"
        )
    return None


def origin_problem(value: str) -> str | None:
    """What is wrong with `value` as an http(s) origin (`https://host[:port]`), or None."""
    end = _origin_end(value)
    if end is None or value[end:] not in ("", "/"):
        return f"must be an http(s) origin (https://host[:port]), not {quoted(value, 80)}"
    return None


def _base_url(value: Any) -> str | None:
    problem = _http_url(value)
    if problem is None and urlsplit(value).path.rstrip("/").endswith("/api"):
        return "must not include the /api prefix (toolkit adds it)"
    return problem


def _boolean(value: Any) -> str | None:
    return None if isinstance(value, bool) else "must be true or false"


def _port(value: Any) -> str | None:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 < value < 65536:
        return "must be a port number between 1 and 65535"
    return None


def _positive_int(value: Any) -> str | None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        return "must be a positive integer"
    return None


def _positive_number(value: Any) -> str | None:
    if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
        return "must be a positive number"
    return None


def _organization(value: Any) -> str | None:
    """An organisation's username, or its numeric id (a TOML integer)."""
    if isinstance(value, bool) or not isinstance(value, str | int):
        return "must be the organisation's username (a string) or its numeric id"
    if isinstance(value, int) and value < 1:
        return "must be a positive id"
    if isinstance(value, str) and not re.fullmatch(r"[A-Za-z0-9_-]{1,64}", value):
        return "must be the organisation's username (letters, digits, _ and -)"
    return None


ARCHIVE_FORMATS = ("zip", "rar", "7z", "tar", "tar.gz", "tar.bz2")


def _archive_format(value: Any) -> str | None:
    if value not in ARCHIVE_FORMATS:
        return f"must be one of {', '.join(ARCHIVE_FORMATS)}"
    return None


def exclude_spec(patterns: list[str] | tuple[str, ...]) -> GitIgnoreSpec:
    """`[content] exclude` as `pathspec` reads it, matched by RE2 (google-re2): in time
    linear in the path, whatever the pattern (Python's `re` backtracks, and `*a*a...*ab`
    against a long name of `a`s took minutes). `re.error` or `re2.error` for a pattern that
    is not one (pathspec compiles each with `re` first)."""
    from pathspec import GitIgnoreSpec

    with warnings.catch_warnings():  # `re`'s FutureWarning on `[[`: RE2 says what is wrong
        warnings.simplefilter("ignore", FutureWarning)
        return GitIgnoreSpec.from_lines(patterns, backend="re2")


def _patterns(value: Any) -> str | None:
    """A list of gitignore-style patterns, as `exclude_spec` reads them."""
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        return "must be a list of gitignore-style patterns (strings)"
    import re2

    for item in value:
        try:
            exclude_spec([item])
        except re.error as exc:  # its message without the position in pathspec's regex
            return f"{quoted(item, 80)} is not a gitignore-style pattern: {exc.msg}"
        except (ValueError, TypeError, re2.error):
            return f"{quoted(item, 80)} is not a gitignore-style pattern"
    return None


def _tuple(value: list[str], root: Path) -> tuple[str, ...]:
    return tuple(value)


CANONICAL_HOMES = ("post", "site")


def _canonical_home(value: Any) -> str | None:
    if value not in CANONICAL_HOMES:
        return f"must be one of {', '.join(CANONICAL_HOMES)}"
    return None


GENERATORS = ("devto", "hugo", "jekyll", "astro", "eleventy", "next")


def _generator(value: Any) -> str | None:
    if value not in GENERATORS:
        return f"must be one of {', '.join(GENERATORS)}"
    return None


def _iso_date(value: Any) -> str | None:
    """An ISO 8601 day or time (`2026-12-07`, `2026-12-07T09:00:00+01:00`)."""
    import datetime as dt

    if not isinstance(value, str) or not value.strip():
        return "must be an ISO 8601 date, e.g. 2026-12-07"
    try:
        dt.datetime.fromisoformat(value.strip())
    except ValueError:
        return f"must be an ISO 8601 date, e.g. 2026-12-07, not {value[:40]!r}"
    return None


def _time_zone(value: Any) -> str | None:
    """An IANA time zone the system knows (`America/New_York`)."""
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    if not isinstance(value, str) or not value.strip():
        return "must be an IANA time zone, e.g. America/New_York"
    try:
        ZoneInfo(value.strip())
    except (ZoneInfoNotFoundError, ValueError):
        return f"must be an IANA time zone, e.g. America/New_York, not {value[:40]!r}"
    return None


def _tag_map(value: Any) -> str | None:
    """A table of tags as written -> the dev.to tag sent (letters and digits)."""
    if not isinstance(value, dict):
        return 'must be a table of tags as written to the tag sent, e.g. "Node.js" = "nodejs"'
    for name, tag in value.items():
        if not isinstance(tag, str) or not tag or not tag.isascii() or not tag.isalnum():
            return f"{name!r}: the tag sent must be letters and digits, not {tag!r}"
    return None


def _pairs(value: dict[str, str], root: Path) -> tuple[tuple[str, str], ...]:
    return tuple((str(name), tag.lower()) for name, tag in value.items())


EXPORT_SOURCES = ("site", "content")


def _export_source(value: Any) -> str | None:
    if value not in EXPORT_SOURCES:
        return f"must be one of {', '.join(EXPORT_SOURCES)}"
    return None


def _as_is(value: Any, root: Path) -> Any:
    return value


def _no_final_slash(value: str, root: Path) -> str:
    return value.rstrip("/")


def _path(value: str, root: Path) -> Path:
    return (root / value).resolve()


def _seconds(value: float, root: Path) -> float:
    return float(value)


def _secret(value: str, root: Path) -> Secret:
    return Secret(value)


@dataclass(frozen=True)
class Rule:
    """What a key's value may be (`kind`, shown by `toolkit config`; `check`), and what a
    valid value becomes (`resolve`: paths against the project's folder, and so on)."""

    kind: str
    check: Check
    resolve: Callable[[Any, Path], Any] = _as_is


STRING = Rule("string", _string)
TEXT = Rule("non-empty string", _nonempty_string)
PATH = Rule("path", _nonempty_string, _path)
URL = Rule("http(s) URL", _public_url, _no_final_slash)
ISSUER = Rule("http(s) URL", _http_url)
BASE_URL = Rule("http(s) URL without /api", _base_url, _no_final_slash)
BOOLEAN = Rule("true or false", _boolean)
POSITIVE_INT = Rule("integer >= 1", _positive_int)
PORT = Rule("port", _port)
SECONDS = Rule("seconds > 0", _positive_number, _seconds)
ARCHIVE_FORMAT = Rule(" | ".join(ARCHIVE_FORMATS), _archive_format)
EXPORT_SOURCE = Rule(" | ".join(EXPORT_SOURCES), _export_source)
SECRET = Rule("secret", _nonempty_string, _secret)
PATTERNS = Rule("list of gitignore-style patterns", _patterns, _tuple)
CANONICAL_HOME = Rule(" | ".join(CANONICAL_HOMES), _canonical_home)
ORGANIZATION = Rule("username or id", _organization)
GENERATOR = Rule(" | ".join(GENERATORS), _generator)
TAG_MAP = Rule("table of tag = tag", _tag_map, _pairs)
ISO_DATE = Rule("ISO 8601 date", _iso_date)
TIME_ZONE = Rule("IANA time zone", _time_zone)


@dataclass(frozen=True)
class Key:
    """The declaration of one key."""

    rule: Rule
    help: str
    default: Any = None  # as written in toolkit.toml; None: unset
    env: str | None = None  # the environment variable that overrides it (a secret's only source)
    secret: bool = False
    default_from: str | None = None  # a key of the same section whose value is the default


def option(
    rule: Rule,
    *,
    help: str,
    default: Any = None,
    env: str | None = None,
    default_from: str | None = None,
) -> Any:
    """Declare a key of `toolkit.toml` (a field of a section's dataclass)."""
    return field(metadata={KEY: Key(rule, help, default, env, False, default_from)})


def secret(env: str, *, help: str) -> Any:
    """Declare a secret: read from the environment variable `env` only, never the file."""
    return field(metadata={KEY: Key(SECRET, help, None, env, True)})
