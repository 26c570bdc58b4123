"""The shapes of the dictionaries several modules of `site/` pass each other: a heading of
a post's table of contents (`markdown` makes it, both engines fill it) and what a listing
shows of a post (`pages` makes it, the manifest keeps it). A leaf: it imports nothing of
`site/`, so naming these types never makes two modules import each other.
"""

from __future__ import annotations

from typing import TypedDict


class TocEntry(TypedDict):
    """A heading of the table of contents: its level (2 or 3), anchor and text."""

    level: int
    id: str
    text: str


class Summary(TypedDict):
    """What a listing shows of a post (`pages.summary_of`)."""

    slug: str
    title: str
    date: str | None
    date_display: str
    reading_time: int
    tags: list[str]
    description: str
    draft: bool
    pinned: bool  # listed first on the home page (`pinned: true`)
    series: str | None  # the order of a series' pinned parts on the home page
