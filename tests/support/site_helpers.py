"""Helpers of the site tests: a project with a bit of everything, and reading the output."""

from __future__ import annotations

import os
import re
from html.parser import HTMLParser
from pathlib import Path

# 1x1 transparent PNG
PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c489"
    "0000000d49444154789c6300010000000500010d0a2db40000000049454e44ae426082"
)

CONFIG = """
[site]
title = "Test site"
url = "https://example.com/blog"
description = "Posts for the tests."
author = "Ada"
per_page = 2
"""


def link_targets(folder: Path) -> Path:
    """`folder` made a content folder with a post, an image and a file for the links of
    the renderer's tests to point at."""
    (folder / "guide" / "img").mkdir(parents=True)
    (folder / "guide" / "img" / "a.png").write_bytes(b"png")
    (folder / "guide" / "other.md").write_text("---\ntitle: Other\n---\n", encoding="utf-8")
    (folder / "files").mkdir()
    (folder / "files" / "report.pdf").write_bytes(b"%PDF")
    return folder


def write_site(project) -> None:
    """Five published posts over two tags, a series of three, images, links between posts,
    a draft and a premium post."""
    (project.content / "guide" / "img").mkdir(parents=True)
    (project.content / "guide" / "img" / "shot.png").write_bytes(PNG)
    (project.content / "logo.png").write_bytes(PNG)
    project.post(
        "guide/intro",
        "Introduction",
        date="2024-01-01",
        tags=["python"],
        published=True,
        series="Guide",
        cover_image="img/shot.png",
        body="First part, see [the setup](setup.md#install).\n\n"
        "![A shot](img/shot.png)\n\n![Logo](/logo.png)\n\n"
        "## Details\n\n```python\nprint('hi')\n```\n\nA note.[^1]\n\n"
        "[^1]: The note.\n",
    )
    project.post(
        "guide/setup",
        "Setup",
        date="2024-01-02",
        tags=["python", "tools"],
        published=True,
        series="Guide",
        body="## Install\n\n| a | b |\n|---|---|\n| 1 | ~~2~~ |\n\n"
        "Back to the [intro](intro.md).\n",
    )
    project.post(
        "guide/usage",
        "Usage",
        date="2024-01-03",
        tags=["tools"],
        published=True,
        series="Guide",
        description="How to use it.",
        body="Use it.\n",
    )
    project.post(
        "news", "News", date="2024-02-01", published=True, tags=["news"], body="Fresh news.\n"
    )
    project.post("notes", "Notes without a date", published=True, body="Undated.\n")
    project.post(
        "draft",
        "Work in progress",
        date="2024-03-01",
        published=False,
        tags=["python"],
        body="Not ready.\n",
    )
    project.post(
        "paid",
        "Premium post",
        date="2024-03-02",
        published=True,
        premium=True,
        body="For subscribers.\n",
    )


class Links(HTMLParser):
    """Every URL a page refers to: a/link href, img/script src; and its meta tags."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.urls: list[tuple[str, str]] = []
        self.meta: dict[str, list[str]] = {}
        self.canonical: str | None = None
        self.base: str | None = None

    def handle_starttag(self, tag, attrs):
        attributes = dict(attrs)
        if tag in ("a", "link") and attributes.get("href") is not None:
            self.urls.append((tag, attributes["href"]))
            if tag == "link" and attributes.get("rel") == "canonical":
                self.canonical = attributes["href"]
        if tag in ("img", "script") and attributes.get("src") is not None:
            self.urls.append((tag, attributes["src"]))
        if tag == "meta":
            name = attributes.get("property") or attributes.get("name")
            if name:
                self.meta.setdefault(name, []).append(attributes.get("content", ""))
        if tag == "base":
            self.base = attributes.get("href")


def parse_page(path: Path) -> Links:
    parser = Links()
    parser.feed(path.read_text(encoding="utf-8"))
    return parser


def is_external(url: str) -> bool:
    return bool(re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", url)) or url.startswith("//")


def snapshot(folder: Path, *, search: bool = False) -> dict[str, tuple[int, int]]:
    """Every file under `folder` with (mtime_ns, inode): a rewrite changes one of them
    (a rewrite goes through a new file renamed over the old one, so a new inode). The
    search index (`pagefind/`, its own step, tested apart) only with `search`."""
    found = {}
    for current, folders, files in os.walk(folder):
        if not search and Path(current) == folder and "pagefind" in folders:
            folders.remove("pagefind")
        for name in files:
            path = Path(current, name)
            st = path.stat()
            found[path.relative_to(folder).as_posix()] = (st.st_mtime_ns, st.st_ino)
    return found


def changed(before: dict, after: dict) -> set[str]:
    return {name for name in after if before.get(name) != after[name]}


def read(folder: Path, name: str) -> str:
    return (folder / name).read_text(encoding="utf-8")


# Bodies written the way writers write them for dev.to (`test_site_devto_corpus`, and the
# engines' parity in `test_markdown_engines`).
HEADINGS = """\
Contents:

- [Intro](#intro)
- [A - Reflector](#a-reflector)
  - [Why it's "fast"?](#why-its-fast)
- [Deep dive](#deep-dive)
- [Setup, again](#setup-again)
- [The end 🎉](#the-end)
- [Figure 1](#figure1) and [the note](#note)

# Intro

Some text, see <a href="#figure1">the figure</a>.

## A - Reflector

### Why it's "fast"?

#### Level four

##### Deep dive

###### Level six

<a name="figure1"></a>
![Figure 1](https://example.com/figure.png)

## Setup, again

<span id="note">A note.</span>

## Setup, again

## Comments

## The end 🎉

Back to [the top](#intro) or [the comments section](#comments-1).
"""

MATHS = """\
Einstein wrote {% katex inline %}E = mc^2{% endkatex %} in one line, and the sum
{% katex inline %}\\sum_{i=1}^{n} a_i{% endkatex %} in another.

{% katex %}
c = \\pm\\sqrt{a_1^2 + b_1^2}
{% endkatex %}

{% katex %}
\\frac{a}{
{% endkatex %}

```liquid
{% katex %}x{% endkatex %} stays code
```
"""

EMBEDS = """\
A demo:

{% embed https://stackblitz.com/edit/demo?embed=1&file=src%2Fmain.ts %}

{% embed "https://example.com/page?a=1&b=2#part" %}

Read {% link https://dev.to/kazz/boost-your-productivity-using-markdown-1be %} first, then
{% youtube dQw4w9WgXcQ %}

`{% link https://dev.to/x/y %}` is how a link tag is written.
"""
