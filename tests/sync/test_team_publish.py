"""A team's repository (`[writers]`): each writer's posts published with their own key,
into the organisation, against the real sandbox, as CI runs it (`toolkit publish`)."""

from __future__ import annotations

import json
import os
from typing import Any

import httpx
import pytest

from tests.support.sync_helpers import SYNC_CONFIG
from toolkit.tls import shared_context

WRITERS = ("jane-doe", "omar", "lin")
USERS = {"jane-doe": "jane", "omar": "omar", "lin": "lin"}  # folder -> sandbox username
TEAM_CONFIG = (
    SYNC_CONFIG
    + """organization = "acme"

[writers]
# jane-doe reads the default variable, FOREM_API_KEY_JANE_DOE
omar = "DEVTO_KEY_OMAR"
"""
)
VARIABLES = {
    "jane-doe": "FOREM_API_KEY_JANE_DOE",
    "omar": "DEVTO_KEY_OMAR",
    "lin": "FOREM_API_KEY_LIN",
}


def _get(sandbox, key: str, path: str, **params: Any) -> Any:
    response = httpx.get(
        f"{sandbox.base_url}{path}",
        params=params,
        headers={"api-key": key},
        verify=shared_context(),
    )
    response.raise_for_status()
    return response.json()


@pytest.fixture
def team(sandbox, site):
    """Three sandbox users in the organisation `acme`, two articles each already on the
    sandbox (outside the organisation), and the team's repository whose posts name them
    by `id:`."""
    sandbox.reset()
    users: dict[str, dict[str, Any]] = {}
    for folder, username in USERS.items():
        users[folder] = sandbox.control(
            "POST", "/forem/users", {"username": username, "organizations": ["acme"]}
        )
        created = sandbox.control(
            "POST",
            "/forem/articles",
            {
                "username": username,
                "articles": [
                    {
                        "title": f"{username} post {n}",
                        "body_markdown": f"First text of {username} {n}.\n",
                        "published": True,
                        "published_at": f"2024-01-0{n}T09:00:00Z",
                    }
                    for n in (1, 2)
                ],
            },
        )
        users[folder]["ids"] = created["ids"]
    site.root.joinpath("toolkit.toml").write_text(TEAM_CONFIG, encoding="utf-8")
    for folder, user in users.items():
        for n, article_id in zip((1, 2), user["ids"], strict=True):
            site.post(
                f"{folder}/{user['username']}-{n}",
                f"{user['username']} post {n}",
                f"Edited text of {user['username']} {n}.\n",
                published=True,
                id=article_id,
            )
    env = {"FOREM_BASE_URL": sandbox.base_url}
    env.update({VARIABLES[f]: users[f]["api_key"] for f in WRITERS})
    sandbox.reset_stats()
    return site, users, env


def _last_seq(sandbox) -> int:
    records = sandbox.requests()
    return records[-1]["seq"] if records else 0


def _owner_by_article(users) -> dict[int, int]:
    return {article_id: user["key_id"] for user in users.values() for article_id in user["ids"]}


def test_every_edit_reaches_its_writers_article_in_the_organisation(sandbox, team):
    site, users, env = team
    after = _last_seq(sandbox)

    result = site.run("publish", "--json", env=env)
    requests = sandbox.requests(after)

    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    assert document["summary"]["update"] == 6 and document["summary"]["create"] == 0
    assert {p["writer"] for p in document["posts"]} == set(WRITERS)
    assert document["missing_keys"] == []
    for user in users.values():
        mine = _get(sandbox, user["api_key"], "/api/articles/me/all", per_page=1000)
        # 0 created twice: each writer still holds exactly their two articles.
        assert sorted(a["id"] for a in mine) == sorted(user["ids"])
        for article in mine:
            assert "Edited text" in article["body_markdown"]
            assert article["organization"]["username"] == "acme"
    # 0 posts sent with another writer's key: every write to an article carried the key
    # of the account that holds it.
    owner = _owner_by_article(users)
    writes = [
        r
        for r in requests
        if r["method"] in ("PUT", "POST") and r["route"].startswith("/api/articles")
    ]
    assert len(writes) == 6
    for record in writes:
        assert record["method"] == "PUT"
        article_id = int(record["path"].rsplit("/", 1)[1])
        assert record["caller"] == owner[article_id], record
    # Each writer's list read was made with their own key.
    reads = [r for r in requests if r["route"] == "/api/articles/me/all"]
    assert sorted(r["caller"] for r in reads) == sorted(u["key_id"] for u in users.values())
    # The lock records which account holds each article.
    lock = json.loads(site.root.joinpath("toolkit.lock").read_text())
    accounts = {key: entry["account"] for key, entry in lock["posts"].items()}
    assert accounts == {
        f"content/{folder}/{USERS[folder]}-{n}.md": folder for folder in WRITERS for n in (1, 2)
    }

    again = site.run("plan", env=env)
    assert again.exit_code == 0, again.output
    assert "moves it into" not in again.output


