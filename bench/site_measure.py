"""The site benchmark's measuring: the timed runs of `toolkit build`, Hugo, Pagefind and the
writer's commands on one corpus, and the stack's floor (see `bench/site.py`)."""

from __future__ import annotations

import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from bench.site_corpus import ROOT, SEARCH_CONFIG, corpus

# Each corpus size, with its repeats (the medians are shown): cold runs, warm runs.
SIZES = {1000: (5, 5), 5000: (3, 5)}
REPEAT_SEARCH = 3  # cold builds with search on, and Pagefind alone (1,000 posts)
REPEAT_COMMAND = 10  # `toolkit --help`, `toolkit check <one post>` (1,000 posts)
REPEAT_MEMORY = 3  # cold builds sampled for memory, apart from the timed ones (Hugo: one)
# The targets that depend on the corpus size (the others are in `report`).
MEMORY_TARGET_MB = {1000: 100, 5000: 150}
NO_CHANGE_TARGET_S = {1000: 0.15, 5000: 0.30}
# A problem line of `toolkit build`: `path:line: message` or `path:line: warning: message`.
PROBLEM = re.compile(r"^(?P<path>.+?):\d+: (?P<warning>warning: )?")
BUILT = re.compile(r"^built (\d+) posts?:", re.MULTILINE)


class TreeMemory(threading.Thread):
    """Samples the proportional set size (PSS) of a process and its descendants, summed by
    kind: the process's own (for the toolkit: the main process and its forked workers), and
    Pagefind's, which the toolkit starts after a build when search is on."""

    def __init__(self, pid: int):
        super().__init__(daemon=True)
        self.pid = pid
        self.peak_kb = {"own": 0, "pagefind": 0}
        self.stop = threading.Event()

    @staticmethod
    def _tree(pid: int) -> list[int]:
        pids, pending = [], [pid]
        while pending:
            current = pending.pop()
            pids.append(current)
            try:
                with open(f"/proc/{current}/task/{current}/children") as handle:
                    pending.extend(int(p) for p in handle.read().split())
            except OSError:
                pass
        return pids

    @staticmethod
    def _kind(pid: int) -> str:
        try:
            with open(f"/proc/{pid}/comm") as handle:
                return "pagefind" if handle.read().startswith("pagefind") else "own"
        except OSError:
            return "own"

    @staticmethod
    def _pss(pid: int) -> int:
        try:
            with open(f"/proc/{pid}/smaps_rollup") as handle:
                for line in handle:
                    if line.startswith("Pss:"):
                        return int(line.split()[1])
        except OSError:
            pass
        return 0

    def run(self) -> None:
        while not self.stop.is_set():
            sums = dict.fromkeys(self.peak_kb, 0)
            for pid in self._tree(self.pid):
                sums[self._kind(pid)] += self._pss(pid)
            for kind, kb in sums.items():
                self.peak_kb[kind] = max(self.peak_kb[kind], kb)
            self.stop.wait(0.01)


@dataclass
class Run:
    wall: float  # seconds, the whole process
    largest_mb: float  # peak RSS of the largest process of the tree (wait4)
    cpu: float  # user + system seconds of the whole tree
    exit_code: int
    stdout: str
    stderr: str
    pss_mb: dict[str, float]  # with `memory`: peak PSS by kind ("own", "pagefind")


def timed(command: list[str], cwd: Path, memory: bool = False, check: bool = True) -> Run:
    """Run `command` and measure it. With `memory`, /proc is sampled every 10 ms for the
    PSS of the process tree; that costs time, so the timed runs go without it."""
    env = {k: v for k, v in os.environ.items() if k != "GITHUB_ACTIONS"}  # plain output
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        started = time.perf_counter()
        process = subprocess.Popen(command, cwd=cwd, stdout=out, stderr=err, env=env)
        sampler = TreeMemory(process.pid)
        if memory:
            sampler.start()
        _, status, usage = os.wait4(process.pid, 0)
        wall = time.perf_counter() - started
        if memory:
            sampler.stop.set()
            sampler.join()
        process.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        stdout, stderr = (f.read().decode(errors="replace") for f in (out, err))
    if check and process.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed ({process.returncode}):\n{stdout}{stderr}")
    return Run(
        wall,
        usage.ru_maxrss / 1024,
        usage.ru_utime + usage.ru_stime,
        process.returncode,
        stdout,
        stderr,
        {kind: kb / 1024 for kind, kb in sampler.peak_kb.items()},
    )


