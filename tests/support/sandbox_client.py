"""A test client for the sandbox, as any seeded account: real HTTP on loopback, or the
sandbox's application without a socket."""

from __future__ import annotations

from typing import Any

import httpx

from toolkit import USER_AGENT
from toolkit.tls import shared_context


class Api:
    """Requests to one sandbox as any of its accounts: over loopback HTTP, or with
    `in_process` handed to the sandbox's application on its own loop without a socket
    (`InProcessTransport`: the same answers, records and limits; no connection)."""

    def __init__(self, server: Any, *, in_process: bool = False):
        self.server = server
        self.base_url = server.base_url
        self.keys = {account["username"]: account["api_key"] for account in server.accounts()}
        self.http = httpx.Client(
            base_url=self.base_url,
            headers={"User-Agent": USER_AGENT},
            timeout=30,
            verify=shared_context(),
            transport=server.transport() if in_process else None,
        )

    def request(
        self, method: str, path: str, *, user: str | None = None, **kwargs: Any
    ) -> httpx.Response:
        headers = dict(kwargs.pop("headers", {}))
        if user is not None:
            headers["api-key"] = self.keys[user]
        return self.http.request(method, path, headers=headers, **kwargs)

    def get(self, path: str, **kwargs: Any) -> httpx.Response:
        return self.request("GET", path, **kwargs)

    def post(self, path: str, **kwargs: Any) -> httpx.Response:
        return self.request("POST", path, **kwargs)

    def put(self, path: str, **kwargs: Any) -> httpx.Response:
        return self.request("PUT", path, **kwargs)

    def ok(self, method: str, path: str, **kwargs: Any) -> Any:
        """The JSON of a 2xx answer (fails the test with the body otherwise)."""
        response = self.request(method, path, **kwargs)
        assert response.is_success, f"{method} {path}: {response.status_code} {response.text}"
        return response.json() if response.content else None

    def create(self, user: str = "demo", **article: Any) -> dict:
        """Create an article through the API (counts against the create limit)."""
        return self.ok("POST", "/api/articles", user=user, json={"article": article})

    def bulk(self, articles: list[dict], username: str = "demo") -> list[int]:
        """Create articles through the control API (no rate limits)."""
        body = self.ok(
            "POST", "/__sandbox/forem/articles", json={"username": username, "articles": articles}
        )
        return body["ids"]

    def close(self) -> None:
        self.http.close()
