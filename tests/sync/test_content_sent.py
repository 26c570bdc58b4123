"""What reaches the publishing API for a post, against the real sandbox: images that work on
dev.to (absolute URLs, or the post held back with a reason), `canonical_url` only when the
writer asked for it, files that are not posts, an empty description, and pacing that counts
what the server counts."""

from __future__ import annotations

import json
import subprocess

import pytest
import yaml

from tests.support.forem_sandbox import ForemSandbox
from tests.support.sync_helpers import SYNC_CONFIG, my_articles, titles, writes
from toolkit.content import images

SHA = "0123456789abcdef0123456789abcdef01234567"
CI = {
    "GITHUB_ACTIONS": "true",
    "GITHUB_SERVER_URL": "https://github.com",
    "GITHUB_REPOSITORY": "writer/blog",
    "GITHUB_SHA": SHA,
}
NOTHING_HOSTS = "is relative and nothing hosts it: set [site] assets_base_url, or publish from CI"
# A project as a writer's repository holds it: no [site] url, nothing that hosts images.
BARE_CONFIG = """
[site]
title = "Bare"

[forem]
rate_window = 1
"""


def _front(body_markdown: str) -> dict:
    _, front, _ = body_markdown.split("---\n", 2)
    return yaml.safe_load(front)


def _write_images(project) -> None:
    (project.content / "posts" / "img").mkdir(parents=True)
    for name in ("shot one.png", "cover.png", "diagram.svg"):
        (project.content / "posts" / "img" / name).write_bytes(b"\x89PNG")


def _relative_images(body_markdown: str) -> list[str]:
    return [ref.src for ref in images.find_images(body_markdown) if images.is_relative(ref.src)]


def _image_posts(project) -> None:
    _write_images(project)
    project.write(
        "content/posts/live.md",
        """
        ---
        title: Live with images
        published: true
        cover_image: ./img/cover.png
        ---
        Intro.

        ![A shot](./img/shot%20one.png)
        <img src="img/diagram.svg" alt="diagram">
        ![Remote](https://example.org/x.png)
        """,
    )
    project.write(
        "content/posts/draft.md",
        """
        ---
        title: Draft with a cover
        cover_image: img/cover.png
        ---
        A draft.
        """,
    )
    project.post("plain", "Plain post", "No images at all.\n", published=True)


def test_in_ci_no_stored_article_holds_a_relative_image(make_project, env, sandbox, tmp_path):
    # The project lies in a folder of its git repository: raw URLs name the path from
    # the repository's root, as GitHub serves them.
    subprocess.run(["git", "init", "-q", str(tmp_path / "repo")], check=True)
    site = make_project(BARE_CONFIG, name="repo/blog")
    _image_posts(site)
    assert site.run("check", env=CI).exit_code == 0
    sandbox.reset_stats()
    result = site.run("publish", env={**env, **CI})
    assert result.exit_code == 0, result.output
    assert writes(sandbox) == {"POST 201": 3}
    raw = f"https://raw.githubusercontent.com/writer/blog/{SHA}/blog/content/posts/img/"
    stored = {a["title"]: a for a in my_articles(sandbox)}
    for article in stored.values():
        assert _relative_images(article["body_markdown"]) == [], article["title"]
        cover = article["cover_image"]
        assert cover is None or not images.is_relative(cover), article["title"]
    live = stored["Live with images"]
    assert f"![A shot]({raw}shot%20one.png)" in live["body_markdown"]
    assert f'<img src="{raw}diagram.svg"' in live["body_markdown"]
    assert "![Remote](https://example.org/x.png)" in live["body_markdown"]
    assert _front(live["body_markdown"])["cover_image"] == f"{raw}cover.png"
    assert stored["Draft with a cover"]["cover_image"] == f"{raw}cover.png"


def test_outside_ci_with_nothing_to_host_them_posts_with_relative_images_are_held_back(
    make_project, env, sandbox
):
    site = make_project(BARE_CONFIG)
    _image_posts(site)
    check = site.run("check")
    assert check.exit_code == 1
    errors = [line for line in check.output.splitlines() if NOTHING_HOSTS in line]
    assert errors == [
        f"content/posts/draft.md:3: cover_image img/cover.png {NOTHING_HOSTS}",
        f"content/posts/live.md:4: cover_image ./img/cover.png {NOTHING_HOSTS}",
        f"content/posts/live.md:8: image ./img/shot%20one.png {NOTHING_HOSTS}",
        f"content/posts/live.md:9: image img/diagram.svg {NOTHING_HOSTS}",
    ]

    plan = site.run("plan", env=env)
    assert plan.exit_code == 1
    assert NOTHING_HOSTS in plan.output

    sandbox.reset_stats()
    result = site.run("publish", "--json", env=env)
    assert result.exit_code == 1
    document = json.loads(result.stdout)
    actions = {post["path"]: post["action"] for post in document["posts"]}
    assert actions == {
        "content/plain.md": "create",
        "content/posts/draft.md": "error",
        "content/posts/live.md": "error",
    }
    # None of the two was sent (never a 422 for the cover), the other one was.
    assert writes(sandbox) == {"POST 201": 1}
    assert "Plain post" in titles(sandbox)
    assert not {"Live with images", "Draft with a cover"} & set(titles(sandbox))


