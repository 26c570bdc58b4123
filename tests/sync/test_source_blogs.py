"""A blog kept with Hugo, Jekyll, Astro, Eleventy or Next (`tests/support/blogs/`), its
old articles already on the account: `toolkit init`, then `toolkit publish` as CI runs it,
against the real sandbox."""

from __future__ import annotations

import datetime as dt
import json
import re
import shutil
from pathlib import Path
from typing import Any

import httpx
import pytest
from click.testing import CliRunner

from tests.support.sync_helpers import my_articles, writes
from toolkit.cli import main
from toolkit.content import images
from toolkit.content.liquid import prose as masked
from toolkit.tls import shared_context

BLOGS = Path(__file__).resolve().parents[1] / "support" / "blogs"
ID_LINE = re.compile(r"^(devtoId|devto_id|dev_to|id):[ \t]*(.+)$", re.MULTILINE)
TITLE = re.compile(r"^title:[ \t]*['\"]?(.+?)['\"]?[ \t]*$", re.MULTILINE)

# Per blog: the posts the old tool cross-posted (their titles), the posts never to reach
# dev.to (drafts, skipped, not rendered, older than the adoption), the page each bound
# post has on the writer's site (or the original it names), and the reason `publish`
# gives for each post it leaves off dev.to (the start of its line).
CASES: dict[str, dict[str, Any]] = {
    "hugo": {
        "bound": {
            "First steps with GitHub Copilot": "https://hugo.example.org/first-steps-with-copilot/"
        },
        "never": [
            "Half written",
            "Reading notes",
            "An old post never on dev.to",
            "A bundle without a date",
        ],
        "skipped": {
            "content/2019/old-post.md": "not on dev.to (dated 2019-11-02",
            "content/2020/half-written/index.md": "draft: true (a draft on the writer's site); never sent",
            "content/2020/reading-notes/index.md": "devtoSkip: true keeps it off dev.to; never sent",
            "content/2026/undated-bundle/index.md": "not on dev.to (no date, ",
        },
    },
    "jekyll": {
        "bound": {
            "Midnight release": "https://jekyll.example.org/blog/2021-01-23-midnight-release/",
            "Offset dates": "https://jekyll.example.org/blog/offset-dates-moved/",
        },
        "never": ["Hello, world", "Not rendered", "A draft idea"],
        "skipped": {
            "_posts/2010-05-01-hello-world.md": "not on dev.to (dated 2010-05-01",
            "_posts/2021-03-01-not-rendered.md": "published: false (Jekyll does not render it); never sent",
        },
    },
    "astro": {
        "bound": {
            "First post": "https://astro.example.org/articles/first-post",
            "Using MDX": "https://astro.example.org/articles/using-mdx",
        },
        "never": ["Old notes", "Work in progress"],
        "skipped": {
            "src/content/articles/old-notes.md": "not on dev.to (dated 2019-02-11",
            "src/content/articles/work-in-progress.mdx": "draft: true (a draft on the writer's site); never sent",
        },
    },
    "eleventy": {
        "bound": {
            "This is my second post.": "https://eleventy.example.org/blog/secondpost/",
            "This is a very long post title that will truncate nicely": "https://eleventy.example.org/blog/fourthpost/",
        },
        "never": ["This is my first post.", "This is my third post."],
        "skipped": {
            "content/blog/firstpost.md": "not on dev.to (dated 2018-05-01",
            "content/blog/thirdpost.md": "draft: true (a draft on the writer's site); never sent",
        },
    },
    "next": {
        "bound": {
            "Two Forms of Pre-rendering": "https://next.example.org/posts/pre-rendering",
            "When to Use Static Generation v.s. Server-side Rendering": "https://medium.example.com/@writer/ssg-vs-ssr-1234",
        },
        "never": ["Old thoughts", "A private note"],
        "skipped": {
            "posts/old-thoughts.md": "not on dev.to (dated 2019-03-04",
            "posts/private-note.md": "devtoSkip: true keeps it off dev.to; never sent",
        },
    },
}


def old_tool_articles(sandbox, root: Path) -> dict[str, tuple[int, str]]:
    """What the writer's old cross-posting tool did: for each post whose id key names an
    article, an article on the account, its id (or slug, or address) written back."""
    made: dict[str, tuple[int, str]] = {}  # title -> (article id, file name)
    for path in sorted(root.rglob("*.md*")):
        text = path.read_text(encoding="utf-8")
        found = ID_LINE.search(text)
        if found is None or found.group(2).strip() in ("0", '"0"', "''", '""'):
            continue
        titled = TITLE.search(text)
        assert titled is not None
        title = titled.group(1)
        response = httpx.post(
            f"{sandbox.base_url}/api/articles",
            json={"article": {"title": title, "body_markdown": "Cross-posted.", "published": True}},
            headers={"api-key": sandbox.demo_api_key},
            verify=shared_context(),
        )
        response.raise_for_status()
        article = response.json()
        value = found.group(2).strip()
        if value.startswith("https://"):
            written = article["url"]
        elif value.isdigit():
            written = str(article["id"])
        else:
            written = article["slug"]
        text = text[: found.start(2)] + written + text[found.end(2) :]
        path.write_text(text, encoding="utf-8")
        made[title] = (article["id"], path.name)
    return made


