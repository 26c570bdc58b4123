"""Looking at the sandbox from a test: what the account holds, what requests it served."""

from __future__ import annotations

from typing import Any

import httpx


def api_get(sandbox, path: str, **params: Any) -> Any:
    """GET an /api path as the demo account."""
    response = httpx.get(f"{sandbox.base_url}{path}", params=params,
                         headers={"api-key": sandbox.demo_api_key})
    response.raise_for_status()
    return response.json()


def control(sandbox, method: str, path: str, **body: Any) -> Any:
    """Call the sandbox's control API (`/__sandbox{path}`)."""
    response = httpx.request(method, f"{sandbox.base_url}/__sandbox{path}", json=body or None)
    response.raise_for_status()
    return response.json() if response.content else None


def my_articles(sandbox) -> list[dict]:
    return api_get(sandbox, "/api/articles/me/all", per_page=1000)


def titles(sandbox) -> list[str]:
    return [article["title"] for article in my_articles(sandbox)]


def writes(sandbox) -> dict[str, int]:
    """POST/PUT requests to /api since the last stats reset, by `METHOD status`."""
    counts: dict[str, int] = {}
    for row in sandbox.stats():
        if row["method"] in ("POST", "PUT") and row["route"].startswith("/api/"):
            key = f"{row['method']} {row['status']}"
            counts[key] = counts.get(key, 0) + row["count"]
    return counts


def requests_by_route(sandbox) -> dict[str, int]:
    """Requests to /api since the last stats reset, by `METHOD route`."""
    counts: dict[str, int] = {}
    for row in sandbox.stats():
        if row["route"].startswith("/api/"):
            key = f"{row['method']} {row['route']}"
            counts[key] = counts.get(key, 0) + row["count"]
    return counts


def web_edit(sandbox, article_id: int, body_markdown: str) -> None:
    """An edit of the article as if made on the website."""
    control(sandbox, "POST", f"/articles/{article_id}/edit", body_markdown=body_markdown)
