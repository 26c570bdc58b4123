"""What a build (`builder.SiteBuilder`) works out before it writes: which unchanged posts
must be checked again, which posts are on the site and their problems, and which post pages must be written (a page whose key changed or whose file
is not what was written: `outdated`), with what those pages and the listings show of a post.
The builder reads the posts, writes the pages, and removes what is no longer made.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple
from urllib.parse import quote

from toolkit.config import Config
from toolkit.content import bodies_of
from toolkit.content.problems import Kind, PostError, Severity
from toolkit.site.buildrun import BuildRun
from toolkit.site.manifest import (
    PostInfo,
    PostRecord,
    ProblemRow,
    digest_of,
    digest_of_strings,
)
from toolkit.site.pages import (
    Context,
    FullContent,
    SitePlan,
    index_order,
    root_of,
    series_context,
    series_order,
    summary_of,
)
from toolkit.site.render import PrepareJob, Renderer, in_scope, reading_time
from toolkit.site.shapes import Summary

# Reads, checks and renders posts (`SiteBuilder._prepare`).
Prepare = Callable[[BuildRun, list[PrepareJob]], None]
# The newer and the older post on the site as {slug, title}, or None.
Neighbours = tuple[dict[str, str] | None, dict[str, str] | None]


class PostPage(NamedTuple):
    """A post page to write, with what it shows besides the post (`stale_post_pages`)."""

    key: str  # the page's key: the digest of everything it shows
    series: Context | None  # the series navigation
    comments: str | None  # the mirror's comments file
    neighbours: Neighbours


def site_info(record: PostRecord) -> PostInfo:
    """What the front matter of a post on the site says: a post is on it only when its front
    matter could be read (`site_posts`)."""
    assert record.info is not None, "a post whose front matter cannot be read is not on it"
    return record.info


def needs_check(record: PostRecord) -> bool:
    """An unchanged post whose problems may have changed all the same: a date that was in
    the future (`PostRecord.shown_from`), or relative images that came or went. (Problems
    between posts, like a title used twice, are worked out again on every build.)"""
    if record.info is None:
        return False
    if record.shown_from is not None:
        return True
    return any(os.path.isfile(path) != existed for path, existed in record.info["images"])


def date_posts(run: BuildRun, config: Config) -> None:
    """Give each post without `date:` its date from the lock or git (`content.dates`);
    a record whose date changes is summarised again."""
    records = run.manifest.posts
    undated = [
        key
        for key, record in records.items()
        if record.info is not None and not record.info.get("date_written")
    ]
    found: dict[str, str] = {}
    if undated:
        from toolkit.content.dates import project_dates

        found = project_dates(config, undated)
        run.dated(found)
    for key, record in records.items():
        info = record.info
        if info is None:
            continue
        date = info.get("date_written") or found.get(key)
        if info["date"] != date:
            info["date"] = date
            record.summary = None
            record.summary_digest = ""
            record.saved = None
            run.must_save()


def site_posts(
    run: BuildRun, config: Config, key_prefix: str, *, drafts: bool, premium: bool
) -> list[str]:
    """The posts on the site, newest first; their problems go to the report."""
    records = run.manifest.posts
    problems = post_problems(records, config, key_prefix)
    posts = []
    for key, record in records.items():
        info = record.info
        if info is not None and not in_scope(info, drafts=drafts, premium=premium):
            if in_scope(info, drafts=True, premium=premium):
                run.left_out_draft()
            continue  # not on this site: its problems are for `toolkit check`
        rows = problems[key]
        if info is not None and not any(row.stops_site for row in rows):
            posts.append(key)
            rows = refused_once(rows)
        for row in rows:
            run.report(key, row)
    posts.sort(key=lambda k: index_order(k, site_info(records[k])))
    return posts


def refused_once(rows: list[ProblemRow]) -> list[ProblemRow]:
    """What the build says of a post it puts on the site: its warnings, and once that the
    API would refuse it, when it has errors only the API has (`check` lists them all)."""
    refused = [row for row in rows if row.is_error]
    if not refused:
        return rows
    first = refused[0]
    more = f"; and {len(refused) - 1} more (toolkit check lists them)" if len(refused) > 1 else ""
    said = f"built, but the API would refuse it: {first.message}{more}"
    return [
        *(row for row in rows if not row.is_error),
        ProblemRow(first.line, said, Severity.WARNING, Kind.API),
    ]


def post_problems(
    records: dict[str, PostRecord], config: Config, key_prefix: str
) -> dict[str, list[ProblemRow]]:
    """Each post's problems, with those that involve other posts: a title, slug or
    canonical URL used twice (checked by `rules.validate_posts` on the posts involved)."""
    # The records' own lists, copied only for a post that gets more (most get none).
    result = {key: record.problems for key, record in records.items()}
    holders: dict[tuple[str, str], list[str]] = {}
    for key, record in records.items():
        info = record.info
        if info is None:
            continue
        for name, value in (
            ("title", info["title"].lower()),
            ("slug", info["slug"]),
            ("canonical_url", info["canonical"]),
        ):
            if value:
                holders.setdefault((name, value), []).append(key)
    involved = sorted({k for keys in holders.values() if len(keys) > 1 for k in keys})
    if involved:
        from toolkit.content.post import load_post
        from toolkit.content.rules import validate_posts
        from toolkit.content.sources import site_reader

        site = config.site
        read = site_reader(config)
        posts = []
        for key in involved:
            try:
                posts.append(read(load_post(Path(_path_of(config, key_prefix, key)), key)))
            except PostError:
                continue  # changed under our feet; the next build sees it

        for problem in validate_posts(posts, site.content_dir, bodies=bodies_of(config)):
            row = ProblemRow.of(problem)
            if row not in result[problem.path]:
                result[problem.path] = [*result[problem.path], row]
    return result


def _path_of(config: Config, key_prefix: str, key: str) -> str:
    return str(config.site.content_dir / key[len(key_prefix) :])


def stale_post_pages(
    run: BuildRun,
    posts: list[str],
    site_key: str,
    output_dir: Path,
    prepare: Prepare,
    only: set[str] | None = None,
) -> dict[str, PostPage]:
    """The posts whose page must be written: key -> (page key, series, comments file).
    Bodies that are not rendered yet (the source did not change, but a template, the
    series or a linked post did) are rendered now. `only`: the posts whose page may have
    changed (`replay.replay` kept the others)."""
    records = run.manifest.posts
    run.on_site({key: site_info(records[key])["slug"] for key in posts})
    slugs = run.slugs
    looked = posts if only is None else [key for key in posts if key in only]
    series = post_series(posts, records, only)
    comments = {key: post_comments_file(run, key) for key in looked}
    neighbours = post_neighbours(posts, records, series, only)
    closure = run.manifest.closures["post.html"]

    def page_key(key: str) -> str:
        # Everything the page shows. Computed for every post on every build: plain
        # strings rather than JSON.
        record = records[key]
        comments_file = comments[key]
        return digest_of_strings(
            closure,
            site_key,
            record.digest,
            site_info(record)["date"] or "",
            series[key].digest if key in series else "",
            run.manifest.files[comments_file].digest if comments_file else "",
            *(f"{near['slug']}\x1e{near['title']}" if near else "" for near in neighbours[key]),
            *(f"{link}={slugs.get(link, '')}" for link in record.links),
        )

    stale: dict[str, str] = {}  # post -> its page's key
    for key in looked:
        page = page_key(key)
        if outdated(run, output_dir, f"{slugs[key]}/index.html", page):
            stale[key] = page
    unrendered = [
        PrepareJob(key, run.scan.posts[key][0], True) for key in stale if key not in run.holders
    ]
    if unrendered:
        run.mark("plan")
        prepare(run, unrendered)
        run.mark("read and render posts")
        for job in unrendered:
            stale[job.key] = page_key(job.key)  # its links are known now
    for key in looked:
        if key not in stale:
            run.keep(f"{slugs[key]}/index.html")
    return {
        key: PostPage(
            page,
            series[key].context() if key in series else None,
            comments[key],
            neighbours[key],
        )
        for key, page in stale.items()
    }


def full_content(run: BuildRun, posts: list[str], renderer: Renderer) -> FullContent:
    """The whole posts for the feed: each post's HTML with absolute links, rendered
    only when the feed is written."""
    records, slugs = run.manifest.posts, run.slugs
    full: FullContent = {}
    for key in posts:
        record = records[key]
        links = {link: slugs[link] for link in record.links if link in slugs}
        digest = digest_of_strings(record.digest, *(f"{k}={v}" for k, v in links.items()))
        path = run.scan.posts[key][0]

        def load(key: str = key, path: str = path, links: dict[str, str] = links) -> str:
            return renderer.feed_body(key, path, links)

        full[site_info(record)["slug"]] = (digest, load)
    return full


def outdated(run: BuildRun, output_dir: Path, output: str, key: str) -> bool:
    """Whether `output` must be made again: its inputs changed, or its file is not the
    one written last time (removed or edited behind our back)."""
    record = run.manifest.outputs.get(output)
    if run.force or record is None or record.key != key:
        return True
    try:
        st = os.stat(f"{output_dir}{os.sep}{output}")
    except OSError:
        return True
    return st.st_mtime_ns != record.mtime_ns or st.st_size != record.size


def post_neighbours(
    posts: list[str],
    records: dict[str, PostRecord],
    series: dict[str, SeriesPart],
    only: set[str] | None = None,
) -> dict[str, Neighbours]:
    """The previous and next links of each post's page (`only`: of those posts): the
    newer and the older post of the site (`posts` is newest first). A post of a series
    has its series' navigation instead, so none: its page does not depend on the posts
    around it."""
    if only is not None:

        def link(i: int) -> dict[str, str]:
            info = site_info(records[posts[i]])
            return {"slug": info["slug"], "title": info["title"]}

        end = len(posts) - 1
        return {
            key: (None, None)
            if key in series
            else (link(i - 1) if i > 0 else None, link(i + 1) if i < end else None)
            for i, key in enumerate(posts)
            if key in only
        }
    links = [
        {"slug": site_info(records[key])["slug"], "title": site_info(records[key])["title"]}
        for key in posts
    ]
    last = len(posts) - 1
    return {
        key: (None, None)
        if key in series
        else (links[i - 1] if i > 0 else None, links[i + 1] if i < last else None)
        for i, key in enumerate(posts)
    }


class SeriesPart:
    """A post of a series: the digest of its series navigation, worked out for every post
    on every build, and the navigation itself, made only for a page that is written."""

    __slots__ = ("digest", "_name", "_parts", "_key")

    def __init__(self, digest: str, name: str, parts: list[tuple[str, PostInfo]], key: str):
        self.digest = digest
        self._name, self._parts, self._key = name, parts, key

    def context(self) -> Context:
        return series_context(self._name, self._parts, self._key)


def post_series(
    posts: list[str], records: dict[str, PostRecord], only: set[str] | None = None
) -> dict[str, SeriesPart]:
    """The posts of a series (`only`: of the series of those posts). The navigation
    (`series_context`) of a part is made of its series' name, the title, slug and state
    of every part in order, and which part it is: its digest is the digest of those, one
    JSON encoding for the whole series."""
    groups: dict[str, list[str]] = {}
    for key in posts:
        name = site_info(records[key])["series"]
        if name:
            groups.setdefault(name, []).append(key)
    result = {}
    for name, keys in groups.items():
        if only is not None and only.isdisjoint(keys):
            continue
        keys.sort(key=lambda k: series_order(k, site_info(records[k])))
        parts = [(k, site_info(records[k])) for k in keys]
        shown = digest_of(
            "series", name, [[info["title"], info["slug"], info["published"]] for _, info in parts]
        )
        for index, key in enumerate(keys):
            result[key] = SeriesPart(digest_of_strings(shown, str(index)), name, parts, key)
    return result


def post_comments_file(run: BuildRun, key: str) -> str | None:
    """`_mirror/comments/<slug>.json`, or `<file stem>.json`, when it can be read."""
    record = run.manifest.posts[key]
    stem = key.rpartition("/")[2].removesuffix(".md")
    slug = site_info(record)["slug"]
    found = run.scan.comments.get(f"{slug}.json") or run.scan.comments.get(f"{stem}.json")
    if found is None or run.manifest.files[found[0]].trouble:
        return None  # none, or one that cannot be read (reported)
    return found[0]


def post_summary(run: BuildRun, key: str) -> tuple[Summary, str]:
    """What listings show of a post, and its digest (kept in the manifest)."""
    record = run.manifest.posts[key]
    if record.summary is None:
        info = site_info(record)
        record.summary = summary_of(info, record.excerpt, reading_time(info["words"]))
    if not record.summary_digest:
        record.summary_digest = digest_of(record.summary)
        record.saved = None
        run.must_save()
    return record.summary, record.summary_digest


def post_context(
    info: PostInfo, summary: Summary, plan: SitePlan, series: Context | None, neighbours: Neighbours
) -> Context:
    output = f"{info['slug']}/index.html"
    cover = image = None
    if info["cover_file"]:  # a file of the content folder, copied beside the pages
        cover = root_of(output) + quote(info["cover_file"])
        image = plan.absolute(quote(info["cover_file"]))
    elif info["cover"]:  # a URL (a relative one that is not there is an error)
        cover = image = info["cover"]
    page = {
        "title": info["title"],
        "description": summary["description"],
        "canonical": info["canonical"],
        "type": "article",
        "image": image,
        "published": info["date"],
        "tags": info["tags"],
        "noindex": not info["published"],
    }
    post = dict(
        summary,
        cover=cover,
        series=series,
        body=None,
        comments=None,
        toc=[],
        newer=neighbours[0],
        older=neighbours[1],
    )
    return {"site": plan.site, "root": root_of(output), "page": page, "nav": None, "post": post}
