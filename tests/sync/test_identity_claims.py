"""One claim per article (#43): two posts naming one article are both refused, a file
name used again after a rename does not take the old article, every command that binds
binds every post, a title or a text alone binds only on adoption, and a published post
that stops being a post is named; against the real sandbox."""

from __future__ import annotations

import json
import os

import pytest

from tests.support.sync_helpers import control, lock_entries, my_articles, web_edit, writes

PLAIN_CONFIG = """
[site]
title = "Identity site"

[forem]
rate_window = 1
"""
# Relative images hosted: sent as absolute URLs.
SITE_CONFIG = PLAIN_CONFIG.replace(
    'title = "Identity site"',
    'title = "Identity site"\nassets_base_url = "https://blog.example.com/images/"',
)


def front(title: str, published: bool = True) -> str:
    return f"---\ntitle: {title}\npublished: {'true' if published else 'false'}\ntags: testing\n"


def seed(sandbox, *bodies: str, published: bool = True) -> list[int]:
    """Articles already on the account, written elsewhere."""
    articles = [{"body_markdown": body, "published": published} for body in bodies]
    return control(sandbox, "POST", "/forem/articles", username="demo", articles=articles)["ids"]


def article(sandbox, article_id: int) -> dict:
    return next(a for a in my_articles(sandbox) if a["id"] == article_id)


def plan_json(site, env, *args: str) -> tuple[int, dict[str, dict]]:
    result = site.run("plan", "--json", *args, env=env)
    return result.exit_code, {p["path"]: p for p in json.loads(result.stdout)["posts"]}


def assert_updates(planned: dict[str, dict], key: str, article_id: int, via: str) -> None:
    """The plan updates `key`'s article, `article_id`, found by `via`."""
    assert planned[key]["action"] == "update", planned[key]
    assert f"article {article_id} (found by {via})" in planned[key]["message"]


def published_then_lock_lost(site, env, key: str) -> int:
    """Publish the project, then delete toolkit.lock (a fresh clone without it, a deleted
    lock): the id of `key`'s article."""
    published = site.run("publish", env=env)
    assert published.exit_code == 0, published.output
    article_id: int = lock_entries(site)[key]["article_id"]
    (site.root / "toolkit.lock").unlink()
    return article_id


# -- 1: two files naming one article ------------------------------------------------------


def test_two_files_whose_id_names_one_article_are_both_refused(make_project, env, sandbox):
    site = make_project(PLAIN_CONFIG)
    (article_id,) = seed(sandbox, f"{front('Original')}---\noriginal text\n")
    before = article(sandbox, article_id)
    site.write("content/a.md", f"{front('Original')}id: {article_id}\n---\noriginal text\n")
    site.write(
        "content/a-copy.md",
        f"{front('Original', published=False)}id: {article_id}\n---\nNEW DRAFT TEXT\n",
    )
    code, planned = plan_json(site, env)
    assert code == 1
    for path, other in (
        ("content/a.md", "content/a-copy.md"),
        ("content/a-copy.md", "content/a.md"),
    ):
        assert planned[path]["action"] == "error"
        assert f"gives article {article_id} to {other} too" in planned[path]["message"]
    sandbox.reset_stats()
    published = site.run("publish", env=env)
    assert published.exit_code == 1
    assert writes(sandbox) == {}
    after = article(sandbox, article_id)
    assert after["body_markdown"] == before["body_markdown"] and after["published"] is True


def test_two_dev_to_git_json_entries_with_one_id_are_both_refused(make_project, env, sandbox):
    site = make_project(PLAIN_CONFIG)
    (article_id,) = seed(sandbox, f"{front('Mapped')}---\nmapped text\n")
    site.write("content/a.md", f"{front('Mapped')}---\nmapped text\n")
    site.write("content/b.md", f"{front('Other', published=False)}---\nNEW DRAFT TEXT\n")
    mapping = [
        {"id": article_id, "relativePathToArticle": "./content/a.md"},
        {"id": article_id, "relativePathToArticle": "./content/b.md"},
    ]
    (site.root / "dev-to-git.json").write_text(json.dumps(mapping))
    code, planned = plan_json(site, env)
    assert code == 1
    assert f"names article {article_id} for content/b.md too" in planned["content/a.md"]["message"]
    assert f"names article {article_id} for content/a.md too" in planned["content/b.md"]["message"]
    sandbox.reset_stats()
    assert site.run("publish", env=env).exit_code == 1
    assert writes(sandbox) == {}
    assert article(sandbox, article_id)["body_markdown"].endswith("mapped text\n")


