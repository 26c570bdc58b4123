"""Benchmark of `toolkit build` on 1,000 and 5,000 generated posts, side by side with Hugo.

`python -m bench site` (or `make bench`) prints the figures and, at the end, a table of the
performance targets: each row's figure, its target, and whether it is met. Nothing is
asserted. `python -m bench.site --posts 200 --runs 1` is a quick look at one small corpus. The corpora are generated with a fixed seed into `bench/_work/site/<posts>/`
(git-ignored): posts of about 1,000 words, most with a fenced code block, some with a table
or an image (small real PNGs, shipped in both copies), in series and under 20 tags; the
larger corpus starts with the posts of the smaller. Every toolkit figure is the real CLI
(`.venv/bin/toolkit ...`) as a subprocess in the project folder, wall time including
interpreter start-up; each is the median of a few runs (the counts are printed):

- cold build, search off (`[site] search = false`, as Hugo builds no search index), after
  removing the output and the whole `.toolkit/` state folder; posts per second, HTML pages
  of each run, CPU time; peak memory of the toolkit's own processes (main and workers, PSS
  summed), in cold runs of its own (sampling /proc costs time);
- no-change rebuild, and one-post rebuild (one post's body edited);
- Hugo (`hugo` on PATH) on the same posts with a minimal equivalent layout (post pages,
  paginated index and tag pages, tags list, feed, sitemap, code highlighting with CSS
  classes), cold, taking turns with the toolkit; the ratio of the two cold builds;
- on 1,000 posts only: the stack's floor, the one-post rebuild in-process (what `toolkit
  watch` does on every save), `toolkit --help` and `toolkit check <one post>`, and the
  search index apart: cold build and one-post rebuild with search on (the default), Pagefind
  alone on the built site, and Pagefind's peak memory beside the toolkit's; Hugo followed by
  the same Pagefind binary on Hugo's output (its post layout marks `data-pagefind-body` as
  the toolkit's theme does), taking turns with the cold builds with search on;
- the watch row, from `bench/watch.py`.

Every toolkit build's problems are counted: a run whose build refused posts says so loudly,
as its figures do not compare with Hugo's.
"""

from __future__ import annotations

import os
import random
import re
import shutil
import statistics
import struct
import subprocess
import sys
import tempfile
import threading
import time
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from bench.common import Row, print_rows, verdict

ROOT = Path(__file__).resolve().parent.parent
WORK = ROOT / "bench" / "_work" / "site"
SEED = 20240601
GENERATOR_VERSION = "3"  # bump when the corpus changes, so that it is generated again
SEARCH_CONFIG = "search.toml"  # beside toolkit.toml: the same project, search on

# -- the corpus ------------------------------------------------------------------------

WORDS = (
    "the a of to and in is it that for on with as was by this be are from or at an which "
    "build site post page template render markdown code write reader deploy content static "
    "server cache fast slow change update branch commit review merge test function value "
    "list table image version release feature bug fix error warning config option default "
    "theme layout style font color dark light mobile screen width height header footer link "
    "anchor feed sitemap tag series draft publish article author date time minute hour day "
    "week month year data file folder path request response queue worker thread process"
).split()
TAGS = ["python", "javascript", "go", "rust", "web", "devops", "testing", "docs", "css",
        "linux", "git", "api", "cloud", "security", "data", "tutorial", "beginners",
        "performance", "tools", "career"]
