"""Client of the publishing API (Forem / dev.to v0.9.7): every endpoint of the seed spec.

Paths are the real ones (reference/NOTES.md fills in what the seed leaves out); a path
with a variable part is sent with its route template (`/api/articles/{id}`), the name the
run log and the sandbox's request records give it. Article
creates and updates go through client-side sliding-window limiters (10 published creates
and 30 updates per window, 30 s on the real service), so a bulk publish paces itself
instead of collecting 429s. The create limiter counts what Forem counts, the published
articles created in the window: a draft create holds a slot only while it is on its way,
a refused one (4xx) none, and published articles this client did not create (another
run's, a draft an update publishes) are counted when it learns of them
(`count_published`). The API key travels in the `api-key` header only, added by
`ApiKeyAuth` as each request leaves.
"""

from __future__ import annotations

import datetime as dt
import threading
from collections.abc import Callable, Generator, Iterable, Iterator
from typing import Any
from urllib.parse import quote

import httpx

from toolkit.clients.base import (
    ApiClient,
    RequestListener,
    RetryPolicy,
    Sleep,
    WaitListener,
)
from toolkit.clients.forem_models import (
    Article,
    Comment,
    FollowedTag,
    Follower,
    Listing,
    Organization,
    PodcastEpisode,
    ProfileImage,
    ReadingListItem,
    Tag,
    User,
    VideoArticle,
)
from toolkit.clients.ratelimit import SlidingWindowLimiter
from toolkit.clients.responses import json_body
from toolkit.config import Secret
from toolkit.errors import ApiError, Unauthorized

API_V1 = "application/vnd.forem.api-v1+json"
CREATE_LIMIT = 10
UPDATE_LIMIT = 30
DEFAULT_WINDOW = 30.0
MAX_PER_PAGE = 1000
READINGLIST_MAX_PER_PAGE = 100


class ApiKeyAuth(httpx.Auth):
    """Forem's `api-key` header; the key is revealed only into the outgoing request."""

    def __init__(self, api_key: Secret):
        self._api_key = api_key

    def auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        request.headers["api-key"] = self._api_key.reveal()
        yield request


