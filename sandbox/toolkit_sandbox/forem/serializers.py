"""JSON shapes of interface A, built from database rows.

Field names follow the seed spec: `microblog_username` / `codehost_username` where
the real service sends `twitter_username` / `github_username`. Which form `tag_list`
and `tags` take depends on the endpoint (seed spec, "Conventions"):

* article lists: `tag_list` array, `tags` string;
* single article (show, create, update): `tag_list` string, `tags` array;
* the caller's own lists (`/articles/me*`): `tag_list` array only;
* listings: `tag_list` string, `tags` array.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from toolkit_sandbox.forem.text import duration_text, iso, joined_at, listing_time, readable_date


def _with_owner(table: str, alias: str) -> str:
    """Rows of `table` with their author and organisation, so one row serialises
    without further queries (the columns `shared_user`/`shared_organization` read)."""
    return f"""
SELECT {alias}.*,
       u.username AS u_username, u.name AS u_name, u.microblog_username AS u_microblog,
       u.codehost_username AS u_codehost, u.website_url AS u_website,
       o.username AS o_username, o.name AS o_name
FROM {table} {alias}
JOIN users u ON u.id = {alias}.user_id
LEFT JOIN organizations o ON o.id = {alias}.organization_id
"""


# The queries every article and every listing endpoint starts from.
ARTICLE_SELECT = _with_owner("articles", "a")
LISTING_SELECT = _with_owner("listings", "l")

# Listing categories and their ids (`listing_category_id`). The real ids are the rows of
# a table on each Forem; these are the sandbox's, fixed.
CATEGORY_IDS = {
    slug: number
    for number, slug in enumerate(
        (
            "cfp",
            "forhire",
            "collabs",
            "education",
            "jobs",
            "mentors",
            "products",
            "mentees",
            "forsale",
            "events",
            "misc",
        ),
        start=1,
    )
}

# Tags that show as a flare on an article, in Forem's order of precedence.
FLARE_TAGS = {
    "explainlikeimfive": ("#F3F3F3", "#000000"),
    "ama": ("#F3F3F3", "#000000"),
    "techtalks": ("#F3F3F3", "#000000"),
    "help": ("#FF3232", "#FFFFFF"),
    "news": ("#111111", "#FFFFFF"),
    "healthydebate": ("#F3F3F3", "#000000"),
    "showdev": ("#091B47", "#B2FFE1"),
    "challenge": ("#F3F3F3", "#000000"),
    "anonymous": ("#F3F3F3", "#000000"),
    "hiring": ("#F3F3F3", "#000000"),
    "discuss": ("#000000", "#FFFFFF"),
    "watercooler": ("#D0ECFF", "#000000"),
}


def image_url(base: str, kind: str, ident: int | str, size: int = 640) -> str:
    """Images are served by the sandbox itself, so pages built from its data work offline."""
    return f"{base}/images/{kind}/{ident}-{size}.png"


def tag_list(row: sqlite3.Row) -> list[str]:
    cached = row["cached_tag_list"]
    return [name.strip() for name in cached.split(",")] if cached else []


def owner(row: sqlite3.Row) -> str:
    """The first segment of an article's path: its organisation, else its author."""
    name: str = row["o_username"] or row["u_username"]
    return name


def article_path(row: sqlite3.Row) -> str:
    return f"/{owner(row)}/{row['slug']}"


def shared_user(row: sqlite3.Row, base: str, *, with_id: bool = False) -> dict[str, Any]:
    """The author block (`SharedUser`) from a row made by ARTICLE_SELECT/LISTING_SELECT."""
    data: dict[str, Any] = {"user_id": row["user_id"]} if with_id else {}
    data.update(
        name=row["u_name"],
        username=row["u_username"],
        microblog_username=row["u_microblog"],
        codehost_username=row["u_codehost"],
        website_url=row["u_website"],
        profile_image=image_url(base, "users", row["user_id"], 640),
        profile_image_90=image_url(base, "users", row["user_id"], 90),
    )
    return data


def shared_organization(row: sqlite3.Row, base: str) -> dict[str, Any] | None:
    if row["organization_id"] is None:
        return None
    return {
        "name": row["o_name"],
        "username": row["o_username"],
        "slug": row["o_username"],
        "profile_image": image_url(base, "organizations", row["organization_id"], 640),
        "profile_image_90": image_url(base, "organizations", row["organization_id"], 90),
    }


def flare_tag(tags: list[str]) -> dict[str, str] | None:
    for name in FLARE_TAGS:
        if name in tags:
            bg, fg = FLARE_TAGS[name]
            return {"name": name, "bg_color_hex": bg, "text_color_hex": fg}
    return None


def _published_timestamp(row: sqlite3.Row) -> str:
    """Crossposted or published time; `""` while the article is unpublished."""
    if not row["published"]:
        return ""
    return iso(row["crossposted_at"] or row["published_at"]) or ""