@dataclass
class Peak:
    """Peak memory (MB), each the median over the sampled runs."""

    own: float  # PSS of the process and its workers, summed
    pagefind: float  # PSS of Pagefind
    largest: float  # RSS of the largest process
    runs: int

    @classmethod
    def of(cls, runs: list[Run]) -> Peak:
        return cls(
            median([r.pss_mb["own"] for r in runs]),
            median([r.pss_mb["pagefind"] for r in runs]),
            median([r.largest_mb for r in runs]),
            len(runs),
        )


@dataclass
class Problems:
    """What the toolkit's builds reported. A post the build refused is a page it did not
    make: the figures of such a run do not compare with Hugo's."""

    builds: int = 0
    errors: dict[str, None] = field(default_factory=dict)  # each line once, in order
    warnings: dict[str, None] = field(default_factory=dict)
    built: set[int] = field(default_factory=set)  # "built N posts" of each run

    def add(self, run: Run, command: list[str]) -> None:
        found = [m for m in map(PROBLEM.match, run.stdout.splitlines()) if m]
        errors = [m.string for m in found if not m["warning"]]
        if run.exit_code != 0 and not (run.exit_code == 1 and errors):
            raise SystemExit(
                f"{' '.join(command)} failed ({run.exit_code}):\n{run.stdout}{run.stderr}"
            )
        self.builds += 1
        self.errors.update(dict.fromkeys(errors))
        self.warnings.update(dict.fromkeys(m.string for m in found if m["warning"]))
        self.built.update(int(n) for n in BUILT.findall(run.stderr))

    @property
    def refused(self) -> set[str]:
        """The posts with an error: the build left them out."""
        return {m["path"] for m in map(PROBLEM.match, self.errors) if m}


@dataclass
class Figures:
    """Everything measured on one corpus size (seconds unless said)."""

    posts: int
    cold_runs: int
    warm_runs: int
    problems: Problems = field(default_factory=Problems)
    cold: list[Run] = field(default_factory=list)  # search off
    pages: list[int] = field(default_factory=list)  # HTML pages after each cold run
    memory: Peak | None = None  # cold runs sampled for memory
    no_change: list[float] = field(default_factory=list)
    one_post: list[float] = field(default_factory=list)
    hugo: list[Run] = field(default_factory=list)
    hugo_pages: list[int] = field(default_factory=list)
    hugo_memory: Peak | None = None
    floor: list[float] = field(default_factory=list)
    in_process: list[float] = field(default_factory=list)
    search_cold: list[Run] = field(default_factory=list)
    search_pages: list[int] = field(default_factory=list)
    search_memory: Peak | None = None
    search_one_post: list[float] = field(default_factory=list)
    pagefind: list[Run] = field(default_factory=list)  # Pagefind alone on the built site
    # Hugo, then the same Pagefind binary on Hugo's output: (Hugo's run, Pagefind's run)
    hugo_search: list[tuple[Run, Run]] = field(default_factory=list)
    help: list[float] = field(default_factory=list)
    check: list[float] = field(default_factory=list)