# -- 3: a file name used again after a rename ---------------------------------------------


def test_a_reused_file_name_does_not_take_the_old_article(make_project, env, sandbox):
    site = make_project(PLAIN_CONFIG)
    site.post("hello", "Hello", "The hello text.\n", published=True, tags="testing")
    assert site.run("publish", env=env).exit_code == 0
    article_id = lock_entries(site)["content/hello.md"]["article_id"]
    before = article(sandbox, article_id)
    (site.content / "hello.md").rename(site.content / "2024-hello.md")
    made = site.run("new", "Hello!")
    assert made.exit_code == 0, made.output
    assert (site.content / "hello.md").is_file()

    code, planned = plan_json(site, env)
    assert code == 1
    for path in ("content/hello.md", "content/2024-hello.md"):
        assert planned[path]["action"] == "error"
        assert f"add `id: {article_id}`" in planned[path]["message"]
    sandbox.reset_stats()
    assert site.run("publish", env=env).exit_code == 1
    assert writes(sandbox) == {}
    after = article(sandbox, article_id)
    assert (after["body_markdown"], after["published"]) == (before["body_markdown"], True)

    # The writer says which file is the article: it takes the entry, the new file is new.
    renamed = site.content / "2024-hello.md"
    renamed.write_text(
        renamed.read_text().replace("title: Hello\n", f"title: Hello\nid: {article_id}\n")
    )
    code, planned = plan_json(site, env)
    assert code == 0, planned
    assert planned["content/2024-hello.md"]["action"] == "unchanged"
    assert planned["content/2024-hello.md"]["moved_from"] == "content/hello.md"
    assert planned["content/hello.md"]["action"] == "create"
    assert site.run("publish", env=env).exit_code == 0
    entries = lock_entries(site)
    assert entries["content/2024-hello.md"]["article_id"] == article_id
    assert entries["content/hello.md"]["article_id"] != article_id
    after = article(sandbox, article_id)
    assert (after["body_markdown"], after["published"]) == (before["body_markdown"], True)


# -- 4: unpublish, diff, forget, publish PATH and MCP bind with every post -----------------


def same_title_pair(site, sandbox) -> int:
    (article_id,) = seed(sandbox, f"{front('Same title')}---\nThe article's text.\n")
    site.write("content/a.md", f"{front('Same title')}id: {article_id}\n---\nThe article's text.\n")
    site.write("content/b.md", f"{front('Same title')}---\nAnother post's text.\n")
    return article_id


def test_unpublish_of_a_post_binds_it_with_every_post(make_project, env, sandbox):
    site = make_project(PLAIN_CONFIG)
    article_id = same_title_pair(site, sandbox)
    result = site.run("unpublish", "content/b.md", env=env)
    assert result.exit_code == 1
    assert "never published?" in result.output
    assert article(sandbox, article_id)["published"] is True
    assert not (site.root / "toolkit.lock").exists() or "content/b.md" not in lock_entries(site)


def test_diff_of_a_post_binds_it_with_every_post(make_project, env, sandbox):
    site = make_project(PLAIN_CONFIG)
    same_title_pair(site, sandbox)
    result = site.run("diff", "content/b.md", "--json", env=env)
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["status"] == "not on the website"


def test_publish_of_one_path_binds_it_with_every_post(make_project, env, sandbox):
    site = make_project(PLAIN_CONFIG)
    article_id = same_title_pair(site, sandbox)
    code, planned = plan_json(site, env, "content/b.md")
    assert code == 0
    assert planned["content/b.md"]["action"] == "create"
    before = article(sandbox, article_id)["body_markdown"]
    assert site.run("publish", "content/b.md", env=env).exit_code == 0
    assert article(sandbox, article_id)["body_markdown"] == before