CODE = {
    "python": '''import dataclasses
from pathlib import Path


@dataclasses.dataclass
class Cache:
    """A small LRU cache of rendered pages."""
    size: int = 128
    _data: dict = dataclasses.field(default_factory=dict)

    def get(self, key, default=None):
        value = self._data.pop(key, default)
        if value is not default:
            self._data[key] = value  # newest last
        return value

    def put(self, key, value):
        if len(self._data) >= self.size:
            self._data.pop(next(iter(self._data)))
        self._data[key] = value


def pages(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*.html") if not p.name.startswith("_"))
''',
    "javascript": '''export async function fetchPosts(api, page = 1) {
  const response = await fetch(`${api}/articles?page=${page}&per_page=30`);
  if (!response.ok) {
    throw new Error(`HTTP ${response.status}: ${response.statusText}`);
  }
  const posts = await response.json();
  return posts.map((post) => ({ id: post.id, title: post.title.trim(), tags: post.tag_list }));
}

const debounce = (fn, wait = 200) => {
  let timer;
  return (...args) => {
    clearTimeout(timer);
    timer = setTimeout(() => fn(...args), wait);
  };
};
''',
    "bash": '''#!/usr/bin/env bash
set -euo pipefail
for file in content/*.md; do
  if grep -q "^published: true" "$file"; then
    echo "publishing $file"
  fi
done
make site && rsync -av --delete site/ "$DEPLOY_HOST:/var/www/blog/"
''',
    "go": '''package main

import (
	"fmt"
	"sort"
	"strings"
)

type Post struct {
	Title string
	Tags  []string
}

func main() {
	posts := []Post{{Title: "Hello", Tags: []string{"go", "web"}}}
	sort.Slice(posts, func(i, j int) bool { return posts[i].Title < posts[j].Title })
	for i, p := range posts {
		fmt.Printf("%d: %s [%s]\\n", i, p.Title, strings.Join(p.Tags, ", "))
	}
}
''',
    "json": '''{
  "article": {
    "title": "Hello, world",
    "published": true,
    "tags": ["python", "web"],
    "series": null,
    "body_markdown": "Some text"
  }
}
''',
    "yaml": '''site:
  title: My blog
  url: https://example.com/blog
  per_page: 10
build:
  drafts: false
  targets: [html, feed, sitemap]
''',
}
IMAGES = 20  # the posts link /images/figure-0.png ... figure-19.png
IMAGE_LINK = re.compile(r"\]\(/images/([^)\s]+)\)")


def png(width: int, height: int, seed: int) -> bytes:
    """A real RGB PNG of a few KB (a gradient with noise, so it does not compress to
    nothing), written with zlib and struct: no imaging library needed."""
    rng = random.Random(seed)
    raw = bytearray()
    for y in range(height):
        raw.append(0)  # filter type 0 (None) for the row
        for x in range(width):
            raw += bytes(((x * 4 + seed * 13) % 256, (y * 6) % 256, 96 + rng.randrange(64)))

    def chunk(kind: bytes, data: bytes) -> bytes:
        return (struct.pack(">I", len(data)) + kind + data
                + struct.pack(">I", zlib.crc32(kind + data)))

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)  # 8-bit RGB
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header)
            + chunk(b"IDAT", zlib.compress(bytes(raw), 9)) + chunk(b"IEND", b""))


def _sentence(rng: random.Random, count: int | None = None) -> str:
    count = count or rng.randint(8, 18)
    words = [rng.choice(WORDS) for _ in range(count)]
    i = rng.randrange(count)
    roll = rng.random()
    if roll < 0.15:
        words[i] = f"**{words[i]}**"
    elif roll < 0.25:
        words[i] = f"`{words[i]}()`"
    elif roll < 0.32:
        words[i] = f"[{words[i]}](https://example.org/{words[i]})"
    elif roll < 0.38:
        words[i] = f"*{words[i]}*"
    text = " ".join(words)
    return text[0].upper() + text[1:] + "."


