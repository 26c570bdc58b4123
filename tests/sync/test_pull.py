"""`toolkit pull` against the sandbox: onboarding, website edits, and never losing local work."""

from __future__ import annotations

import json

from tests.support.sync_helpers import my_articles, web_edit, writes


def test_pull_then_publish_writes_nothing(site, env, sandbox):
    remote = my_articles(sandbox)
    result = site.run("pull", env=env)
    assert result.exit_code == 0, result.output
    posts = sorted(site.content.glob("*.md"))
    assert len(posts) == len(remote)
    lock = json.loads((site.root / "toolkit.lock").read_text())["posts"]
    assert sorted(e["article_id"] for e in lock.values()) == sorted(a["id"] for a in remote)
    assert site.run("check", env=env).exit_code == 0
    # Drafts stay drafts locally too.
    drafts = [a for a in remote if not a["published"]]
    assert drafts
    draft_key = next(k for k, e in lock.items() if e["article_id"] == drafts[0]["id"])
    assert "published: false" in (site.root / draft_key).read_text()

    sandbox.reset_stats()
    published = site.run("publish", env=env)
    assert published.exit_code == 0, published.output
    assert writes(sandbox) == {}
    # And pulling again changes nothing.
    before = {p: p.read_bytes() for p in site.content.glob("*.md")}
    again = site.run("pull", env=env)
    assert again.exit_code == 0
    assert {p: p.read_bytes() for p in site.content.glob("*.md")} == before


def test_pull_never_writes_over_an_existing_file(site, env, sandbox):
    article = my_articles(sandbox)[0]
    from toolkit.content.fields import slugify

    squatter = site.write(
        f"content/{slugify(article['title'])}.md",
        "---\ntitle: Something else entirely\n---\nMine.\n",
    )
    result = site.run("pull", env=env)
    assert result.exit_code == 0, result.output
    assert squatter.read_text() == "---\ntitle: Something else entirely\n---\nMine.\n"
    pulled = [
        p
        for p in site.content.glob("*.md")
        if f"title: {article['title']}" in p.read_text() or article["title"] in p.read_text()
    ]
    assert pulled and squatter not in pulled


def test_website_edit_is_taken_when_the_post_has_no_changes_of_its_own(site, env, sandbox):
    site.post("note", "A note", "Written locally.\n", published=True)
    assert site.run("publish", env=env).exit_code == 0
    article_id = json.loads((site.root / "toolkit.lock").read_text())["posts"]["content/note.md"][
        "article_id"
    ]
    web_edit(
        sandbox, article_id, "---\ntitle: A note\npublished: true\n---\nImproved on the web.\n"
    )
    assert site.run("publish", env=env).exit_code == 1  # a conflict until it is resolved

    result = site.run("pull", env=env)
    assert result.exit_code == 0, result.output
    assert "overwritten" in result.output
    assert "Improved on the web." in (site.content / "note.md").read_text()
    sandbox.reset_stats()
    assert site.run("publish", env=env).exit_code == 0
    assert writes(sandbox) == {}


def test_local_changes_are_kept_unless_overwrite(site, env, sandbox):
    site.post("both", "Changed on both sides", "Version one.\n", published=True)
    assert site.run("publish", env=env).exit_code == 0
    article_id = json.loads((site.root / "toolkit.lock").read_text())["posts"]["content/both.md"][
        "article_id"
    ]
    site.post("both", "Changed on both sides", "My unpublished local edit.\n", published=True)
    web_edit(
        sandbox,
        article_id,
        "---\ntitle: Changed on both sides\npublished: true\n---\nThe web edit.\n",
    )

    result = site.run("pull", env=env)
    assert result.exit_code == 1, result.output  # it leaves a post in conflict
    assert "differs" in result.output and "--overwrite" in result.output
    assert "My unpublished local edit." in (site.content / "both.md").read_text()

    forced = site.run("pull", "--overwrite", env=env)
    assert forced.exit_code == 0, forced.output
    assert "The web edit." in (site.content / "both.md").read_text()


def test_a_post_found_by_title_that_differs_is_kept_and_is_no_conflict(site, env, sandbox):
    article = my_articles(sandbox)[0]
    path = site.post("adopted", article["title"], "My own version of it.\n", published=True)
    before = path.read_bytes()
    result = site.run("pull", env=env)
    assert result.exit_code == 0, result.output  # nothing says which side changed
    assert "kept" in result.output and "toolkit diff content/adopted.md" in result.output
    assert path.read_bytes() == before