class Bench:
    """One corpus, its two copies, and the runs on them."""

    def __init__(self, posts: int, toolkit: str, hugo: str | None):
        self.root = corpus(posts)
        self.ours, self.hugo_dir = self.root / "ours", self.root / "hugo"
        self.toolkit, self.hugo = toolkit, hugo
        self.post = self.ours / "content" / f"post-{posts // 2:04d}.md"
        self.trash = self.root / "trash"
        shutil.rmtree(self.trash, ignore_errors=True)
        self.trash.mkdir()
        self.discarded = 0

    def discard(self, folder: Path) -> None:
        """Out of the way for a cold build, deleted at the end. Deleting thousands of files
        right before making thousands of new ones costs ext4 dearly (the allocator skips the
        inodes it just freed, one by one), and that would be measured instead of the build."""
        if folder.exists():
            self.discarded += 1
            folder.rename(self.trash / str(self.discarded))

    def build(self, problems: Problems, search: bool = False, memory: bool = False) -> Run:
        """`toolkit build` as a writer types it, in the project folder: with its
        toolkit.toml (search off), or with `search` the default configuration."""
        command = [self.toolkit, *(["--config", SEARCH_CONFIG] if search else []), "build"]
        run = timed(command, self.ours, memory=memory, check=False)
        problems.add(run, command)
        return run

    def cold(
        self, problems: Problems, search: bool = False, memory: bool = False
    ) -> tuple[Run, int]:
        """A cold build: no output, and no `.toolkit/` state (manifest, caches, run log)."""
        self.discard(self.ours / "site")
        self.discard(self.ours / ".toolkit")
        run = self.build(problems, search=search, memory=memory)
        return run, html_pages(self.ours / "site")

    def hugo_cold(self, memory: bool = False) -> tuple[Run, int]:
        for name in ("public", "resources", ".cache"):
            self.discard(self.hugo_dir / name)
        command = [self.hugo or "hugo", "--quiet", "--cacheDir", str(self.hugo_dir / ".cache")]
        return timed(command, self.hugo_dir, memory=memory), html_pages(self.hugo_dir / "public")

    def floor(self) -> float:
        self.discard(self.root / "floor")
        return timed(
            [
                sys.executable,
                "-m",
                "bench.site",
                "--floor",
                str(self.ours / "content"),
                str(self.root / "floor"),
            ],
            ROOT,
        ).wall

    def edits(self, rounds: int, build: Callable[[], float]) -> list[float]:
        """`build` after each of `rounds` edits of one post's body; the post is restored."""
        original = self.post.read_text(encoding="utf-8")
        try:
            times = []
            for round_ in range(rounds):
                _edit(self.post, round_)
                times.append(build())
            return times
        finally:
            self.post.write_text(original, encoding="utf-8")

    def pagefind_alone(self) -> Run | None:
        """Pagefind run on the built site as the toolkit runs it (an empty working folder,
        a fresh output folder)."""
        try:
            from pagefind_bin import get_executable  # type: ignore[import-untyped]
        except ImportError:
            return None
        here = self.root / "pagefind-alone"
        self.discard(here)
        here.mkdir()
        return timed(
            [
                str(get_executable()),
                "--site",
                str(self.ours / "site"),
                "--output-path",
                str(here / "pagefind"),
                "--silent",
            ],
            here,
        )

    def hugo_then_pagefind(self) -> tuple[Run, Run] | None:
        """A cold Hugo build, then the toolkit's Pagefind binary on Hugo's output (its post
        layout marks the post with `data-pagefind-body`, as the toolkit's theme does, so
        both index the same pages): what a Hugo site with Pagefind search costs."""
        try:
            from pagefind_bin import get_executable  # type: ignore[import-untyped]
        except ImportError:
            return None
        hugo, _ = self.hugo_cold()
        here = self.root / "hugo-pagefind"
        self.discard(here)
        here.mkdir()
        pagefind = timed(
            [
                str(get_executable()),
                "--site",
                str(self.hugo_dir / "public"),
                "--output-path",
                str(here / "pagefind"),
                "--silent",
            ],
            here,
        )
        return hugo, pagefind

    def close(self) -> None:
        shutil.rmtree(self.trash, ignore_errors=True)


def html_pages(folder: Path) -> int:
    return sum(1 for _ in folder.rglob("*.html"))


def _edit(post: Path, round_: int) -> None:
    text = post.read_text(encoding="utf-8")
    post.write_text(text + f"\nEdited in round {round_} of the benchmark.\n", encoding="utf-8")


def median(values: list[float]) -> float:
    return statistics.median(values)