def run(root: Path, *args: str, env: dict[str, str] | None = None):
    return CliRunner().invoke(main, list(args), env=env, catch_exceptions=False)


@pytest.mark.parametrize("blog", sorted(CASES))
def test_init_then_publish_binds_the_old_articles_and_sends_nothing_unmeant(
    blog, tmp_path, env, sandbox
):
    root = tmp_path / blog
    shutil.copytree(BLOGS / blog, root)
    made = old_tool_articles(sandbox, root)
    assert sorted(made) == sorted(CASES[blog]["bound"])

    init = run(root, "init", str(root), "--no-workflow")
    assert init.exit_code == 0, init.output
    assert "blog (" in init.output and "[source]" in init.output  # said in one line
    config = root / "toolkit.toml"
    text = config.read_text(encoding="utf-8")
    assert f'generator = "{blog}"' in text and "adopted = " in text
    config.write_text(text + "\n[forem]\nrate_window = 1\n", encoding="utf-8")
    # A post written after the adoption is created as usual.
    named = re.search(r'content_dir = "([^"]+)"', text)
    assert named is not None
    content = root / named.group(1)
    (content / "after-adoption.md").write_text(
        "---\ntitle: Written after adopting toolkit\n"
        f"date: {(dt.datetime.now(dt.UTC) - dt.timedelta(minutes=1)).isoformat()}\n"
        "tags: [Node.js]\n---\nNew.\n",
        encoding="utf-8",
    )
    ci = {
        **env,
        "GITHUB_ACTIONS": "true",
        "GITHUB_REPOSITORY": "writer/blog",
        "GITHUB_SHA": "0123456789abcdef0123456789abcdef01234567",
        "GITHUB_WORKSPACE": str(root),
    }
    before = {a["id"] for a in my_articles(sandbox)}
    sandbox.reset_stats()
    published = run(root, "--config", str(config), "publish", "--json", env=ci)
    document = json.loads(published.stdout)
    # 0 refused for tags, dates, covers or images toolkit can convert.
    problems = [problem for item in document["posts"] for problem in item["problems"]]
    assert problems == []
    sent = {
        item["path"]
        for item in document["posts"]
        if item["action"] in ("create", "update", "unchanged")
    }
    articles = {a["title"]: a for a in my_articles(sandbox)}
    # 0 created for bound posts: each old article is still the only one of its title.
    for title, canonical in CASES[blog]["bound"].items():
        article_id, name = made[title]
        assert articles[title]["id"] == article_id
        assert articles[title]["canonical_url"] == canonical, title
    assert len(sent) >= 2, json.dumps(document["posts"], indent=1)
    assert sum(1 for a in my_articles(sandbox) if a["title"] in made) == len(made)
    # 0 for old unbound posts, drafts or skipped files: nothing of theirs on dev.to.
    for title in CASES[blog]["never"]:
        assert title not in articles, title
    # Each post left off dev.to is listed as skipped, saying why: an old unbound post as
    # not on dev.to, a generator's draft as never sent.
    skipped = {i["path"]: i["message"] for i in document["posts"] if i["action"] == "skip"}
    assert sorted(skipped) == sorted(CASES[blog]["skipped"])
    for path, reason in CASES[blog]["skipped"].items():
        assert skipped[path].startswith(reason), (path, skipped[path])
    # The one new post, and nothing else, was created.
    created = [a for a in my_articles(sandbox) if a["id"] not in before]
    assert [a["title"] for a in created] == ["Written after adopting toolkit"]
    assert writes(sandbox).get("POST 201") == 1
    # The bodies on dev.to hold none of the generator's syntax outside code, and no
    # relative or root-relative image.
    checked = [a for a in my_articles(sandbox) if a["title"] in made or a in created]
    assert checked
    for article in checked:
        body = article["body_markdown"].split("---\n", 2)[-1]
        prose = masked(body)
        for marker in ("{{<", "{{%", "{{ site.", "{{site.", ".Site.BaseURL"):
            assert marker not in prose, (article["title"], body)
        assert not re.search(r"^(import|export) ", prose, re.MULTILINE), body
        relative = [r.src for r in images.find_images(body) if images.is_relative(r.src)]
        assert relative == [], (article["title"], body)