def _common(row: sqlite3.Row, base: str) -> dict[str, Any]:
    path = article_path(row)
    url = base + path
    return {
        "type_of": "article",
        "id": row["id"],
        "title": row["title"],
        "description": row["description"],
        "cover_image": row["main_image"],
        "readable_publish_date": readable_date(row["crossposted_at"] or row["published_at"]),
        "social_image": row["main_image"] or image_url(base, "social", row["id"], 1000),
        "slug": row["slug"],
        "path": path,
        "url": url,
        "canonical_url": row["canonical_url"] or url,
        "comments_count": row["comments_count"],
        "positive_reactions_count": row["public_reactions_count"],
        "public_reactions_count": row["public_reactions_count"],
        "collection_id": row["collection_id"],
        "created_at": iso(row["created_at"]),
        "edited_at": iso(row["edited_at"]),
        "crossposted_at": iso(row["crossposted_at"]),
        "published_at": iso(row["published_at"]),
        "last_comment_at": iso(row["last_comment_at"]),
        "published_timestamp": _published_timestamp(row),
        "reading_time_minutes": row["reading_time_minutes"],
    }


def _tail(
    data: dict[str, Any], row: sqlite3.Row, base: str, tags: list[str], *, with_id: bool = False
) -> dict[str, Any]:
    data["user"] = shared_user(row, base, with_id=with_id)
    organization = shared_organization(row, base)
    if organization is not None:
        data["organization"] = organization
    flare = flare_tag(tags)
    if flare is not None:
        data["flare_tag"] = flare
    return data


def article_index(row: sqlite3.Row, base: str) -> dict[str, Any]:
    """An article in a list: `tag_list` array, `tags` string."""
    tags = tag_list(row)
    data = _common(row, base)
    data["tag_list"] = tags
    data["tags"] = ", ".join(tags)
    return _tail(data, row, base, tags)


def article_show(row: sqlite3.Row, base: str) -> dict[str, Any]:
    """One article (show, create, update): `tag_list` string, `tags` array, bodies."""
    tags = tag_list(row)
    data = _common(row, base)
    data["tag_list"] = ", ".join(tags)
    data["tags"] = tags
    data["body_html"] = row["body_html"]
    data["body_markdown"] = row["body_markdown"]
    return _tail(data, row, base, tags)


def article_me(row: sqlite3.Row, base: str) -> dict[str, Any]:
    """An article of the caller's own lists: `tag_list` array only, `published`, views."""
    tags = tag_list(row)
    path = article_path(row)
    url = base + path
    data = {
        "type_of": "article",
        "id": row["id"],
        "title": row["title"],
        "description": row["description"],
        "cover_image": row["main_image"],
        "published": bool(row["published"]),
        "published_at": iso(row["published_at"]),
        "tag_list": tags,
        "slug": row["slug"],
        "path": path,
        "url": url,
        "canonical_url": row["canonical_url"] or url,
        "comments_count": row["comments_count"],
        "positive_reactions_count": row["public_reactions_count"],
        "public_reactions_count": row["public_reactions_count"],
        "page_views_count": row["page_views_count"],
        "published_timestamp": _published_timestamp(row),
        "body_markdown": row["body_markdown"],
        "reading_time_minutes": row["reading_time_minutes"],
    }
    return _tail(data, row, base, tags, with_id=True)


def video_article(row: sqlite3.Row, base: str) -> dict[str, Any]:
    return {
        "type_of": "video_article",
        "id": row["id"],
        "path": article_path(row),
        "cloudinary_video_url": row["video_thumbnail_url"],
        "title": row["title"],
        "user_id": row["user_id"],
        "video_duration_in_minutes": duration_text(row["video_duration_seconds"]),
        "video_source_url": row["video_source_url"],
        "user": {"name": row["u_name"]},
    }


def user(row: sqlite3.Row, base: str) -> dict[str, Any]:
    return {
        "type_of": "user",
        "id": row["id"],
        "username": row["username"],
        "name": row["name"],
        "summary": row["summary"],
        "microblog_username": row["microblog_username"],
        "codehost_username": row["codehost_username"],
        "website_url": row["website_url"],
        "location": row["location"],
        "joined_at": joined_at(row["created_at"]),
        "profile_image": image_url(base, "users", row["id"], 320),
    }


def organization(row: sqlite3.Row, base: str) -> dict[str, Any]:
    return {
        "type_of": "organization",
        "username": row["username"],
        "name": row["name"],
        "summary": row["summary"],
        "microblog_username": row["microblog_username"],
        "codehost_username": row["codehost_username"],
        "url": row["url"],
        "location": row["location"],
        "tech_stack": row["tech_stack"],
        "tag_line": row["tag_line"],
        "story": row["story"],
        "joined_at": iso(row["created_at"]),
        "profile_image": image_url(base, "organizations", row["id"], 640),
    }


def listing(row: sqlite3.Row, base: str, *, with_created_at: bool = True) -> dict[str, Any]:
    tags = tag_list(row)
    data: dict[str, Any] = {"type_of": "listing", "id": row["id"]}
    if with_created_at:
        data["created_at"] = listing_time(row["created_at"])
    data.update(
        title=row["title"],
        slug=row["slug"],
        body_markdown=row["body_markdown"],
        tag_list=", ".join(tags),
        tags=tags,
        category=row["category"],
        # Forem: app/views/api/v0/shared/_listing.json.jbuilder (not in the OpenAPI).
        listing_category_id=CATEGORY_IDS.get(row["category"]),
        processed_html=row["processed_html"],
        published=bool(row["published"]),
        user=shared_user(row, base),
    )
    organization_data = shared_organization(row, base)
    if organization_data is not None:
        data["organization"] = organization_data
    return data
