"""MCP server benchmarks over HTTP: an authorised tool call, and a token refresh.

`toolkit mcp --transport http --port 0` runs in a subprocess on a project of 1,000 posts
(generated into `bench/_work/mcp/`, git-ignored). The benchmark registers a client,
approves it on the authorization screen with the operator secret, exchanges the code,
opens an MCP session, then measures over one keep-alive connection:

1. an authorised `tools/call` of `list_posts` (every post with its sync state: 1,000 posts
   read, their payload digests compared with toolkit.lock): median and 95th percentile;
2. a token refresh (`POST /token`, grant refresh_token; each one rotates the refresh
   token, so the next uses the new one): median and 95th percentile.

Printed, never asserted.
"""

from __future__ import annotations

import base64
import hashlib
import os
import secrets
import statistics
import subprocess
import sys
from urllib.parse import parse_qs, urlsplit

import httpx

from bench.common import TOOLKIT, WORK, project
from bench.publish import write_posts

POSTS = 1000
CALLS = 200
REFRESHES = 200
SECRET = "benchmark operator secret"
REDIRECT = "http://localhost:3030/callback"
PROTOCOL = "2025-06-18"
CONFIG = """[site]
title = "MCP benchmark"
url = "https://bench.example.com"
"""


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


def timed(action, count: int) -> list[float]:
    import time

    seconds = []
    for _ in range(count):
        started = time.perf_counter()
        action()
        seconds.append(time.perf_counter() - started)
    return seconds


def show(label: str, seconds: list[float]) -> None:
    print(
        f"  {label}: median {statistics.median(seconds) * 1000:.1f} ms, "
        f"p95 {percentile(seconds, 0.95) * 1000:.1f} ms ({len(seconds)} runs)"
    )


def authorize(http: httpx.Client, base: str) -> tuple[dict, dict]:
    client = http.post(
        f"{base}/register", json={"redirect_uris": [REDIRECT], "client_name": "bench"}
    ).json()
    verifier = secrets.token_urlsafe(48)
    challenge = (
        base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).decode().rstrip("=")
    )
    consent = http.get(
        f"{base}/authorize",
        params={
            "response_type": "code",
            "client_id": client["client_id"],
            "redirect_uri": REDIRECT,
            "code_challenge": challenge,
            "code_challenge_method": "S256",
            "state": "x",
            "scope": "read",
        },
    ).headers["location"]
    request = parse_qs(urlsplit(consent).query)["request"][0]
    back = http.post(
        f"{base}/consent",
        data={"request": request, "secret": SECRET, "decision": "approve", "scope": ["read"]},
    )
    code = parse_qs(urlsplit(back.headers["location"]).query)["code"][0]
    tokens = http.post(
        f"{base}/token",
        data={
            "grant_type": "authorization_code",
            "code": code,
            "redirect_uri": REDIRECT,
            "code_verifier": verifier,
            "client_id": client["client_id"],
            "client_secret": client["client_secret"],
        },
    ).json()
    return client, tokens


def main() -> None:
    root = project(WORK / "mcp", CONFIG)
    write_posts(root, POSTS, seed=7)
    process = subprocess.Popen(
        [*TOOLKIT, "mcp", "--transport", "http", "--port", "0"],
        cwd=root,
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        env={**os.environ, "TOOLKIT_MCP_OPERATOR_SECRET": SECRET},
    )
    try:
        line = process.stdout.readline()
        if not line.startswith("MCP server at "):
            sys.exit(f"the MCP server did not start: {line}{process.stdout.read()}")
        url = line.split()[3]
        base = url.removesuffix("/mcp")
        with httpx.Client(timeout=60) as http:
            client, tokens = authorize(http, base)
            headers = {
                "Accept": "application/json, text/event-stream",
                "Content-Type": "application/json",
                "Authorization": f"Bearer {tokens['access_token']}",
            }
            init = http.post(
                url,
                headers=headers,
                json={
                    "jsonrpc": "2.0",
                    "id": 1,
                    "method": "initialize",
                    "params": {
                        "protocolVersion": PROTOCOL,
                        "capabilities": {},
                        "clientInfo": {"name": "bench", "version": "1"},
                    },
                },
            )
            headers.update(
                {"Mcp-Session-Id": init.headers["mcp-session-id"], "MCP-Protocol-Version": PROTOCOL}
            )
            http.post(
                url, headers=headers, json={"jsonrpc": "2.0", "method": "notifications/initialized"}
            )
            call = {
                "jsonrpc": "2.0",
                "id": 2,
                "method": "tools/call",
                "params": {"name": "list_posts", "arguments": {}},
            }

            def list_posts() -> None:
                response = http.post(url, headers=headers, json=call)
                posts = response.json()["result"]["structuredContent"]["posts"]
                assert len(posts) == POSTS, len(posts)

            list_posts()  # warm: imports, caches
            print(f"MCP over HTTP, {POSTS} posts, one keep-alive connection:")
            show("authorised tools/call list_posts", timed(list_posts, CALLS))

            current = {"refresh_token": tokens["refresh_token"]}

            def refresh() -> None:
                response = http.post(
                    f"{base}/token",
                    data={
                        "grant_type": "refresh_token",
                        "refresh_token": current["refresh_token"],
                        "client_id": client["client_id"],
                        "client_secret": client["client_secret"],
                    },
                )
                current["refresh_token"] = response.json()["refresh_token"]

            show("token refresh (rotating)", timed(refresh, REFRESHES))
    finally:
        process.terminate()
        process.wait(10)
        process.stdout.close()


if __name__ == "__main__":
    main()
