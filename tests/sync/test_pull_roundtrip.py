"""`toolkit pull` gives the writer's file back as written; `toolkit diff`; `pull --merge`.

The project is a git repository shaped like a writer's: nested folders, relative images
(sent absolute under `assets_base_url`), tags as flow and block lists and as a string,
comments and quotes in front matter, undated posts, an unquoted date.
"""

from __future__ import annotations

import json

import pytest

from tests.support.git import git
from tests.support.sync_helpers import SYNC_CONFIG, lock_entries, my_articles, web_edit, writes
from toolkit.content.conflicts import marker_lines

CONFIG = SYNC_CONFIG.replace(
    'url = "https://example.com/blog"',
    'url = "https://example.com/blog"\nassets_base_url = "https://cdn.example.com/blog"',
)

GUIDE = """\
---
# The setup guide: kept short on purpose.
title: "Setting up: the short version"
published: true
tags:
  - python
  - tooling
description: 'How I set up a new machine'
---
# Setting up

![The desk](../img/desk.png)

First paragraph.

Second paragraph.

<img src="../img/diagram.png" alt="diagram">

## Last words

Third paragraph.
"""

HELLO = """\
---
title: Hello, world
tags: [intro, meta]   # flow style, on purpose
date: 2024-03-01
cover_image: ./img/cover.png
published: true
---
Hello.

![A picture](img/cover.png)

Bye.
"""

NOTE = """\
---
title: A plain note
tags: notes, writing
---
A draft without a date.
"""


@pytest.fixture
def blog(make_project):
    project = make_project(CONFIG)
    project.write("content/guide/setup.md", GUIDE)
    project.write("content/hello.md", HELLO)
    project.write("content/note.md", NOTE)
    (project.root / "content/img").mkdir()
    (project.root / "content/img/desk.png").write_bytes(b"\x89PNG desk")
    (project.root / "content/img/diagram.png").write_bytes(b"\x89PNG diagram")
    (project.root / "content/img/cover.png").write_bytes(b"\x89PNG cover")
    project.write(".gitignore", ".toolkit/\n")
    git(project.root, "init", "-q", "-b", "main")
    git(project.root, "add", "-A")
    git(project.root, "commit", "-q", "-m", "posts")
    return project


def publish(blog, env) -> dict[str, dict]:
    """Onboarding (the account's own articles pulled), then the posts published; all
    committed."""
    onboarded = blog.run("pull", env=env)
    assert onboarded.exit_code == 0, onboarded.output
    result = blog.run("publish", env=env)
    assert result.exit_code == 0, result.output
    git(blog.root, "add", "-A")
    git(blog.root, "commit", "-q", "-m", "published")
    return lock_entries(blog)


def body_of(sandbox, article_id: int) -> str:
    (article,) = [a for a in my_articles(sandbox) if a["id"] == article_id]
    return article["body_markdown"]


def changed_lines(blog) -> list[str]:
    """The lines `git diff` shows removed or added in the working tree."""
    diff = git(blog.root, "diff", "--unified=0", "--", "content")
    return [
        line
        for line in diff.splitlines()
        if line[:1] in "+-" and not line.startswith(("+++", "---"))
    ]


def test_pull_after_publish_gives_every_file_back_byte_for_byte(blog, env, sandbox):
    entries = publish(blog, env)
    sent = body_of(sandbox, entries["content/guide/setup.md"]["article_id"])
    # What the website holds is not the file: the images are absolute, the tags a string.
    assert "https://cdn.example.com/blog/img/desk.png" in sent
    assert "../img/desk.png" not in sent

    for args in (("pull",), ("pull", "--overwrite")):
        result = blog.run(*args, env=env)
        assert result.exit_code == 0, result.output
        assert git(blog.root, "status", "--porcelain") == ""


