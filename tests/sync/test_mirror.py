"""`toolkit mirror` against the sandbox's seeded comment threads and reading list."""

from __future__ import annotations

import json
from html.parser import HTMLParser

from tests.support.sync_helpers import api_get, control, requests_by_route


def depth(comment) -> int:
    return 1 + max((depth(child) for child in comment["children"]), default=0)


def commented_article(sandbox) -> dict:
    mine = api_get(sandbox, "/api/articles/me/published", per_page=1000)
    return max(mine, key=lambda a: a["comments_count"])


def test_nested_threads_are_mirrored_whole(site, env, sandbox):
    result = site.run("mirror", env=env)
    assert result.exit_code == 0, result.output
    article = commented_article(sandbox)
    assert article["comments_count"] > 0
    path = site.content / "_mirror" / "comments" / f"{article['slug']}.json"
    document = json.loads(path.read_text())
    assert document["article"]["id"] == article["id"]
    assert document["article"]["comments_count"] == article["comments_count"]
    roots = document["comments"]
    assert roots and max(depth(c) for c in roots) >= 3
    for root in roots:
        assert root == api_get(sandbox, f"/api/comments/{root['id_code']}")
    # Every published own article has its file; drafts have none.
    names = {p.stem for p in path.parent.glob("*.json")}
    published = {a["slug"] for a in api_get(sandbox, "/api/articles/me/published", per_page=1000)}
    assert names == published


def test_second_mirror_reads_lists_only_and_rewrites_nothing(site, env, sandbox):
    assert site.run("mirror", env=env).exit_code == 0
    mirror = site.content / "_mirror"
    before = {p: p.stat().st_mtime_ns for p in mirror.rglob("*.json")}
    control(sandbox, "POST", "/stats/reset")
    result = site.run("mirror", env=env)
    assert result.exit_code == 0, result.output
    assert set(requests_by_route(sandbox)) == {"GET /api/articles/me/all", "GET /api/readinglist"}
    assert {p: p.stat().st_mtime_ns for p in mirror.rglob("*.json")} == before


def test_a_new_comment_refetches_exactly_one_thread(site, env, sandbox):
    assert site.run("mirror", "comments", env=env).exit_code == 0
    article = commented_article(sandbox)
    comment = control(
        sandbox, "POST", "/comments", article_id=article["id"], body_markdown="A brand new remark"
    )
    control(sandbox, "POST", "/stats/reset")
    result = site.run("mirror", "comments", env=env)
    assert result.exit_code == 0, result.output
    assert requests_by_route(sandbox) == {"GET /api/articles/me/all": 1, "GET /api/comments": 1}
    path = site.content / "_mirror" / "comments" / f"{article['slug']}.json"
    assert comment["id_code"] in path.read_text()
    assert f"updated content/_mirror/comments/{article['slug']}.json" in result.output

    # Deleted remotely: gone from the mirror too.
    control(sandbox, "DELETE", f"/comments/{comment['id_code']}")
    assert site.run("mirror", "comments", env=env).exit_code == 0
    assert comment["id_code"] not in path.read_text()


def test_reading_list_of_more_than_100_items_is_paged_completely(site, env, sandbox):
    control(sandbox, "POST", "/readinglist", count=150)
    expected = []
    page = 1
    while batch := api_get(sandbox, "/api/readinglist", page=page, per_page=100):
        expected += batch
        page += 1
    assert len(expected) > 150
    control(sandbox, "POST", "/stats/reset")
    result = site.run("mirror", "readinglist", env=env)
    assert result.exit_code == 0, result.output
    mirrored = json.loads((site.content / "_mirror" / "readinglist.json").read_text())
    assert mirrored == expected
    assert requests_by_route(sandbox)["GET /api/readinglist"] == 2  # 100 + the rest


