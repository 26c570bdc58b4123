"""The tools, through the SDK's client session (in memory, the transports have their own
tests), against the real sandbox where they talk to the publishing API: each gives what
the command it calls gives the CLI."""

from __future__ import annotations

import json
import os
from typing import Any

import anyio
import httpx
import pytest
from mcp.shared.memory import create_connected_server_and_client_session

from toolkit.config import load_config
from toolkit.errors import ContentError
from toolkit.mcp import scopes
from toolkit.mcp.events import EventRecorder
from toolkit.mcp.server import ToolkitMCP, error_text
from toolkit.mcp.tools import TOOLS
from toolkit.tls import shared_context

SYNC_CONFIG = """
[site]
title = "Sync site"
url = "https://example.com/blog"

[forem]
rate_window = 1
"""


@pytest.fixture
def site(make_project):
    return make_project(SYNC_CONFIG)


@pytest.fixture
def env(sandbox) -> dict[str, str]:
    sandbox.reset()
    return {"FOREM_BASE_URL": sandbox.base_url, "FOREM_API_KEY": sandbox.demo_api_key}


def call(
    project: Any,
    tool: str,
    arguments: dict[str, Any] | None = None,
    *,
    env: dict[str, str] | None = None,
    granted: tuple[str, ...] = scopes.ALL,
    recorder: EventRecorder | None = None,
) -> Any:
    """Call one tool of a server on `project` holding `granted`; the CallToolResult."""
    config = load_config(project.root / "toolkit.toml", env=env or {})
    server = ToolkitMCP(config, recorder or EventRecorder(), local_scopes=granted)

    async def run() -> Any:
        async with create_connected_server_and_client_session(server) as client:
            return await client.call_tool(tool, arguments or {})

    return anyio.run(run)


def api_get(sandbox: Any, path: str, **params: Any) -> Any:
    response = httpx.get(
        f"{sandbox.base_url}{path}",
        params=params,
        headers={"api-key": sandbox.demo_api_key},
        verify=shared_context(),
    )
    response.raise_for_status()
    return response.json()


def remote_by_title(sandbox: Any) -> dict[str, dict[str, Any]]:
    return {a["title"]: a for a in api_get(sandbox, "/api/articles/me/all", per_page=1000)}


# -- plan and push_drafts --------------------------------------------------------------------


def test_plan_is_what_toolkit_plan_says(site, env):
    site.post("one", "First of two")
    site.post("two", "Second of two", published=True)
    site.post("bad", "")
    result = call(site, "plan", env=env)
    assert result.isError is False
    cli = json.loads(site.run("plan", "--json", env=env).stdout)
    document = result.structuredContent
    # One document (toolkit.commands.results.PublishJson): the same keys, the same values.
    assert document == cli
    assert document["dry_run"] is True and document["published_allowed"] is True


def test_push_drafts_writes_drafts_only(site, env, sandbox):
    site.post("draft", "A draft to push", "Draft body.\n")
    site.post("live", "A post marked published", "Live body.\n", published=True)
    result = call(site, "push_drafts", env=env)
    assert result.isError is False
    outcomes = {p["path"]: p for p in result.structuredContent["posts"]}
    assert outcomes["content/draft.md"]["action"] == "create"
    assert outcomes["content/draft.md"]["ok"] is True
    assert outcomes["content/live.md"]["action"] == "skip"
    assert "toolkit publish" in outcomes["content/live.md"]["message"]
    remote = remote_by_title(sandbox)
    assert remote["A draft to push"]["published"] is False
    assert "A post marked published" not in remote
    states = {
        p["path"]: p["state"] for p in call(site, "list_posts", env=env).structuredContent["posts"]
    }
    assert states == {"content/draft.md": "synced", "content/live.md": "new"}


def test_push_drafts_publishes_only_when_asked_and_allowed(site, env, sandbox):
    site.post("live", "Going live", "Live body.\n", published=True)
    refused = call(site, "push_drafts", {"publish": True}, env=env, granted=scopes.DEFAULT)
    assert refused.isError is True
    assert "Going live" not in remote_by_title(sandbox)
    result = call(site, "push_drafts", {"publish": True}, env=env)
    assert result.isError is False and result.structuredContent["published_allowed"] is True
    assert remote_by_title(sandbox)["Going live"]["published"] is True