def test_forget_of_a_renamed_posts_old_path_is_refused(make_project, env, sandbox):
    site = make_project(PLAIN_CONFIG)
    site.post("old", "Old name", "The text that moved.\n", published=True)
    assert site.run("publish", env=env).exit_code == 0
    article_id = lock_entries(site)["content/old.md"]["article_id"]
    (site.content / "old.md").rename(site.content / "new.md")
    for command in ("forget", "unpublish"):
        result = site.run(command, "content/old.md", env=env)
        assert result.exit_code == 1, result.output
        assert f"content/old.md is content/new.md now (article {article_id}" in result.output
    assert lock_entries(site)["content/old.md"]["article_id"] == article_id
    assert article(sandbox, article_id)["published"] is True
    code, planned = plan_json(site, env)
    assert code == 0 and planned["content/new.md"]["moved_from"] == "content/old.md"


# -- 6: a title or a text alone binds only on adoption ------------------------------------


# What the post shares with the website's article: (the article's title and text, the
# post's title and text).
SHARED = {
    "title": (("Website only", "Written on the website."), ("Website only", "My own text.")),
    "text": (("Website title", "One text, twice."), ("My title", "One text, twice.")),
}


@pytest.mark.parametrize("shared", sorted(SHARED))
def test_a_title_or_a_text_alone_never_overwrites_an_article_outside_adoption(
    make_project, env, sandbox, shared
):
    (theirs, their_text), (mine, my_text) = SHARED[shared]
    other = "text" if shared == "title" else "title"
    site = make_project(PLAIN_CONFIG)
    site.post("first", "First post", published=True)
    assert site.run("publish", env=env).exit_code == 0  # toolkit.lock has an entry now
    (article_id,) = seed(sandbox, f"{front(theirs)}---\n{their_text}\n")
    site.write("content/mine.md", f"{front(mine)}---\n{my_text}\n")
    code, planned = plan_json(site, env)
    assert code == 1
    assert planned["content/mine.md"]["action"] == "conflict"
    assert (
        f"article {article_id} has this {shared} but not this post's {other}"
        in planned["content/mine.md"]["message"]
    )
    sandbox.reset_stats()
    assert site.run("publish", env=env).exit_code == 1
    assert writes(sandbox) == {}
    assert article(sandbox, article_id)["body_markdown"].endswith(f"{their_text}\n")
    pulled = site.run("pull", env=env)
    assert f"has the {shared} of article {article_id} but not its {other}" in pulled.output
    stem = theirs.lower().replace(" ", "-")
    assert [p.name for p in site.content.glob(f"{stem}*.md")] == []
    unpublished = site.run("unpublish", "content/mine.md", env=env)
    assert unpublished.exit_code == 1
    assert f"it is not unpublished on a {shared} alone" in unpublished.output
    assert article(sandbox, article_id)["published"] is True

    # `--force`: the post is the article; it is sent over it.
    forced = site.run("publish", "--force", env=env)
    assert forced.exit_code == 0, forced.output
    sent = article(sandbox, article_id)
    assert sent["title"] == mine and sent["body_markdown"].endswith(f"{my_text}\n")


def test_a_title_binds_on_adoption(make_project, env, sandbox):
    site = make_project(PLAIN_CONFIG)
    (article_id,) = seed(sandbox, f"{front('Adopted')}---\nAn older text.\n")
    site.write("content/adopted.md", f"{front('Adopted')}---\nThe text as it is now.\n")
    code, planned = plan_json(site, env)
    assert code == 0
    assert_updates(planned, "content/adopted.md", article_id, "title")