def test_a_website_edit_changes_only_the_lines_it_changed(blog, env, sandbox):
    entries = publish(blog, env)
    guide = entries["content/guide/setup.md"]["article_id"]
    hello = entries["content/hello.md"]["article_id"]
    body = body_of(sandbox, guide)
    web_edit(
        sandbox,
        guide,
        body.replace("Second paragraph.", "Second paragraph, improved on the web.")
        .replace("title: 'Setting up: the short version'", "title: 'Setting up, shorter'")
        .replace(
            "Third paragraph.",
            "Third paragraph.\n\n![More](https://cdn.example.com/blog/img/desk.png)",
        ),
    )
    body = body_of(sandbox, hello)
    web_edit(sandbox, hello, body.replace("tags: intro, meta", "tags: intro, meta, web"))

    result = blog.run("pull", env=env)
    assert result.exit_code == 0, result.output
    assert "overwritten content/guide/setup.md" in " ".join(result.output.split())
    assert sorted(changed_lines(blog)) == sorted(
        [
            '-title: "Setting up: the short version"',
            '+title: "Setting up, shorter"',
            "-Second paragraph.",
            "+Second paragraph, improved on the web.",
            "+",
            "+![More](../img/desk.png)",
            "-tags: [intro, meta]   # flow style, on purpose",
            "+tags: [intro, meta, web]   # flow style, on purpose",
        ]
    )
    # Taken, and in sync: publishing now writes nothing, pulling again changes nothing.
    sandbox.reset_stats()
    assert blog.run("publish", env=env).exit_code == 0
    assert writes(sandbox) == {}
    before = git(blog.root, "diff")
    assert blog.run("pull", env=env).exit_code == 0
    assert git(blog.root, "diff") == before


def test_block_list_tags_edited_on_the_website_stay_a_block_list(blog, env, sandbox):
    entries = publish(blog, env)
    guide = entries["content/guide/setup.md"]["article_id"]
    web_edit(
        sandbox,
        guide,
        body_of(sandbox, guide).replace("tags: python, tooling", "tags: python, tooling, linux"),
    )
    assert blog.run("pull", env=env).exit_code == 0
    assert changed_lines(blog) == ["+  - linux"]


def both_edited(blog, env, sandbox, *, overlapping: bool) -> int:
    entries = publish(blog, env)
    guide = entries["content/guide/setup.md"]["article_id"]
    path = blog.root / "content/guide/setup.md"
    path.write_text(GUIDE.replace("First paragraph.", "First paragraph, edited here."))
    remote = body_of(sandbox, guide)
    web_edit(
        sandbox,
        guide,
        remote.replace("First paragraph.", "First paragraph, edited on the web.")
        if overlapping
        else remote.replace("Third paragraph.", "Third paragraph, edited on the web."),
    )
    return guide


def test_both_sides_edited_diff_shows_both_and_pull_exits_1(blog, env, sandbox):
    article_id = both_edited(blog, env, sandbox, overlapping=False)
    shown = blog.run("diff", "content/guide/setup.md", env=env)
    assert shown.exit_code == 0, shown.output
    assert "-First paragraph, edited here." in shown.output
    assert "+Third paragraph, edited on the web." in shown.output
    assert "changed on both sides" in shown.output

    as_json = blog.run("diff", "content/guide/setup.md", "--json", "-q", env=env)
    document = json.loads(as_json.stdout)
    assert document["status"] == "changed on both sides"
    assert document["article_id"] == article_id
    assert "+Third paragraph, edited on the web.\n" in document["diff"]

    before = (blog.root / "content/guide/setup.md").read_bytes()
    result = blog.run("pull", env=env)
    assert result.exit_code == 1, result.output
    assert "differs" in result.output and "toolkit pull --merge" in result.output
    assert (blog.root / "content/guide/setup.md").read_bytes() == before
    as_json = blog.run("pull", "--json", env=env)
    assert as_json.exit_code == 1
    pulled = json.loads(as_json.stdout)
    assert pulled["ok"] is False and pulled["summary"]["differs"] == 1