def test_a_website_edit_is_a_conflict_not_overwritten(site, env, sandbox):
    path = site.post("draft", "Edited on both sides", "First.\n")
    assert call(site, "push_drafts", env=env).isError is False
    article = remote_by_title(sandbox)["Edited on both sides"]
    httpx.post(
        f"{sandbox.base_url}/__sandbox/articles/{article['id']}/edit",
        json={"body_markdown": "Edited on the website.\n"},
        verify=shared_context(),
    ).raise_for_status()
    path.write_text(path.read_text().replace("First.", "Second."))
    assert call(site, "list_posts", env=env).structuredContent["posts"][0]["state"] == "modified"
    result = call(site, "push_drafts", env=env)
    (outcome,) = result.structuredContent["posts"]
    assert outcome["action"] == "conflict" and outcome["ok"] is False
    assert result.structuredContent["ok"] is False
    assert (
        "Edited on the website."
        in remote_by_title(sandbox)["Edited on both sides"]["body_markdown"]
    )


# -- list, read, check --------------------------------------------------------------------------


def test_list_posts_states(site):
    site.post("premium", "Members only", premium=True)
    site.post("plain", "Plain")
    (site.content / "_notes.md").write_text("not a post")
    (site.content / "bad.md").write_text("---\ntitle: [unclosed\n---\n")
    result = call(site, "list_posts").structuredContent
    assert {p["path"]: p["state"] for p in result["posts"]} == {
        "content/premium.md": "local-only",
        "content/plain.md": "new",
    }
    assert result["counts"]["new"] == 1 and result["counts"]["local-only"] == 1
    assert result["problems"][0]["text"].startswith("content/bad.md:3: front matter: invalid")


def test_servers_of_two_projects_each_call_their_own(make_project):
    """What the SDK makes of each tool (its arguments' model) is made once per process;
    each server's tools still call its own project's toolbox."""
    first, second = make_project(SYNC_CONFIG, "first"), make_project(SYNC_CONFIG, "second")
    first.post("one", "One")
    second.post("two", "Two")
    servers = [
        ToolkitMCP(load_config(p.root / "toolkit.toml", env={}), EventRecorder())
        for p in (first, second)
    ]
    for name in servers[0].tools:
        assert servers[1].tools[name].fn_metadata is servers[0].tools[name].fn_metadata
        assert servers[1].tools[name].parameters == servers[0].tools[name].parameters
    assert [p["path"] for p in call(first, "list_posts").structuredContent["posts"]] == [
        "content/one.md"
    ]
    assert [p["path"] for p in call(second, "list_posts").structuredContent["posts"]] == [
        "content/two.md"
    ]
    for server in servers:
        assert {getattr(tool.fn, "__self__", None) for tool in server.tools.values()} == {
            server.toolbox
        }


def test_read_post(site):
    site.post("hello", "Hello", "Body **here**.\n", date="2024-05-01", tags=["a", "b"])
    result = call(site, "read_post", {"path": "content/hello.md"}).structuredContent
    assert result["body"] == "Body **here**.\n"
    assert result["front_matter"]["title"] == "Hello"
    assert result["front_matter"]["date"] == "2024-05-01"
    assert result["post"]["tags"] == ["a", "b"]


@pytest.mark.parametrize(
    "tool,arguments",
    [
        ("read_post", {"path": "toolkit.toml"}),
        ("read_post", {"path": "../project/toolkit.toml"}),
        ("read_post", {"path": "/etc/passwd"}),
        ("read_post", {"path": "content/../toolkit.toml"}),
        ("read_post", {"path": "content/_drafts/secret.md"}),
        ("read_post", {"path": "content/link.md"}),
        ("read_comments", {"path": "/etc/hostname"}),
        ("check_posts", {"paths": ["/etc"]}),
        ("check_posts", {"paths": [".."]}),
        ("plan", {"paths": ["/"]}),
        ("push_drafts", {"paths": ["content/../.."]}),
    ],
)
def test_paths_outside_the_content_folder_are_refused(site, tmp_path, tool, arguments):
    (site.content / "_drafts").mkdir()
    (site.content / "_drafts" / "secret.md").write_text("---\ntitle: Secret\n---\n")
    outside = tmp_path / "outside.md"
    outside.write_text("---\ntitle: Outside\n---\nprivate\n")
    os.symlink(outside, site.content / "link.md")
    result = call(
        site, tool, arguments, env={"FOREM_API_KEY": "x", "FOREM_BASE_URL": "http://127.0.0.1:9"}
    )
    assert result.isError is True
    (content,) = result.content
    assert content.text.startswith("Error: ")
    assert "not inside the content folder" in content.text or "not a post" in content.text
    assert "private" not in content.text and "Secret" not in content.text


