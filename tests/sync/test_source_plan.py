"""What `plan` and `publish` do with posts written for another generator ([source]): kept
off dev.to, bound by an old tool's id, and nothing old published on adoption."""

from __future__ import annotations

import json

import httpx

from tests.support.sync_helpers import lock_entries, my_articles, writes
from toolkit.tls import shared_context

CONFIG = """
[site]
title = "Hugo blog"

[source]
generator = "hugo"
url = "https://hugo.example.org"
adopted = "2024-01-01"

[forem]
rate_window = 1
"""


def create_article(sandbox, title: str, published: bool = True) -> dict:
    response = httpx.post(
        f"{sandbox.base_url}/api/articles",
        json={"article": {"title": title, "body_markdown": "Old.", "published": published}},
        headers={"api-key": sandbox.demo_api_key},
        verify=shared_context(),
    )
    response.raise_for_status()
    return response.json()


def plan_of(project, env) -> dict[str, dict]:
    result = project.run("plan", "--json", env=env)
    return {item["path"]: item for item in json.loads(result.stdout)["posts"]}


def test_posts_before_the_adoption_are_not_on_devto_until_opted_in(make_project, env, sandbox):
    project = make_project(CONFIG)
    project.write("content/old/index.md", "---\ntitle: Old one\ndate: 2019-05-01\n---\nOld.\n")
    project.write("content/older.md", "---\ntitle: Older one\ndate: 2018-05-01\n---\nOld.\n")
    project.write("content/new.md", "---\ntitle: New one\ndate: 2024-02-01\n---\nNew.\n")
    plans = plan_of(project, env)
    assert plans["content/old/index.md"]["action"] == "skip"
    assert plans["content/old/index.md"]["message"].startswith("not on dev.to (dated 2019-05-01")
    assert "`crosspost: true`" in plans["content/old/index.md"]["message"]
    assert plans["content/new.md"]["action"] == "create"

    # By path: the key in one post.
    project.write(
        "content/old/index.md",
        "---\ntitle: Old one\ndate: 2019-05-01\ncrosspost: true\n---\nOld.\n",
    )
    sandbox.reset_stats()
    result = project.run("publish", env=env)
    assert result.exit_code == 0, result.output
    assert writes(sandbox) == {"POST 201": 2}
    titles = {a["title"] for a in my_articles(sandbox)}
    assert {"Old one", "New one"} <= titles and "Older one" not in titles
    # By date: an earlier adoption.
    (project.root / "toolkit.toml").write_text(CONFIG.replace("2024-01-01", "2018-01-01"))
    assert plan_of(project, env)["content/older.md"]["action"] == "create"


def test_drafts_skipped_and_future_posts_are_never_sent(make_project, env, sandbox):
    project = make_project(CONFIG)
    bound = create_article(sandbox, "Bound draft", published=False)
    project.write(
        "content/draft/index.md",
        f"---\ntitle: Bound draft\ndate: 2024-03-01\ndraft: true\ndevtoId: {bound['id']}\n---\nX.\n",
    )
    project.write(
        "content/skip.md", "---\ntitle: Skipped\ndate: 2024-03-01\ndevtoSkip: true\n---\nX.\n"
    )
    project.write("content/later.md", "---\ntitle: Later\ndate: 2999-01-01\n---\nX.\n")
    plans = plan_of(project, env)
    assert plans["content/draft/index.md"]["action"] == "skip"
    assert "draft: true" in plans["content/draft/index.md"]["message"]
    assert plans["content/skip.md"]["message"].startswith("devtoSkip: true keeps it off dev.to")
    assert plans["content/later.md"]["message"].startswith("dated 2999-01-01")
    assert "never sent" not in plans["content/later.md"]["message"]  # sent once it is time
    assert plans["content/skip.md"]["message"].endswith("; never sent")
    sandbox.reset_stats()
    result = project.run("publish", env=env)
    assert result.exit_code == 0, result.output
    assert writes(sandbox) == {}


