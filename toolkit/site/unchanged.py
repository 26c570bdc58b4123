"""A build that finds everything as the last one left it does not work the site out again.

What the builder works out of the posts (`plan.site_posts`, `plan.stale_post_pages`,
`pages.SitePlan`) depends on the posts' records, the configuration, the templates and
the mirror files, and nothing else. The last build keeps in its manifest what it found
(the site's posts in order, its listing pages, the posts' problems, the drafts left out)
with the digest of those inputs (`Plan`). When this build's inputs have the same digest
and no record changed since it was saved, that is what it would find again: the pages
only need to be where they were written (`outdated`, one stat each), and the work of
the plan (a summary, a key and a digest per post, a key per listing page) is skipped.

Anything else (a post read again, a template, a setting or a mirror file changed, a page
removed or edited behind our back, `--clean`) and the plan is worked out as usual.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from toolkit.config import Config
from toolkit.site.manifest import Row, digest_of
from toolkit.site.pages import ReadingList
from toolkit.site.plan import BuildRun, outdated, site_info

# Plan = {"inputs": digest, "records": how many post records, "posts": the posts on the
# site in index order, "listings": the other pages' outputs, "problems": [[path, row]],
# "drafts_left_out": count}
Plan = dict[str, Any]


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
    )


def replay(run: BuildRun, output_dir: Path, inputs: str) -> int | None:
    """When nothing the plan depends on changed and every page is as it was written,
    keep every page and report what the last plan found; returns the number of posts on
    the site. None: the plan is to be worked out (and nothing was done)."""
    plan = run.manifest.plan
    records = run.manifest.posts
    if run.force or plan is None or plan.get("inputs") != inputs:
        return None
    if plan.get("records") != len(records) or any(r.saved is None for r in records.values()):
        return None  # a record read, checked or changed by this build
    try:
        slugs = {key: site_info(records[key])["slug"] for key in plan["posts"]}
        listings = [str(output) for output in plan["listings"]]
        problems: list[tuple[str, Row]] = [
            (str(path), [int(line), str(message), str(severity)])
            for path, (line, message, severity) in plan["problems"]
        ]
        drafts = int(plan["drafts_left_out"])
    except (KeyError, TypeError, ValueError, AssertionError):
        return None  # not a plan this version saved
    pages = [f"{slug}/index.html" for slug in slugs.values()] + listings
    written = run.manifest.outputs
    for output in pages:
        record = written.get(output)
        if record is None or outdated(run, output_dir, output, record[0]):
            return None
    run.slugs = slugs
    for output in pages:
        run.keep(output)
    run.problems.extend(problems)
    run.drafts_left_out = drafts
    return len(slugs)


def remember(
    run: BuildRun,
    inputs: str,
    posts: list[str],
    listings: list[str],
    problems: list[tuple[str, Row]],
) -> None:
    """Keep what the plan found in the manifest, for the next build to `replay`."""
    plan: Plan = {
        "inputs": inputs,
        "records": len(run.manifest.posts),
        "posts": posts,
        "listings": listings,
        "problems": [[path, row] for path, row in problems],
        "drafts_left_out": run.drafts_left_out,
    }
    if plan != run.manifest.plan:
        run.manifest.plan = plan
        run.dirty = True