@pytest.mark.parametrize(
    "tool,arguments",
    [
        ("read_post", {"path": "content/hello\x00.md"}),
        ("read_comments", {"path": "content/\x00"}),
        ("check_posts", {"paths": ["content/a\x00b"]}),
        ("plan", {"paths": ["\x00"]}),
        ("push_drafts", {"paths": ["content/\x00/x.md"]}),
    ],
)
def test_a_nul_byte_in_a_path_is_the_tools_own_one_line_refusal(site, tool, arguments):
    result = call(
        site, tool, arguments, env={"FOREM_API_KEY": "x", "FOREM_BASE_URL": "http://127.0.0.1:9"}
    )
    assert result.isError is True
    (content,) = result.content
    assert content.text.startswith("Error: ") and "\n" not in content.text
    assert "NUL character" in content.text and "\x00" not in content.text
    assert "unexpectedly" not in content.text


def test_check_posts_strict(site):
    site.post("odd", "Odd keys", unknown_key=1)
    lenient = call(site, "check_posts").structuredContent
    strict = call(site, "check_posts", {"strict": True}).structuredContent
    assert lenient["ok"] is True and lenient["warnings"] == 1
    assert strict["ok"] is False
    assert strict["problems"][0]["text"].startswith("content/odd.md:")


# -- comments -------------------------------------------------------------------------------------


def write_thread(project: Any, slug: str) -> None:
    folder = project.content / "_mirror" / "comments"
    folder.mkdir(parents=True)
    thread = {
        "article": {
            "id": 1,
            "title": "Hello",
            "url": "https://dev.to/demo/hello-1",
            "comments_count": 3,
        },
        "comments": [
            {
                "id_code": "a1",
                "created_at": "2024-05-01T10:00:00Z",
                "body_html": '<p onclick="steal()">First <script>alert(1)</script>'
                '<a href="/demo">me</a></p>',
                "user": {"name": "Ann", "username": "ann"},
                "children": [
                    {
                        "id_code": "b2",
                        "created_at": "2024-05-03T08:00:00Z",
                        "body_html": "<p>A reply</p>",
                        "user": {"name": "", "username": "bob"},
                        "children": [],
                    }
                ],
            },
            {
                "id_code": "c3",
                "created_at": "not a date",
                "body_html": None,
                "user": "not an object",
                "children": "not a list",
            },
        ],
    }
    (folder / f"{slug}.json").write_text(json.dumps(thread))


def test_read_comments_cleans_and_flattens_the_thread(site):
    site.post("hello", "Hello")
    write_thread(site, "hello")
    result = call(site, "read_comments", {"path": "content/hello.md"}).structuredContent
    assert result["mirror_file"] == "content/_mirror/comments/hello.json"
    assert result["total"] == 3
    first, reply, odd = result["comments"]
    assert first["author"] == "Ann" and first["depth"] == 0 and first["parent_id"] is None
    assert "script" not in first["body_html"] and "onclick" not in first["body_html"]
    assert 'href="https://dev.to/demo"' in first["body_html"]
    assert first["text"] == "First me"
    assert reply == {
        **reply,
        "id": "b2",
        "parent_id": "a1",
        "depth": 1,
        "author": "bob",
        "text": "A reply",
    }
    assert odd["author"] == "Anonymous" and odd["created_at"] is None
    since = call(
        site, "read_comments", {"path": "content/hello.md", "since": "2024-05-02"}
    ).structuredContent
    assert [c["id"] for c in since["comments"]] == ["b2"] and since["total"] == 3


def test_read_comments_without_a_mirror(site):
    site.post("hello", "Hello")
    result = call(site, "read_comments", {"path": "content/hello.md"}).structuredContent
    assert result["comments"] == [] and result["mirror_file"] is None


def test_a_broken_mirror_file_is_one_line(site):
    site.post("hello", "Hello")
    folder = site.content / "_mirror" / "comments"
    folder.mkdir(parents=True)
    (folder / "hello.json").write_text('{"comments": [\n')
    result = call(site, "read_comments", {"path": "content/hello.md"})
    assert result.isError is True
    assert result.content[0].text.startswith(
        "Error: content/_mirror/comments/hello.json:2: not valid JSON"
    )