def _body(rng: random.Random, index: int) -> str:
    parts: list[str] = []
    words, section = 0, 0
    target = rng.randint(900, 1100)
    has_code, has_table, has_image = rng.random() < 0.8, rng.random() < 0.2, rng.random() < 0.15
    while words < target:
        if (section == 0 and words > target * 0.3) or (section == 1 and words > target * 0.65):
            section += 1
            parts.append(f"## {_sentence(rng, 4)[:-1]}")
            if section == 1 and has_code:
                lang = rng.choice(sorted(CODE))
                parts.append(f"```{lang}\n{CODE[lang]}```")
                words += len(CODE[lang].split())
            if section == 1 and has_table:
                rows = ["| Option | Default | Meaning |", "| --- | --- | --- |"]
                rows += [f"| `{rng.choice(WORDS)}` | {rng.randint(0, 100)} | {_sentence(rng, 6)} |"
                         for _ in range(5)]
                parts.append("\n".join(rows))
                words += 35
            if section == 2 and has_image:
                parts.append(f"![A diagram of the {rng.choice(WORDS)}]"
                             f"(/images/figure-{index % IMAGES}.png)")
            continue
        if rng.random() < 0.12:
            items = [f"- {_sentence(rng, 6)}" for _ in range(rng.randint(3, 5))]
            parts.append("\n".join(items))
            words += 6 * len(items)
        else:
            sentences = [_sentence(rng) for _ in range(rng.randint(3, 6))]
            parts.append(" ".join(sentences))
            words += sum(len(s.split()) for s in sentences)
    return "\n\n".join(parts) + "\n"


def generate(root: Path, posts: int) -> None:
    """The corpus as a toolkit project (`root/ours`) and as a Hugo site (`root/hugo`), the
    same posts and the same image files in both. The posts are the same at every size: a
    larger corpus starts with the posts of a smaller one."""
    rng = random.Random(SEED)
    ours, hugo = root / "ours", root / "hugo"
    for folder in (ours, hugo, root / "trash", root / "floor"):
        shutil.rmtree(folder, ignore_errors=True)
    (ours / "content" / "images").mkdir(parents=True)
    (hugo / "content").mkdir(parents=True)
    (hugo / "static" / "images").mkdir(parents=True)
    shipped = set()
    for i in range(IMAGES):
        name = f"figure-{i}.png"
        image = png(64, 40, i)
        (ours / "content" / "images" / name).write_bytes(image)  # `/images/x` in a post
        (hugo / "static" / "images" / name).write_bytes(image)  # Hugo serves static/ at /
        shipped.add(name)
    linked = set()
    for i in range(posts):
        title = f"Post {i}: {_sentence(rng, 5)[:-1]}"
        tags = rng.sample(TAGS, rng.randint(1, 4))
        # Every date in the past (up to 2024 at 5,000 posts): a future date is an error.
        date = f"{2010 + i // 336}-{1 + (i // 28) % 12:02d}-{1 + i % 28:02d}"
        front = [f'title: "{title}"', f"date: {date}", f"tags: [{', '.join(tags)}]",
                 f'description: "{_sentence(rng, 12)}"']
        if i % 50 < 5:
            front.append(f'series: "Series {i // 50}"')
        body = _body(rng, i)
        linked.update(IMAGE_LINK.findall(body))
        name = f"post-{i:04d}.md"
        text = "\n".join(front) + "\n---\n\n" + body
        (ours / "content" / name).write_text("---\npublished: true\n" + text, encoding="utf-8")
        (hugo / "content" / name).write_text("---\ndraft: false\n" + text, encoding="utf-8")
    if linked - shipped:
        raise SystemExit(f"the generator links images it does not ship: {sorted(linked - shipped)}")
    site = ('[site]\ntitle = "Bench"\nurl = "https://example.com/blog"\n'
            'description = "A generated site."\nauthor = "Bench"\n')
    # Hugo builds no search index: the builds compared with it leave ours off too.
    (ours / "toolkit.toml").write_text(site + "search = false\n", encoding="utf-8")
    # The default configuration (search on, Pagefind after each build that changed a page).
    (ours / SEARCH_CONFIG).write_text(site, encoding="utf-8")
    _hugo_site(hugo)