class ForemClient(ApiClient):
    def __init__(
        self,
        base_url: str,
        api_key: Secret | None = None,
        *,
        rate_window: float = DEFAULT_WINDOW,
        transport: httpx.BaseTransport | None = None,
        retry: RetryPolicy | None = None,
        sleep: Sleep | None = None,
        clock: Callable[[], float] | None = None,
        on_wait: WaitListener | None = None,
        timeout: float | None = None,
        on_request: RequestListener | None = None,
        key_source: str = "",
    ):
        super().__init__(
            base_url,
            auth=ApiKeyAuth(api_key) if api_key else None,
            transport=transport,
            retry=retry,
            sleep=sleep,
            on_wait=on_wait,
            timeout=timeout,  # seconds to wait for the server (`[forem] timeout`)
            on_request=on_request,
        )
        self.has_key = api_key is not None
        # Where the key came from (`FOREM_API_KEY, read from .env`), said when it is refused.
        self.key_source = key_source
        # `clock` and `sleep` go together: a test that fakes one fakes both.
        limiter_clock = {"clock": clock} if clock is not None else {}
        self.create_limiter = SlidingWindowLimiter(
            CREATE_LIMIT, rate_window, what="creates", **limiter_clock
        )
        self.update_limiter = SlidingWindowLimiter(
            UPDATE_LIMIT, rate_window, what="updates", **limiter_clock
        )
        # The published articles the create limiter holds, so none is counted twice.
        self._counted: set[int] = set()
        self._counted_mutex = threading.Lock()

    def count_published(self, articles: Iterable[Article], *, since: str = "created_at") -> None:
        """Published articles the server counts against the create limit that this client
        did not create (another run's, a draft published on the website or by an update):
        Forem counts the published articles *created* in the window. The account's list
        gives no creation time, so `since="published_at"` takes the publication time, which
        is never earlier: a count at least as cautious as the server's."""
        ages = [self._newly_counted(article, since) for article in articles]
        self.create_limiter.count_past(age for age in ages if age is not None)

    def send(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        """`ApiClient.send`; a 401 to a request that carried the key names where the key
        was read from, as the writer has to fix it there."""
        try:
            return super().send(method, path, **kwargs)
        except Unauthorized as exc:
            if (
                exc.status != 401
                or not self.key_source
                or exc.request is None
                or "api-key" not in exc.request.headers
            ):
                raise
            raise Unauthorized(
                f"{exc.message}: the API key was refused (check {self.key_source})",
                request=exc.request,
                response=exc.response,
            ) from None

    def _require_key(self, what: str) -> None:
        if not self.has_key:
            raise Unauthorized(
                f"{what} needs an API key: set FOREM_API_KEY in the environment or in .env"
            )

    def _pages(
        self, path: str, per_page: int, params: dict[str, Any] | None = None, start: int = 1
    ) -> Iterator[dict[str, Any]]:
        page = start
        while True:
            batch = self.get_json(path, {**(params or {}), "page": page, "per_page": per_page})
            if not isinstance(batch, list):
                return
            yield from batch
            if len(batch) < per_page:
                return
            page += 1

    # -- articles ----------------------------------------------------------------------

    def articles(
        self,
        *,
        page: int | None = None,
        per_page: int | None = None,
        tag: str | None = None,
        tags: str | None = None,
        tags_exclude: str | None = None,
        username: str | None = None,
        state: str | None = None,
        top: int | None = None,
        collection_id: int | None = None,
    ) -> list[Article]:
        params = {
            "page": page,
            "per_page": per_page,
            "tag": tag,
            "tags": tags,
            "tags_exclude": tags_exclude,
            "username": username,
            "state": state,
            "top": top,
            "collection_id": collection_id,
        }
        return [Article.from_json(a) for a in self.get_json("/api/articles", params)]

    def latest_articles(
        self, *, page: int | None = None, per_page: int | None = None
    ) -> list[Article]:
        data = self.get_json("/api/articles/latest", {"page": page, "per_page": per_page})
        return [Article.from_json(a) for a in data]

    def article(self, article_id: int) -> Article:
        return Article.from_json(
            self.get_json(f"/api/articles/{article_id}", route="/api/articles/{id}")
        )

    def article_by_path(self, username: str, slug: str) -> Article:
        return Article.from_json(
            self.get_json(
                f"/api/articles/{username}/{slug}", route="/api/articles/{username}/{slug}"
            )
        )

    def create_article(self, payload: dict[str, Any]) -> Article:
        """POST /api/articles. Not retried after an ambiguous failure: the caller reconciles.

        Forem's create limit counts the published articles created in the window; a draft
        create is checked against it but not counted (`RateLimitChecker`), so a draft holds
        a slot of the create limiter only until it is answered.
        """
        self._require_key("Creating an article")
        article = payload.get("article")
        published = isinstance(article, dict) and article.get("published") is True
        response = self.send(
            "POST",
            "/api/articles",
            json=payload,
            idempotent=False,
            limiter=self.create_limiter,
            counted=published,
        )
        created = Article.from_json(json_body(response))
        if published:
            with self._counted_mutex:
                self._counted.add(created.id)
        return created

    def expect_published_draft(self) -> None:
        """An update about to publish a draft: from now until it is answered, it holds a
        slot of the create limiter (Forem counts a published article by its creation time,
        which may lie inside the window), so that no create goes out past the limit
        meanwhile. Pass `publishes_draft=True` to that `update_article`."""
        self.create_limiter.reserve()

    def update_article(
        self, article_id: int, payload: dict[str, Any], *, publishes_draft: bool = False
    ) -> Article:
        """PUT /api/articles/{id}. An update is not checked against the create limit, but
        an article it publishes counts in it when it was created inside the window."""
        self._require_key("Updating an article")
        try:
            response = self.send(
                "PUT",
                f"/api/articles/{article_id}",
                json=payload,
                limiter=self.update_limiter,
                route="/api/articles/{id}",
            )
            updated = Article.from_json(json_body(response))
        except BaseException:
            if publishes_draft:
                self.create_limiter.release()
            raise
        if not publishes_draft:
            self.count_published([updated])
        elif self._newly_counted(updated) is not None:
            self.create_limiter.record()  # counted from now: never earlier than the server
        else:
            self.create_limiter.release()
        return updated

    def _newly_counted(self, article: Article, since: str = "created_at") -> float | None:
        """The age in seconds of a published article the server counts against the create
        limit and this client does not yet (remembered as counted from now on), or None."""
        stamp = getattr(article, since)
        if not article.published or not stamp:
            return None
        try:
            when = dt.datetime.fromisoformat(str(stamp).replace("Z", "+00:00"))
        except ValueError:
            return None
        if when.tzinfo is None:
            when = when.replace(tzinfo=dt.UTC)
        # The API gives times in whole seconds, cut down: the moment may be up to a second
        # later than it says. (And clocks may differ: never a negative age.)
        age = max((dt.datetime.now(dt.UTC) - when).total_seconds() - 1.0, 0.0)
        with self._counted_mutex:
            if article.id in self._counted or age >= self.create_limiter.window:
                return None
            self._counted.add(article.id)
        return age

    def my_articles(
        self, scope: str = "all", *, page: int | None = None, per_page: int | None = None
    ) -> list[Article]:
        """One page of the caller's own articles; scope: all, published, unpublished or ''."""
        self._require_key("Listing your articles")
        path = "/api/articles/me" + (f"/{scope}" if scope else "")
        return [
            Article.from_json(a) for a in self.get_json(path, {"page": page, "per_page": per_page})
        ]

    def iter_my_articles(
        self, scope: str = "all", per_page: int = MAX_PER_PAGE
    ) -> Iterator[Article]:
        """Every own article, reading page after page until a short one."""
        self._require_key("Listing your articles")
        path = "/api/articles/me" + (f"/{scope}" if scope else "")
        for data in self._pages(path, per_page):
            yield Article.from_json(data)

    def videos(self, *, page: int | None = None, per_page: int | None = None) -> list[VideoArticle]:
        data = self.get_json("/api/videos", {"page": page, "per_page": per_page})
        return [VideoArticle.from_json(v) for v in data]

    # -- comments ----------------------------------------------------------------------

    def comments(
        self, *, article_id: int | None = None, podcast_episode_id: int | None = None
    ) -> list[Comment]:
        return [
            Comment.from_json(c)
            for c in self.comments_json(
                article_id=article_id, podcast_episode_id=podcast_episode_id
            )
        ]

    def comments_json(
        self, *, article_id: int | None = None, podcast_episode_id: int | None = None
    ) -> list[dict[str, Any]]:
        """The threads exactly as the API returns them (what the mirror stores)."""
        if (article_id is None) == (podcast_episode_id is None):
            raise ValueError("give exactly one of article_id and podcast_episode_id")
        threads: list[dict[str, Any]] = self.get_json(
            "/api/comments", {"a_id": article_id, "p_id": podcast_episode_id}
        )
        return threads

    def comment(self, id_code: str) -> Comment:
        return Comment.from_json(
            self.get_json(f"/api/comments/{id_code}", route="/api/comments/{id}")
        )

    # -- the caller ----------------------------------------------------------------------

    def followed_tags(self) -> list[FollowedTag]:
        self._require_key("Reading followed tags")
        return [FollowedTag.from_json(t) for t in self.get_json("/api/follows/tags")]

    def followers(
        self, *, page: int | None = None, per_page: int | None = None, sort: str | None = None
    ) -> list[Follower]:
        self._require_key("Reading followers")
        data = self.get_json(
            "/api/followers/users", {"page": page, "per_page": per_page, "sort": sort}
        )
        return [Follower.from_json(f) for f in data]

    def readinglist(
        self, *, page: int | None = None, per_page: int | None = None
    ) -> list[ReadingListItem]:
        self._require_key("Reading the reading list")
        data = self.get_json("/api/readinglist", {"page": page, "per_page": per_page})
        return [ReadingListItem.from_json(i) for i in data]

    def iter_readinglist_json(
        self, per_page: int = READINGLIST_MAX_PER_PAGE
    ) -> Iterator[dict[str, Any]]:
        """Every reading-list item, all pages, as the API returns them."""
        self._require_key("Reading the reading list")
        yield from self._pages("/api/readinglist", min(per_page, READINGLIST_MAX_PER_PAGE))

    def me(self) -> User:
        self._require_key("Reading your profile")
        return User.from_json(self.get_json("/api/users/me"))

    # -- listings ----------------------------------------------------------------------

    def listings(
        self, *, page: int | None = None, per_page: int | None = None, category: str | None = None
    ) -> list[Listing]:
        data = self.get_json(
            "/api/listings", {"page": page, "per_page": per_page, "category": category}
        )
        return [Listing.from_json(item) for item in data]

    def listings_by_category(
        self, category: str, *, page: int | None = None, per_page: int | None = None
    ) -> list[Listing]:
        data = self.get_json(
            f"/api/listings/category/{category}",
            {"page": page, "per_page": per_page},
            route="/api/listings/category/{category}",
        )
        return [Listing.from_json(item) for item in data]

    def listing(self, listing_id: int) -> Listing:
        return Listing.from_json(
            self.get_json(f"/api/listings/{listing_id}", route="/api/listings/{id}")
        )

    def create_listing(self, listing: dict[str, Any]) -> Listing:
        """POST /api/listings with `{"listing": {...}}`; `action: draft` keeps it unpublished."""
        self._require_key("Creating a listing")
        response = self.send("POST", "/api/listings", json={"listing": listing}, idempotent=False)
        return Listing.from_json(json_body(response))

    def update_listing(self, listing_id: int, listing: dict[str, Any]) -> dict[str, Any]:
        """PUT /api/listings/{id}: content fields, or `action` bump / publish / unpublish."""
        self._require_key("Updating a listing")
        listing_json: dict[str, Any] = json_body(
            self.send(
                "PUT",
                f"/api/listings/{listing_id}",
                json={"listing": listing},
                route="/api/listings/{id}",
            )
        )
        return listing_json

    # -- organisations, users, podcasts, tags, images -----------------------------------------

    def organization(self, username: str) -> Organization:
        return Organization.from_json(
            self.get_json(f"/api/organizations/{username}", route="/api/organizations/{username}")
        )

    def organization_id(self, ref: str | int) -> tuple[int, str]:
        """The id and username of an organisation named by its username or id: GET
        /api/organizations/{username} in the API's version 1 (`Accept:
        application/vnd.forem.api-v1+json`), whose answer carries the id (version 0's
        does not) and which takes an id in place of the username."""

        data = json_body(
            self.send(
                "GET",
                f"/api/organizations/{quote(str(ref), safe='')}",
                route="/api/organizations/{username}",
                headers={"Accept": API_V1},
            )
        )
        org_id = data.get("id") if isinstance(data, dict) else None
        username = data.get("username") if isinstance(data, dict) else None
        if isinstance(org_id, bool) or not isinstance(org_id, int) or not isinstance(username, str):
            raise ApiError(f"the API's answer about organisation {ref} has no id and username")
        return org_id, username

    def organization_users(
        self, username: str, *, page: int | None = None, per_page: int | None = None
    ) -> list[User]:
        data = self.get_json(
            f"/api/organizations/{username}/users",
            {"page": page, "per_page": per_page},
            route="/api/organizations/{username}/users",
        )
        return [User.from_json(u) for u in data]

    def organization_listings(
        self,
        username: str,
        *,
        page: int | None = None,
        per_page: int | None = None,
        category: str | None = None,
    ) -> list[Listing]:
        data = self.get_json(
            f"/api/organizations/{username}/listings",
            {"page": page, "per_page": per_page, "category": category},
            route="/api/organizations/{username}/listings",
        )
        return [Listing.from_json(item) for item in data]

    def organization_articles(
        self, username: str, *, page: int | None = None, per_page: int | None = None
    ) -> list[Article]:
        data = self.get_json(
            f"/api/organizations/{username}/articles",
            {"page": page, "per_page": per_page},
            route="/api/organizations/{username}/articles",
        )
        return [Article.from_json(a) for a in data]

    def podcast_episodes(
        self, *, page: int | None = None, per_page: int | None = None, username: str | None = None
    ) -> list[PodcastEpisode]:
        data = self.get_json(
            "/api/podcast_episodes", {"page": page, "per_page": per_page, "username": username}
        )
        return [PodcastEpisode.from_json(e) for e in data]

    def user(self, user_id: int | str) -> User:
        return User.from_json(self.get_json(f"/api/users/{user_id}", route="/api/users/{id}"))

    def user_by_username(self, username: str) -> User:
        return User.from_json(self.get_json("/api/users/by_username", {"url": username}))

    def invite_user(self, email: str, name: str | None = None) -> None:
        """POST /api/admin/users (super-admin key only)."""
        self._require_key("Inviting a user")
        self.send("POST", "/api/admin/users", json={"email": email, "name": name}, idempotent=False)

    def profile_image(self, username: str) -> ProfileImage:
        return ProfileImage.from_json(
            self.get_json(f"/api/profile_images/{username}", route="/api/profile_images/{username}")
        )

    def tags(self, *, page: int | None = None, per_page: int | None = None) -> list[Tag]:
        return [
            Tag.from_json(t)
            for t in self.get_json("/api/tags", {"page": page, "per_page": per_page})
        ]