def test_read_comments_after_a_real_mirror(site, env, sandbox):
    mine = api_get(sandbox, "/api/articles/me/published", per_page=1000)
    article = max(mine, key=lambda a: a["comments_count"])
    site.post(article["slug"], "A local post with the article's slug")
    assert site.run("mirror", "comments", env=env).exit_code == 0
    result = call(site, "read_comments", {"path": f"content/{article['slug']}.md"})
    assert result.structuredContent["total"] == article["comments_count"] > 0


def test_a_bad_since_is_one_line(site):
    site.post("hello", "Hello")
    result = call(site, "read_comments", {"path": "content/hello.md", "since": "yesterday"})
    assert result.content[0].text == (
        "Error: since: 'yesterday' is not an ISO 8601 date or date-time"
    )


# -- build ----------------------------------------------------------------------------------------


@pytest.mark.e2e
def test_build_site_builds_what_toolkit_build_builds(site):
    site.post("hello", "Hello", published=True)
    result = call(site, "build_site").structuredContent
    assert result["ok"] is True and result["output_dir"] == "site" and result["posts"] == 1
    assert (site.root / "site" / "index.html").is_file()
    again = call(site, "build_site").structuredContent
    assert again["written"] == 0  # incremental, as the CLI's build


# -- the tools themselves -------------------------------------------------------------------------


def test_every_call_is_an_event(site):
    site.post("hello", "Hello")
    recorder = EventRecorder()
    call(site, "check_posts", recorder=recorder)
    call(site, "build_site", granted=(scopes.READ,), recorder=recorder)
    assert [(e.tool, e.outcome) for e in recorder.events] == [
        ("check_posts", "ok"),
        ("build_site", "denied"),
    ]
    assert all(e.duration_ms is not None and e.transport == "stdio" for e in recorder.events)


def test_errors_are_one_line_never_a_traceback():
    assert (
        error_text(ContentError("content/x.md: no such post"))
        == "Error: content/x.md: no such post"
    )
    assert (
        error_text(RuntimeError("boom\nTraceback (most recent call last)"))
        == "Error: the tool failed unexpectedly (RuntimeError); see the server's log"
    )


def test_every_declared_tool_is_offered(site):
    config = load_config(site.root / "toolkit.toml", env={})

    async def names() -> set[str]:
        server = ToolkitMCP(config, EventRecorder())
        return {tool.name for tool in await server.tool_list()}

    assert anyio.run(names) == {spec.name for spec in TOOLS}


def test_licence_status_is_what_toolkit_license_status_says(make_project, sandbox):
    from toolkit_sandbox.licensing import seed

    project = make_project(
        SYNC_CONFIG
        + f"""
[license]
application_id = "{seed.APPLICATION_ID}"
customer_id = "{seed.LICENSED_CUSTOMER}"
"""
    )
    env = {
        "LICENSE_BASE_URL": sandbox.base_url,
        "LICENSE_API_TOKEN": seed.token_for(seed.DEMO_TOKEN_LABEL),
    }
    result = call(project, "licence_status", env=env)
    assert result.isError is False
    cli = json.loads(project.run("license", "status", "--json", env=env).stdout)
    tool = result.structuredContent
    assert tool["customer"] == cli["customer"] and tool["premium_allowed"] is True
    # Without the token it is the CLI's one line, as a tool error.
    refused = call(project, "licence_status", env={"LICENSE_BASE_URL": sandbox.base_url})
    assert refused.isError is True
    assert refused.content[0].text.startswith("Error: LICENSE_API_TOKEN is not set")


@pytest.mark.e2e
def test_query_run_log_answers_from_the_local_log(site):
    assert site.run("check").exit_code == 0  # a run to ask about
    sql = (
        "SELECT command, COUNT(*) AS events FROM toolkit WHERE event = 'run' "
        "AND command <> 'logs' "
        "GROUP BY command ORDER BY command"
    )
    result = call(site, "query_run_log", {"sql": sql})
    assert result.isError is False
    answer = result.structuredContent
    cli = json.loads(site.run("logs", "--local", "--format", "json", sql).stdout)
    assert answer["local"] is True and answer["truncated"] == 0
    assert answer["records"] == cli
    assert {"command": "check", "events": 2} in answer["records"]  # its start and end
    refused = call(site, "query_run_log", {"sql": sql}, granted=(scopes.READ,))
    assert refused.isError is True and "needs the scope logs" in refused.content[0].text