def test_a_writer_without_a_key_is_skipped_naming_the_variable(sandbox, team):
    site, users, env = team
    del env["DEVTO_KEY_OMAR"]
    after = _last_seq(sandbox)

    result = site.run("publish", env={**env, "GITHUB_ACTIONS": "true"})
    requests = sandbox.requests(after)

    assert result.exit_code == 1
    assert "omar: DEVTO_KEY_OMAR is not set; 2 post(s) skipped" in result.output
    assert "::error::omar: DEVTO_KEY_OMAR is not set; 2 post(s) skipped" in result.output
    for folder in ("jane-doe", "lin"):
        mine = _get(sandbox, users[folder]["api_key"], "/api/articles/me/all")
        assert all("Edited text" in a["body_markdown"] for a in mine)
    omar = _get(sandbox, users["omar"]["api_key"], "/api/articles/me/all")
    assert all("First text" in a["body_markdown"] for a in omar)
    assert [r for r in requests if r["caller"] == users["omar"]["key_id"]] == []
    assert len([r for r in requests if r["method"] == "PUT"]) == 4


def test_three_writers_making_ten_creates_each_meet_no_429(sandbox, team):
    site, users, env = team
    after = _last_seq(sandbox)
    sandbox.set_rate_limits(True)
    try:
        for folder in WRITERS:
            for n in range(10):
                site.post(
                    f"{folder}/{folder}-new-{n}", f"{folder} new {n}", "New.\n", published=True
                )

        result = site.run("publish", "--json", env=env)
    finally:
        sandbox.set_rate_limits(False)

    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    assert document["summary"]["create"] == 30
    assert sandbox.count(status=429) == 0
    # Paced per key: each writer's ten creates fit their own window, so nobody waited.
    assert document["waits"] == []
    for folder, user in users.items():
        mine = _get(sandbox, user["api_key"], "/api/articles/me/all", per_page=1000)
        assert len(mine) == 12
        assert all(a["organization"]["username"] == "acme" for a in mine)
        # Each writer's new posts were created with their own key, none with another's.
        assert sorted(a["title"] for a in mine if " new " in a["title"]) == sorted(
            f"{folder} new {n}" for n in range(10)
        )
    creates = [
        r
        for r in sandbox.requests(after)
        if r["method"] == "POST" and r["route"] == "/api/articles"
    ]
    assert sorted(r["caller"] for r in creates) == sorted(
        user["key_id"] for user in users.values() for _ in range(10)
    )


def test_a_non_member_is_told_the_api_left_the_article_outside(sandbox, team):
    site, users, env = team
    solo = sandbox.control("POST", "/forem/users", {"username": "solo"})
    site.post("solo/mine", "Solo post", "Alone.\n", published=True)
    env["FOREM_API_KEY_SOLO"] = solo["api_key"]

    result = site.run("publish", env=env)

    assert result.exit_code == 1
    assert "outside the organisation acme: solo's account is not a member of it" in result.output
    mine = _get(sandbox, solo["api_key"], "/api/articles/me/all")
    assert [a["title"] for a in mine] == ["Solo post"]
    assert "organization" not in mine[0]


def test_plan_groups_lines_by_writer_and_a_post_binds_to_its_writers_articles_only(sandbox, team):
    site, users, env = team
    # jane's post names one of omar's articles: it is not one of jane's account's.
    site.post(
        "jane-doe/borrowed", "Borrowed", "Not mine.\n", published=True, id=users["omar"]["ids"][0]
    )

    result = site.run("plan", env=env)

    assert result.exit_code == 1
    lines = result.stdout.splitlines()
    headings = [line for line in lines if line in WRITERS]
    assert headings == ["jane-doe", "lin", "omar"]  # each writer once, their lines below
    for folder in WRITERS:
        start = lines.index(folder)
        following = lines[start + 1 : start + 4]
        assert all(f"content/{folder}/" in line for line in following[:2]), following
    assert "content/jane-doe/borrowed.md:" in result.output
    assert "not one of jane-doe's articles" in result.output
    assert "moves it into the organisation acme" in result.output
    omar = _get(sandbox, users["omar"]["api_key"], f"/api/articles/{users['omar']['ids'][0]}")
    assert "First text" in omar["body_markdown"]