def test_premium_posts_are_never_sent_so_their_images_need_no_host(make_project):
    site = make_project(BARE_CONFIG)
    _write_images(site)
    site.write(
        "content/posts/paid.md",
        "---\ntitle: Paid\npremium: true\n---\n![x](img/diagram.svg)\n",
    )
    assert site.run("check").exit_code == 0


def test_assets_base_url_or_the_deployed_site_host_the_images(make_project, env, sandbox):
    site = make_project(
        BARE_CONFIG.replace(
            '"Bare"\n', '"Bare"\nurl = "https://me.example/blog"\nimages_from_site = true\n'
        )
    )
    _image_posts(site)
    assert site.run("publish", env={**env, **CI}).exit_code == 0  # the config comes first
    live = next(a for a in my_articles(sandbox) if a["title"] == "Live with images")
    assert "![A shot](https://me.example/blog/posts/img/shot%20one.png)" in live["body_markdown"]
    assert live["cover_image"] == "https://me.example/blog/posts/img/cover.png"
    # The site's address is not a canonical URL unless the writer says so.
    assert "canonical_url" not in _front(live["body_markdown"])


def test_images_from_site_needs_the_site_url(make_project):
    site = make_project(BARE_CONFIG.replace('"Bare"\n', '"Bare"\nimages_from_site = true\n'))
    result = site.run("check")
    assert result.exit_code == 1
    assert "toolkit.toml: site.images_from_site: needs [site] url" in result.output


def canonical_urls(sandbox) -> dict[str, str | None]:
    return {
        a["title"]: a["canonical_url"]
        for a in my_articles(sandbox)
        if a["title"] in ("Has its own", "Has none")
    }


def test_setting_the_site_url_alone_changes_no_stored_canonical_url(make_project, env, sandbox):
    site = make_project(BARE_CONFIG)
    site.post("own", "Has its own", "Body.\n", published=True, canonical_url="https://a.example/x")
    site.post("none", "Has none", "Body.\n", published=True)
    assert site.run("publish", env=env).exit_code == 0
    before = canonical_urls(sandbox)
    assert before["Has its own"] == "https://a.example/x"
    assert str(before["Has none"]).startswith(sandbox.base_url)  # its own page, as Forem does

    config = site.root / "toolkit.toml"
    config.write_text(
        config.read_text().replace('"Bare"\n', '"Bare"\nurl = "https://me.example/blog"\n')
    )
    sandbox.reset_stats()
    plan = site.run("plan", env=env)
    assert plan.exit_code == 0, plan.output
    result = site.run("publish", env=env)
    assert result.exit_code == 0, result.output
    assert writes(sandbox) == {}  # nothing to send: what is sent did not change
    assert canonical_urls(sandbox) == before

    # Asked for: the site is the posts' canonical home. `plan` shows what is sent.
    config.write_text(
        config.read_text().replace("rate_window = 1", 'rate_window = 1\ncanonical = "site"')
    )
    plan = site.run("plan", "--json", env=env)
    shown = {p["path"]: p["canonical_url"] for p in json.loads(plan.stdout)["posts"]}
    assert shown == {
        "content/none.md": "https://me.example/blog/none/",
        "content/own.md": "https://a.example/x",
    }
    text = site.run("plan", env=env).output
    assert "canonical_url https://me.example/blog/none/" in text
    assert site.run("publish", env=env).exit_code == 0
    assert canonical_urls(sandbox) == {
        "Has its own": "https://a.example/x",
        "Has none": "https://me.example/blog/none/",
    }


def test_an_empty_description_reaches_the_sandbox_as_no_description(site, env, sandbox):
    site.write("content/empty.md", "---\ntitle: Empty description\ndescription:\n---\nThe body.\n")
    site.post("given", "Given description", "Body.\n", description="Said here")
    assert site.run("publish", env=env).exit_code == 0
    stored = {a["title"]: a for a in my_articles(sandbox)}
    empty = stored["Empty description"]
    assert "description" not in _front(empty["body_markdown"])
    assert empty["description"] != "null"
    assert "null" not in empty["body_markdown"]
    assert stored["Given description"]["description"] == "Said here"