def test_export_archive_makes_the_archive_toolkit_export_makes(site, sandbox, tmp_path):
    import zipfile

    from toolkit_sandbox.archive.seed import DEMO_API_KEY

    sandbox.reset()
    (site.root / "site").mkdir()
    (site.root / "site" / "index.html").write_text("<p>Exported</p>\n")
    env = {"CLOUDCONVERT_BASE_URL": sandbox.base_url, "CLOUDCONVERT_API_KEY": DEMO_API_KEY}
    result = call(site, "export_archive", {"format": "zip"}, env=env)
    assert result.isError is False, result.content
    document = result.structuredContent
    assert document["entries"] == 1 and document["format"] == "zip"
    with zipfile.ZipFile(document["output"]) as archive:
        assert archive.read("index.html") == b"<p>Exported</p>\n"


def test_list_posts_sees_every_change_between_calls_of_one_server(site):
    """The server keeps parsed posts between calls: an edit, a new post, a removal and a
    post broken meanwhile all show at the next call."""
    first = site.post("first", "First title")
    site.post("second", "Second")
    config = load_config(site.root / "toolkit.toml", env={})
    server = ToolkitMCP(config, EventRecorder(), local_scopes=scopes.ALL)

    async def listing(client: Any) -> dict[str, Any]:
        result = await client.call_tool("list_posts", {})
        return result.structuredContent

    async def run() -> list[dict[str, Any]]:
        seen = []
        async with create_connected_server_and_client_session(server) as client:
            seen.append(await listing(client))
            first.write_text(first.read_text().replace("First title", "First, edited"))
            site.post("third", "Third")
            (site.content / "second.md").unlink()
            seen.append(await listing(client))
            first.write_text("---\ntitle: [broken\n---\n")
            seen.append(await listing(client))
        return seen

    before, after, broken = anyio.run(run)
    assert [p["title"] for p in before["posts"]] == ["First title", "Second"]
    assert [p["title"] for p in after["posts"]] == ["First, edited", "Third"]
    assert [p["path"] for p in broken["posts"]] == ["content/third.md"]
    assert broken["problems"][0]["path"] == "content/first.md"


def test_the_cache_gives_what_a_fresh_read_gives(site, tmp_path):
    from toolkit.commands.posts import PostCache, list_posts

    site.post("a", "A", date="2024-01-02", tags=["x"])
    site.post("premium", "P", premium=True)
    (site.content / "nested").mkdir()
    site.post("nested/b", "B")
    (site.content / "broken.md").write_text("---\ntitle: [x\n---\n")
    outside = tmp_path / "outside.md"
    outside.write_text("---\ntitle: Outside\n---\n")
    os.symlink(outside, site.content / "link.md")
    config = load_config(site.root / "toolkit.toml", env={})
    cache = PostCache(config)
    fresh = list_posts(config)
    assert list_posts(config, cache=cache) == fresh
    assert list_posts(config, cache=cache) == fresh  # from the cache this time
    assert [p.path for p in fresh.problems] == ["content/broken.md", "content/link.md"]


def test_plan_and_push_drafts_of_one_path_bind_it_with_every_post(site, env, sandbox):
    """The post named is bound with every other (#43): `b.md`, with the title of the
    article `a.md` names by `id:`, is a new post, not that article."""
    seeded = {"body_markdown": "---\ntitle: Same title\npublished: true\n---\nIts text.\n"}
    response = httpx.post(
        f"{sandbox.base_url}/__sandbox/forem/articles",
        json={"username": "demo", "articles": [{**seeded, "published": True}]},
        verify=shared_context(),
    )
    (article_id,) = response.json()["ids"]
    site.write("content/a.md", f"---\ntitle: Same title\nid: {article_id}\n---\nIts text.\n")
    site.write("content/b.md", "---\ntitle: Same title\n---\nA draft of another post.\n")
    planned = call(site, "plan", {"paths": ["content/b.md"]}, env=env)
    (post,) = planned.structuredContent["posts"]
    assert (post["path"], post["action"]) == ("content/b.md", "create")
    pushed = call(site, "push_drafts", {"paths": ["content/b.md"]}, env=env)
    assert pushed.structuredContent["posts"][0]["action"] == "create"
    remote = {a["id"]: a for a in api_get(sandbox, "/api/articles/me/all", per_page=1000)}
    assert remote[article_id]["published"] is True
    assert remote[article_id]["body_markdown"].endswith("Its text.\n")
