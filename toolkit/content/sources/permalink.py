"""A post's page on the writer's site, by the generator's permalink rule.

`page_url(path, meta, source, content_dir)` is the one place that says it: from the post's
file and its front matter as written, and `[source]`. In order:

1. the page named outright (Hugo `url:`, Jekyll and Eleventy `permalink:`);
2. `[source] permalink`, else the generator's default, with its placeholders filled:
   `:year`, `:month`, `:day` (the post's date in the site's time zone), `:title` (the
   file's name; a Jekyll post's without its date; a bundle's folder; Hugo's: the front
   matter's title, slugified), `:filename` (the file's name), `:slug` (`slug:`, else
   `:title`), `:path` (the post's folder under the posts folder and its `:slug`),
   `:categories` (Jekyll), `:output_ext` (`.html`);
3. under `[source] url`, with a final `/` when the site serves one (`trailing_slash`).

Hugo lower-cases the path, as it does by default. None when `[source] url` is unset.
"""

from __future__ import annotations

import datetime as dt
import posixpath
import re
from collections.abc import Mapping
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from toolkit.content.sources.dates import DateUnread, read_date, zone
from toolkit.content.sources.tables import PAGE_KEYS, keys_for

if TYPE_CHECKING:  # pragma: no cover
    from toolkit.config.sections import SourceConfig

JEKYLL_DATED = re.compile(r"^(\d{4})-(\d{2})-(\d{2})-(.+)$")
# Jekyll's named permalink styles.
JEKYLL_STYLES = {
    "date": "/:categories/:year/:month/:day/:title:output_ext",
    "pretty": "/:categories/:year/:month/:day/:title/",
    "ordinal": "/:categories/:year/:y_day/:title:output_ext",
    "weekdate": "/:categories/:year/W:week/:short_day/:title:output_ext",
    "none": "/:categories/:title:output_ext",
}
DEFAULT_PERMALINK = {
    "jekyll": JEKYLL_STYLES["date"],
    "hugo": "/:path/",
    "eleventy": "/:path/",
    "astro": "/:path/",
    "next": "/:path/",
    "devto": "/:slug/",
}
_PLACEHOLDER = re.compile(
    r":(year|month|day|title|slug|path|categories|output_ext|i_month|i_day|y_day|short_year|filename|contentbasename)"
)
_SLUG = re.compile(r"[^a-z0-9]+")
POST_SUFFIXES = (".md", ".mdx", ".markdown")


def _text(meta: Mapping[str, Any], key: str) -> str | None:
    value = meta.get(key)
    return value.strip() if isinstance(value, str) and value.strip() else None


def _slugged(text: str) -> str:
    return _SLUG.sub("-", text.lower()).strip("-") or text


def is_bundle(path: Path, generator: str) -> bool:
    """Whether the post at `path` is its folder's (`x/index.md`; Eleventy's `x/x.md`):
    the files beside it are its own."""
    stem = path.stem
    return stem.lower() in ("index", "_index") or (
        generator == "eleventy" and stem == path.parent.name
    )


def file_title(path: Path, generator: str) -> str:
    """The name a post's file gives it: a bundle's folder (`x/index.md`), an Eleventy post
    named as its folder (`x/x.md`) the folder, a Jekyll post's name without its date."""
    stem = path.parent.name if is_bundle(path, generator) else path.stem
    if generator == "jekyll" and (match := JEKYLL_DATED.match(stem)):
        stem = match.group(4)
    return stem


def post_date(
    path: Path, meta: Mapping[str, Any], source: SourceConfig
) -> tuple[dt.datetime | None, str | None]:
    """The post's date and the key it came from (Jekyll: else the file's name, at
    midnight in the site's time zone)."""
    for key in keys_for(source.generator, "date"):
        if key in meta:
            try:
                when = read_date(meta[key], source.timezone, source.date_format)
            except DateUnread:
                return None, key
            if when is not None:
                return when, key
    if source.generator == "jekyll" and (match := JEKYLL_DATED.match(path.stem)):
        try:
            year, month, day_ = (int(part) for part in match.groups()[:3])
            day = dt.datetime(year, month, day_)
        except ValueError:
            return None, None
        return day.replace(tzinfo=zone(source.timezone)), "the file's name"
    return None, None


def page_key(meta: Mapping[str, Any], generator: str) -> str | None:
    """The front-matter key naming the post's page outright, when the post has one."""
    for key in PAGE_KEYS.get(generator, ()):
        if _text(meta, key) is not None:
            return key
    return None