def _hugo_site(hugo: Path) -> None:
    """A minimal Hugo layout doing the same work as toolkit's theme."""
    (hugo / "config.toml").write_text('''baseURL = "https://example.com/blog/"
title = "Bench"
paginate = 10
rssLimit = 20
disableKinds = ["section"]
[taxonomies]
tag = "tags"
[outputs]
home = ["HTML", "RSS"]
page = ["HTML"]
taxonomy = ["HTML"]
term = ["HTML"]
[markup.highlight]
codeFences = true
noClasses = false
[markup.goldmark.renderer]
unsafe = true
[markup.goldmark.parser]
autoHeadingID = true
''', encoding="utf-8")
    layouts = hugo / "layouts" / "_default"
    layouts.mkdir(parents=True)
    (hugo / "layouts" / "partials").mkdir(parents=True)
    (hugo / "layouts" / "partials" / "meta.html").write_text(
        '<p class="meta"><time datetime="{{ .Date.Format "2006-01-02T15:04:05Z07:00" }}">'
        '{{ .Date.Format "Jan 2, 2006" }}</time> · {{ .ReadingTime }} min read '
        '{{ range .Params.tags }}<a href="{{ "tags/" | relURL }}{{ . | urlize }}/">#{{ . }}</a> '
        "{{ end }}</p>\n", encoding="utf-8")
    (layouts / "baseof.html").write_text(
        '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>{{ .Title }}'
        '</title><meta name="description" content="{{ .Description }}">'
        '<link rel="canonical" href="{{ .Permalink }}"><meta property="og:title" '
        'content="{{ .Title }}"><meta property="og:url" content="{{ .Permalink }}">'
        '<link rel="stylesheet" href="{{ "static/style.css" | relURL }}"></head><body>'
        '<header><a href="{{ "" | relURL }}">{{ .Site.Title }}</a> <a href="'
        '{{ "tags/" | relURL }}">Tags</a></header><main>{{ block "main" . }}{{ end }}</main>'
        "<footer>{{ .Site.Title }}</footer></body></html>\n", encoding="utf-8")
    (layouts / "single.html").write_text(
        '{{ define "main" }}<article data-pagefind-body><h1>{{ .Title }}</h1>'
        '{{ partial "meta.html" . }}'
        '{{ with .Params.series }}<aside>Series: {{ . }}</aside>{{ end }}'
        "{{ .Content }}</article>{{ end }}\n", encoding="utf-8")
    (layouts / "list.html").write_text(
        '{{ define "main" }}<h1>{{ .Title }}</h1>{{ $p := .Paginate .Pages }}<ol>'
        '{{ range $p.Pages }}<li><h2><a href="{{ .RelPermalink }}">{{ .Title }}</a></h2>'
        '{{ partial "meta.html" . }}<p>{{ .Description }}</p></li>{{ end }}</ol>'
        '{{ if $p.HasPrev }}<a href="{{ $p.Prev.URL }}">Newer</a>{{ end }}'
        '{{ if $p.HasNext }}<a href="{{ $p.Next.URL }}">Older</a>{{ end }}{{ end }}\n',
        encoding="utf-8")
    (layouts / "terms.html").write_text(
        '{{ define "main" }}<h1>Tags</h1><ul>{{ range .Data.Terms.Alphabetical }}<li>'
        '<a href="{{ .Page.RelPermalink }}">#{{ .Page.Title }}</a> {{ .Count }}</li>{{ end }}'
        "</ul>{{ end }}\n", encoding="utf-8")
    (layouts / "404.html").write_text(
        '{{ define "main" }}<h1>Page not found</h1>{{ end }}\n', encoding="utf-8")


def corpus(posts: int = 1000) -> Path:
    """The corpus of `posts` posts, generated again when the generator changed."""
    _forget_old_layout()
    folder = WORK / str(posts)
    stamp = folder / "stamp"
    wanted = f"{GENERATOR_VERSION} {posts}"
    if not stamp.is_file() or stamp.read_text(encoding="utf-8") != wanted:
        print(f"generating {posts} posts into {folder.relative_to(ROOT)}/ ...", flush=True)
        generate(folder, posts)
        stamp.write_text(wanted, encoding="utf-8")
    return folder


def _forget_old_layout() -> None:
    """Generator version 1 kept one corpus right in `WORK`: remove it."""
    if not (WORK / "stamp").is_file():
        return
    for name in ("ours", "hugo", "trash", "floor"):
        shutil.rmtree(WORK / name, ignore_errors=True)
    (WORK / "stamp").unlink()