def measure(
    posts: int, cold_runs: int, warm_runs: int, toolkit: str, hugo: str | None, everything: bool
) -> Figures:
    """The figures of one corpus size; with `everything`, also the floor, the in-process
    rebuild, the builds with search on, Pagefind alone and the writer's commands."""
    bench = Bench(posts, toolkit, hugo)
    figures = Figures(posts, cold_runs, warm_runs)
    problems = figures.problems
    print(f"measuring {posts} posts ...", flush=True)
    try:
        # Both tools take turns: the machine's speed drifts (other work, the disk), and
        # taking turns spreads the drift evenly over the two.
        for _ in range(cold_runs):
            run, pages = bench.cold(problems)
            figures.cold.append(run)
            figures.pages.append(pages)
            if hugo:
                run, pages = bench.hugo_cold()
                figures.hugo.append(run)
                figures.hugo_pages.append(pages)
            if everything:
                figures.floor.append(bench.floor())
        if hugo:
            figures.hugo_memory = Peak.of([bench.hugo_cold(memory=True)[0]])
        figures.memory = Peak.of(
            [bench.cold(problems, memory=True)[0] for _ in range(REPEAT_MEMORY)]
        )
        figures.no_change = [bench.build(problems).wall for _ in range(warm_runs)]
        figures.one_post = bench.edits(warm_runs, lambda: bench.build(problems).wall)
        if not everything:
            return figures
        figures.in_process = _in_process(bench.ours, bench.post, warm_runs)
        for _ in range(REPEAT_SEARCH):  # taking turns with Hugo + Pagefind, as above
            run, pages = bench.cold(problems, search=True)
            figures.search_cold.append(run)
            figures.search_pages.append(pages)
            if hugo and (pair := bench.hugo_then_pagefind()) is not None:
                figures.hugo_search.append(pair)
        figures.search_memory = Peak.of(
            [bench.cold(problems, search=True, memory=True)[0] for _ in range(REPEAT_MEMORY)]
        )
        figures.search_one_post = bench.edits(
            warm_runs, lambda: bench.build(problems, search=True).wall
        )
        for _ in range(REPEAT_SEARCH):
            alone = bench.pagefind_alone()
            if alone is not None:
                figures.pagefind.append(alone)
        figures.help = _command(toolkit, ["--help"], bench.ours)
        figures.check = _command(
            toolkit, ["check", str(bench.post.relative_to(bench.ours))], bench.ours
        )
        return figures
    finally:
        bench.close()


def _command(toolkit: str, args: list[str], cwd: Path) -> list[float]:
    """A writer's command, whole process, after one run that leaves its state warm."""
    timed([toolkit, *args], cwd)
    return [timed([toolkit, *args], cwd).wall for _ in range(REPEAT_COMMAND)]


def _watch() -> tuple[list[float] | None, str]:
    """The watch benchmark's latencies (measured once per process), or why there are none."""
    from bench import watch

    try:
        return watch.measure(), ""
    except (Exception, SystemExit) as exc:  # the table is still printed
        return None, f"not measured: {exc}".splitlines()[0]


def floor(content: Path, out: Path) -> None:
    """The floor of the stack: markdown-it-py + Pygments + Jinja2 and nothing else, the post
    pages only, on two processes; run as `python -m bench.site --floor CONTENT OUT`."""
    import multiprocessing

    import jinja2
    from markdown_it import MarkdownIt
    from pygments import highlight
    from pygments.formatters import HtmlFormatter
    from pygments.lexers import get_lexer_by_name

    formatter = HtmlFormatter(nowrap=True)
    lexers: dict = {}

    def code(text: str, lang: str, attrs: str) -> str:
        if lang not in lexers:
            lexers[lang] = get_lexer_by_name(lang)
        return (
            f'<pre class="highlight"><code>{highlight(text, lexers[lang], formatter)}</code></pre>'
        )

    md = MarkdownIt("commonmark", {"highlight": code}).enable(["table", "strikethrough"])
    page = jinja2.Environment(autoescape=True).from_string(
        "<!doctype html><html><head><title>{{ title }}</title></head><body><main>"
        "<h1>{{ title }}</h1>{{ body }}</main></body></html>"
    )
    files = sorted(content.glob("*.md"))

    def work(part: int) -> None:
        for path in files[part::2]:
            _, front, body = path.read_text(encoding="utf-8").split("---\n", 2)
            folder = out / path.stem
            folder.mkdir(parents=True)
            html = page.render(
                title=path.stem, body=jinja2.utils.markupsafe.Markup(md.render(body))
            )
            (folder / "index.html").write_text(html, encoding="utf-8")

    workers = [multiprocessing.get_context("fork").Process(target=work, args=(i,)) for i in (0, 1)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()


def _in_process(project: Path, post: Path, rounds: int) -> list[float]:
    """One-post rebuilds on a warm builder in this process, as watch does them."""
    sys.path.insert(0, str(ROOT))
    from toolkit.config import load_config
    from toolkit.site import SiteBuilder

    original = post.read_text(encoding="utf-8")
    try:
        # As watch makes it: the search index is made when the browser asks for it.
        builder = SiteBuilder(load_config(project / "toolkit.toml"), search_index=False)
        builder.build()  # reads the manifest, renders nothing
        _edit(post, 99)
        builder.build()  # the first render imports markdown-it, Pygments, Jinja2: once per watch
        times = []
        for round_ in range(rounds):
            _edit(post, 100 + round_)
            started = time.perf_counter()
            builder.build()
            times.append(time.perf_counter() - started)
        return times
    finally:
        post.write_text(original, encoding="utf-8")