def test_a_text_binds_on_adoption(make_project, env, sandbox):
    """A post retitled after it was published, then the lock lost (a fresh clone without
    toolkit.lock, a deleted lock): its text finds its article, nothing is made again."""
    site = make_project(PLAIN_CONFIG)
    site.write("content/post.md", f"{front('Draft title', False)}---\nThe text it keeps.\n")
    article_id = published_then_lock_lost(site, env, "content/post.md")
    site.write("content/post.md", f"{front('Final title', False)}---\nThe text it keeps.\n")

    code, planned = plan_json(site, env)
    assert code == 0
    assert_updates(planned, "content/post.md", article_id, "body")
    pulled = site.run("pull", env=env)
    assert pulled.exit_code == 0, pulled.output
    holders = [p.name for p in site.content.glob("*.md") if "The text it keeps." in p.read_text()]
    assert holders == ["post.md"]
    assert "Final title" in (site.content / "post.md").read_text()
    assert "`toolkit publish --force content/post.md` sends yours" in pulled.output  # kept
    # Pull recorded the account's other articles: no adoption now. The post only resembles
    # its article, which the lock never held: a conflict, never a second article.
    sandbox.reset_stats()
    published = site.run("publish", env=env)
    assert published.exit_code == 1
    assert "has this text but not this post's title" in published.output
    assert writes(sandbox) == {}
    assert site.run("publish", "--force", "content/post.md", env=env).exit_code == 0
    assert writes(sandbox) == {"PUT 200": 1}
    assert article(sandbox, article_id)["title"] == "Final title"
    assert [
        a["id"] for a in my_articles(sandbox) if a["title"] in ("Draft title", "Final title")
    ] == [article_id]


def test_a_title_alone_does_not_take_the_article_of_a_retitled_post(make_project, env, sandbox):
    """A post published, the lock lost, the post retitled and a new post given its old
    title (found by the identity property): the article holds the retitled post's text,
    so it stays that post's; the new post's title alone does not take it over."""
    site = make_project(PLAIN_CONFIG)
    site.write("content/first.md", f"{front('Old title', False)}---\nThe first text.\n")
    article_id = published_then_lock_lost(site, env, "content/first.md")
    site.write("content/second.md", f"{front('Old title', False)}---\nThe second text.\n")
    site.write("content/first.md", f"{front('New title', False)}---\nThe first text.\n")

    code, planned = plan_json(site, env)
    assert code == 0
    assert_updates(planned, "content/first.md", article_id, "body")
    assert planned["content/second.md"]["action"] == "create"
    assert site.run("publish", env=env).exit_code == 0
    entries = lock_entries(site)
    assert entries["content/first.md"]["article_id"] == article_id
    assert entries["content/second.md"]["article_id"] != article_id
    assert article(sandbox, article_id)["title"] == "New title"
    assert "The first text." in article(sandbox, article_id)["body_markdown"]
    second = article(sandbox, entries["content/second.md"]["article_id"])
    assert second["title"] == "Old title" and "The second text." in second["body_markdown"]


