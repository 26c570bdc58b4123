"""Typed records of the publishing API, read tolerantly.

The API sends tags as `tag_list` or `tags`, each sometimes an array and sometimes a
comma-separated string depending on the endpoint; and dev.to names two profile fields
`twitter_username`/`github_username` where the seed spec (and the sandbox) says
`microblog_username`/`codehost_username`. Readers here accept every form and expose the
seed's names. Each record keeps the JSON it was read from in `raw`, for the mirror.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


def read_tags(record: dict[str, Any]) -> list[str]:
    """Tags from whichever of `tag_list` / `tags` is present, array or string."""
    for key in ("tag_list", "tags"):
        value = record.get(key)
        if isinstance(value, list):
            return [str(tag).strip() for tag in value if str(tag).strip()]
    for key in ("tag_list", "tags"):
        value = record.get(key)
        if isinstance(value, str):
            return [tag.strip() for tag in value.split(",") if tag.strip()]
    return []


def text_of(value: Any) -> str:
    """A field that must be text: anything else a server sends reads as empty."""
    return value if isinstance(value, str) else ""


@dataclass(frozen=True)
class UserRef:
    name: str
    username: str
    microblog_username: str | None = None
    codehost_username: str | None = None
    website_url: str | None = None
    user_id: int | None = None

    @classmethod
    def from_json(cls, data: dict[str, Any] | None) -> UserRef:
        data = data or {}
        return cls(
            name=data.get("name") or "",
            username=data.get("username") or "",
            microblog_username=data.get("microblog_username", data.get("twitter_username")),
            codehost_username=data.get("codehost_username", data.get("github_username")),
            website_url=data.get("website_url"),
            user_id=data.get("user_id"),
        )


@dataclass(frozen=True)
class Article:
    """An article from any endpoint; fields an endpoint does not send are None."""

    id: int
    title: str
    slug: str
    path: str
    tags: list[str]
    url: str | None = None
    canonical_url: str | None = None
    description: str | None = None
    published: bool | None = None
    published_at: str | None = None
    edited_at: str | None = None
    created_at: str | None = None
    comments_count: int = 0
    body_markdown: str | None = None
    body_html: str | None = None
    cover_image: str | None = None
    user: UserRef | None = None
    raw: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Article:
        published = data.get("published")
        if published is None and "published_at" in data:
            published = bool(data.get("published_at"))
        body = data.get("body_markdown")
        return cls(
            id=int(data["id"]),
            title=text_of(data.get("title")),
            slug=text_of(data.get("slug")),
            path=text_of(data.get("path")),
            tags=read_tags(data),
            url=data.get("url"),
            canonical_url=data.get("canonical_url"),
            description=data.get("description"),
            published=published,
            published_at=data.get("published_at"),
            edited_at=data.get("edited_at"),
            created_at=data.get("created_at"),
            comments_count=int(data.get("comments_count") or 0),
            body_markdown=body if isinstance(body, str) else None,
            body_html=data.get("body_html"),
            cover_image=data.get("cover_image"),
            user=UserRef.from_json(data["user"]) if isinstance(data.get("user"), dict) else None,
            raw=data,
        )


@dataclass(frozen=True)
class Comment:
    id_code: str
    created_at: str
    body_html: str
    user: UserRef
    children: list[Comment]
    raw: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Comment:
        return cls(
            id_code=str(data.get("id_code", "")),
            created_at=data.get("created_at") or "",
            body_html=data.get("body_html") or "",
            user=UserRef.from_json(data.get("user")),
            children=[cls.from_json(child) for child in data.get("children") or []],
            raw=data,
        )


@dataclass(frozen=True)
class Listing:
    id: int
    title: str
    slug: str
    category: str
    published: bool
    tags: list[str]
    body_markdown: str
    created_at: str | None
    raw: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Listing:
        return cls(
            id=int(data["id"]),
            title=data.get("title") or "",
            slug=data.get("slug") or "",
            category=data.get("category") or "",
            published=bool(data.get("published")),
            tags=read_tags(data),
            body_markdown=data.get("body_markdown") or "",
            created_at=data.get("created_at"),
            raw=data,
        )


@dataclass(frozen=True)
class User:
    id: int
    username: str
    name: str
    summary: str | None
    location: str | None
    website_url: str | None
    joined_at: str | None
    microblog_username: str | None
    codehost_username: str | None
    raw: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> User:
        ref = UserRef.from_json(data)
        return cls(
            id=int(data.get("id") or 0),
            username=ref.username,
            name=ref.name,
            summary=data.get("summary"),
            location=data.get("location"),
            website_url=data.get("website_url"),
            joined_at=data.get("joined_at"),
            microblog_username=ref.microblog_username,
            codehost_username=ref.codehost_username,
            raw=data,
        )


@dataclass(frozen=True)
class Organization:
    username: str
    name: str
    summary: str | None
    joined_at: str | None
    microblog_username: str | None
    codehost_username: str | None
    raw: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Organization:
        ref = UserRef.from_json(data)
        return cls(
            username=ref.username,
            name=ref.name,
            summary=data.get("summary"),
            joined_at=data.get("joined_at"),
            microblog_username=ref.microblog_username,
            codehost_username=ref.codehost_username,
            raw=data,
        )


@dataclass(frozen=True)
class ReadingListItem:
    id: int
    status: str
    created_at: str
    article: Article
    raw: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ReadingListItem:
        return cls(
            id=int(data["id"]),
            status=data.get("status") or "",
            created_at=data.get("created_at") or "",
            article=Article.from_json(data.get("article") or {"id": 0}),
            raw=data,
        )


@dataclass(frozen=True)
class PodcastEpisode:
    id: int
    title: str
    path: str
    podcast_title: str
    podcast_slug: str
    raw: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> PodcastEpisode:
        podcast = data.get("podcast") or {}
        return cls(
            id=int(data["id"]),
            title=data.get("title") or "",
            path=data.get("path") or "",
            podcast_title=podcast.get("title") or "",
            podcast_slug=podcast.get("slug") or "",
            raw=data,
        )


@dataclass(frozen=True)
class VideoArticle:
    id: int
    title: str
    path: str
    video_duration_in_minutes: str
    raw: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> VideoArticle:
        return cls(
            id=int(data["id"]),
            title=data.get("title") or "",
            path=data.get("path") or "",
            video_duration_in_minutes=str(data.get("video_duration_in_minutes") or ""),
            raw=data,
        )


@dataclass(frozen=True)
class FollowedTag:
    id: int
    name: str
    points: float

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> FollowedTag:
        return cls(id=int(data["id"]), name=data.get("name") or "", points=data.get("points") or 0)


@dataclass(frozen=True)
class Follower:
    id: int
    user_id: int
    name: str
    username: str
    path: str
    created_at: str

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Follower:
        return cls(
            id=int(data["id"]),
            user_id=int(data.get("user_id") or 0),
            name=data.get("name") or "",
            username=data.get("username") or "",
            path=data.get("path") or "",
            created_at=data.get("created_at") or "",
        )


@dataclass(frozen=True)
class Tag:
    id: int
    name: str
    bg_color_hex: str | None
    text_color_hex: str | None

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Tag:
        return cls(
            id=int(data["id"]),
            name=data.get("name") or "",
            bg_color_hex=data.get("bg_color_hex"),
            text_color_hex=data.get("text_color_hex"),
        )


@dataclass(frozen=True)
class ProfileImage:
    image_of: str
    profile_image: str | None
    profile_image_90: str | None

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ProfileImage:
        return cls(
            image_of=data.get("image_of") or "",
            profile_image=data.get("profile_image"),
            profile_image_90=data.get("profile_image_90"),
        )