def test_comments_of_a_local_post_are_named_after_it_and_shown_sanitised(site, env, sandbox):
    site.post("my-post", "A post with a hostile comment", "Hello.\n", published=True)
    assert site.run("publish", env=env).exit_code == 0
    article_id = json.loads((site.root / "toolkit.lock").read_text())["posts"][
        "content/my-post.md"
    ]["article_id"]
    hostile = (
        '<p>Nice <script>alert(1)</script><img src="x.png" onerror="alert(2)">'
        '<a href="javascript:alert(3)">click</a> <a href="https://example.org/">ok</a>'
        '<iframe src="https://evil.example/"></iframe><span style="position:fixed">x</span></p>'
    )
    root = control(sandbox, "POST", "/comments", article_id=article_id, body_html=hostile)
    control(
        sandbox,
        "POST",
        "/comments",
        article_id=article_id,
        parent_id_code=root["id_code"],
        body_markdown="A reply",
    )
    assert site.run("mirror", env=env).exit_code == 0
    assert (site.content / "_mirror" / "comments" / "my-post.json").exists()
    assert site.run("build", env=env).exit_code == 0
    page = (site.root / "site" / "my-post" / "index.html").read_text()
    assert "A reply" in page

    class Audit(HTMLParser):
        def __init__(self):
            super().__init__()
            self.tags, self.attrs, self.links = [], [], []

        def handle_starttag(self, tag, attrs):
            self.tags.append(tag)
            self.attrs += [(tag, k, v or "") for k, v in attrs]
            if tag == "a":
                self.links.append(dict(attrs))

    audit = Audit()
    audit.feed(page)
    assert "iframe" not in audit.tags and "alert(1)" not in page
    assert not any(k.startswith("on") for _, k, _ in audit.attrs)
    assert not any(v.strip().lower().startswith("javascript:") for _, _, v in audit.attrs)
    assert not any(k == "style" and "fixed" in v for _, k, v in audit.attrs)
    (outside,) = [a for a in audit.links if a.get("href") == "https://example.org/"]
    assert set(outside["rel"].split()) >= {"nofollow", "ugc", "noopener"}


def test_podcast_episode_comments(site, env, sandbox):
    episodes = api_get(sandbox, "/api/podcast_episodes", username="docstalk")
    assert episodes
    commented = episodes[0]
    comment = control(
        sandbox,
        "POST",
        "/comments",
        podcast_episode_id=commented["id"],
        body_markdown="Great episode",
    )
    result = site.run("mirror", "comments", "--podcast", "docstalk", env=env)
    assert result.exit_code == 0, result.output
    folder = site.content / "_mirror" / "podcasts" / "docstalk"
    assert sorted(p.stem for p in folder.glob("*.json")) == sorted(str(e["id"]) for e in episodes)
    document = json.loads((folder / f"{commented['id']}.json").read_text())
    assert document["comments"] == api_get(sandbox, "/api/comments", p_id=commented["id"])
    assert comment["id_code"] in json.dumps(document)


def test_a_slug_leading_out_of_the_comments_folder_is_not_followed(make_project):
    from toolkit.commands.posts import post_comments
    from toolkit.config import load_config

    project = make_project('[site]\ntitle = "T"\n')
    folder = project.content / "_mirror" / "comments"
    folder.mkdir(parents=True)
    # A JSON object beside the project, which a slug of `../` steps would name.
    outside = {"article": {"url": "https://elsewhere.example/x"}, "comments": []}
    (project.root.parent / "secret.json").write_text(json.dumps(outside))
    project.post("p", "P", slug="../../../../secret")
    config = load_config(project.root / "toolkit.toml", env={})
    shown = post_comments(config, "content/p.md")
    assert (shown.mirror_file, shown.article_url) == (None, None)
    # The post's file name still finds its thread.
    (folder / "p.json").write_text(json.dumps({"article": {}, "comments": []}))
    assert post_comments(config, "content/p.md").mirror_file == "content/_mirror/comments/p.json"
