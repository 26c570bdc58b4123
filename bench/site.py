"""Benchmark of `toolkit build` on 1,000 generated posts, side by side with Hugo.

`python -m bench site` (or `make bench`) prints the figures; nothing is asserted. The corpus
is generated with a fixed seed into `bench/_work/site/` (git-ignored): 1,000 posts of about
1,000 words, most with a fenced code block, some with a table or an image, in series and
under 20 tags. Measured, each a few times (the median is shown):

- cold full build: the real CLI (`.venv/bin/toolkit build`) as a subprocess, wall time
  including interpreter start-up, after removing the output and the manifest; posts per
  second; peak memory (the largest process, and the sum over the build's processes);
- no-change rebuild, and one-post rebuild (one post's body edited), also through the CLI;
- one-post rebuild in-process: `SiteBuilder.build()` called again on a warm builder, what
  `toolkit watch` does on every save;
- Hugo (`hugo` on PATH) on the same posts with a minimal equivalent layout (post pages,
  paginated index and tag pages, tags list, feed, sitemap, code highlighting with CSS
  classes), cold, and the ratio of the two cold builds.
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
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WORK = ROOT / "bench" / "_work" / "site"
POSTS = 1000
SEED = 20240601
GENERATOR_VERSION = "2"  # bump when the corpus changes, so that it is generated again
REPEAT_COLD = 5
REPEAT_WARM = 5
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
        '{{ define "main" }}<article><h1>{{ .Title }}</h1>{{ partial "meta.html" . }}'
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


class TreeMemory(threading.Thread):
    """Samples the proportional set size (PSS) of a process and its descendants."""

    def __init__(self, pid: int):
        super().__init__(daemon=True)
        self.pid = pid
        self.peak_kb = 0
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
            self.peak_kb = max(self.peak_kb, sum(self._pss(p) for p in self._tree(self.pid)))
            self.stop.wait(0.01)


def timed(command: list[str], cwd: Path, memory: bool = False) -> tuple[float, float, float, float]:
    """Wall seconds, peak RSS of the largest process (MB), with `memory` the peak PSS summed
    over the process and its workers (MB; sampling /proc costs time, so the timed runs go
    without it), and the CPU seconds (user + system) of all of them."""
    with tempfile.TemporaryFile() as errors:
        started = time.perf_counter()
        process = subprocess.Popen(command, cwd=cwd, stdout=subprocess.DEVNULL, stderr=errors)
        sampler = TreeMemory(process.pid)
        if memory:
            sampler.start()
        _, status, usage = os.wait4(process.pid, 0)
        wall = time.perf_counter() - started
        if memory:
            sampler.stop.set()
            sampler.join()
        process.returncode = os.waitstatus_to_exitcode(status)
        if process.returncode != 0:
            errors.seek(0)
            message = errors.read().decode(errors="replace")
            raise SystemExit(f"{' '.join(command)} failed ({process.returncode}):\n{message}")
    return wall, usage.ru_maxrss / 1024, sampler.peak_kb / 1024, usage.ru_utime + usage.ru_stime


def _edit(post: Path, round_: int) -> None:
    text = post.read_text(encoding="utf-8")
    post.write_text(text + f"\nEdited in round {round_} of the benchmark.\n", encoding="utf-8")


def median(values: list[float]) -> float:
    return statistics.median(values)


def main() -> None:
    work = corpus()
    ours, hugo_dir = work / "ours", work / "hugo"
    toolkit = str(ROOT / ".venv" / "bin" / "toolkit")
    if not Path(toolkit).exists():
        toolkit = shutil.which("toolkit") or toolkit
    build = [toolkit, "--config", str(ours / "toolkit.toml"), "-q", "build"]

    trash = work / "trash"
    shutil.rmtree(trash, ignore_errors=True)
    trash.mkdir()

    def discard(folder: Path) -> None:
        """Out of the way for a cold build, deleted at the end. Deleting a thousand files
        right before making a thousand new ones costs ext4 dearly (the allocator skips the
        inodes it just freed, one by one), and that would be measured instead of the build."""
        if folder.exists():
            folder.rename(trash / f"{len(list(trash.iterdir()))}")

    def clear() -> None:
        discard(ours / "site")
        discard(ours / ".toolkit")

    hugo = shutil.which("hugo")
    hugo_command = [hugo or "hugo", "--quiet", "--cacheDir", str(hugo_dir / ".cache")]

    def hugo_cold() -> tuple[float, float, float, float]:
        for name in ("public", "resources", ".cache"):
            discard(hugo_dir / name)
        return timed(hugo_command, hugo_dir)

    # Cold builds of both, taking turns: the machine's speed drifts (other work, the disk),
    # and taking turns spreads the drift evenly over the two.
    cold, rss, cpu, hugo_runs, floor_runs = [], [], [], [], []
    for _ in range(REPEAT_COLD):
        clear()
        wall, largest, _, seconds = timed(build, ours)
        cold.append(wall)
        rss.append(largest)
        cpu.append(seconds)
        if hugo:
            hugo_runs.append(hugo_cold())
        discard(work / "floor")
        floor_runs.append(timed([sys.executable, __file__, "--floor", str(ours / "content"),
                                 str(work / "floor")], ROOT)[0])
    clear()
    _, largest, tree, _ = timed(build, ours, memory=True)
    rss.append(largest)
    no_change = [timed(build, ours)[0] for _ in range(REPEAT_WARM)]
    post = ours / "content" / "post-0500.md"
    original = post.read_text(encoding="utf-8")
    one_post = []
    try:
        for round_ in range(REPEAT_WARM):
            _edit(post, round_)
            one_post.append(timed(build, ours)[0])
        in_process = _in_process(ours, post)
    finally:
        post.write_text(original, encoding="utf-8")
    pages = sum(1 for _ in (ours / "site").rglob("*.html"))
    shutil.rmtree(trash, ignore_errors=True)

    if hugo_runs:
        hugo_pages = sum(1 for _ in (hugo_dir / "public").rglob("*.html"))

    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    print(f"corpus: {POSTS} posts of ~1,000 words (seed {SEED}), {cores} cores, "
          f"median of {REPEAT_COLD} cold / {REPEAT_WARM} warm runs")
    print(f"toolkit build, cold          {median(cold):6.2f} s   "
          f"{POSTS / median(cold):5.0f} posts/s   {pages} HTML pages   "
          f"CPU {median(cpu):.1f} s   (runs: {', '.join(f'{t:.2f}' for t in cold)})")
    print(f"  the stack's floor          {median(floor_runs):6.2f} s   (markdown-it-py + Pygments "
          f"+ Jinja2 only, post pages only, 2 processes)")
    print(f"  peak memory                {max(rss):6.0f} MB largest process, "
          f"{tree:.0f} MB all build processes (PSS)")
    print(f"toolkit build, no change     {median(no_change):6.3f} s")
    print(f"toolkit build, one post      {median(one_post):6.3f} s")
    print(f"SiteBuilder.build(), one post, in-process (watch)   "
          f"{median(in_process) * 1000:5.0f} ms   "
          f"(runs: {', '.join(f'{t * 1000:.0f}' for t in in_process)})")
    if hugo_runs:
        hugo_cold = [run[0] for run in hugo_runs]
        print(f"hugo, cold                   {median(hugo_cold):6.2f} s   "
              f"{POSTS / median(hugo_cold):5.0f} posts/s   {hugo_pages} HTML pages   "
              f"CPU {median([run[3] for run in hugo_runs]):.1f} s   "
              f"(runs: {', '.join(f'{t:.2f}' for t in hugo_cold)})")
        print(f"ratio toolkit / hugo, cold   {median(cold) / median(hugo_cold):6.2f}")
    else:
        print("hugo: not installed, no comparison")


def floor(content: Path, out: Path) -> None:
    """The floor of the stack: markdown-it-py + Pygments + Jinja2 and nothing else, the post
    pages only, on two processes; run as `python bench/site.py --floor CONTENT OUT`."""
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


def _in_process(project: Path, post: Path) -> list[float]:
    """One-post rebuilds on a warm builder in this process, as watch does them."""
    sys.path.insert(0, str(ROOT))
    from toolkit.config import load_config
    from toolkit.site import SiteBuilder

    # As watch makes it: the search index is made when the browser asks for it.
    builder = SiteBuilder(load_config(project / "toolkit.toml"), search_index=False)
    builder.build()  # reads the manifest, renders nothing
    _edit(post, 99)
    builder.build()  # the first render imports markdown-it, Pygments, Jinja2: once per watch
    times = []
    for round_ in range(REPEAT_WARM):
        _edit(post, 100 + round_)
        started = time.perf_counter()
        builder.build()
        times.append(time.perf_counter() - started)
    return times


if __name__ == "__main__":
    if sys.argv[1:2] == ["--floor"]:
        floor(Path(sys.argv[2]), Path(sys.argv[3]))
    else:
        main()