def test_an_old_tools_dev_to_slug_or_address_binds_its_article_and_the_lock_keeps_it(
    make_project, env, sandbox
):
    project = make_project(CONFIG.replace('"hugo"', '"astro"'))
    by_slug = create_article(sandbox, "By slug")
    by_url = create_article(sandbox, "By address")
    project.write(
        "content/a.md",
        f"---\ntitle: By slug (renamed)\npubDate: 2023-01-01\ndev_to: {by_slug['slug']}\n---\nA.\n",
    )
    project.write(
        "content/b.md",
        f"---\ntitle: By address\npubDate: 2023-01-01\ndev_to: {by_url['url']}\n---\nB.\n",
    )
    project.write(
        "content/c.md",
        "---\ntitle: Unknown\npubDate: 2023-01-01\ndev_to: not-an-article-1a2b\n---\nC.\n",
    )
    project.write(
        "content/d.md", '---\ntitle: None named\npubDate: 2024-06-01\ndevtoId: "0"\n---\nD.\n'
    )
    sandbox.reset_stats()
    result = project.run("publish", env=env)
    assert result.exit_code == 1, result.output  # c.md names an article the account does not hold
    assert "content/c.md:4" in result.output
    assert "dev_to: names the dev.to article 'not-an-article-1a2b'" in result.output
    assert writes(sandbox) == {"PUT 200": 2, "POST 201": 1}  # only d.md is new
    entries = lock_entries(project)
    assert entries["content/a.md"]["article_id"] == by_slug["id"]
    # plan -v says where each field came from.
    verbose = project.run("plan", "-v", "content/a.md", env=env)
    assert "content/a.md: read as astro" in verbose.output
    assert "  date: '2023-01-01T00:00:00+00:00' <- pubDate" in verbose.output
    assert f"  article: '{by_slug['id']}' <- dev_to" in verbose.output  # looked up
    assert entries["content/b.md"]["article_id"] == by_url["id"]
    assert "Unknown" not in {a["title"] for a in my_articles(sandbox)}


def test_a_devto_project_keeps_a_skipped_post_off_devto(make_project, env, sandbox):
    project = make_project("[site]\ntitle = 'x'\n\n[forem]\nrate_window = 1\n")
    project.post("kept", "Kept home", published=True, devtoSkip=True)
    project.post("sent", "Sent", published=True)
    sandbox.reset_stats()
    result = project.run("publish", env=env)
    assert result.exit_code == 0, result.output
    assert writes(sandbox) == {"POST 201": 1}
    assert "Kept home" not in {a["title"] for a in my_articles(sandbox)}


def test_a_devto_post_saying_draft_and_published_is_never_sent(make_project, env, sandbox):
    """`draft: true` beside `published: true`: the writer's intent is unclear, so the post
    is not sent, and plan says why."""
    project = make_project("[site]\ntitle = 'x'\n\n[forem]\nrate_window = 1\n")
    project.post("both", "Draft or not", published=True, draft=True)
    project.post("sent", "Sent", published=True)
    sandbox.reset_stats()
    plan = project.run("plan", env=env)
    assert "draft: true and published: true disagree" in plan.output, plan.output
    result = project.run("publish", env=env)
    assert result.exit_code == 0, result.output
    assert writes(sandbox) == {"POST 201": 1}
    assert "Draft or not" not in {a["title"] for a in my_articles(sandbox)}


def test_pull_leaves_a_generators_posts_alone(make_project, env, sandbox):
    project = make_project(CONFIG)
    path = project.write("content/a.md", "---\ntitle: A\ndate: 2024-05-01\n---\nA.\n")
    before = path.read_text(encoding="utf-8")
    result = project.run("pull", env=env)
    assert result.exit_code == 1
    assert result.output.startswith("Error: pull: the posts are written for hugo")
    assert path.read_text(encoding="utf-8") == before
    assert sorted(p.name for p in project.content.iterdir()) == ["a.md"]


def test_unpublish_leaves_a_jekyll_posts_published_line_alone(make_project, env, sandbox):
    project = make_project(CONFIG.replace('"hugo"', '"jekyll"').replace("2024-01-01", "2000-01-01"))
    path = project.write(
        "content/2021-01-24-x.md", "---\ntitle: Rendered\npublished: true\n---\nX.\n"
    )
    assert project.run("publish", env=env).exit_code == 0
    before = path.read_text(encoding="utf-8")
    result = project.run("unpublish", "content/2021-01-24-x.md", env=env)
    assert result.exit_code == 0, result.output
    assert path.read_text(encoding="utf-8") == before  # Jekyll still renders it
    assert "`devtoSkip: true` in it keeps the next `toolkit publish`" in result.output
    assert [a["published"] for a in my_articles(sandbox) if a["title"] == "Rendered"] == [False]


def test_a_devto_projects_old_id_key_binds_and_is_not_sent(make_project, env, sandbox):
    project = make_project("[site]\ntitle = 'x'\n\n[forem]\nrate_window = 1\n")
    old = create_article(sandbox, "Old article")
    project.post("a", "Old article (renamed)", published=True, devto_id=old["id"])
    sandbox.reset_stats()
    result = project.run("publish", env=env)
    assert result.exit_code == 0, result.output
    assert "unknown front matter key" not in result.output
    assert writes(sandbox) == {"PUT 200": 1}
    body = next(a for a in my_articles(sandbox) if a["id"] == old["id"])["body_markdown"]
    assert "devto_id" not in body