# -- measuring -------------------------------------------------------------------------

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
    return Run(wall, usage.ru_maxrss / 1024, usage.ru_utime + usage.ru_stime,
               process.returncode, stdout, stderr,
               {kind: kb / 1024 for kind, kb in sampler.peak_kb.items()})


@dataclass
class Peak:
    """Peak memory (MB), each the median over the sampled runs."""

    own: float  # PSS of the process and its workers, summed
    pagefind: float  # PSS of Pagefind
    largest: float  # RSS of the largest process
    runs: int

    @classmethod
    def of(cls, runs: list[Run]) -> Peak:
        return cls(median([r.pss_mb["own"] for r in runs]),
                   median([r.pss_mb["pagefind"] for r in runs]),
                   median([r.largest_mb for r in runs]), len(runs))


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
            raise SystemExit(f"{' '.join(command)} failed ({run.exit_code}):\n"
                             f"{run.stdout}{run.stderr}")
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

    def cold(self, problems: Problems, search: bool = False,
             memory: bool = False) -> tuple[Run, int]:
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
        return timed([sys.executable, "-m", "bench.site", "--floor", str(self.ours / "content"),
                      str(self.root / "floor")], ROOT).wall

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
        return timed([str(get_executable()), "--site", str(self.ours / "site"),
                      "--output-path", str(here / "pagefind"), "--silent"], here)

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
        pagefind = timed([str(get_executable()), "--site", str(self.hugo_dir / "public"),
                          "--output-path", str(here / "pagefind"), "--silent"], here)
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


def measure(posts: int, cold_runs: int, warm_runs: int, toolkit: str, hugo: str | None,
            everything: bool) -> Figures:
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
        figures.memory = Peak.of([bench.cold(problems, memory=True)[0]
                                  for _ in range(REPEAT_MEMORY)])
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
        figures.search_memory = Peak.of([bench.cold(problems, search=True, memory=True)[0]
                                         for _ in range(REPEAT_MEMORY)])
        figures.search_one_post = bench.edits(
            warm_runs, lambda: bench.build(problems, search=True).wall)
        for _ in range(REPEAT_SEARCH):
            alone = bench.pagefind_alone()
            if alone is not None:
                figures.pagefind.append(alone)
        figures.help = _command(toolkit, ["--help"], bench.ours)
        figures.check = _command(toolkit, ["check", str(bench.post.relative_to(bench.ours))],
                                 bench.ours)
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


def main(argv: list[str] | None = None) -> None:
    """`python -m bench.site [--posts N] [--runs N]`: one corpus size, N runs of each kind
    (a quick look; `make bench` measures the sizes of SIZES)."""
    global REPEAT_SEARCH, REPEAT_COMMAND, REPEAT_MEMORY, SIZES
    import argparse

    parser = argparse.ArgumentParser(prog="python -m bench.site")
    parser.add_argument("--posts", type=int, help="one corpus of this many posts")
    parser.add_argument("--runs", type=int, help="runs of each kind (default: as SIZES says)")
    args = parser.parse_args(argv if argv is not None else [])
    if args.posts or args.runs:
        runs = args.runs
        SIZES = {args.posts or min(SIZES): (runs or 3, runs or 3)}
        if runs:
            REPEAT_SEARCH = REPEAT_COMMAND = REPEAT_MEMORY = runs
    started = time.perf_counter()
    toolkit = str(ROOT / ".venv" / "bin" / "toolkit")
    if not Path(toolkit).exists():
        toolkit = shutil.which("toolkit") or toolkit
    hugo = shutil.which("hugo")
    results = [measure(posts, cold, warm, toolkit, hugo, everything=posts == min(SIZES))
               for posts, (cold, warm) in SIZES.items()]
    if args.posts:
        latencies, why = None, "not measured (--posts)"
    else:
        print("measuring watch (bench/watch.py) ...", flush=True)
        latencies, why = _watch()
    version = ""
    if hugo:
        version = subprocess.run([hugo, "version"], capture_output=True, text=True).stdout
    print()
    for figures in results:
        details(figures)
        print()
    report(results, latencies, why, hugo, version.strip())
    print(f"\nsite benchmark: {time.perf_counter() - started:.0f} s in all")