def test_an_id_of_another_writers_article_names_the_post_the_lock_gives_it_to(sandbox, team):
    site, users, env = team
    assert site.run("publish", env=env).exit_code == 0
    article = users["omar"]["ids"][0]
    site.post("jane-doe/borrowed", "Borrowed", "Not mine.\n", published=True, id=article)

    result = site.run("plan", env=env)

    assert result.exit_code == 1
    assert (
        f"content/jane-doe/borrowed.md:4  id: names article {article}, which is not one of "
        f"jane-doe's articles on {sandbox.base_url} (toolkit.lock gives it to "
        "content/omar/omar-1.md); correct or remove it"
    ) in result.output, result.output


def test_a_post_outside_the_writers_folders_uses_forem_api_key_or_is_skipped(sandbox, team):
    site, users, env = team
    site.post("team-news", "Team news", "From the team.\n", published=True)

    skipped = site.run("plan", "--json", env=env)
    assert skipped.exit_code == 1
    document = json.loads(skipped.stdout)
    assert document["missing_keys"] == [
        {"writer": "(outside the writers' folders)", "variable": "FOREM_API_KEY", "posts": 1}
    ]
    assert "content/team-news.md" not in {p["path"] for p in document["posts"]}

    env["FOREM_API_KEY"] = sandbox.demo_api_key
    published = site.run("publish", "--json", env=env)
    assert published.exit_code == 0, published.output
    post = next(
        p for p in json.loads(published.stdout)["posts"] if p["path"] == "content/team-news.md"
    )
    assert post["writer"] is None and post["action"] == "create"
    demo = _get(sandbox, sandbox.demo_api_key, f"/api/articles/{post['article_id']}")
    assert demo["user"]["username"] == "demo"


def test_unpublish_sends_with_the_writers_own_key(sandbox, team):
    site, users, env = team
    assert site.run("publish", env=env).exit_code == 0
    after = _last_seq(sandbox)

    result = site.run("unpublish", "content/lin/lin-1.md", env=env)

    assert result.exit_code == 0, result.output
    writes = [r for r in sandbox.requests(after) if r["method"] == "PUT"]
    assert [r["caller"] for r in writes] == [users["lin"]["key_id"]]


def test_comments_and_reading_lists_are_mirrored_per_writer(sandbox, team):
    site, users, env = team
    assert site.run("publish", env=env).exit_code == 0
    for folder in ("jane-doe", "omar"):
        sandbox.control(
            "POST",
            "/forem/comments",
            {"article_id": users[folder]["ids"][0], "body_markdown": f"Hello {folder}"},
        )
    sandbox.control("POST", "/forem/readinglist", {"username": "lin", "count": 2})
    del env["FOREM_API_KEY_JANE_DOE"]
    after = _last_seq(sandbox)

    result = site.run("mirror", env=env)

    assert result.exit_code == 1
    assert "jane-doe: FOREM_API_KEY_JANE_DOE is not set; not mirrored" in result.output
    mirror = site.content / "_mirror"
    omar = json.loads((mirror / "omar" / "comments" / "omar-1.json").read_text())
    assert ["Hello omar" in c["body_html"] for c in omar["comments"]] == [True]
    assert not (mirror / "jane-doe").exists()
    assert len(json.loads((mirror / "lin" / "readinglist.json").read_text())) == 2
    assert json.loads((mirror / "omar" / "readinglist.json").read_text()) == []
    assert not (mirror / "comments").exists() and not (mirror / "readinglist.json").exists()
    callers = {r["caller"] for r in sandbox.requests(after)}
    assert callers == {users["omar"]["key_id"], users["lin"]["key_id"]}

    # An assistant reads a post's thread from its writer's folder (MCP `post_comments`).
    from toolkit.config import load_config
    from toolkit.content.post import load_post
    from toolkit.mirror.threads import comments_of

    config = load_config(site.root / "toolkit.toml", env=env)
    path = site.content / "omar" / "omar-1.md"
    thread = comments_of(config, load_post(path, "content/omar/omar-1.md"))
    assert thread.mirror_file == "content/_mirror/omar/comments/omar-1.json"
    assert thread.total == 1
    # The site shows each writer's mirrored threads under their posts.
    assert site.run("build", env=env).exit_code == 0
    pages = {p.parent.name: p.read_text() for p in (site.root / "site").rglob("index.html")}
    assert "Hello omar" in pages["omar-1"]
    assert "Hello omar" not in pages["omar-2"] and "Hello jane-doe" not in pages["jane-1"]


