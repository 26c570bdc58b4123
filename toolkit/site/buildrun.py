"""One build's state (`BuildRun`): what it found, what it did, and its progress.

The build's steps (`builder`, `inputs`, `siteplan`, `replay`) read its fields and change
them only through its methods, so that each field is set here, in one place.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from toolkit.errors import BuildError
from toolkit.site.manifest import Manifest, OutputRecord, PostRecord, ProblemRow, digest_of
from toolkit.site.output import Written
from toolkit.site.scan import ContentScan

if TYPE_CHECKING:  # pragma: no cover
    from toolkit.site import search
    from toolkit.site.parallel import WorkerPool

Progress = Callable[[int, int], None]  # (total, done)


class BuildRun:
    """One build's state. Its fields are read anywhere and set only by its methods."""

    def __init__(self, manifest: Manifest, progress: Progress | None, clean: bool):
        self.manifest = manifest
        self.scan = ContentScan()
        self.force = clean  # write every file, whatever is there
        self.dirty = clean  # the manifest must be saved
        self.pool: WorkerPool | None = None
        # The search index, started once the pages are written (`builder`), or why not.
        self.indexing: search.Indexing | None = None
        self.index_failure: BuildError | None = None
        self.holders: dict[str, int | None] = {}  # rendered bodies: post -> worker (None: here)
        self.produced: dict[str, OutputRecord] = {}  # output -> its record
        self.written: list[str] = []
        self.unchanged: list[str] = []
        self.problems: list[tuple[str, ProblemRow]] = []  # (path, row) to report
        self.drafts_left_out = 0
        self.removed: list[str] = []
        # The posts this build read again: post -> its record before (None: a new post).
        self.replaced: dict[str, PostRecord | None] = {}
        self.slugs: dict[str, str] = {}  # post on the site -> its slug
        self.timings: dict[str, float] = {}
        self.started = 0  # time.time_ns() when the build began looking at the files
        self.dates = ""  # digest of the dates from the lock and git (`date_posts`)
        self.found_dates: dict[str, str] = {}  # post -> that date
        self._progress = progress
        self._total = self._done = 0
        self._last = time.perf_counter()

    # -- progress and timings ----------------------------------------------------------

    def mark(self, step: str) -> None:
        now = time.perf_counter()
        self.timings[step] = self.timings.get(step, 0.0) + now - self._last
        self._last = now

    def expect(self, count: int) -> None:
        self._total += count
        if self._progress and count:
            self._progress(self._total, self._done)

    def advance(self, count: int) -> None:
        self._done += count
        if self._progress and count:
            self._progress(self._total, self._done)

    # -- what it found -----------------------------------------------------------------

    def begin(self) -> None:
        """The build begins looking at the files: see `Manifest.trusts`."""
        self.started = time.time_ns()

    def scanned(self, scan: ContentScan) -> None:
        """What the content folder holds; the files it passed over are warnings."""
        self.scan = scan
        for path, reason in scan.skipped.items():
            self.report(path, ProblemRow.warning(reason))

    def report(self, path: str, row: ProblemRow) -> None:
        self.problems.append((path, row))

    def must_save(self) -> None:
        """A record of the manifest changed: it is saved at the end."""
        self.dirty = True

    def read_again(self, key: str, old: PostRecord | None) -> None:
        """A post read again; `old`: its record before (None: a new post)."""
        self.replaced.setdefault(key, old)

    def rendered(self, key: str, worker: int | None) -> None:
        """A post's body rendered, waiting in `worker` (None: this process) for its page."""
        self.holders[key] = worker

    def dated(self, found: dict[str, str]) -> None:
        """The dates of the posts without `date:`, from the lock or git (`date_posts`)."""
        self.dates = digest_of(sorted(found.items()))
        self.found_dates = found

    def left_out_draft(self) -> None:
        self.drafts_left_out += 1

    def on_site(self, slugs: dict[str, str]) -> None:
        """The posts on the site, with their slugs."""
        self.slugs = slugs

    def replayed(
        self, slugs: dict[str, str], problems: list[tuple[str, ProblemRow]], drafts: int
    ) -> None:
        """What the last build's plan found, taken as this build's (`replay`)."""
        self.slugs = slugs
        self.problems.extend(problems)
        self.drafts_left_out = drafts

    # -- what it did -------------------------------------------------------------------

    def keep(self, output: str) -> None:
        """An output the build did not need to touch."""
        self.produced[output] = self.manifest.outputs[output]
        self.unchanged.append(output)

    def record(self, output: str, key: str, result: Written) -> None:
        self.produced[output] = OutputRecord(key, result.digest, result.mtime_ns, result.size)
        (self.written if result.written else self.unchanged).append(output)
        self.dirty |= result.written

    def removed_outputs(self, removed: list[str]) -> None:
        self.removed = removed

    def use_pool(self, pool: WorkerPool) -> None:
        self.pool = pool

    def indexing_started(self, indexing: search.Indexing) -> None:
        self.indexing = indexing

    def indexing_failed(self, exc: BuildError) -> None:
        self.index_failure = exc

    def take_indexing(self) -> search.Indexing | None:
        """The search index started, handed over to finish (or abandon) once."""
        indexing, self.indexing = self.indexing, None
        return indexing
