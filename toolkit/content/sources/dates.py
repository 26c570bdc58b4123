"""Dates as generators write them: YAML dates, ISO 8601, Jekyll's `2021-02-01 10:22 -0500`,
Astro's starter `Jul 08 2022`, and a month/day/year `09/02/2020` read by the project's
`[source] date_format` (or guessed when a part above 12 leaves one reading).

A date without an offset is a time in the site's time zone (`[source] timezone`), else
UTC. Every answer is an aware datetime; what cannot be read is a `DateUnread` saying why.
"""

from __future__ import annotations

import datetime as dt
import re
from functools import lru_cache
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from toolkit.redact import quoted

MAX_DATE_CHARS = 64
# Eleventy's special values: the date comes from the file or from git, not the text.
COMPUTED = frozenset({"last modified", "created", "git last modified", "git created"})
_JEKYLL = re.compile(
    r"^(\d{4})-(\d{1,2})-(\d{1,2})(?:[ T](\d{1,2}):(\d{2})(?::(\d{2}))?(?:\.\d+)?)?"
    r"\s*(Z|[+-]\d{2}:?\d{2})?$"
)
_SLASHED = re.compile(r"^(\d{1,2})/(\d{1,2})/(\d{4})$")
_WORDED = ("%b %d %Y", "%B %d %Y", "%b %d, %Y", "%B %d, %Y", "%d %b %Y", "%d %B %Y")


class DateUnread(ValueError):
    """A date value that toolkit cannot read; the message says why and how to fix it."""


@lru_cache(maxsize=16)
def zone(name: str | None) -> dt.tzinfo:
    """The time zone `name` (IANA), UTC when unset or unknown."""
    if not name:
        return dt.UTC
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        return dt.UTC


def _offset(text: str) -> dt.timezone:
    if text == "Z":
        return dt.UTC
    sign = -1 if text[0] == "-" else 1
    digits = text[1:].replace(":", "")
    return dt.timezone(sign * dt.timedelta(hours=int(digits[:2]), minutes=int(digits[2:])))


def read_date(
    value: Any, timezone: str | None = None, date_format: str | None = None
) -> dt.datetime | None:
    """`value` as an aware datetime; None when there is none (absent, empty, or one of
    Eleventy's computed dates); `DateUnread` when it is written but cannot be read."""
    tz = zone(timezone)
    if isinstance(value, dt.datetime):
        return value if value.tzinfo else value.replace(tzinfo=tz)
    if isinstance(value, dt.date):
        return dt.datetime(value.year, value.month, value.day, tzinfo=tz)
    if value is None or isinstance(value, bool) or not isinstance(value, str):
        if value is None:
            return None
        raise DateUnread(f"{quoted(str(value), 40)} is not a date")
    text = value.strip()
    if not text or text.lower() in COMPUTED:
        return None
    if len(text) > MAX_DATE_CHARS:
        raise DateUnread("longer than any date")
    if date_format:
        try:
            parsed = dt.datetime.strptime(text, date_format)
        except ValueError:
            pass
        else:
            return parsed if parsed.tzinfo else parsed.replace(tzinfo=tz)
    try:
        parsed = dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        pass
    else:
        return parsed if parsed.tzinfo else parsed.replace(tzinfo=tz)
    if match := _JEKYLL.match(text):
        year, month, day, hour, minute, second, off = match.groups()
        try:
            moment = dt.datetime(
                int(year), int(month), int(day), int(hour or 0), int(minute or 0), int(second or 0)
            )
        except ValueError as exc:
            raise DateUnread(f"{quoted(text, 40)}: {exc}") from None
        return moment.replace(tzinfo=_offset(off) if off else tz)
    if match := _SLASHED.match(text):
        first, second_, year = (int(part) for part in match.groups())
        if first > 12 >= second_:
            day, month = first, second_
        elif second_ > 12 >= first:
            month, day = first, second_
        else:
            raise DateUnread(
                f"{quoted(text, 40, marks=False)} could be month/day or day/month; name the form in toolkit.toml "
                '([source] date_format = "%m/%d/%Y" or "%d/%m/%Y")'
            )
        try:
            return dt.datetime(year, month, day, tzinfo=tz)
        except ValueError as exc:
            raise DateUnread(f"{quoted(text, 40)}: {exc}") from None
    for form in _WORDED:
        try:
            parsed = dt.datetime.strptime(text, form)
        except ValueError:
            continue
        return parsed.replace(tzinfo=tz)
    raise DateUnread(
        f"{quoted(text, 40)} is not a date toolkit reads (ISO 8601, 2021-02-01 10:22 -0500, Jul 08 "
        "2022); name its form in toolkit.toml ([source] date_format)"
    )


def slashed_order(texts: list[str]) -> str | None:
    """The month/day order the dates `texts` (some of them `09/02/2020`) show, as a
    `date_format`, when one date can be read only one way and none contradicts it."""
    month_first = day_first = False
    for text in texts:
        match = _SLASHED.match(text.strip())
        if match is None:
            continue
        first, second, _ = (int(part) for part in match.groups())
        month_first |= second > 12 >= first
        day_first |= first > 12 >= second
    if month_first and not day_first:
        return "%m/%d/%Y"
    if day_first and not month_first:
        return "%d/%m/%Y"
    return None