def test_an_old_post_toolkit_would_refuse_is_not_on_devto_rather_than_an_error(
    make_project, env, sandbox
):
    project = make_project(CONFIG)
    project.write("content/old.md", "---\ntitle: Old\ndate: 2019-05-01\ntags: [日本語]\n---\nX.\n")
    result = project.run("plan", "--json", env=env)
    assert result.exit_code == 0, result.output
    (plan,) = json.loads(result.stdout)["posts"]
    assert plan["action"] == "skip" and plan["message"].startswith("not on dev.to")
    # Opted in, it is sent: then what dev.to would refuse is an error again.
    project.write(
        "content/old.md",
        "---\ntitle: Old\ndate: 2019-05-01\ntags: [日本語]\ncrosspost: true\n---\nX.\n",
    )
    assert project.run("plan", env=env).exit_code == 1


def test_an_id_the_account_does_not_hold_is_named_by_the_key_written(make_project, env, sandbox):
    project = make_project(CONFIG)
    project.write(
        "content/a.md",
        "---\ntitle: A\ndate: 2025-05-01\ndevtoId: 987654\n---\nX.\n",
    )
    project.write(
        "content/b.md",
        "---\ntitle: B\ndate: 2025-05-01\ndevto_id: 987655\n---\nX.\n",
    )
    result = project.run("plan", env=env)
    assert result.exit_code == 1, result.output
    assert "content/a.md:4  devtoId: names article 987654, which is not one" in result.output
    assert "content/b.md:4  devto_id: names article 987655, which is not one" in result.output
    assert " id: names" not in result.output


def test_a_hugo_post_in_toml_front_matter_is_read_and_sent(make_project, env, sandbox):
    # `hugo new` writes TOML between +++ lines.
    project = make_project(CONFIG)
    project.write(
        "content/first.md",
        "+++\ntitle = 'My First Post'\ndate = 2024-03-01T09:00:00-07:00\ndraft = false\n"
        "tags = ['red', 'Green']\nurl = '/first/'\n+++\n## Introduction\n\nText.\n",
    )
    project.write(
        "content/draft.md", "+++\ntitle = 'Draft'\ndate = 2024-03-01\ndraft = true\n+++\nX.\n"
    )
    project.write("content/bad.md", "+++\ntitle = 'Bad'\ndate = 2024-03-01\ntags = [\n+++\nX.\n")
    check = project.run("check", "-v", "content/first.md", "content/bad.md")
    assert "content/first.md: read as hugo" in check.output
    assert "  date: '2024-03-01T09:00:00-07:00' <- date" in check.output
    assert "  slug: 'first' <- url" in check.output
    assert "content/bad.md:4: front matter: invalid TOML: " in check.output, check.output
    project.write("content/bad.md", "+++\ntitle = 'Bad'\ndate = 2024-03-01\ntags = ['C#!']\n+++\n")
    refused = project.run("check", "content/bad.md")
    assert "content/bad.md:4: warning: tags as dev.to takes them" in refused.output, refused.output
    project.write("content/bad.md", "+++\ntitle = 'Bad'\ncrosspost = true\n+++\nX.\n")
    result = project.run("publish", env=env)
    assert result.exit_code == 0, result.output
    (article,) = [a for a in my_articles(sandbox) if a["title"] == "My First Post"]
    assert article["canonical_url"] == "https://hugo.example.org/first/"
    assert article["tag_list"] == ["red", "green"]
    assert "+++" not in article["body_markdown"] and "## Introduction" in article["body_markdown"]
    assert not [a for a in my_articles(sandbox) if a["title"] == "Draft"]


def test_plan_shows_no_visibility_for_a_post_kept_off_devto(make_project, env, sandbox):
    project = make_project(CONFIG.replace('generator = "hugo"', 'generator = "jekyll"'))
    project.write(
        "content/hidden.md", "---\ntitle: Hidden\ndate: 2025-01-01\npublished: false\n---\n"
    )
    result = project.run("plan", env=env)
    (line,) = [line for line in result.output.splitlines() if "content/hidden.md" in line]
    assert "public" not in line and "draft" not in line.split("content/hidden.md")[0], line
    assert "published: false (Jekyll does not render it); never sent" in line