def test_a_writers_folder_removed_whole_leaves_their_articles_named_as_gone(sandbox, team):
    site, users, env = team
    assert site.run("publish", env=env).exit_code == 0
    for path in (site.content / "lin").iterdir():
        path.unlink()
    (site.content / "lin").rmdir()

    result = site.run("plan", "--json", env=env)

    assert result.exit_code == 0, result.output
    gone = [p for p in json.loads(result.stdout)["posts"] if p["action"] == "gone"]
    assert sorted(p["path"] for p in gone) == ["content/lin/lin-1.md", "content/lin/lin-2.md"]
    assert {p["writer"] for p in gone} == {"lin"}
    assert sorted(p["article_id"] for p in gone) == sorted(users["lin"]["ids"])


def test_watchs_draft_pushes_send_each_writers_draft_with_their_key(sandbox, team):
    from toolkit.commands.watch import DraftsToRemote
    from toolkit.config import load_config

    site, users, env = team
    del env["FOREM_API_KEY_LIN"]
    drafts = [
        site.post(f"{folder}/{folder}-draft", f"{folder} draft", "Soon.\n", published=False)
        for folder in WRITERS
    ]
    config = load_config(site.root / "toolkit.toml", env=env)
    pusher = DraftsToRemote(config)
    after = _last_seq(sandbox)
    try:
        result = pusher.publish(config, drafts)
    finally:
        pusher.close()

    assert result is not None
    assert sorted((o.writer, o.action.value, o.ok) for o in result.outcomes) == [
        ("jane-doe", "create", True),
        ("omar", "create", True),
    ]
    assert [m.message for m in result.missing_keys] == [
        "lin: FOREM_API_KEY_LIN is not set; 1 post(s) skipped"
    ]
    creates = [r for r in sandbox.requests(after) if r["method"] == "POST"]
    assert sorted(r["caller"] for r in creates) == sorted(
        users[f]["key_id"] for f in ("jane-doe", "omar")
    )
    for folder in ("jane-doe", "omar"):
        mine = _get(sandbox, users[folder]["api_key"], "/api/articles/me/unpublished")
        assert [a["title"] for a in mine] == [f"{folder} draft"]


def test_diff_reads_with_the_writers_key(sandbox, team):
    site, users, env = team
    after = _last_seq(sandbox)

    diffed = site.run("diff", "content/omar/omar-1.md", env=env)

    assert "Edited text of omar 1" in diffed.output, diffed.output
    assert {r["caller"] for r in sandbox.requests(after)} == {users["omar"]["key_id"]}


def _website_changes(sandbox, users) -> None:
    """A new article of jane's and of lin's, and lin's first one edited on the website."""
    for folder in ("jane-doe", "lin"):
        name = users[folder]["username"]
        sandbox.control(
            "POST",
            "/forem/articles",
            {
                "username": name,
                "articles": [{"title": f"New from {name}", "body_markdown": "Written there.\n"}],
            },
        )
    response = httpx.put(
        f"{sandbox.base_url}/api/articles/{users['lin']['ids'][0]}",
        json={"article": {"body_markdown": "Edited on the website.\n"}},
        headers={"api-key": users["lin"]["api_key"]},
        verify=shared_context(),
    )
    response.raise_for_status()


def test_pull_takes_each_writers_articles_with_their_key_into_their_folder(sandbox, team):
    site, users, env = team
    assert site.run("publish", env=env).exit_code == 0
    _website_changes(sandbox, users)
    after = _last_seq(sandbox)

    pulled = site.run("pull", "--json", env=env)

    assert pulled.exit_code == 0, pulled.output
    document = json.loads(pulled.stdout)
    changed = sorted(
        (p["writer"], p["action"], p["path"])
        for p in document["posts"]
        if p["action"] != "unchanged"
    )
    assert changed == [
        ("jane-doe", "created", "content/jane-doe/new-from-jane.md"),
        ("lin", "created", "content/lin/new-from-lin.md"),
        ("lin", "overwritten", "content/lin/lin-1.md"),
    ]
    assert document["missing_keys"] == []
    assert "Edited on the website." in site.root.joinpath("content/lin/lin-1.md").read_text()
    # Each writer's articles were read with their own key, and nothing was written.
    reads = sandbox.requests(after)
    assert {r["caller"] for r in reads} == {u["key_id"] for u in users.values()}
    assert {r["method"] for r in reads} == {"GET"}
    lock = json.loads(site.root.joinpath("toolkit.lock").read_text())
    assert {k: e["account"] for k, e in lock["posts"].items() if "new-from" in k} == {
        "content/jane-doe/new-from-jane.md": "jane-doe",
        "content/lin/new-from-lin.md": "lin",
    }
    # A publish right after creates nothing (it moves the two new ones into the
    # organisation), and a second pull changes nothing.
    after = _last_seq(sandbox)
    published = site.run("publish", env=env)
    assert "POST" not in {r["method"] for r in sandbox.requests(after)}, published.output
    again = site.run("pull", env=env)
    assert again.exit_code == 0, again.output
    assert "0 created, 0 overwritten" in again.output