# A plain post, and a Hugo page bundle whose image sits beside it (sent as an absolute
# URL, so the article's text is not the file's: the text compared is what publish sends).
@pytest.mark.parametrize(
    ("key", "text"),
    [
        ("content/post.md", "The text it keeps.\n"),
        (
            "content/posts/bundle/index.md",
            "The text it keeps.\n\n![A diagram](diagram.png)\n\n### Every level\n",
        ),
    ],
    ids=["plain", "hugo-bundle"],
)
def test_publish_after_the_lock_is_lost_updates_a_retitled_posts_article(
    make_project, env, sandbox, key, text
):
    site = make_project(SITE_CONFIG)
    site.write(key, f"{front('Draft title')}---\n{text}")
    (site.root / key).with_name("diagram.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    article_id = published_then_lock_lost(site, env, key)
    site.write(key, f"{front('Final title')}---\n{text}")
    sandbox.reset_stats()
    published = site.run("publish", env=env)
    assert published.exit_code == 0, published.output
    assert writes(sandbox) == {"PUT 200": 1}
    assert article(sandbox, article_id)["title"] == "Final title"
    assert lock_entries(site)[key]["article_id"] == article_id


def test_two_articles_of_a_posts_text_on_adoption_are_not_guessed_at(make_project, env, sandbox):
    site = make_project(PLAIN_CONFIG)
    ids = seed(
        sandbox,
        f"{front('One title')}---\nThe same text.\n",
        f"{front('Another title')}---\nThe same text.\n",
    )
    site.write("content/post.md", f"{front('A third title')}---\nThe same text.\n")
    code, planned = plan_json(site, env)
    assert code == 1
    assert planned["content/post.md"]["action"] == "error"
    assert all(str(i) in planned["content/post.md"]["message"] for i in ids)
    sandbox.reset_stats()
    assert site.run("publish", env=env).exit_code == 1
    assert writes(sandbox) == {}


# -- 10: a published post that stops being a post -----------------------------------------


@pytest.mark.parametrize("how", ["blank line", "excluded", "front matter removed"])
def test_a_published_post_that_stops_being_a_post_is_named(make_project, env, sandbox, how):
    config = PLAIN_CONFIG
    if how == "excluded":
        config += '\n[content]\nexclude = ["old-*.md"]\n'
    site = make_project(PLAIN_CONFIG)
    post = site.post("old-post", "Stops being a post", "Its text.\n", published=True)
    assert site.run("publish", env=env).exit_code == 0
    article_id = lock_entries(site)["content/old-post.md"]["article_id"]
    text = post.read_text()
    if how == "blank line":
        post.write_text("\n" + text)
    elif how == "excluded":
        (site.root / "toolkit.toml").write_text(config)
    else:
        post.write_text(text.split("---\n", 2)[2])

    code, planned = plan_json(site, env)
    assert code == 1
    named = planned["content/old-post.md"]
    assert named["action"] == "error"
    assert (
        f"was published as article {article_id} (toolkit.lock) but is no post now"
        in (named["message"])
    )
    pulled = site.run("pull", env=env)
    assert pulled.exit_code == 1
    assert "content/old-post.md" in pulled.output and "is no post now" in pulled.output
    copies = [
        p for p in site.content.rglob("*.md") if p != post and "Stops being a post" in p.read_text()
    ]
    assert copies == []
    assert lock_entries(site)["content/old-post.md"]["article_id"] == article_id
    assert [k for k, e in lock_entries(site).items() if e["article_id"] == article_id] == [
        "content/old-post.md"
    ]
    # Forgetting it is the way out when it is meant.
    forgotten = site.run("forget", "content/old-post.md", env=env)
    assert forgotten.exit_code == 0, forgotten.output


# -- 18: pull keeps what the website did not change ----------------------------------------


def test_pull_keeps_the_line_ends_of_lines_the_website_did_not_change(make_project, env, sandbox):
    site = make_project(PLAIN_CONFIG)
    post = site.content / "mixed.md"
    post.write_bytes(
        b"---\r\ntitle: Mixed\r\npublished: true\r\n---\r\nLine one.\nLine two.\r\nLine three.\n"
    )
    assert site.run("publish", env=env).exit_code == 0
    article_id = lock_entries(site)["content/mixed.md"]["article_id"]
    body = article(sandbox, article_id)["body_markdown"]
    web_edit(sandbox, article_id, body.replace("Line two.", "Line 2."))
    pulled = site.run("pull", env=env)
    assert pulled.exit_code == 0, pulled.output
    assert post.read_bytes() == (
        b"---\r\ntitle: Mixed\r\npublished: true\r\n---\r\nLine one.\nLine 2.\r\nLine three.\n"
    )


def test_pull_writes_a_symlinked_post_through_to_its_target(make_project, env, sandbox):
    site = make_project(PLAIN_CONFIG)
    target = site.write("drafts/linked.md", f"{front('Linked')}---\nLinked text.\n")
    link = site.content / "linked.md"
    os.symlink(os.path.relpath(target, link.parent), link)
    assert site.run("publish", env=env).exit_code == 0
    article_id = lock_entries(site)["content/linked.md"]["article_id"]
    body = article(sandbox, article_id)["body_markdown"]
    web_edit(sandbox, article_id, body.replace("Linked text.", "Linked text, edited."))
    pulled = site.run("pull", env=env)
    assert pulled.exit_code == 0, pulled.output
    assert link.is_symlink()
    assert target.read_text().endswith("Linked text, edited.\n")
