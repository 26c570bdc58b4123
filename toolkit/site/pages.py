"""The site's pages and what each one shows, worked out from the posts' summaries.

Layout (relative links everywhere; `root` leads from a page back to the site's root):

    index.html, page/N/index.html            the posts, pinned ones first (`home_order`),
                                             then newest first, `per_page` a page
    <slug>/index.html                        a post
    tags/index.html                          every tag, with its count
    tags/<tag>/index.html, tags/<tag>/page/N/index.html
    reading-list/index.html                  only when the mirror has a reading list
    search/index.html                        the search page, unless [site] search = false
                                             (its index: `search.py`)
    feed.xml, sitemap.xml, 404.html

Every page has a `key`: a digest of everything it shows and of the templates it uses. A
page whose key has not changed since it was written is not rendered again. The context
itself is made only for the pages that are rendered.
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from toolkit.site.manifest import PostInfo, digest_of, digest_of_strings
from toolkit.site.mirror_files import display_date
from toolkit.site.shapes import Summary

FEED_ENTRIES = 20
EPOCH = "1970-01-01T00:00:00+00:00"

Context = dict[str, Any]  # what a template is rendered with
Order = tuple[int, float, str, str]  # a sort key of posts


Listed = tuple[Summary, str]  # a post in a listing: its summary, and the summary's digest
# The whole posts of the feed ([site] feed_full_content), by slug: the digest of what a
# post's HTML depends on, and the loader of that HTML.
FullContent = dict[str, tuple[str, Callable[[], str]]]
# The reading list: (digest of its files, loader of its template context: `items`, and in
# a team's repository `writers`, each with its `name`, `anchor` and `saved` items).
ReadingList = tuple[str, Callable[[], dict[str, Any]]]


@dataclass
class Page:
    output: str  # POSIX path under the output folder
    template: str
    key: str
    context: Callable[[], Context]


def root_of(output: str) -> str:
    """From the folder of `output` back to the site's root: `./`, `../`, `../../`..."""
    depth = output.count("/")
    return "../" * depth if depth else "./"


def parse_iso(value: str | None) -> dt.datetime | None:
    if not value:
        return None
    parsed = _PARSED.get(value)
    if parsed is None:
        if len(_PARSED) >= _MAX_PARSED:  # a long-lived process (watch, mcp) starts over
            _PARSED.clear()
        parsed = _PARSED[value] = dt.datetime.fromisoformat(value)
    return parsed


# The dates already parsed: every post's date is read for the index order, the series
# order and its summary, on every build. (A datetime cannot be changed: sharing is safe.)
_PARSED: dict[str, dt.datetime] = {}
_MAX_PARSED = 100_000


def index_order(key: str, info: PostInfo) -> Order:
    """Newest first; posts without a date after the dated ones, by title."""
    date = parse_iso(info["date"])
    title = info["title"].lower()
    return (0, -date.timestamp(), title, key) if date else (1, 0.0, title, key)


def series_order(key: str, info: PostInfo) -> Order:
    """Oldest first (part 1 comes first); posts without a date last, in the order of their
    files' names (`part-1.md`, `part-2.md`), never of their titles."""
    date = parse_iso(info["date"])
    return (0, date.timestamp(), key, key) if date else (1, 0.0, key, key)


def summary_of(info: PostInfo, excerpt: str | None, reading_minutes: int) -> Summary:
    """What a listing shows of a post."""
    date = parse_iso(info["date"])
    return {
        "slug": info["slug"],
        "title": info["title"],
        "date": info["date"],
        "date_display": display_date(date) if date else "",
        "reading_time": reading_minutes,
        "tags": info["tags"],
        "description": info["description"] or excerpt or "",
        "draft": not info["published"],
        "pinned": info["pinned"],
        "series": info["series"],
    }


def home_order(posts: list[Listed]) -> list[Listed]:
    """The home page's order of `posts` (newest first): the pinned posts first, newest
    first, but the pinned parts of a series together in the series' order (part 1 first,
    as `series_order`), where its newest pinned part stands; then the others."""
    pinned = [listed for listed in posts if listed[0]["pinned"]]
    ordered: list[Listed] = []
    placed: set[str] = set()
    for summary, digest in pinned:
        name = summary["series"]
        if name is None:
            ordered.append((summary, digest))
        elif name not in placed:
            placed.add(name)
            parts = [listed for listed in pinned if listed[0]["series"] == name]
            ordered.extend(sorted(parts, key=lambda listed: _part_order(listed[0])))
    return ordered + [listed for listed in posts if not listed[0]["pinned"]]


