"""Deterministic seed data: the same seed always gives the same rows.

The rows are built once per process - through the same write rules the API uses
(slugs, rendering, reading time...) but with a fixed clock and a fixed random
generator - into a scratch in-memory database, then kept as plain tuples. Loading the
seed (first start, `POST /__sandbox/reset`) is then a handful of `executemany` calls.

Accounts: `demo` (the demo user), `sam` (a second user) and `admin` (a super-admin)
have API keys; their keys are derived from their usernames, so they never change.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import random
import sqlite3
from functools import lru_cache
from typing import Any

from toolkit_sandbox.forem import text
from toolkit_sandbox.forem.schema import DATA_TABLES, DDL
from toolkit_sandbox.forem.seed_data import (
    ARTICLES,
    BASE_TIME,
    COMMENTS,
    EPISODES,
    LISTINGS,
    ORGANIZATIONS,
    PARAGRAPHS,
    PODCASTS,
    READING_LIST,
    TAG_FOLLOWS,
    USER_FOLLOWS,
    USERS,
    SeedArticle,
)

DEMO_USERNAME = "demo"
SECOND_USERNAME = "sam"
ADMIN_USERNAME = "admin"
LISTING_COSTS = {"jobs": 25, "products": 5}  # every other category costs 1


def api_key_for(username: str) -> str:
    """The fixed API key of a seeded account (fake, so printing it is fine)."""
    return hashlib.sha256(f"toolkit-sandbox:{username}".encode()).hexdigest()[:24]


def at(days: float, hours: float = 0) -> str:
    return text.stored(BASE_TIME + dt.timedelta(days=days, hours=hours))


def _body(article: SeedArticle, rng: random.Random) -> str:
    count = 2 + article["id"] % 4
    start = article["id"] % len(PARAGRAPHS)
    intro = f"This post is about {article['title'][0].lower()}{article['title'][1:]}."
    paragraphs = [intro] + [PARAGRAPHS[(start + i) % len(PARAGRAPHS)] for i in range(count)]
    content = "\n\n".join(paragraphs) + "\n"
    if not article.get("fm"):
        return content
    lines = ["---", f"title: {article['title']}", f"published: {str(article['published']).lower()}"]
    if article.get("description"):
        lines.append(f"description: {article['description']}")
    if article["tags"]:
        lines.append(f"tags: {', '.join(article['tags'])}")
    if article.get("canonical_url"):
        lines.append(f"canonical_url: {article['canonical_url']}")
    if article.get("series"):
        lines.append(f"series: {article['series']}")
    return "\n".join(lines) + "\n---\n\n" + content


def _accounts(db: sqlite3.Connection) -> None:
    for user in USERS:
        db.execute(
            "INSERT INTO users (id, username, name, email, summary, microblog_username, "
            "codehost_username, website_url, location, role, credits, created_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                user["id"],
                user["username"],
                user["name"],
                user["email"],
                user["summary"],
                user["microblog_username"],
                user["codehost_username"],
                user["website_url"],
                user["location"],
                user["role"],
                user["credits"],
                at(user["joined"]),
            ),
        )
        if user["key"]:
            db.execute(
                "INSERT INTO api_keys (user_id, secret, created_at) VALUES (?, ?, ?)",
                (user["id"], api_key_for(user["username"]), at(user["joined"])),
            )
    for org in ORGANIZATIONS:
        db.execute(
            "INSERT INTO organizations (id, username, name, summary, microblog_username, "
            "codehost_username, url, location, tech_stack, tag_line, story, credits, created_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                org["id"],
                org["username"],
                org["name"],
                org["summary"],
                org["microblog_username"],
                org["codehost_username"],
                org["url"],
                org["location"],
                org["tech_stack"],
                org["tag_line"],
                org["story"],
                org["credits"],
                at(org["joined"]),
            ),
        )
        for user_id, role in org["members"]:
            db.execute(
                "INSERT INTO org_memberships (user_id, organization_id, role) VALUES (?, ?, ?)",
                (user_id, org["id"], role),
            )


def _articles(db: sqlite3.Connection, rng: random.Random) -> None:
    from toolkit_sandbox.forem.article_writes import Author, save_article

    names = {user["id"]: user["name"] for user in USERS}
    for article in ARTICLES:
        moment = BASE_TIME + dt.timedelta(days=article["day"])
        params: dict[str, Any] = {
            "title": article["title"],
            "body_markdown": _body(article, rng),
            "published": article["published"],
            "tags": article["tags"],
        }
        for key in ("series", "description", "canonical_url"):
            if article.get(key) and not article.get("fm"):
                params[key] = article[key]
        if article.get("org"):
            params["organization_id"] = article["org"]
        new_id = save_article(
            db, rng, Author(article["user"], names[article["user"]]), params, moment=moment
        )
        video = article.get("video")
        db.execute(
            "UPDATE articles SET id = ?, public_reactions_count = ?, page_views_count = ?, "
            "hotness_score = ?, featured = ?, edited_at = ?, video_source_url = ?, "
            "video_thumbnail_url = ?, video_duration_seconds = ? WHERE id = ?",
            (
                article["id"],
                article.get("reactions", 0),
                article.get("views", 0),
                article.get("hotness", 0),
                int(article.get("featured", True)),
                at(article["edited"]) if article.get("edited") else None,
                f"https://media.example.com/videos/{article['id']}/index.m3u8" if video else None,
                f"https://media.example.com/videos/{article['id']}/thumb.png" if video else None,
                video or 0,
                new_id,
            ),
        )
        db.execute(
            "UPDATE taggings SET article_id = ? WHERE article_id = ?", (article["id"], new_id)
        )


def _comments(db: sqlite3.Connection) -> None:
    for ident, (kind, target), parent, user_id, day, hours, markdown in COMMENTS:
        created = at(day, hours)
        db.execute(
            "INSERT INTO comments (id, commentable_type, commentable_id, parent_id, user_id, "
            "body_markdown, body_html, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (
                ident,
                kind,
                target,
                parent,
                user_id,
                markdown,
                text.render_comment(markdown),
                created,
            ),
        )
        if kind == "Article":
            db.execute(
                "UPDATE articles SET comments_count = comments_count + 1, "
                "last_comment_at = MAX(last_comment_at, ?) WHERE id = ?",
                (created, target),
            )


def _listings(db: sqlite3.Connection, rng: random.Random) -> None:
    for ident, user_id, org_id, category, title, tags, published, bumped, created in LISTINGS:
        body = f"{title}. Details and contact on the listing page.\n\nPosted in **{category}**."
        db.execute(
            "INSERT INTO listings (id, user_id, organization_id, title, slug, body_markdown, "
            "processed_html, category, cached_tag_list, published, bumped_at, "
            "originally_published_at, created_at, updated_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                ident,
                user_id,
                org_id,
                title,
                text.slug_for(title, rng),
                body,
                text.render_markdown(body),
                category,
                ", ".join(tags),
                int(published),
                at(bumped) if bumped is not None else None,
                at(bumped) if bumped is not None else None,
                at(created),
                at(created),
            ),
        )


def _community(db: sqlite3.Connection) -> None:
    for podcast in PODCASTS:
        db.execute(
            "INSERT INTO podcasts (id, title, slug, image_url, published) VALUES (?, ?, ?, ?, ?)",
            (
                podcast["id"],
                podcast["title"],
                podcast["slug"],
                f"https://media.example.com/podcasts/{podcast['slug']}.png",
                int(podcast["published"]),
            ),
        )
    for ident, podcast_id, title, day, active in EPISODES:
        db.execute(
            "INSERT INTO podcast_episodes (id, podcast_id, title, slug, image_url, reachable, "
            "published_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
            (ident, podcast_id, title, text.parameterize(title), None, int(active), at(day)),
        )
    for follower, followed, day in USER_FOLLOWS:
        db.execute(
            "INSERT INTO user_follows (follower_id, followed_id, created_at) VALUES (?, ?, ?)",
            (follower, followed, at(day)),
        )
    for user_id, tag, points in TAG_FOLLOWS:
        db.execute(
            "INSERT INTO tag_follows (user_id, tag_id, points) "
            "SELECT ?, id, ? FROM tags WHERE name = ?",
            (user_id, points, tag),
        )
    for user_id, article_id, day in READING_LIST:
        db.execute(
            "INSERT INTO reading_list (user_id, article_id, status, created_at) "
            "VALUES (?, ?, 'valid', ?)",
            (user_id, article_id, at(day)),
        )


# A table's seed: its name, its columns and its rows.
SeedTable = tuple[str, tuple[str, ...], tuple[tuple[Any, ...], ...]]


@lru_cache(maxsize=2)
def _rows(content: bool) -> tuple[SeedTable, ...]:
    """Build the seed once in a scratch database; return (table, columns, rows) triples."""
    scratch = sqlite3.connect(":memory:")
    scratch.row_factory = sqlite3.Row
    try:
        scratch.executescript(DDL)
        rng = random.Random(20240501)
        _accounts(scratch)
        if content:
            _articles(scratch, rng)
            _comments(scratch)
            _listings(scratch, rng)
            _community(scratch)
        dump = []
        for table in reversed(DATA_TABLES):  # parents first
            cursor = scratch.execute(f"SELECT * FROM {table} ORDER BY rowid")
            columns = tuple(description[0] for description in cursor.description)
            rows = tuple(tuple(row) for row in cursor.fetchall())
            if rows:
                dump.append((table, columns, rows))
        return tuple(dump)
    finally:
        scratch.close()


def load(db: sqlite3.Connection, content: bool = True) -> None:
    """Insert the seed into an empty database (inside the caller's transaction).
    `content=False` gives the accounts and the organisation only (`--no-seed`)."""
    for table, columns, rows in _rows(content):
        marks = ", ".join("?" for _ in columns)
        db.executemany(
            f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({marks})",
            rows,
        )


def accounts(db: sqlite3.Connection) -> list[dict[str, str]]:
    """The accounts with API keys, in id order: `[{"username", "api_key", "role"}]`."""
    rows = db.execute(
        "SELECT u.username, k.secret, u.role FROM api_keys k JOIN users u ON u.id = k.user_id "
        "ORDER BY u.id, k.id"
    ).fetchall()
    return [{"username": row[0], "api_key": row[1], "role": row[2]} for row in rows]


def listing_cost(category: str) -> int:
    return LISTING_COSTS.get(category, 1)