def page_path(path: Path, meta: Mapping[str, Any], source: SourceConfig, content_dir: Path) -> str:
    """The path of the post's page on the writer's site (from `/`), or an address when
    the post names one outright."""
    generator = source.generator
    named = page_key(meta, generator)
    target: str | None = None
    if named is not None:
        target = _text(meta, named) or ""
        if target.startswith(("http://", "https://")):
            return target
        if ":" not in target:  # a path as it is
            return _cleaned(target)
    title = file_title(path, generator)
    slug = _text(meta, "slug") or title
    try:
        relative = PurePosixPath(path.relative_to(content_dir).as_posix())
    except ValueError:
        relative = PurePosixPath(path.name)
    folder = relative.parent
    if is_bundle(path, generator):
        folder = folder.parent  # a bundle: its folder is the post
    parts = [part for part in folder.parts if part not in ("", ".")]
    if generator == "astro":
        parts = [_slugged(part) for part in parts]
        slug = _text(meta, "slug") or _slugged(title)
    whole = "/".join([*parts, slug])
    when, _ = post_date(path, meta, source)
    if when is not None:
        when = when.astimezone(zone(source.timezone))
    # A post's own pattern (Jekyll's `permalink: /:year/:title/`), else the site's.
    pattern = target or source.permalink or DEFAULT_PERMALINK.get(generator, "/:slug/")
    pattern = JEKYLL_STYLES.get(pattern, pattern) if generator == "jekyll" else pattern
    categories = meta.get("categories", meta.get("category"))
    if isinstance(categories, str):
        categories = categories.split()
    cats = "/".join(_slugged(str(c)) for c in categories) if isinstance(categories, list) else ""

    # Hugo's :title is the front matter's title, slugified, and its :slug the `slug:` or
    # that; :filename (:contentbasename) is the file's (the bundle's folder's) name.
    written_title = _text(meta, "title") or title
    hugo_title = _slugged(written_title)
    if generator == "hugo":
        slug_value = _text(meta, "slug") or hugo_title
    elif generator == "jekyll":
        slug_value = _text(meta, "slug") or _slugged(title)
    else:
        slug_value = slug

    def fill(match: re.Match[str]) -> str:
        name = match.group(1)
        if name in ("year", "month", "day", "i_month", "i_day", "y_day", "short_year"):
            if when is None:
                return ""
            return {
                "year": f"{when.year:04d}",
                "month": f"{when.month:02d}",
                "day": f"{when.day:02d}",
                "i_month": str(when.month),
                "i_day": str(when.day),
                "y_day": f"{when.timetuple().tm_yday:03d}",
                "short_year": f"{when.year % 100:02d}",
            }[name]
        return {
            "title": hugo_title if generator == "hugo" else title,
            "slug": slug_value,
            "filename": title,
            "contentbasename": title,
            "path": whole,
            "categories": cats,
            "output_ext": ".html",
        }[name]

    filled = _cleaned(_PLACEHOLDER.sub(fill, pattern))
    if generator == "hugo":
        filled = filled.lower()
    return filled


def _cleaned(page: str) -> str:
    """`page` from `/`, its `.` and `..` parts folded as the generators clean a page's path
    (a front matter's `../..` never climbs above the site), its final `/` kept."""
    folded = posixpath.normpath("/" + page)
    folded = "/" + folded.lstrip("/")  # normpath keeps a leading `//`
    if page.endswith("/") and folded != "/":
        folded += "/"
    return folded


def page_url(
    path: Path, meta: Mapping[str, Any], source: SourceConfig, content_dir: Path
) -> str | None:
    """The address of the post at `path` (its front matter as written: `meta`) on the
    writer's site, or None when `[source] url` is not known. A page named by an address
    is that address."""
    return url_of(page_path(path, meta, source, content_dir), source)


def url_of(page: str, source: SourceConfig) -> str | None:
    """The address of the page at `page` (a path from `page_path`) on the writer's site."""
    if page.startswith(("http://", "https://")):
        return page
    if not source.url:
        return None
    if not page.endswith((".html", ".htm")):
        page = page.rstrip("/") + ("/" if source.trailing_slash else "")
        if page == "":
            page = "/"
    return source.url.rstrip("/") + quote(page, safe="/:@!$&'()*+,;=-._~%")
