"""`toolkit watch`: rebuild on every save, live-reload the browser, keep remote drafts fresh.

The session owns four parts that run side by side: the watchdog observer, the coalescer
that turns event bursts into batches, the preview server, and (unless push is off) the
draft pusher. Each batch is handled on the coalescer's thread: reload the configuration if
`toolkit.toml` changed, rebuild incrementally, tell the browsers, queue the saved posts
for the pusher. The session reports through `WatchReporter`; it never prints. It is made
by `toolkit.commands.watch`, which gives it the draft publisher (or none).

Without a site (`WatchOptions.site` false: `[source]` names another generator, whose site
it is) there is no build and no preview server: only the posts are watched and the saved
ones pushed.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Collection
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from toolkit.config import Config, load_config
from toolkit.content.discover import is_post_path, post_suffixes
from toolkit.errors import ConfigError, ServeError, ToolkitError
from toolkit.serving import BackgroundServer, is_loopback
from toolkit.serving.static import root_path_of
from toolkit.site import BuildReport, SiteBuilder
from toolkit.sync.engine import Outcome
from toolkit.watch.changes import POLL_SECONDS, Coalescer, FolderWatch, Sweep
from toolkit.watch.preview import Broadcaster, create_preview_app
from toolkit.watch.push import DraftPublisher, DraftPusher

if TYPE_CHECKING:  # pragma: no cover
    from toolkit.license.gate import PremiumGate

log = logging.getLogger(__name__)

PREMIUM_PREVIEW = "preview-premium"  # under .toolkit/: the premium preview's folder


class WatchReporter(Protocol):
    def built(self, report: BuildReport, changed: list[str], seconds: float) -> None: ...

    def problems(self, new: list[str], fixed: list[str]) -> None: ...

    def pushed(self, outcomes: list[Outcome]) -> None: ...

    def push_failed(self, message: str) -> None: ...

    def config_problem(self, message: str) -> None: ...

    def notice(self, message: str) -> None: ...


@dataclass(frozen=True)
class WatchOptions:
    host: str = "127.0.0.1"
    port: int = 8000
    drafts: bool = True
    site: bool = True  # build and serve the preview; false: only push the saved drafts


class WatchSession:
    """`start()`, then `stop()` (from the thread that started it) when the user is done.
    `notices` are what the caller should tell the user before it starts (push is off).

    With a `gate` it is `toolkit watch --premium`: the premium site in
    `.toolkit/preview-premium/` (never the public preview's folder), each rebuild behind
    the licence gate. A refusal at the start stops the session from starting; a later one
    is reported like a bad save and the preview stays as it was until a rebuild is allowed
    again. `on_end` is told once how the session ended: the error that kept it from
    starting, or None when it stopped (the caller's recorded run)."""

    def __init__(
        self,
        config: Config,
        options: WatchOptions,
        reporter: WatchReporter,
        *,
        publisher: DraftPublisher | None = None,
        notices: tuple[str, ...] = (),
        gate: PremiumGate | None = None,
        on_end: Callable[[BaseException | None], object] | None = None,
    ):
        if not is_loopback(options.host):
            raise ServeError(f"refusing to serve the preview on {options.host}: loopback only")
        self.config = config
        self.options = options
        self.reporter = reporter
        self.publisher = publisher
        self.notices = notices
        self.gate = gate
        self.on_end = on_end
        self.output_dir = config.state_dir / (PREMIUM_PREVIEW if gate is not None else "preview")
        self.broadcaster = Broadcaster()
        self.builder = self._builder(config) if options.site else None
        self.pusher: DraftPusher | None = None
        self.server: BackgroundServer | None = None
        self.coalescer = Coalescer(self._handle)
        self.folders = FolderWatch(self._relevant, self.coalescer.add, self._polled)
        # What the OS's notifications miss is found by looking (see `toolkit.watch.changes`).
        self.sweep = Sweep(
            lambda: self._folders(self.config),
            self._relevant,
            self.coalescer.add,
        )
        self._problems: set[str] = set()
        self._gone: set[Path] = set()  # watched folders found deleted, not back yet
        self._stopped = threading.Event()
        # A build and the making of the search index never overlap; the index is made
        # again when a build changed a page since it was last made.
        self._site_lock = threading.Lock()
        self._index_stale = True

    def _folders(self, config: Config) -> tuple[Path, ...]:
        """The folders watched: the posts', and the templates' when there is a site."""
        site = config.site
        if not self.options.site:
            return (site.content_dir,)
        return (site.content_dir, site.templates_dir)

    def _builder(self, config: Config) -> SiteBuilder:
        if self.gate is not None:
            self.gate.use(config)
            return SiteBuilder(
                config,
                drafts=self.options.drafts,
                out=self.output_dir,
                premium=True,
                before_build=self.gate.check,
            )
        # The search index is made when the browser asks for it (`_search_index`), not on
        # every save: for a big site, it takes longer than the rebuild.
        return SiteBuilder(
            config, drafts=self.options.drafts, out=self.output_dir, search_index=False
        )

    @property
    def url(self) -> str:
        return self.server.base_url + "/" if self.server else ""

    # -- life cycle ------------------------------------------------------------------------

    def start(self) -> None:
        try:
            if self.gate is not None:
                self.gate.check()  # a refusal at the start: the session does not start
            self._start()
        except BaseException as exc:
            self._ended(exc)
            raise

    def _ended(self, error: BaseException | None) -> None:
        on_end, self.on_end = self.on_end, None  # told once
        if on_end is not None:
            on_end(error)

    def _start(self) -> None:
        if self.options.site:
            self._start_site()
        if self.publisher is not None:
            self.pusher = DraftPusher(
                self.config, self.publisher, self.reporter.pushed, self.reporter.push_failed
            )
            self.pusher.start()
        self.coalescer.start()
        self.folders.add(self.config.path.parent, recursive=False)  # toolkit.toml, new folders
        self._watch_site_folders()
        self.folders.start()
        self.sweep.start()

    def _start_site(self) -> None:
        try:
            report = self._build()
        except ToolkitError as exc:  # a broken template: shown on the pages, and fixable
            self._failed(exc.lines)
        else:
            self._after_build(report, [], report.seconds)
        self.server = BackgroundServer(
            create_preview_app(
                self.output_dir,
                self.broadcaster,
                root_path_of(self.config.site.url),
                self._search_index,
            ),
            self.options.host,
            self.options.port,
            name="preview server",
        ).start()

    def _watch_site_folders(self, batch: Collection[Path] = ()) -> None:
        """Watch the content and templates folders: one made since the start, and one
        deleted and made again (its old watch ended with it; an event on the folder
        itself in `batch` says so), said once each way."""
        for folder in self._folders(self.config):
            shown = f"{self.config.relative(folder)}/"
            if not folder.is_dir():
                if self.folders.watching(folder) and folder not in self._gone:
                    self._gone.add(folder)
                    self.reporter.notice(
                        f"{shown} is gone: still watching, and it is "
                        "watched again as soon as it is back"
                    )
                continue
            again = self.folders.watching(folder)
            renew = folder in batch or folder in self._gone
            if self.folders.add(folder, renew=renew) and again:
                self._gone.discard(folder)
                self.reporter.notice(f"{shown} is back: watching it again")

    def _polled(self, folder: Path, exc: OSError) -> None:
        reason = exc.strerror or str(exc)
        self.reporter.notice(
            f"{self.config.relative(folder)}/: the system gives no more file "
            f"watches ({reason}); its files are looked at every "
            f"{POLL_SECONDS:g} s instead"
        )

    def stop(self) -> None:
        """Stop everything, in the order that lets each part finish cleanly."""
        try:
            self._stop()
        finally:
            self._ended(None)

    def _stop(self) -> None:
        if self._stopped.is_set():
            return
        self._stopped.set()
        self.sweep.stop()
        self.folders.stop()
        self.coalescer.stop()
        if self.pusher is not None:
            self.pusher.stop()  # a push in flight ends; the lock is written atomically
        elif self.publisher is not None:
            self.publisher.close()  # never started
        self.broadcaster.close()
        if self.server is not None:
            self.server.stop()

    # -- what a change does --------------------------------------------------------------

    def _relevant(self, path: Path) -> bool:
        if path == self.config.path:
            return True
        if path.name.startswith(".") or path.name.endswith("~"):
            return False  # editor swap and backup files
        return any(
            folder == path or folder in path.parents for folder in self._folders(self.config)
        )

    def _handle(self, batch: set[Path]) -> None:
        started = time.perf_counter()
        if self.config.path in batch and not self._reload_config():
            return
        if not self.options.site:
            self._watch_site_folders(batch)
            self._push(batch)
            return
        try:
            self._watch_site_folders(batch)  # one of them may have just been made (again)
            report = self._build()
        except ToolkitError as exc:
            self._failed(exc.lines)
            return
        except Exception:  # a failure no save should cost the session
            # Every post's own failure is its problem in the report; this is a bug. Say so
            # and keep watching: the next save builds again from the manifest on disk.
            log.exception("the rebuild failed")
            self._failed(
                [
                    "the rebuild failed unexpectedly (see the log); still watching, "
                    "the next save builds again"
                ]
            )
            return
        changed = sorted(self.config.relative(p) for p in batch)
        self._after_build(report, changed, time.perf_counter() - started)
        self._push(batch)

    def _push(self, batch: set[Path]) -> None:
        if self.pusher is not None:
            content, suffixes = self.config.site.content_dir, post_suffixes(self.config)
            posts = {p for p in batch if is_post_path(p, content, suffixes=suffixes)}
            if posts:
                self.pusher.request(posts)

    def _reload_config(self) -> bool:
        try:
            config = load_config(self.config.path)
        except ConfigError as exc:
            self._failed(["toolkit.toml not reloaded, the previous settings stay:", *exc.problems])
            return False
        if config.site.content_dir != self.config.site.content_dir or (
            config.site.templates_dir != self.config.site.templates_dir
        ):
            self.reporter.config_problem(
                "toolkit.toml: content_dir and templates_dir changes need a restart of watch"
            )
        self.config = config
        if self.options.site:
            self.builder = self._builder(config)
        if self.pusher is not None:
            self.pusher.config = config
        return True

    def _build(self) -> BuildReport:
        assert self.builder is not None  # only with a site
        with self._site_lock:
            self.sweep.mark()
            report = self.builder.build()
            if report.written or report.removed:
                self._index_stale = True
            return report

    def _search_index(self) -> None:
        """Make the search index of the preview, when a page changed since the last one
        (the preview server calls this when the browser asks for the index)."""
        if not self.config.site.search:
            return
        with self._site_lock:
            if not self._index_stale or self.builder is None:
                return
            try:
                self.builder.make_search_index()
            except ToolkitError as exc:
                self.reporter.config_problem(exc.message)
                return
            self._index_stale = False

    def _failed(self, lines: list[str]) -> None:
        """A build that could not run: said in the terminal and on every page."""
        self.reporter.config_problem("\n".join(lines))
        self.broadcaster.fail(lines)

    def _after_build(self, report: BuildReport, changed: list[str], seconds: float) -> None:
        self.reporter.built(report, changed, seconds)
        recovered = bool(self.broadcaster.failure)
        current = {str(p) for p in report.problems if p.is_error}
        if current != self._problems:
            new = sorted(current - self._problems)
            fixed = sorted(self._problems - current)
            self._problems = current
            self.reporter.problems(new, fixed)
            self.broadcaster.send("problems", sorted(current))
        if recovered:
            self.broadcaster.recover(changed)  # reloads every page
        elif report.written or report.removed:
            self.broadcaster.send("reload", {"changed": changed})