def test_merge_keeps_both_sides_edits_that_do_not_overlap(blog, env, sandbox):
    both_edited(blog, env, sandbox, overlapping=False)
    result = blog.run("pull", "--merge", env=env)
    assert result.exit_code == 0, result.output
    assert "merged" in result.output
    assert sorted(changed_lines(blog)) == sorted(
        [
            "-First paragraph.",
            "+First paragraph, edited here.",
            "-Third paragraph.",
            "+Third paragraph, edited on the web.",
        ]
    )
    # The post's own edit is still to be sent, and the website's is no conflict any more.
    sandbox.reset_stats()
    published = blog.run("publish", env=env)
    assert published.exit_code == 0, published.output
    assert writes(sandbox) == {"PUT 200": 1}
    assert blog.run("diff", "content/guide/setup.md", env=env).output.strip().endswith("in sync")


def test_merge_without_toolkit_folder_finds_the_base_in_git(blog, env, sandbox):
    both_edited(blog, env, sandbox, overlapping=False)
    import shutil

    shutil.rmtree(blog.root / ".toolkit" / "sent")
    result = blog.run("pull", "--merge", env=env)
    assert result.exit_code == 0, result.output
    text = (blog.root / "content/guide/setup.md").read_text()
    assert "First paragraph, edited here." in text
    assert "Third paragraph, edited on the web." in text


def test_overlapping_edits_get_conflict_markers_and_exit_1(blog, env, sandbox):
    both_edited(blog, env, sandbox, overlapping=True)
    result = blog.run("pull", "--merge", env=env)
    assert result.exit_code == 1, result.output
    assert "conflict" in result.output
    text = (blog.root / "content/guide/setup.md").read_text()
    assert (
        "<<<<<<< local content/guide/setup.md\nFirst paragraph, edited here.\n=======\n"
        "First paragraph, edited on the web.\n>>>>>>> website (article"
    ) in text
    assert len(marker_lines(text)) == 2
    # Everything else is the writer's own.
    assert "![The desk](../img/desk.png)" in text and "# The setup guide" in text

    # A post left in conflict: check refuses it, publish does not send it, pull says so.
    check = blog.run("check", env=env)
    assert check.exit_code == 1 and "unresolved conflict" in check.output
    sandbox.reset_stats()
    assert blog.run("publish", env=env).exit_code == 1
    assert writes(sandbox) == {}
    again = blog.run("pull", env=env)
    assert again.exit_code == 1 and "conflict" in again.output

    # Resolved: publish sends it, as an update of what the website held.
    path = blog.root / "content/guide/setup.md"
    path.write_text(GUIDE.replace("First paragraph.", "First paragraph, edited on both sides."))
    published = blog.run("publish", env=env)
    assert published.exit_code == 0, published.output
    assert blog.run("pull", env=env).exit_code == 0


def test_a_windows_file_keeps_its_line_ends_and_byte_order_mark(blog, env, sandbox):
    path = blog.root / "content/windows.md"
    written = "\ufeff" + NOTE.replace("A plain note", "A Windows note").replace("\n", "\r\n")
    path.write_bytes(written.encode("utf-8"))
    entries = publish(blog, env)
    article_id = entries["content/windows.md"]["article_id"]
    assert blog.run("pull", "--overwrite", env=env).exit_code == 0
    assert path.read_bytes() == written.encode("utf-8")

    web_edit(
        sandbox,
        article_id,
        body_of(sandbox, article_id).replace("without a date", "without a date, edited"),
    )
    assert blog.run("pull", env=env).exit_code == 0
    assert path.read_bytes() == written.replace("without a date", "without a date, edited").encode()


