"""`toolkit build`: the static site, built incrementally, the same bytes on every run.

`SiteBuilder` keeps what it learnt in memory between calls of `build()` (watch calls it on
every save) and in a manifest under `.toolkit/build/` between runs (see `manifest`). A
build goes:

1. scan the content folder (stats only), the templates and the mirror;
2. read and check the posts whose source changed, and render their bodies (`Renderer`
   step 1; on every core for a big batch);
3. work out the site: which posts are on it, their problems, series, tags and listing
   pages; every page gets a key, the digest of what it shows and of the templates it uses
   (`siteplan`, `pages`); or, when all it depends on is as the last build left it but the
   bodies of some posts, as then, with the keys of those posts' pages (`replay`);
4. render and write the pages whose key changed or whose file is not what was written
   (`Renderer` step 2), copy the static files and the content's own files, remove what is
   no longer made, save the manifest.

A post with an error is reported and left out; everything else is built, a post whose
only errors are rules of the publishing API (`Kind.API`) included, with one warning. The
core never prints: the report says what happened, `progress(total, done)` says how far it
is.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from toolkit import localfiles
from toolkit.config import Config
from toolkit.content.discover import excluded_by, post_suffixes, reading_key
from toolkit.content.problems import Problem, ProblemList
from toolkit.errors import BuildError
from toolkit.fsutil import stat_trusted
from toolkit.site import inputs, replay, search, theme_files
from toolkit.site.buildrun import BuildRun, Progress
from toolkit.site.manifest import (
    Manifest,
    PostRecord,
    ProblemRow,
    digest_of,
    last_build_name,
    manifest_name,
)
from toolkit.site.output import (
    Written,
    remove_outputs,
)
from toolkit.site.pages import FullContent, Listed, Page, SitePlan
from toolkit.site.parallel import POOL_THRESHOLD, WorkerPool, chunked, default_processes
from toolkit.site.render import ListingJob, PageJob, PostPageJob, Prepared, PrepareJob, Renderer
from toolkit.site.scan import key_prefix, scan_content
from toolkit.site.siteplan import (
    PostPage,
    date_posts,
    full_content,
    needs_check,
    outdated,
    post_context,
    post_summary,
    site_info,
    site_posts,
    stale_post_pages,
)

# Bump when the builder's output or its records change for the same inputs: every post is
# then read again and every page redone.
BUILDER_VERSION = "9"  # 9: a generator's posts read as publish reads them (`site_reader`)

if TYPE_CHECKING:  # pragma: no cover
    from collections.abc import Callable


@dataclass
class BuildReport(ProblemList):
    output_dir: Path
    posts: int = 0  # posts on the site
    drafts_left_out: int = 0  # drafts (`published: false`) not on the site: built without drafts
    written: list[str] = field(default_factory=list)  # output paths written by this build
    unchanged: list[str] = field(default_factory=list)  # output paths left as they were
    removed: list[str] = field(default_factory=list)  # output paths removed
    problems: list[Problem] = field(default_factory=list)
    search_index: list[str] = field(default_factory=list)  # files of the search index written
    seconds: float = 0.0
    timings: dict[str, float] = field(default_factory=dict)  # seconds per step, for profiling

    @property
    def ok(self) -> bool:
        return not self.errors


class SiteBuilder:
    """Builds the site of `config`; call `build()` as often as needed on the same object."""

    def __init__(
        self,
        config: Config,
        *,
        drafts: bool = False,
        out: str | Path | None = None,
        premium: bool = False,
        processes: int | None = None,
        search_index: bool = True,
        post_folders: tuple[str, ...] = (),
        before_build: Callable[[], object] | None = None,
    ):
        self.config = config
        # Asked before each build, before anything is read or written; it refuses by
        # raising (the premium preview's licence gate, `PremiumGate.check`).
        self.before_build = before_build
        self.drafts = drafts
        # Make the search index after a build that changed a page ([site] search). The
        # watch preview makes it only when the browser asks for it (`make_search_index`).
        self.search_index = search_index
        self.premium = premium  # premium posts are left out unless this is set
        self.processes = processes  # None: every core, when there is enough to render
        self.pool_threshold = POOL_THRESHOLD  # fewer posts to render: stay in-process
        self.output_dir = Path(out).resolve() if out is not None else config.site.output_dir
        self.state_dir = config.state_dir / "build"
        self.manifest_path = self.state_dir / manifest_name(
            self.output_dir, drafts=drafts, premium=premium
        )
        self.last_build_path = self.state_dir / last_build_name(self.output_dir)
        self.key_prefix = key_prefix(config.site.content_dir, config.root)
        self.folders = localfiles.config_folders(config)  # where a symlink may lead
        # Where a post's symlink may lead: the project's folders unless narrower.
        self.post_folders = post_folders or self.folders
        # A premium build lays `templates/premium/` over the templates.
        self.overlay = config.site.templates_dir / theme_files.PREMIUM if premium else None
        site = config.site
        # How the posts are read (`sources.site_reader`): their records and their pages.
        self._reading_key = reading_key(config)
        # What the posts' records depend on besides their source: another value, and every
        # post is read again.
        self._content_key = digest_of(
            BUILDER_VERSION,
            str(site.content_dir),
            self.key_prefix,
            site.url,
            site.assets_base_url,
            site.allow_raw_html,
            self._reading_key,
        )
        self._manifest: Manifest | None = None
        self._renderer: Renderer | None = None
        self._forgotten: set[str] = set()  # outputs of the manifest that --clean set aside
        self._last_build = ""  # manifest name of the last build into the output folder
        # The post pages of the last build (path -> digest of its bytes): the search index's
        # input; and whether a page was written or removed since the index was last made.
        self._search_pages: dict[str, str] = {}
        self._pages_changed = True

    # -- the public part -------------------------------------------------------------------

    def build(self, clean: bool = False, progress: Progress | None = None) -> BuildReport:
        """Build the site; `clean` forgets what earlier builds did and writes every file."""
        if self.before_build is not None:
            self.before_build()
        started = time.perf_counter()
        self._check_folders()
        manifest = self._load_manifest(clean)
        run = BuildRun(manifest, progress, clean)
        try:
            report = self._build(run)
        except BaseException:
            self._manifest = None  # half a build: next time, start again from the file
            raise
        finally:
            indexing = run.take_indexing()
            if indexing is not None:  # the build failed before the index was done
                indexing.abandon()
            if run.pool is not None:
                run.pool.close()
            if self._renderer is not None:
                self._renderer.bodies.clear()
        report.seconds = time.perf_counter() - started
        return report

    @property
    def renderer(self) -> Renderer:
        if self._renderer is None:
            self._renderer = Renderer(
                self.config,
                self.output_dir,
                self.key_prefix,
                self.state_dir / "jinja",
                drafts=self.drafts,
                premium=self.premium,
                highlight_dir=self.state_dir / "highlight",
            )
        return self._renderer

    # -- set-up ------------------------------------------------------------------------

    def _check_folders(self) -> None:
        site = self.config.site
        if not site.content_dir.is_dir():
            raise BuildError(f"{site.content_dir}: the content folder does not exist")
        out = self.output_dir
        for folder, what in ((site.content_dir, "content"), (site.templates_dir, "templates")):
            if out == folder or folder in out.parents or out in folder.parents:
                raise BuildError(
                    f"{out}: the output folder must lie outside the {what} folder ({folder})"
                )

    def _load_manifest(self, clean: bool) -> Manifest:
        if clean:
            old = self._manifest or Manifest.load(self.manifest_path, self._content_key)
            # Only the list of files written survives, so that those no longer made go.
            self._forgotten = set(old.outputs)
            self._manifest = Manifest(content_key=self._content_key)
        elif self._manifest is None:
            self._manifest = Manifest.load(self.manifest_path, self._content_key)
        return self._manifest

    # -- the build ---------------------------------------------------------------------

    def _build(self, run: BuildRun) -> BuildReport:
        site = self.config.site
        run.begin()  # before any file is looked at: see `Manifest.trusts`
        run.scanned(
            scan_content(
                site.content_dir,
                self.key_prefix,
                self.post_folders,
                excluded_by(self.config),
                post_suffixes(self.config),
            )
        )
        inputs.update_templates(run, self.renderer, self.config, self.folders, self.overlay)
        reading_list = inputs.check_mirror_files(run, self.config)
        site_context = {
            "title": site.title,
            "description": site.description,
            "author": site.author,
            "url": site.url,
            "lang": "en",
            "has_reading_list": reading_list is not None,
            # The path of the site's root on its host: where the 404 page, shown at any
            # depth, finds the rest of the site.
            "root_path": (urlsplit(site.url).path.rstrip("/") if site.url else "") + "/",
            "search": site.search,
        }
        site_key = digest_of(
            BUILDER_VERSION,
            site_context,
            site.per_page,
            self.drafts,
            self.premium,
            theme_files.pygments_version(),
            site.allow_raw_html,
            self._reading_key,
        )
        run.mark("scan")

        self._read_changed_posts(run)
        date_posts(run, self.config)
        run.mark("read and render posts")

        def site_plan(summaries: list[Listed], whole: FullContent | None = None) -> SitePlan:
            return SitePlan(
                site=site_context,
                site_url=site.url,
                per_page=site.per_page,
                site_key=site_key,
                closures=run.manifest.closures,
                reading_list=reading_list,
                posts=summaries,
                full_content=whole,
            )

        plan_key = replay.plan_inputs(run, self.config, site_key, reading_list)
        replayed = replay.replay(run, self.output_dir, plan_key, site.feed_full_content)
        if replayed is None:
            known = len(run.problems)
            posts = site_posts(
                run, self.config, self.key_prefix, drafts=self.drafts, premium=self.premium
            )
            post_pages = stale_post_pages(run, posts, site_key, self.output_dir, self._prepare)
            plan = site_plan(
                [post_summary(run, key) for key in posts],
                full_content(run, posts, self.renderer) if site.feed_full_content else None,
            )
            listings = plan.pages()
            replay.remember(
                run, plan_key, posts, [page.output for page in listings], run.problems[known:]
            )
            run.mark("plan")
        else:  # only the pages of posts whose body alone changed may be written
            posts, changed = replayed
            post_pages = stale_post_pages(
                run, posts, site_key, self.output_dir, self._prepare, only=changed
            )
            plan = site_plan([])  # no listing page to make: the last build's are kept
            listings = []
            run.mark("plan, as the last build's")
        self._write_pages(run, post_pages, listings, plan)
        run.mark("write pages")
        self._start_search_index(run)  # Pagefind runs while the rest is done
        inputs.copy_files(run, self.config, self.output_dir, self.folders, self.overlay, posts)
        self._finish(run)
        run.mark("copy, clean up, save")
        indexed = self._search_index(run)
        return BuildReport(
            output_dir=self.output_dir,
            posts=len(posts),
            drafts_left_out=run.drafts_left_out,
            written=sorted(run.written),
            unchanged=sorted(run.unchanged),
            removed=run.removed,
            problems=self._report_problems(run.problems),
            search_index=indexed,
            timings=run.timings,
        )

    def _start_search_index(self, run: BuildRun) -> None:
        """Start Pagefind on the parts of the index to make again once the pages are
        written, when the site has post pages (without any, whether the index is made
        again depends on the pages the build removes) and the index is made now."""
        if not (self.config.site.search and self.search_index):
            return
        pages = self._post_pages(run)
        if not pages:
            return
        try:
            run.indexing_started(
                search.start_index(
                    self.output_dir,
                    self.state_dir,
                    pages,
                    self.last_build_path.with_suffix(".search"),
                )
            )
        except BuildError as exc:
            run.indexing_failed(exc)

    def _post_pages(self, run: BuildRun) -> dict[str, str]:
        """The post pages of this build: path -> the digest of its bytes."""
        return {
            page: run.produced[page].digest
            for page in (f"{slug}/index.html" for slug in run.slugs.values())
            if page in run.produced
        }

    def _search_index(self, run: BuildRun) -> list[str]:
        """Bring the search index up to date with the post pages (`search`: only the parts
        whose pages changed are indexed again), unless search is off ([site] search =
        false: an index left by earlier builds goes) or made on demand. A failure is a
        warning: the site itself is built. Returns the index files written."""
        self._search_pages = self._post_pages(run)
        self._pages_changed = self._pages_changed or any(
            name.endswith(".html") for name in (*run.written, *run.removed)
        )
        if not self.config.site.search:
            search.remove_index(self.output_dir)
            return []
        if not self.search_index:
            return []
        try:
            if run.index_failure is not None:
                raise run.index_failure
            indexing = run.take_indexing()
            if indexing is not None:  # started with the same pages
                written, _ = indexing.finish()
                self._pages_changed = False
            else:
                written = self.make_search_index()
        except BuildError as exc:
            run.report(self.config.relative(self.output_dir), ProblemRow.warning(exc.message))
            written = []
        run.mark("search index")
        return written

    def make_search_index(self) -> list[str]:
        """Bring the search index up to date with the pages of the last build; returns the
        index files written. Raises `BuildError` when Pagefind fails."""
        written, _ = search.build_index(
            self.output_dir,
            self.state_dir,
            self._search_pages,
            self.last_build_path.with_suffix(".search"),  # per output folder: what it holds
            pages_changed=self._pages_changed,
        )
        self._pages_changed = False
        return written

    # -- 2. posts ---------------------------------------------------------------------

    def _read_changed_posts(self, run: BuildRun) -> None:
        """Bring the record of every post up to date; forget the posts that are gone."""
        records = run.manifest.posts
        jobs: list[PrepareJob] = []
        for key, (path, mtime, size) in run.scan.posts.items():
            record = records.get(key)
            if record is not None and record.stat == [mtime, size]:
                if not run.manifest.trusts(mtime):  # written just before the last look
                    if record.digest != theme_files.file_digest(path):
                        record = None
                    elif stat_trusted(mtime, run.started):
                        run.must_save()  # saved with this build's time, it is trusted next
            elif record is not None:
                if record.digest == theme_files.file_digest(path):
                    record.stat = [mtime, size]  # touched, not changed
                    record.saved = None
                    run.must_save()
                else:
                    record = None
            if record is None or needs_check(record):
                jobs.append(PrepareJob(key, path, True))
        for key in [k for k in records if k not in run.scan.posts]:
            del records[key]
            run.must_save()
        if jobs:
            self._prepare(run, jobs)

    def _prepare(self, run: BuildRun, jobs: list[PrepareJob]) -> None:
        """Read, check and render posts (step 1), on the workers when there are many."""
        records = run.manifest.posts
        run.must_save()
        run.expect(len(jobs))

        def take(worker: int | None, results: list[Prepared]) -> None:
            for result in results:
                key = result["key"]
                old = records.get(key)
                record = PostRecord(
                    result["stat"],
                    result["digest"],
                    result["info"],
                    result["problems"],
                    result["excerpt"],
                    result["links"] or [],
                    shown_from=result["shown_from"],
                )
                if result["links"] is not None:  # rendered: its body waits in `worker`
                    run.rendered(key, worker)
                elif old is not None and old.digest == record.digest:
                    # Checked again, not rendered: what the last render found still holds.
                    record.excerpt, record.links = old.excerpt, old.links
                info = record.info
                if info is not None and not info.get("date_written"):
                    info["date"] = run.found_dates.get(key)  # `date_posts` found it
                run.read_again(key, old)
                records[key] = record
            run.advance(len(results))

        # Code highlighted in a big batch is not kept (nor what was kept before: that
        # bounds the folder); that of a few posts, edited and built again, is.
        big = len(jobs) >= self.pool_threshold
        self.renderer.keep_highlighted(not big)
        if big and self.renderer.highlight_dir is not None:
            import shutil

            shutil.rmtree(self.renderer.highlight_dir, ignore_errors=True)
        if run.pool is None and big:
            processes = self.processes if self.processes is not None else default_processes()
            if processes > 1:
                self.renderer.warm()
                run.use_pool(WorkerPool(self.renderer, processes))
        if run.pool is None:
            take(None, self.renderer.prepare(jobs))
        else:
            size = max(1, min(16, len(jobs) // (len(run.pool) * 8)))
            run.pool.run("prepare", chunked(jobs, size), on_reply=take)

    # -- 4. writing -------------------------------------------------------------------

    def _write_pages(
        self, run: BuildRun, post_pages: dict[str, PostPage], listings: list[Page], plan: SitePlan
    ) -> None:
        """Render and write the pages that changed (step 2), on the workers when there are
        any: a post's page where its body is, the listings wherever there is room."""
        records, outputs, slugs = run.manifest.posts, run.manifest.outputs, run.slugs
        keys: dict[str, str] = {}
        routed: dict[int | None, list[PageJob]] = {}  # by the worker that holds the body
        for key, (page, series, comments, neighbours) in post_pages.items():
            record = records[key]
            info = site_info(record)
            output = f"{info['slug']}/index.html"
            links = {link: slugs[link] for link in record.links if link in slugs}
            keys[output] = page
            context = post_context(info, post_summary(run, key)[0], plan, series, neighbours)
            routed.setdefault(run.holders.get(key), []).append(
                PostPageJob(
                    key,
                    run.scan.posts[key][0],
                    output,
                    context,
                    links,
                    comments,
                    outputs.get(output),
                    run.force,
                )
            )
        page_jobs: list[PageJob] = []
        for listing in listings:
            if outdated(run, self.output_dir, listing.output, listing.key):
                keys[listing.output] = listing.key
                page_jobs.append(
                    ListingJob(
                        listing.template,
                        listing.output,
                        listing.context(),
                        outputs.get(listing.output),
                        run.force,
                    )
                )
            else:
                run.keep(listing.output)
        jobs = sum(len(j) for j in routed.values()) + len(page_jobs)
        if not jobs:
            return
        run.expect(jobs)

        def take(worker: int | None, results: list[tuple[str, Written]]) -> None:
            for output, result in results:
                run.record(output, keys[output], result)
            run.advance(len(results))

        if run.pool is None:
            take(
                None,
                self.renderer.assemble(
                    [job for group in routed.values() for job in group] + page_jobs
                ),
            )
            return
        shared = chunked(routed.pop(None, []), 16) + chunked(page_jobs, 8)
        run.pool.run(
            "assemble",
            shared,
            {
                worker: chunked(group, 32) for worker, group in routed.items() if worker is not None
            },  # None: popped above
            on_reply=take,
        )

    def _finish(self, run: BuildRun) -> None:
        """Remove the files an earlier build wrote that this one does not make; save."""
        manifest = run.manifest
        previous = set(manifest.outputs) | self._forgotten | self._other_builds_outputs()
        self._forgotten = set()
        gone = sorted(name for name in previous if name not in run.produced)
        run.removed_outputs(remove_outputs(self.output_dir, gone) if gone else [])
        if gone or run.produced.keys() != manifest.outputs.keys():
            run.must_save()
        manifest.outputs = run.produced
        manifest.scanned = run.started
        if run.dirty:
            manifest.save(self.manifest_path)
        if self._last_build != self.manifest_path.name:
            self.last_build_path.write_text(self.manifest_path.name, encoding="utf-8")
            self._last_build = self.manifest_path.name

    def _other_builds_outputs(self) -> set[str]:
        """What the last build into the same folder wrote, when it had other flags: a
        build without --drafts after one with them removes the drafts' pages."""
        try:
            last = self.last_build_path.read_text(encoding="utf-8").strip()
        except OSError:
            last = ""
        self._last_build = last
        if not last or last == self.manifest_path.name or "/" in last:
            return set()
        return set(Manifest.load(self.state_dir / last, "").outputs)

    @staticmethod
    def _report_problems(rows: list[tuple[str, ProblemRow]]) -> list[Problem]:
        if not rows:
            return []
        return sorted(row.problem(path) for path, row in rows)