def _part_order(summary: Summary) -> tuple[int, float, str]:
    date = parse_iso(summary["date"])
    return (0, date.timestamp(), summary["slug"]) if date else (1, 0.0, summary["slug"])


def series_context(name: str, parts: list[tuple[str, PostInfo]], current: str) -> Context:
    """Series navigation for the post `current` (a key) among `parts`, in series order."""
    index = next(i for i, (key, _) in enumerate(parts) if key == current)

    def link(i: int) -> dict[str, str] | None:
        if 0 <= i < len(parts):
            return {"title": parts[i][1]["title"], "slug": parts[i][1]["slug"]}
        return None

    return {
        "name": name,
        "index": index + 1,
        "total": len(parts),
        "parts": [
            {
                "title": info["title"],
                "slug": info["slug"],
                "current": key == current,
                "draft": not info["published"],
            }
            for key, info in parts
        ],
        "previous": link(index - 1),
        "next": link(index + 1),
    }


class SitePlan:
    """The listing pages of one build, from the posts in index order."""

    def __init__(
        self,
        *,
        site: Context,
        site_url: str | None,
        per_page: int,
        site_key: str,
        closures: dict[str, str],
        posts: list[Listed],
        reading_list: ReadingList | None,
        full_content: FullContent | None = None,
    ):
        self.site = site  # the `site` context of every template
        self.base = f"{site_url}/" if site_url else ""  # absolute URLs, when the site has one
        self.per_page = per_page
        self.site_key = site_key
        self.closures = closures
        self.posts = posts  # (summary, summary digest), newest first
        self.reading_list = reading_list  # (digest of the file, loader of its items)
        self.full_content = full_content  # None: the feed holds summaries

    # -- helpers ------------------------------------------------------------------------

    def _key(self, template: str, *parts: str) -> str:
        """A page's key: its template's digest, the site's, and what the page shows."""
        return digest_of_strings(template, self.closures[template], self.site_key, *parts)

    def absolute(self, path: str) -> str | None:
        return self.base + path if self.base else None

    def page_meta(self, title: str, path: str, description: str = "") -> dict[str, Any]:
        return {
            "title": title,
            "description": description or self.site["description"],
            "canonical": self.absolute(path),
            "type": "website",
            "image": None,
            "published": None,
            "tags": [],
            "noindex": False,
        }

    def _context(self, output: str, page: Context, nav: str | None, **values: Any) -> Context:
        return {"site": self.site, "root": root_of(output), "page": page, "nav": nav, **values}

    def _paginate(
        self,
        posts: list[Listed],
        folder: str,
        template: str,
        title: Callable[[int], str],
        nav: str | None,
        extra: Context,
    ) -> list[Page]:
        """`folder` is where page 1 lives ("" or "tags/x/"); page N is `folder/page/N/`."""
        total = max(1, math.ceil(len(posts) / self.per_page))
        shown = digest_of(extra)  # the same on every page of the listing
        pages = []
        for number in range(1, total + 1):
            chunk = posts[(number - 1) * self.per_page : number * self.per_page]
            path = folder if number == 1 else f"{folder}page/{number}/"
            output = f"{path}index.html"

            def context(
                chunk: list[Listed] = chunk,
                number: int = number,
                path: str = path,
                output: str = output,
            ) -> Context:
                root = root_of(output)

                def href(n: int) -> str:
                    return root + (folder if n == 1 else f"{folder}page/{n}/")

                pagination = {
                    "number": number,
                    "total": total,
                    "newer": href(number - 1) if number > 1 else None,
                    "older": href(number + 1) if number < total else None,
                }
                page = self.page_meta(title(number), path)
                return self._context(
                    output, page, nav, posts=[s for s, _ in chunk], pagination=pagination, **extra
                )

            key = self._key(template, output, f"{number}/{total}", shown, *(d for _, d in chunk))
            pages.append(Page(output, template, key, context))
        return pages

    # -- the pages ----------------------------------------------------------------------

    def pages(self) -> list[Page]:
        # The home page lists the pinned posts first (`home_order`); tag pages, the feed
        # and the sitemap keep the order of dates.
        pages = self._paginate(
            home_order(self.posts),
            "",
            "index.html",
            lambda n: self.site["title"] if n == 1 else f"Posts, page {n}",
            "home",
            {},
        )
        tags: dict[str, list[Listed]] = {}
        for summary, digest in self.posts:
            for tag in summary["tags"]:
                tags.setdefault(tag, []).append((summary, digest))
        for tag in sorted(tags):

            def title(n: int, tag: str = tag) -> str:
                return f"#{tag}" if n == 1 else f"#{tag}, page {n}"

            pages += self._paginate(
                tags[tag],
                f"tags/{tag}/",
                "tag.html",
                title,
                "tags",
                {"tag": tag, "count": len(tags[tag])},
            )
        counts = [{"name": tag, "count": len(tags[tag])} for tag in sorted(tags)]
        pages.append(
            Page(
                "tags/index.html",
                "tags.html",
                self._key("tags.html", digest_of(counts)),
                lambda: self._context(
                    "tags/index.html", self.page_meta("Tags", "tags/"), "tags", tags=counts
                ),
            )
        )
        if self.reading_list is not None:
            digest, lists = self.reading_list
            output = "reading-list/index.html"
            pages.append(
                Page(
                    output,
                    "reading_list.html",
                    self._key("reading_list.html", digest),
                    lambda: self._context(
                        output,
                        self.page_meta("Reading list", "reading-list/"),
                        "reading-list",
                        **lists(),
                    ),
                )
            )
        if self.site["search"]:
            pages.append(
                Page(
                    "search/index.html",
                    "search.html",
                    self._key("search.html"),
                    lambda: self._context(
                        "search/index.html",
                        self.page_meta("Search", "search/") | {"noindex": True},
                        "search",
                    ),
                )
            )
        pages.append(
            Page(
                "404.html",
                "404.html",
                self._key("404.html"),
                lambda: self._context(
                    "404.html",
                    self.page_meta("Page not found", "404.html")
                    | {"canonical": None, "noindex": True},
                    None,
                ),
            )
        )
        pages.append(self._feed())
        pages.append(self._sitemap(sorted(tags)))
        return pages

    def _feed(self) -> Page:
        published = [(s, d) for s, d in self.posts if not s["draft"]][:FEED_ENTRIES]
        dates = [s["date"] for s, _ in published if s["date"]]
        updated = max(dates, key=dt.datetime.fromisoformat) if dates else EPOCH
        base = self.base
        full = self.full_content

        def context() -> Context:
            entries = []
            for summary, _ in published:
                url = f"{base}{quote(summary['slug'])}/"
                entries.append(
                    {
                        "title": summary["title"],
                        "url": url,
                        "id": url,
                        "published": summary["date"],
                        "updated": summary["date"] or updated,
                        "tags": summary["tags"],
                        "summary": summary["description"],
                        "content": full[summary["slug"]][1]() if full else None,
                    }
                )
            feed = {
                "id": base or "./",
                "self": f"{base}feed.xml",
                "home": base or "./",
                "updated": updated,
            }
            return {"site": self.site, "root": "./", "feed": feed, "entries": entries}

        bodies = [full[s["slug"]][0] for s, _ in published] if full else ["summaries"]
        key = self._key("feed.xml", *(d for _, d in published), *bodies)
        return Page("feed.xml", "feed.xml", key, context)

    def _sitemap(self, tags: list[str]) -> Page:
        posts = [(s["slug"], s["date"]) for s, _ in self.posts if not s["draft"]]
        paths = [""] + [f"tags/{tag}/" for tag in tags] + ["tags/"]
        if self.reading_list is not None:
            paths.append("reading-list/")
        base = self.base or "./"

        def context() -> Context:
            urls = [{"loc": base + path if path else base, "lastmod": None} for path in paths]
            urls += [{"loc": f"{base}{slug}/", "lastmod": date} for slug, date in posts]
            return {"site": self.site, "root": "./", "urls": urls}

        key = self._key("sitemap.xml", digest_of(paths, posts))
        return Page("sitemap.xml", "sitemap.xml", key, context)
