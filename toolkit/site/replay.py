"""A build that finds everything as the last one left it does not work the site out again.

What the builder works out of the posts (`siteplan.site_posts`, `siteplan.stale_post_pages`,
`pages.SitePlan`) depends on the posts' records, the configuration, the templates and
the mirror files, and nothing else. The last build keeps in its manifest what it found
(the site's posts in order, its listing pages, the posts' problems, the drafts left out)
with the digest of those inputs (`manifest.SavedPlan`). When this build's inputs have the same digest
and no record changed since it was saved, that is what it would find again: the pages
only need to be where they were written (`outdated`, one stat each), and the work of
the plan (a summary, a key and a digest per post, a key per listing page) is skipped.

The same holds when the posts read again changed in their body alone (the edit of a
writer, most of the time): the same front matter, but for what only their own page shows
(the words, the images, the cover), the same problems, the same summary in listings.
Only those posts' pages get a key again (`stale_post_pages(only=...)`). Unless the feed
holds whole posts ([site] feed_full_content): a body shows there too.

Anything else (a post added, removed or changed otherwise, a template, a setting or a
mirror file changed, a page removed or edited behind our back, `--clean`) and the plan is
worked out as usual.
"""

from __future__ import annotations

from pathlib import Path

from toolkit.config import Config
from toolkit.site.buildrun import BuildRun
from toolkit.site.manifest import ProblemRow, SavedPlan, digest_of
from toolkit.site.pages import ReadingList
from toolkit.site.siteplan import outdated, post_summary, site_info


def plan_inputs(
    run: BuildRun, config: Config, site_key: str, reading_list: ReadingList | None
) -> str:
    """The digest of what the plan depends on, besides the post records."""
    manifest = run.manifest
    return digest_of(
        "plan",
        site_key,
        manifest.content_key,
        repr(config.site),  # every setting of the site, whether the plan reads it or not
        manifest.closures,
        sorted(manifest.files.items()),
        sorted(run.scan.comments.items()),
        reading_list[0] if reading_list is not None else None,
        run.dates,
    )


def replay(
    run: BuildRun, output_dir: Path, inputs: str, bodies_listed: bool
) -> tuple[list[str], set[str]] | None:
    """When nothing the plan depends on changed but the bodies of some posts, and every
    other page is as it was written, keep those pages and report what the last plan
    found; returns the posts on the site and those whose page may have to be written
    (`bodies_listed`: the feed holds whole posts, so a body shows there too, and any
    change is worked out in full). None: the plan is to be worked out (nothing was done)."""
    plan = run.manifest.plan
    records = run.manifest.posts
    if run.force or plan is None or plan.inputs != inputs:
        return None
    if plan.records != len(records):
        return None
    changed = {key for key, record in records.items() if record.saved is None}
    if changed and (bodies_listed or not all(_body_only(run, key) for key in changed)):
        return None
    try:
        slugs = {key: site_info(records[key])["slug"] for key in plan.posts}
    except (KeyError, AssertionError):
        return None  # a post it names has no record, or one that cannot be read
    pages = [f"{slugs[key]}/index.html" for key in plan.posts if key not in changed]
    pages += plan.listings
    written = run.manifest.outputs
    for output in pages:
        record = written.get(output)
        if record is None or outdated(run, output_dir, output, record.key):
            return None
    for output in pages:
        run.keep(output)
    run.replayed(slugs, plan.problems, plan.drafts_left_out)
    return list(plan.posts), changed


# What a post's front matter says that shows on its own page alone (or nowhere): the
# number of words shows in listings through the reading time, in its summary.
_OWN_PAGE = frozenset({"words", "images", "cover", "cover_file"})


def _body_only(run: BuildRun, key: str) -> bool:
    """Whether the post `key`, read again by this build, changed in nothing that another
    page shows or that its problems depend on: the same front matter but for what shows
    on its own page, the same problems, the same summary in listings."""
    record = run.manifest.posts[key]
    if key not in run.replaced:
        return record.info is not None  # not read again: only its stat changed (touched)
    old = run.replaced[key]
    if old is None or record.info is None or old.info is None or not old.summary_digest:
        return False
    if record.problems != old.problems or any(
        record.info[name] != old.info[name]  # type: ignore[literal-required]
        for name in record.info
        if name not in _OWN_PAGE
    ):
        return False
    return post_summary(run, key)[1] == old.summary_digest


def remember(
    run: BuildRun,
    inputs: str,
    posts: list[str],
    listings: list[str],
    problems: list[tuple[str, ProblemRow]],
) -> None:
    """Keep what the plan found in the manifest, for the next build to `replay`."""
    plan = SavedPlan(
        inputs=inputs,
        records=len(run.manifest.posts),
        posts=posts,
        listings=listings,
        problems=problems,
        drafts_left_out=run.drafts_left_out,
    )
    if plan != run.manifest.plan:
        run.manifest.plan = plan
        run.must_save()
