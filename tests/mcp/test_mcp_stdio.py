"""`toolkit mcp` over stdio, started by the MCP SDK's own stdio client as an assistant
starts it: a real process on a temporary project, credentials from its environment."""

from __future__ import annotations

import os
import sys
from typing import Any

import anyio
import pytest
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

# Every test here starts a process or opens a socket (tests/support/plugin.py).
pytestmark = pytest.mark.e2e


def run_stdio(project: Any, work: Any, *args: str, env: dict[str, str] | None = None) -> Any:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "toolkit", "--config", str(project.root / "toolkit.toml"), "mcp", *args],
        cwd=str(project.root),
        env={**os.environ, **(env or {})},
    )

    async def session() -> Any:
        with open(os.devnull, "w") as errors:
            async with (
                stdio_client(params, errlog=errors) as (read, write),
                ClientSession(read, write) as client,
            ):
                await client.initialize()
                return await work(client)

    return anyio.run(session)


def test_the_sdk_stdio_client_lists_tools_and_checks_posts(mcp_project):
    async def work(client: ClientSession) -> tuple[Any, Any, Any]:
        tools = await client.list_tools()
        checked = await client.call_tool("check_posts", {})
        one = await client.call_tool("check_posts", {"paths": ["content/hello.md"]})
        return tools, checked, one

    tools, checked, one = run_stdio(mcp_project, work)
    assert {
        "list_posts",
        "read_post",
        "check_posts",
        "plan",
        "push_drafts",
        "read_comments",
        "build_site",
    } <= {tool.name for tool in tools.tools}
    assert checked.isError is False
    report = checked.structuredContent
    assert report["ok"] is False and report["files"] == 3 and report["errors"] == 1
    assert [p["text"] for p in report["problems"]] == [
        "content/broken.md:2: title: missing; every post needs a title"
    ]
    # The same lines `toolkit check` prints.
    cli = mcp_project.run("check")
    assert cli.stdout.splitlines() == [p["text"] for p in report["problems"]]
    assert one.structuredContent == {
        "ok": True,
        "files": 1,
        "errors": 0,
        "warnings": 0,
        "notes": 0,
        "problems": [],
    }


def test_stdio_errors_are_the_clis_one_line(mcp_project):
    async def work(client: ClientSession) -> Any:
        return await client.call_tool("plan", {})

    result = run_stdio(mcp_project, work, env={"FOREM_API_KEY": ""})
    assert result.isError is True
    (content,) = result.content
    cli = mcp_project.run("plan")
    assert cli.exit_code == 1
    assert content.text == cli.stderr.strip()
    assert content.text.startswith("Error: FOREM_API_KEY is not set")
    assert "Traceback" not in content.text


def test_stdio_holds_the_scopes_it_was_started_with(mcp_project):
    async def work(client: ClientSession) -> tuple[Any, Any]:
        build = await client.call_tool("build_site", {})
        listed = await client.call_tool("list_posts", {})
        return build, listed

    build, listed = run_stdio(mcp_project, work, "--scope", "read")
    assert build.isError is True
    assert build.content[0].text == (
        "Error: build_site needs the scope draft-write; this server holds read"
    )
    assert listed.isError is False
    assert not (mcp_project.root / "site").exists()


def test_publishing_over_stdio_needs_the_scope_named(mcp_project):
    async def work(client: ClientSession) -> Any:
        return await client.call_tool("push_drafts", {"publish": True})

    result = run_stdio(mcp_project, work)
    assert result.isError is True
    assert "needs the scope publish" in result.content[0].text


def test_build_site_leaves_another_generators_site_to_it(make_project):
    project = make_project('[source]\ngenerator = "hugo"\n')

    async def work(client: ClientSession) -> Any:
        return await client.call_tool("build_site", {})

    result = run_stdio(project, work)
    assert result.isError is True
    assert result.content[0].text == (
        "Error: the site is hugo's ([site] enabled = false): toolkit builds nothing; set "
        "[site] enabled = true in toolkit.toml to build it with toolkit"
    )
    assert not (project.root / "site").exists()