def test_pull_skips_a_writer_without_a_key_naming_the_variable(sandbox, team):
    site, users, env = team
    assert site.run("publish", env=env).exit_code == 0
    _website_changes(sandbox, users)
    del env["DEVTO_KEY_OMAR"]
    after = _last_seq(sandbox)

    pulled = site.run("pull", env=env)

    assert pulled.exit_code == 1
    assert "omar: DEVTO_KEY_OMAR is not set; not pulled" in pulled.output
    assert "lin:\n  overwritten content/lin/lin-1.md" in pulled.stdout, pulled.stdout
    assert site.root.joinpath("content/jane-doe/new-from-jane.md").is_file()
    assert [r for r in sandbox.requests(after) if r["caller"] == users["omar"]["key_id"]] == []


def _run_events(site, command: str) -> list[dict[str, Any]]:
    """The events of the last run of `command` in the project's run log."""
    lines = (site.root / ".toolkit" / "events.jsonl").read_text(encoding="utf-8").splitlines()
    found = [json.loads(line) for line in lines]
    last = [e["run_id"] for e in found if e["command"] == command][-1]
    return [e for e in found if e["run_id"] == last]


def test_the_run_log_names_the_writer_of_each_request_post_and_missing_key(sandbox, team):
    site, users, env = team
    del env["DEVTO_KEY_OMAR"]

    assert site.run("publish", env=env).exit_code == 1
    assert site.run("pull", env=env).exit_code == 1

    for command in ("publish", "pull"):
        events = _run_events(site, command)
        requests = [e for e in events if e["event"] == "request"]
        assert requests and {e["writer"] for e in requests} == {"jane-doe", "lin"}, command
        posts = {e["post"]: e["writer"] for e in events if e["event"] == "post"}
        assert posts and all(key.split("/")[1] == w for key, w in posts.items()), command
        missing = [e for e in events if e["event"] == "problem"]
        assert [(e["writer"], e["level"]) for e in missing] == [("omar", "error")], command
        assert "DEVTO_KEY_OMAR" in missing[0]["message"]
        assert events[-1]["outcome"] == "failed", command


def test_diff_and_unpublish_bind_only_the_writers_posts_as_publish_does(sandbox, team):
    site, users, env = team
    # jane's post names omar's first article: publish binds it to none of omar's posts,
    # and so must the commands that ask about one of omar's posts with omar's key.
    site.post(
        "jane-doe/borrowed", "Borrowed", "Not mine.\n", published=True, id=users["omar"]["ids"][0]
    )

    diffed = site.run("diff", "content/omar/omar-1.md", env=env)
    assert diffed.exit_code == 0, diffed.output
    assert "Edited text of omar 1" in diffed.output, diffed.output

    unpublished = site.run("unpublish", "content/omar/omar-1.md", env=env)
    assert unpublished.exit_code == 0, unpublished.output
    mine = _get(sandbox, users["omar"]["api_key"], "/api/articles/me/all")
    assert {a["id"]: a["published"] for a in mine}[users["omar"]["ids"][0]] is False


def test_a_symlink_to_another_writers_post_is_refused_not_published_with_its_key(
    sandbox,
    team,
):
    site, _users, env = team
    site.post("lin/new", "Lin new", "Lin's new text.\n", published=True)
    os.symlink("../lin/new.md", site.root / "content" / "omar" / "other.md")
    result = site.run("plan", "--json", env=env)
    posts = {post["path"]: post for post in json.loads(result.stdout)["posts"]}
    assert posts["content/lin/new.md"]["action"] == "create"
    refused = posts["content/omar/other.md"]
    assert refused["action"] == "error" and refused["writer"] == "omar"
    assert any("symlink to a post of" in p and "lin" in p for p in refused["problems"])
    assert result.exit_code == 1
