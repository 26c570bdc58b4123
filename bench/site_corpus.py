"""The site benchmark's corpus: posts of about 1,000 words generated with a fixed seed, as a
toolkit project and as a Hugo site with an equivalent layout (see `bench/site.py`)."""

from __future__ import annotations

import random
import re
import shutil
import struct
import zlib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WORK = ROOT / "bench" / "_work" / "site"
SEED = 20240601
GENERATOR_VERSION = "3"  # bump when the corpus changes, so that it is generated again
SEARCH_CONFIG = "search.toml"  # beside toolkit.toml: the same project, search on

WORDS = (
    "the a of to and in is it that for on with as was by this be are from or at an which "
    "build site post page template render markdown code write reader deploy content static "
    "server cache fast slow change update branch commit review merge test function value "
    "list table image version release feature bug fix error warning config option default "
    "theme layout style font color dark light mobile screen width height header footer link "
    "anchor feed sitemap tag series draft publish article author date time minute hour day "
    "week month year data file folder path request response queue worker thread process"
).split()
TAGS = [
    "python",
    "javascript",
    "go",
    "rust",
    "web",
    "devops",
    "testing",
    "docs",
    "css",
    "linux",
    "git",
    "api",
    "cloud",
    "security",
    "data",
    "tutorial",
    "beginners",
    "performance",
    "tools",
    "career",
]
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
    "javascript": """export async function fetchPosts(api, page = 1) {
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
""",
    "bash": """#!/usr/bin/env bash
set -euo pipefail
for file in content/*.md; do
  if grep -q "^published: true" "$file"; then
    echo "publishing $file"
  fi
done
make site && rsync -av --delete site/ "$DEPLOY_HOST:/var/www/blog/"
""",
    "go": """package main

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
""",
    "json": """{
  "article": {
    "title": "Hello, world",
    "published": true,
    "tags": ["python", "web"],
    "series": null,
    "body_markdown": "Some text"
  }
}
""",
    "yaml": """site:
  title: My blog
  url: https://example.com/blog
  per_page: 10
build:
  drafts: false
  targets: [html, feed, sitemap]
""",
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
        return (
            struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
        )

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)  # 8-bit RGB
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(bytes(raw), 9))
        + chunk(b"IEND", b"")
    )


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
                rows += [
                    f"| `{rng.choice(WORDS)}` | {rng.randint(0, 100)} | {_sentence(rng, 6)} |"
                    for _ in range(5)
                ]
                parts.append("\n".join(rows))
                words += 35
            if section == 2 and has_image:
                parts.append(
                    f"![A diagram of the {rng.choice(WORDS)}](/images/figure-{index % IMAGES}.png)"
                )
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
        front = [
            f'title: "{title}"',
            f"date: {date}",
            f"tags: [{', '.join(tags)}]",
            f'description: "{_sentence(rng, 12)}"',
        ]
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
    site = (
        '[site]\ntitle = "Bench"\nurl = "https://example.com/blog"\n'
        'description = "A generated site."\nauthor = "Bench"\n'
    )
    # Hugo builds no search index: the builds compared with it leave ours off too.
    (ours / "toolkit.toml").write_text(site + "search = false\n", encoding="utf-8")
    # The default configuration (search on, Pagefind after each build that changed a page).
    (ours / SEARCH_CONFIG).write_text(site, encoding="utf-8")
    _hugo_site(hugo)


def _hugo_site(hugo: Path) -> None:
    """A minimal Hugo layout doing the same work as toolkit's theme."""
    (hugo / "config.toml").write_text(
        """baseURL = "https://example.com/blog/"
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
""",
        encoding="utf-8",
    )
    layouts = hugo / "layouts" / "_default"
    layouts.mkdir(parents=True)
    (hugo / "layouts" / "partials").mkdir(parents=True)
    (hugo / "layouts" / "partials" / "meta.html").write_text(
        '<p class="meta"><time datetime="{{ .Date.Format "2006-01-02T15:04:05Z07:00" }}">'
        '{{ .Date.Format "Jan 2, 2006" }}</time> · {{ .ReadingTime }} min read '
        '{{ range .Params.tags }}<a href="{{ "tags/" | relURL }}{{ . | urlize }}/">#{{ . }}</a> '
        "{{ end }}</p>\n",
        encoding="utf-8",
    )
    (layouts / "baseof.html").write_text(
        '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>{{ .Title }}'
        '</title><meta name="description" content="{{ .Description }}">'
        '<link rel="canonical" href="{{ .Permalink }}"><meta property="og:title" '
        'content="{{ .Title }}"><meta property="og:url" content="{{ .Permalink }}">'
        '<link rel="stylesheet" href="{{ "static/style.css" | relURL }}"></head><body>'
        '<header><a href="{{ "" | relURL }}">{{ .Site.Title }}</a> <a href="'
        '{{ "tags/" | relURL }}">Tags</a></header><main>{{ block "main" . }}{{ end }}</main>'
        "<footer>{{ .Site.Title }}</footer></body></html>\n",
        encoding="utf-8",
    )
    (layouts / "single.html").write_text(
        '{{ define "main" }}<article data-pagefind-body><h1>{{ .Title }}</h1>'
        '{{ partial "meta.html" . }}'
        "{{ with .Params.series }}<aside>Series: {{ . }}</aside>{{ end }}"
        "{{ .Content }}</article>{{ end }}\n",
        encoding="utf-8",
    )
    (layouts / "list.html").write_text(
        '{{ define "main" }}<h1>{{ .Title }}</h1>{{ $p := .Paginate .Pages }}<ol>'
        '{{ range $p.Pages }}<li><h2><a href="{{ .RelPermalink }}">{{ .Title }}</a></h2>'
        '{{ partial "meta.html" . }}<p>{{ .Description }}</p></li>{{ end }}</ol>'
        '{{ if $p.HasPrev }}<a href="{{ $p.Prev.URL }}">Newer</a>{{ end }}'
        '{{ if $p.HasNext }}<a href="{{ $p.Next.URL }}">Older</a>{{ end }}{{ end }}\n',
        encoding="utf-8",
    )
    (layouts / "terms.html").write_text(
        '{{ define "main" }}<h1>Tags</h1><ul>{{ range .Data.Terms.Alphabetical }}<li>'
        '<a href="{{ .Page.RelPermalink }}">#{{ .Page.Title }}</a> {{ .Count }}</li>{{ end }}'
        "</ul>{{ end }}\n",
        encoding="utf-8",
    )
    (layouts / "404.html").write_text(
        '{{ define "main" }}<h1>Page not found</h1>{{ end }}\n', encoding="utf-8"
    )


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
