"""Typed records of the publishing API, read tolerantly.

The API sends tags as `tag_list` or `tags`, each sometimes an array and sometimes a
comma-separated string depending on the endpoint; and dev.to names two profile fields
`twitter_username`/`github_username` where the seed spec (and the sandbox) says
`microblog_username`/`codehost_username`. The records here are pydantic models whose
field aliases accept every form and expose the seed's names: a field that must be text
reads anything else a server sends as empty (or None), an id must be a number, and fields
the records do not name are ignored. Each record keeps the JSON it was read from in `raw`,
for the mirror. `from_json` is each record's one reader.
"""

from __future__ import annotations

from typing import Annotated, Any, Self

from pydantic import (
    AliasChoices,
    AliasPath,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    model_validator,
)


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


def _text_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _int_or_none(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _number_or_zero(value: Any) -> int:
    return int(value or 0)


def _object_or_empty(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _object_or_none(value: Any) -> dict[str, Any] | None:
    return value if isinstance(value, dict) else None


Text = Annotated[str, BeforeValidator(text_of)]
OptionalText = Annotated[str | None, BeforeValidator(_text_or_none)]
Id = Annotated[int, BeforeValidator(int)]  # required: a record without a number is refused
Count = Annotated[int, BeforeValidator(_number_or_zero)]  # missing, null or 0: 0
Raw = Annotated[dict[str, Any], Field(default_factory=dict, repr=False)]


class ForemRecord(BaseModel):
    """A record of the API: frozen, unknown fields ignored, read by `from_json`."""

    model_config = ConfigDict(frozen=True, extra="ignore", populate_by_name=True)

    @classmethod
    def from_json(cls, data: dict[str, Any] | None) -> Self:
        return cls.model_validate(data or {})

    @model_validator(mode="before")
    @classmethod
    def _read(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        prepared = cls.prepared(data)
        return {**prepared, "raw": data} if "raw" in cls.model_fields else prepared

    @classmethod
    def prepared(cls, data: dict[str, Any]) -> dict[str, Any]:
        """The fields read from more than one key of `data` (tags, published)."""
        return data


# The seed's neutral names, read under dev.to's names too (the seed's wins when both come).
MicroblogName = Annotated[
    OptionalText, Field(validation_alias=AliasChoices("microblog_username", "twitter_username"))
]
CodehostName = Annotated[
    OptionalText, Field(validation_alias=AliasChoices("codehost_username", "github_username"))
]


class UserRef(ForemRecord):
    name: Text = ""
    username: Text = ""
    microblog_username: MicroblogName = None
    codehost_username: CodehostName = None
    website_url: OptionalText = None
    user_id: Annotated[int | None, BeforeValidator(_int_or_none)] = None


class Article(ForemRecord):
    """An article from any endpoint; fields an endpoint does not send are None."""

    id: Id
    title: Text = ""
    slug: Text = ""
    path: Text = ""
    tags: list[str] = Field(default_factory=list)
    url: OptionalText = None
    canonical_url: OptionalText = None
    description: OptionalText = None
    published: bool | None = None
    published_at: OptionalText = None
    edited_at: OptionalText = None
    created_at: OptionalText = None
    comments_count: Count = 0
    body_markdown: OptionalText = None
    body_html: OptionalText = None
    cover_image: OptionalText = None
    user: Annotated[UserRef | None, BeforeValidator(_object_or_none)] = None
    # The username of the organisation the article is in (None: none).
    organization: OptionalText = None
    raw: Raw

    @classmethod
    def prepared(cls, data: dict[str, Any]) -> dict[str, Any]:
        org = data.get("organization")
        data = {**data, "organization": org.get("username") if isinstance(org, dict) else None}
        published = data.get("published")
        if published is None and "published_at" in data:
            published = bool(data.get("published_at"))
        elif not isinstance(published, bool):
            published = None
        return {**data, "tags": read_tags(data), "published": published}


class Comment(ForemRecord):
    id_code: Annotated[str, BeforeValidator(str)] = ""
    created_at: Text = ""
    body_html: Text = ""
    user: Annotated[UserRef, BeforeValidator(_object_or_empty)] = Field(
        default_factory=lambda: UserRef.from_json(None)
    )
    children: Annotated[list[Comment], BeforeValidator(lambda value: value or [])] = Field(
        default_factory=list
    )
    raw: Raw


class Listing(ForemRecord):
    id: Id
    title: Text = ""
    slug: Text = ""
    category: Text = ""
    published: Annotated[bool, BeforeValidator(bool)] = False
    tags: list[str] = Field(default_factory=list)
    body_markdown: Text = ""
    created_at: OptionalText = None
    raw: Raw

    @classmethod
    def prepared(cls, data: dict[str, Any]) -> dict[str, Any]:
        return {**data, "tags": read_tags(data)}


class Profile(ForemRecord):
    """What a user's and an organization's profiles both have."""

    username: Text = ""
    name: Text = ""
    summary: OptionalText = None
    joined_at: OptionalText = None
    microblog_username: MicroblogName = None
    codehost_username: CodehostName = None
    raw: Raw


class User(Profile):
    id: Count = 0
    location: OptionalText = None
    website_url: OptionalText = None


class Organization(Profile):
    pass


class ReadingListItem(ForemRecord):
    id: Id
    status: Text = ""
    created_at: Text = ""
    article: Annotated[Article, BeforeValidator(lambda value: value or {"id": 0})] = Field(
        default_factory=lambda: Article.from_json({"id": 0})
    )
    raw: Raw


class PodcastEpisode(ForemRecord):
    id: Id
    title: Text = ""
    path: Text = ""
    podcast_title: Text = Field("", validation_alias=AliasPath("podcast", "title"))
    podcast_slug: Text = Field("", validation_alias=AliasPath("podcast", "slug"))
    raw: Raw


class VideoArticle(ForemRecord):
    id: Id
    title: Text = ""
    path: Text = ""
    video_duration_in_minutes: Annotated[str, BeforeValidator(lambda value: str(value or ""))] = ""
    raw: Raw


class FollowedTag(ForemRecord):
    id: Id
    name: Text = ""
    points: Annotated[
        float, BeforeValidator(lambda value: value if isinstance(value, (int, float)) else 0)
    ] = 0


class Follower(ForemRecord):
    id: Id
    user_id: Count = 0
    name: Text = ""
    username: Text = ""
    path: Text = ""
    created_at: Text = ""


class Tag(ForemRecord):
    id: Id
    name: Text = ""
    bg_color_hex: OptionalText = None
    text_color_hex: OptionalText = None


class ProfileImage(ForemRecord):
    image_of: Text = ""
    profile_image: OptionalText = None
    profile_image_90: OptionalText = None