def test_a_draft_published_on_the_website_says_so_in_the_writer_s_file(blog, env, sandbox):
    entries = publish(blog, env)
    article_id = entries["content/note.md"]["article_id"]
    body = body_of(sandbox, article_id)
    assert "published: false" in body
    web_edit(sandbox, article_id, body.replace("published: false", "published: true"))
    assert blog.run("pull", env=env).exit_code == 0
    assert changed_lines(blog) == ["+published: true"]
    assert (
        (blog.root / "content/note.md")
        .read_text()
        .startswith("---\ntitle: A plain note\ntags: notes, writing\npublished: true\n---\n")
    )


def test_a_title_changed_on_both_sides_is_a_conflict_in_the_front_matter(blog, env, sandbox):
    entries = publish(blog, env)
    article_id = entries["content/hello.md"]["article_id"]
    path = blog.root / "content/hello.md"
    path.write_text(HELLO.replace("title: Hello, world", "title: Hello, mine"))
    web_edit(
        sandbox,
        article_id,
        body_of(sandbox, article_id).replace("title: Hello, world", "title: Hello, web"),
    )
    result = blog.run("pull", "--merge", env=env)
    assert result.exit_code == 1, result.output
    text = path.read_text()
    assert (
        "---\n<<<<<<< local content/hello.md\ntitle: Hello, mine\n=======\n"
        f"title: Hello, web\n>>>>>>> website (article {article_id})\ntags: [intro, meta]"
    ) in text
    # The post cannot be read until it is resolved: pull says so, and makes no copy of it.
    files = sorted(blog.content.rglob("*.md"))
    again = blog.run("pull", env=env)
    assert again.exit_code == 1
    assert "conflict" in again.output and "content/hello.md" in again.output
    assert sorted(blog.content.rglob("*.md")) == files
    assert blog.run("check", env=env).exit_code == 1
    # Given up: the website's version.
    assert blog.run("pull", "--overwrite", env=env).exit_code == 0
    assert "title: Hello, web\n" in path.read_text() and not marker_lines(path.read_text())


def test_overwrite_gives_up_a_merge_for_the_website_s_version(blog, env, sandbox):
    both_edited(blog, env, sandbox, overlapping=True)
    assert blog.run("pull", "--merge", env=env).exit_code == 1
    result = blog.run("pull", "--overwrite", env=env)
    assert result.exit_code == 0, result.output
    assert sorted(changed_lines(blog)) == [
        "+First paragraph, edited on the web.",
        "-First paragraph.",
    ]


def test_diff_of_a_post_in_sync_of_one_never_sent_and_of_no_post(blog, env, sandbox):
    publish(blog, env)
    in_sync = blog.run("diff", "content/hello.md", env=env)
    assert in_sync.exit_code == 0, in_sync.output
    assert (
        in_sync.output.strip()
        == f"content/hello.md (article {lock_entries(blog)['content/hello.md']['article_id']}): in sync"
    )

    blog.write("content/new.md", "---\ntitle: Not sent yet\n---\nNew.\n")
    never = blog.run("diff", "content/new.md", "--json", env=env)
    assert json.loads(never.stdout)["status"] == "not on the website"

    refused = blog.run("diff", "toolkit.toml", env=env)
    assert refused.exit_code == 1
    assert refused.output.strip() == "Error: toolkit.toml: not a post under content/"


def test_dry_run_says_what_pull_would_do_and_writes_nothing(blog, env, sandbox):
    both_edited(blog, env, sandbox, overlapping=True)
    files = {
        p: p.read_bytes() for p in blog.root.rglob("*") if p.is_file() and ".git" not in p.parts
    }
    result = blog.run("pull", "--merge", "--dry-run", env=env)
    assert result.exit_code == 1, result.output
    assert "conflict    content/guide/setup.md" in result.output
    assert "dry run: nothing was written" in result.output
    after = {
        p: p.read_bytes()
        for p in blog.root.rglob("*")
        if p.is_file() and ".git" not in p.parts and "events" not in p.name
    }
    assert {p: b for p, b in files.items() if "events" not in p.name} == after