def test_a_readme_without_front_matter_is_not_a_post(make_project, env, sandbox):
    site = make_project(SYNC_CONFIG)
    site.post("real", "A real post", "See [the sample](examples/README.md).\n", published=True)
    site.write("content/examples/README.md", "# Sample code\n\nRun `make`.\n")
    site.write("content/examples/other/README.md", "Another sample.\n")
    check = site.run("check")
    assert check.exit_code == 0, check.output
    notes = [line for line in check.output.splitlines() if "not a post" in line]
    assert [line.split(":", 1)[0] for line in notes] == [
        "content/examples/README.md",
        "content/examples/other/README.md",
    ]
    assert all(": note: " in line for line in notes)
    assert "1 post checked: 0 errors, 0 warnings, 2 notes" in check.output
    assert site.run("check", "--strict").exit_code == 0  # a note is not a warning

    plan = json.loads(site.run("plan", "--json", env=env).stdout)
    assert [post["path"] for post in plan["posts"]] == ["content/real.md"]
    sandbox.reset_stats()
    assert site.run("publish", env=env).exit_code == 0
    assert writes(sandbox) == {"POST 201": 1}

    build = site.run("build")
    assert build.exit_code == 0, build.output
    assert "README" not in build.output
    assert (site.root / "site" / "real" / "index.html").is_file()
    assert not (site.root / "site" / "readme").exists()


def test_exclude_takes_gitignore_patterns(make_project, env, sandbox):
    site = make_project(
        SYNC_CONFIG + '\n[content]\nexclude = ["drafts-old/", "**/NOTES.md", "!keep/NOTES.md"]\n'
    )
    site.post("real", "A real post", published=True)
    site.write("content/drafts-old/one.md", "---\ntitle: Old one\n---\nOld.\n")
    site.write("content/drafts-old/deep/two.md", "---\ntitle: Old two\n---\nOld.\n")
    site.write("content/series/NOTES.md", "---\ntitle: Notes\n---\nMine.\n")
    site.write("content/keep/NOTES.md", "---\ntitle: Kept notes\npublished: true\n---\nKept.\n")
    check = site.run("check")
    assert check.exit_code == 0, check.output
    assert "2 posts checked" in check.output
    # Named outright, an excluded file is still not a post.
    assert "0 posts checked" in site.run("check", "content/drafts-old/one.md").output
    plan = json.loads(site.run("plan", "--json", env=env).stdout)
    assert sorted(post["path"] for post in plan["posts"]) == [
        "content/keep/NOTES.md",
        "content/real.md",
    ]
    build = site.run("build")
    assert build.exit_code == 0, build.output
    assert (site.root / "site" / "notes" / "index.html").is_file()  # keep/NOTES.md
    assert not (site.root / "site" / "one").exists()


def test_exclude_must_be_a_list_of_patterns(make_project):
    site = make_project('[site]\ntitle = "T"\n\n[content]\nexclude = "drafts/"\n')
    result = site.run("check")
    assert result.exit_code == 1
    assert "toolkit.toml: content.exclude: must be a list of gitignore-style patterns" in (
        result.output
    )


def test_a_first_publish_of_15_published_posts_and_10_drafts_meets_no_429(site, env, sandbox):
    for i in range(25):
        published = i % 5 < 3  # 15 published, 10 drafts, interleaved
        site.post(f"p-{i:02}", f"Mixed {i}", f"Body {i}.\n", published=published)
    sandbox.reset_stats()
    result = site.run("publish", env=env)
    assert result.exit_code == 0, result.output
    assert writes(sandbox) == {"POST 201": 25}
    assert 429 not in {row["status"] for row in sandbox.stats()}
    stored = my_articles(sandbox)
    assert sum(1 for a in stored if a["title"].startswith("Mixed") and a["published"]) == 15


def test_a_create_refused_with_422_does_not_use_up_pacing(make_project, env, sandbox):
    # The client believes in a 30 s window of 10 creates. Five creates refused by the
    # server store nothing and count for nothing there: the other ten go out at once.
    site = make_project(SYNC_CONFIG.replace("rate_window = 1", "rate_window = 30"))
    for i in range(15):
        site.post(f"live-{i:02}", f"Live {i}", f"Body {i}.\n", published=True)
    sandbox.fault("POST", "/api/articles", 5, status=422)
    sandbox.reset_stats()
    result = site.run("publish", "--json", env=env)
    assert result.exit_code == 1
    document = json.loads(result.stdout)
    assert document["waits"] == []
    assert writes(sandbox) == {"POST 422": 5, "POST 201": 10}


# Seconds: a window that the first run and the start of the second fit in on a loaded
# machine (the first run takes well under one), in a sandbox of their own.
WINDOW = 2