# -- reporting -------------------------------------------------------------------------


def _runs(values: list[float], scale: float = 1, digits: int = 2) -> str:
    return ", ".join(f"{v * scale:.{digits}f}" for v in values)


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}{'' if number == 1 else 's'}"


def _pages(counts: list[int]) -> str:
    if len(set(counts)) == 1:
        return f"{counts[0]} HTML pages each run"
    return f"HTML PAGES DIFFER FROM RUN TO RUN: {', '.join(map(str, counts))}"


def details(f: Figures) -> None:
    """The detail lines of one corpus size."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    walls = [r.wall for r in f.cold]
    print(f"-- {f.posts} posts of ~1,000 words (seed {SEED}), {cores} cores; median of "
          f"{f.cold_runs} cold / {f.warm_runs} warm runs --")
    print(f"toolkit build, cold, search off   {median(walls):6.2f} s   "
          f"{f.posts / median(walls):5.0f} posts/s   CPU {median([r.cpu for r in f.cold]):.1f} s"
          f"   {_pages(f.pages)}   (runs: {_runs(walls)})")
    if f.floor:
        print(f"  the stack's floor               {median(f.floor):6.2f} s   (markdown-it-py + "
              "Pygments + Jinja2 only, post pages only, 2 processes)")
    if f.memory:
        print(f"  peak memory                     {f.memory.own:6.0f} MB toolkit main + workers "
              f"(PSS, summed)   {f.memory.largest:.0f} MB largest process (RSS)   "
              f"({f.memory.runs} sampled runs)")
    print(f"toolkit build, no change          {median(f.no_change):6.3f} s   "
          f"(runs: {_runs(f.no_change, digits=3)})")
    print(f"toolkit build, one post edited    {median(f.one_post):6.3f} s   "
          f"(runs: {_runs(f.one_post, digits=3)})")
    if f.in_process:
        print(f"SiteBuilder.build(), one post, in-process (as watch)   "
              f"{median(f.in_process) * 1000:5.0f} ms   (runs: {_runs(f.in_process, 1000, 0)})")
    if f.hugo:
        hugo = [r.wall for r in f.hugo]
        print(f"hugo, cold                        {median(hugo):6.2f} s   "
              f"{f.posts / median(hugo):5.0f} posts/s   CPU {median([r.cpu for r in f.hugo]):.1f} s"
              f"   {_pages(f.hugo_pages)}   (runs: {_runs(hugo)})")
        if f.hugo_memory:
            print(f"  peak memory                     {f.hugo_memory.own:6.0f} MB (PSS)   "
                  f"{f.hugo_memory.largest:.0f} MB (RSS)   ({f.hugo_memory.runs} sampled run)")
        print(f"ratio toolkit / hugo, cold        {median(walls) / median(hugo):6.2f}x")
    if f.search_cold:
        search = [r.wall for r in f.search_cold]
        print(f"toolkit build, cold, search on    {median(search):6.2f} s   "
              f"CPU {median([r.cpu for r in f.search_cold]):.1f} s   {_pages(f.search_pages)}   "
              f"(runs: {_runs(search)}; {SEARCH_CONFIG}, the default configuration)")
    if f.search_memory:
        print(f"  peak memory                     {f.search_memory.own:6.0f} MB toolkit main + "
              f"workers, {f.search_memory.pagefind:.0f} MB Pagefind (PSS)   "
              f"({f.search_memory.runs} sampled runs)")
    if f.pagefind:
        alone = [r.wall for r in f.pagefind]
        print(f"  Pagefind alone, built site      {median(alone):6.2f} s   peak "
              f"{max(r.largest_mb for r in f.pagefind):.0f} MB (RSS)   (runs: {_runs(alone)})")
    if f.hugo_search:
        both = [h.wall + p.wall for h, p in f.hugo_search]
        print(f"hugo then Pagefind, cold          {median(both):6.2f} s   CPU "
              f"{median([h.cpu + p.cpu for h, p in f.hugo_search]):.1f} s   (runs: {_runs(both)})")
    if f.search_one_post:
        print(f"toolkit build, one post, search on {median(f.search_one_post):5.3f} s   "
              f"(runs: {_runs(f.search_one_post, digits=3)})")
    if f.help:
        print(f"toolkit --help                    {median(f.help):6.3f} s   "
              f"(runs: {_runs(f.help, digits=3)})")
        print(f"toolkit check <one post>          {median(f.check):6.3f} s   "
              f"(runs: {_runs(f.check, digits=3)})")
    p = f.problems
    built = ", ".join(map(str, sorted(p.built))) or "?"
    print(f"toolkit build problems: {_count(len(p.errors), 'error')}, "
          f"{_count(len(p.warnings), 'warning')} over {p.builds} builds; "
          f"posts built: {built} of {f.posts}")
    for line in [*p.errors, *p.warnings][:10]:
        print(f"  {line}")


def report(results: list[Figures], latencies: list[float] | None, why: str,
           hugo: str | None, version: str) -> None:
    """The table of targets: every row with its figure, its target and its verdict."""
    rows: list[Row] = []
    refused = {f.posts: f.problems.refused for f in results}
    for f in results:
        if refused[f.posts] or f.problems.errors:
            print("!" * 88)
            print(f"!!! THE TOOLKIT REFUSED {len(refused[f.posts])} OF THE {f.posts} POSTS "
                  f"({_count(len(f.problems.errors), 'error')}): its figures do not compare "
                  "with Hugo's.")
            print("!" * 88)
    if not hugo:
        print("hugo is not installed: the cold builds have no ratio. Get it with "
              "`apt-get install hugo` (Debian, Ubuntu) or from https://gohugo.io/installation/")
    else:
        print(f"Hugo: {version}, measured in the same run on the same posts")
    print("Every time is a whole process (`toolkit ...` as typed in the project folder), the "
          "median of the runs above;\na peak memory is the median over cold runs sampled every "
          "10 ms, apart from the timed ones.\n")
    for f in results:
        rows.append(_cold_row(f, refused[f.posts]))
    for f in results:
        megabytes = MEMORY_TARGET_MB.get(f.posts)
        if f.memory and megabytes:
            # The largest process, as the figures the targets were set against were taken;
            # the main process and its workers together beside it.
            mb = f.memory.largest
            rows.append(Row(f"peak memory, {f.posts:,} posts (largest process, RSS)",
                            f"{mb:.0f} MB ({f.memory.own:.0f} MB all, PSS)",
                            f"at most {megabytes} MB", verdict(mb, megabytes)))
    for f in results:
        seconds = NO_CHANGE_TARGET_S.get(f.posts)
        if seconds:
            rows.append(Row(f"no-change `toolkit build`, {f.posts:,} posts",
                            f"{median(f.no_change):.3f} s", f"at most {seconds:.2f} s",
                            verdict(median(f.no_change), seconds)))
    small = results[0]
    rows.append(Row(f"one post changed, `toolkit build`, {small.posts:,} posts",
                    f"{median(small.one_post):.3f} s", "at most 0.20 s",
                    verdict(median(small.one_post), 0.20)))
    rows.append(watch_row(latencies, why))
    for name, values in (("`toolkit --help`", small.help),
                         ("`toolkit check <one post>`", small.check)):
        rows.append(Row(name, f"{median(values):.3f} s", "at most 0.15 s",
                        verdict(median(values), 0.15)))
    print_rows(rows)
    print("\nWith the search index (Pagefind, the default; the rows above have it off, "
          "[site] search = false),\nagainst Hugo followed by the same Pagefind binary:\n")
    print_rows(_search_rows(small, refused[small.posts]))


def _cold_row(f: Figures, refused: set[str]) -> Row:
    work = f"cold build, {f.posts:,} posts, both cores, vs Hugo"
    toolkit = median([r.wall for r in f.cold])
    if not f.hugo:
        return Row(work, f"{toolkit:.2f} s (no Hugo)", "at most 0.80x Hugo", "no ratio")
    hugo = median([r.wall for r in f.hugo])
    ratio = toolkit / hugo
    judged = verdict(ratio, 0.8)
    if refused:
        judged = f"NOT COMPARABLE: {len(refused)} posts refused"
    return Row(work, f"{ratio:.2f}x ({toolkit:.2f} s / {hugo:.2f} s)", "at most 0.80x Hugo",
               judged)


def _search_rows(f: Figures, refused: set[str]) -> list[Row]:
    if not f.search_cold:
        return []
    none = "none set"
    search = median([r.wall for r in f.search_cold])
    extra = search - median([r.wall for r in f.cold])
    one = median(f.search_one_post)
    rows = [Row(f"one post changed, `toolkit build`, search on, {f.posts:,} posts",
                f"{one:.3f} s", "at most 0.40 s", verdict(one, 0.40))]
    work = f"cold build, {f.posts:,} posts, search on, vs Hugo then Pagefind"
    if f.hugo_search:
        hugo = median([h.wall + p.wall for h, p in f.hugo_search])
        pagefind = median([p.wall for _, p in f.hugo_search])
        judged = verdict(search / hugo, 0.8)
        if refused:
            judged = f"NOT COMPARABLE: {len(refused)} posts refused"
        rows.append(Row(work, f"{search / hugo:.2f}x ({search:.2f} s / {hugo:.2f} s, of which "
                              f"Pagefind {pagefind:.2f} s)", "at most 0.80x", judged))
    else:
        rows.append(Row(work, f"{search:.2f} s (no Hugo or no Pagefind)", "at most 0.80x",
                        "no ratio"))
    rows.append(Row(f"cold build, {f.posts:,} posts, search on (the default)",
                    f"{search:.2f} s ({extra:+.2f} s over search off)", none, "-"))
    if f.pagefind:
        alone = median([r.wall for r in f.pagefind])
        rows.append(Row(f"Pagefind alone, whole built {f.posts:,}-post site",
                        f"{alone:.2f} s, peak {max(r.largest_mb for r in f.pagefind):.0f} MB",
                        none, "-"))
    if f.search_memory:
        memory = f.search_memory
        rows.append(Row("peak memory, search on: toolkit / Pagefind (PSS)",
                        f"{memory.own:.0f} MB / {memory.pagefind:.0f} MB",
                        f"{none} (100 MB is the build's)", "-"))
    return rows


def watch_row(latencies: list[float] | None, why: str = "") -> Row:
    """The watch row: file write to the reload event (the browser's own reload after it is
    not in the figure)."""
    work = "watch: save to the reload event, 1,000 posts"
    if not latencies:
        return Row(work, why or "not measured", "at most 80 ms median", "-")
    value = median(latencies)
    return Row(work, f"{value * 1000:.0f} ms", "at most 80 ms median", verdict(value, 0.080))


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
        return f'<pre class="highlight"><code>{highlight(text, lexers[lang], formatter)}</code></pre>'

    md = MarkdownIt("commonmark", {"highlight": code}).enable(["table", "strikethrough"])
    page = jinja2.Environment(autoescape=True).from_string(
        "<!doctype html><html><head><title>{{ title }}</title></head><body><main>"
        "<h1>{{ title }}</h1>{{ body }}</main></body></html>")
    files = sorted(content.glob("*.md"))

    def work(part: int) -> None:
        for path in files[part::2]:
            _, front, body = path.read_text(encoding="utf-8").split("---\n", 2)
            folder = out / path.stem
            folder.mkdir(parents=True)
            html = page.render(title=path.stem, body=jinja2.utils.markupsafe.Markup(md.render(body)))
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


if __name__ == "__main__":
    if sys.argv[1:2] == ["--floor"]:
        floor(Path(sys.argv[2]), Path(sys.argv[3]))
    else:
        main(sys.argv[1:])
