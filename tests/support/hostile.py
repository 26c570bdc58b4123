"""A publishing API that answers whatever a test tells it to: hostile slugs, bodies,
front matter and comment threads, served over loopback like the real thing.

The sandbox validates what it stores, so it cannot send what a malicious or broken server
could; this one can. A test sets `articles`, `comments` and `episodes`, then points
toolkit at `base_url` (any API key is accepted). Creates and updates are answered as a
server that took them would, and kept in `writes` (the article is not added to `articles`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route


def article(
    article_id: int,
    title: Any,
    slug: Any,
    body_markdown: Any = None,
    *,
    published: bool = True,
    comments_count: int = 0,
    **extra: Any,
) -> dict[str, Any]:
    """An article as `/api/articles/me/all` lists it; `extra` adds or replaces fields."""
    if body_markdown is None:
        body_markdown = f"---\ntitle: {title}\npublished: {str(published).lower()}\n---\nText.\n"
    data = {
        "type_of": "article",
        "id": article_id,
        "title": title,
        "slug": slug,
        "path": f"/demo/{slug}",
        "url": f"https://hostile.example/demo/{article_id}",
        "canonical_url": f"https://hostile.example/demo/{article_id}",
        "description": "",
        "published": published,
        "published_at": "2024-01-01T00:00:00Z" if published else None,
        "edited_at": None,
        "comments_count": comments_count,
        "tag_list": [],
        "body_markdown": body_markdown,
    }
    data.update(extra)
    return data


def comment(id_code: str, body_html: str = "<p>A remark.</p>") -> dict[str, Any]:
    return {
        "type_of": "comment",
        "id_code": id_code,
        "created_at": "2024-01-02T00:00:00Z",
        "body_html": body_html,
        "user": {"name": "Eve", "username": "eve"},
        "children": [],
    }


@dataclass
class HostileApi:
    """What the server answers; change the fields between requests as a test needs."""

    articles: list[dict[str, Any]] = field(default_factory=list)
    comments: dict[int, list[dict[str, Any]]] = field(default_factory=dict)  # by article id
    episodes: list[dict[str, Any]] = field(default_factory=list)
    episode_comments: dict[int, list[dict[str, Any]]] = field(default_factory=dict)
    writes: list[tuple[str, dict[str, Any]]] = field(default_factory=list)  # (method, article)
    base_url: str = ""  # where it is served

    @property
    def env(self) -> dict[str, str]:
        """The environment that points toolkit at this server."""
        return {"FOREM_BASE_URL": self.base_url, "FOREM_API_KEY": "any-key"}

    def reset(self) -> None:
        self.articles, self.comments = [], {}
        self.episodes, self.episode_comments = [], {}
        self.writes = []

    def app(self) -> Starlette:
        return Starlette(
            routes=[
                Route("/api/articles/me/{scope}", self._my_articles),
                Route("/api/articles/me", self._my_articles),
                Route("/api/articles", self._write, methods=["POST"]),
                Route("/api/articles/{id:int}", self._write, methods=["PUT"]),
                Route("/api/comments", self._comments),
                Route("/api/podcast_episodes", self._episodes),
                Route("/api/readinglist", self._readinglist),
            ]
        )

    @staticmethod
    def _first_page(request: Request, items: list[Any]) -> JSONResponse:
        # Everything on the first page; the client stops at the short page that follows.
        return JSONResponse(items if request.query_params.get("page", "1") == "1" else [])

    async def _my_articles(self, request: Request) -> JSONResponse:
        scope = request.path_params.get("scope", "published")
        items = self.articles
        if scope == "published":
            items = [a for a in items if a.get("published")]
        elif scope == "unpublished":
            items = [a for a in items if not a.get("published")]
        return self._first_page(request, items)

    async def _write(self, request: Request) -> JSONResponse:
        sent = (await request.json())["article"]
        self.writes.append((request.method, sent))
        article_id = request.path_params.get("id", 1000 + len(self.writes))
        answer = article(
            article_id,
            sent["title"],
            f"written-{article_id}",
            sent["body_markdown"],
            published=bool(sent.get("published")),
        )
        return JSONResponse(answer, status_code=201 if request.method == "POST" else 200)

    async def _comments(self, request: Request) -> JSONResponse:
        if "a_id" in request.query_params:
            return JSONResponse(self.comments.get(int(request.query_params["a_id"]), []))
        return JSONResponse(self.episode_comments.get(int(request.query_params["p_id"]), []))

    async def _episodes(self, request: Request) -> JSONResponse:
        return self._first_page(request, self.episodes)

    async def _readinglist(self, request: Request) -> JSONResponse:
        return JSONResponse([])


def files_under(root) -> set[str]:
    """Every file and symlink below `root`, as POSIX paths relative to it."""
    return {p.relative_to(root).as_posix() for p in root.rglob("*") if not p.is_dir()}


def run_log_files(project: str) -> set[str]:
    """The files every run writes in its project's `.toolkit/` (the run log), as
    `files_under` names them."""
    return {f"{project}/.toolkit/events.jsonl", f"{project}/.toolkit/events.lock"}