@pytest.mark.e2e
def test_a_second_run_inside_the_window_counts_the_first_runs_creates(make_project):
    """Forem counts the published articles created in the window, whoever created them:
    a run right after another that filled the window waits instead of meeting a 429."""
    with ForemSandbox(db_path=None, rate_window=WINDOW) as server:
        env = {"FOREM_BASE_URL": server.base_url, "FOREM_API_KEY": server.demo_api_key}
        site = make_project(SYNC_CONFIG.replace("rate_window = 1", f"rate_window = {WINDOW}"))
        for i in range(10):
            site.post(f"first-{i:02}", f"First {i}", f"Body {i}.\n", published=True)
        assert site.run("publish", env=env).exit_code == 0
        site.post("second", "Second run", "Body.\n", published=True)
        site.post("second-draft", "Second run draft", "Body.\n")
        result = site.run("publish", "--json", env=env)
        assert result.exit_code == 0, result.output
        assert json.loads(result.stdout)["waits"]  # it counted them, and waited
        assert 429 not in {row["status"] for row in server.stats()}
        assert writes(server) == {"POST 201": 12}


@pytest.mark.e2e
def test_a_draft_published_by_an_update_counts_as_a_create(make_project):
    with ForemSandbox(db_path=None, rate_window=WINDOW) as server:
        env = {"FOREM_BASE_URL": server.base_url, "FOREM_API_KEY": server.demo_api_key}
        site = make_project(SYNC_CONFIG.replace("rate_window = 1", f"rate_window = {WINDOW}"))
        for i in range(10):
            site.post(f"d-{i:02}", f"Draft {i}", f"Body {i}.\n")
        assert site.run("publish", env=env).exit_code == 0  # ten drafts: counted by nobody
        for i in range(10):  # published by ten updates: the server counts them now
            site.post(f"d-{i:02}", f"Draft {i}", f"Body {i}.\n", published=True)
        site.post("new", "A new one", "Body.\n", published=True)
        result = site.run("publish", env=env)
        assert result.exit_code == 0, result.output
        assert 429 not in {row["status"] for row in server.stats()}


def test_a_description_over_lines_is_sent_on_one_line_and_a_backslash_kept(site, env, sandbox):
    # Forem's front-matter fixer quotes what follows `description: ` on its line: a YAML
    # block (`|`) became `"|"` and its lines a YAML error, a 422 on every publish; a
    # plain backslash became an escape.
    site.write(
        "content/folded.md",
        "---\ntitle: Folded\ndescription: >\n  One long\n  description\n---\nBody.\n",
    )
    site.write(
        "content/quoted.md",
        '---\ntitle: Quoted\ndescription: "First line\\n  second line\\n"\n---\nBody.\n',
    )
    site.write(
        "content/slash.md",
        '---\ntitle: C:\\new\\temp and \\"more\\"\ndescription: C:\\q is a path\n---\nBody.\n',
    )
    assert site.run("check").exit_code == 0
    result = site.run("publish", env=env)
    assert result.exit_code == 0, result.output
    stored = {a["title"]: a for a in my_articles(sandbox)}
    assert stored["Folded"]["description"] == "One long description"
    assert stored["Quoted"]["description"] == "First line second line"
    slash = stored['C:\\new\\temp and \\"more\\"']
    assert slash["description"] == "C:\\q is a path"
    assert _front(stored["Folded"]["body_markdown"])["description"] == "One long description"


def test_text_the_fixer_would_rewrite_is_sent_so_that_it_reads_as_written(site, env, sandbox):
    # Forem's fixer wraps what follows `title:` or `description:` in double quotes wherever
    # it stands in the block (its pattern has no `^`): in the title, the description,
    # another key's value or a key's name. A title `A description: b` was sent as
    # `title: 'A description: b'` and read `title: 'A description: "b'"`: a 422.
    site.write(
        "content/colons.md",
        "---\ntitle: 'A description: b'\ndescription: 'see title: x'\n"
        "series: 'Part title: one'\n---\nBody.\n",
    )
    site.write(
        "content/keys.md",
        "---\ntitle: Keys\nsubtitle: [1, 2]\nPublished: 'no'\nmeta_description: 'a: b'\n"
        "---\nBody.\n",
    )
    assert site.run("check").exit_code == 0
    result = site.run("publish", env=env)
    assert result.exit_code == 0, result.output
    stored = {a["title"]: a for a in my_articles(sandbox)}
    colons = stored["A description: b"]
    assert colons["description"] == "see title: x"
    assert _front(colons["body_markdown"])["series"] == "Part title: one"
    assert stored["Keys"]["published"] is False  # `Published:` was not read `published:`
    keys = _front(stored["Keys"]["body_markdown"])
    assert keys["subtitle"] == [1, 2] and keys["Published"] == "no"
    assert keys["meta_description"] == "a: b"


def test_a_title_with_a_line_break_is_an_error_of_check(site):
    site.write("content/two.md", '---\ntitle: "Two\\nlines"\n---\nBody.\n')
    result = site.run("check")
    assert result.exit_code == 1
    assert "content/two.md:2: title: holds a line break" in result.output
