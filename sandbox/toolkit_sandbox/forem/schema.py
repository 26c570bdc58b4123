"""Interface A's SQLite tables, created by the store on first start.

Times are stored as fixed-width UTC strings with microseconds
(`2024-05-01T09:00:00.000000Z`) so that they sort as text and serialise to the API's
second-precision form by cutting the fraction. Booleans are 0/1 integers.
"""

from __future__ import annotations

# Bump when the tables change: a file database of another version is refused with a
# clear message instead of being misread (store.py).
SCHEMA_VERSION = "2"

DDL = """
CREATE TABLE IF NOT EXISTS users (
    id                 INTEGER PRIMARY KEY AUTOINCREMENT,
    username           TEXT NOT NULL UNIQUE,
    name               TEXT NOT NULL,
    email              TEXT,
    summary            TEXT,
    microblog_username TEXT,
    codehost_username  TEXT,
    website_url        TEXT,
    location           TEXT,
    role               TEXT NOT NULL DEFAULT 'user',   -- 'user' | 'super_admin'
    credits            INTEGER NOT NULL DEFAULT 0,
    created_at         TEXT NOT NULL
);

CREATE TABLE IF NOT EXISTS api_keys (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    user_id    INTEGER NOT NULL REFERENCES users(id),
    secret     TEXT NOT NULL UNIQUE,
    created_at TEXT NOT NULL
);

CREATE TABLE IF NOT EXISTS organizations (
    id                 INTEGER PRIMARY KEY AUTOINCREMENT,
    username           TEXT NOT NULL UNIQUE,   -- the org's slug, used in paths
    name               TEXT NOT NULL,
    summary            TEXT,
    microblog_username TEXT,
    codehost_username  TEXT,
    url                TEXT,
    location           TEXT,
    tech_stack         TEXT,
    tag_line           TEXT,
    story              TEXT,
    credits            INTEGER NOT NULL DEFAULT 0,
    created_at         TEXT NOT NULL
);

CREATE TABLE IF NOT EXISTS org_memberships (
    user_id         INTEGER NOT NULL REFERENCES users(id),
    organization_id INTEGER NOT NULL REFERENCES organizations(id),
    role            TEXT NOT NULL DEFAULT 'member',  -- 'admin' | 'member'
    PRIMARY KEY (user_id, organization_id)
);

-- A series; Forem calls it a collection and keeps the series name in `slug`.
CREATE TABLE IF NOT EXISTS collections (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    user_id    INTEGER NOT NULL REFERENCES users(id),
    slug       TEXT NOT NULL,
    created_at TEXT NOT NULL,
    UNIQUE (user_id, slug)
);

CREATE TABLE IF NOT EXISTS articles (
    id                     INTEGER PRIMARY KEY AUTOINCREMENT,
    user_id                INTEGER NOT NULL REFERENCES users(id),
    organization_id        INTEGER REFERENCES organizations(id),
    collection_id          INTEGER REFERENCES collections(id),
    title                  TEXT NOT NULL,
    slug                   TEXT NOT NULL,
    body_markdown          TEXT NOT NULL,
    body_html              TEXT NOT NULL,
    description            TEXT NOT NULL,
    main_image             TEXT,
    canonical_url          TEXT,
    cached_tag_list        TEXT NOT NULL DEFAULT '',
    published              INTEGER NOT NULL DEFAULT 0,
    featured               INTEGER NOT NULL DEFAULT 0,
    published_at           TEXT,
    created_at             TEXT NOT NULL,
    updated_at             TEXT NOT NULL,
    edited_at              TEXT,
    crossposted_at         TEXT,
    last_comment_at        TEXT NOT NULL,
    comments_count         INTEGER NOT NULL DEFAULT 0,
    public_reactions_count INTEGER NOT NULL DEFAULT 0,
    page_views_count       INTEGER NOT NULL DEFAULT 0,
    reading_time_minutes   INTEGER NOT NULL DEFAULT 0,
    hotness_score          INTEGER NOT NULL DEFAULT 0,
    video_source_url       TEXT,
    video_thumbnail_url    TEXT,
    video_duration_seconds INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS articles_user ON articles (user_id, published);
CREATE INDEX IF NOT EXISTS articles_org ON articles (organization_id);
CREATE INDEX IF NOT EXISTS articles_feed ON articles (published, featured, hotness_score);
CREATE INDEX IF NOT EXISTS articles_canonical ON articles (canonical_url);

CREATE TABLE IF NOT EXISTS tags (
    id             INTEGER PRIMARY KEY AUTOINCREMENT,
    name           TEXT NOT NULL UNIQUE,
    bg_color_hex   TEXT NOT NULL,
    text_color_hex TEXT NOT NULL
);

-- One row per (article, tag): the filters of GET /api/articles query it.
CREATE TABLE IF NOT EXISTS taggings (
    article_id INTEGER NOT NULL REFERENCES articles(id),
    tag_name   TEXT NOT NULL,
    PRIMARY KEY (article_id, tag_name)
);
CREATE INDEX IF NOT EXISTS taggings_tag ON taggings (tag_name);

CREATE TABLE IF NOT EXISTS comments (
    id               INTEGER PRIMARY KEY AUTOINCREMENT,
    commentable_type TEXT NOT NULL,           -- 'Article' | 'PodcastEpisode'
    commentable_id   INTEGER NOT NULL,
    parent_id        INTEGER REFERENCES comments(id),
    user_id          INTEGER NOT NULL REFERENCES users(id),
    body_markdown    TEXT NOT NULL DEFAULT '',
    body_html        TEXT NOT NULL,
    deleted          INTEGER NOT NULL DEFAULT 0,
    created_at       TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS comments_target ON comments (commentable_type, commentable_id);

CREATE TABLE IF NOT EXISTS listings (
    id                      INTEGER PRIMARY KEY AUTOINCREMENT,
    user_id                 INTEGER NOT NULL REFERENCES users(id),
    organization_id         INTEGER REFERENCES organizations(id),
    title                   TEXT NOT NULL,
    slug                    TEXT NOT NULL,
    body_markdown           TEXT NOT NULL,
    processed_html          TEXT NOT NULL,
    category                TEXT NOT NULL,
    cached_tag_list         TEXT NOT NULL DEFAULT '',
    published               INTEGER NOT NULL DEFAULT 0,
    bumped_at               TEXT,
    originally_published_at TEXT,
    expires_at              TEXT,
    location                TEXT,
    contact_via_connect     INTEGER NOT NULL DEFAULT 0,
    created_at              TEXT NOT NULL,
    updated_at              TEXT NOT NULL
);

CREATE TABLE IF NOT EXISTS podcasts (
    id        INTEGER PRIMARY KEY AUTOINCREMENT,
    title     TEXT NOT NULL,
    slug      TEXT NOT NULL UNIQUE,
    image_url TEXT NOT NULL,
    published INTEGER NOT NULL DEFAULT 1
);

CREATE TABLE IF NOT EXISTS podcast_episodes (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    podcast_id   INTEGER NOT NULL REFERENCES podcasts(id),
    title        TEXT NOT NULL,
    slug         TEXT NOT NULL,
    image_url    TEXT,
    reachable    INTEGER NOT NULL DEFAULT 1,  -- "active" in the API's words
    published_at TEXT NOT NULL
);

CREATE TABLE IF NOT EXISTS user_follows (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    follower_id INTEGER NOT NULL REFERENCES users(id),
    followed_id INTEGER NOT NULL REFERENCES users(id),
    created_at  TEXT NOT NULL
);

CREATE TABLE IF NOT EXISTS tag_follows (
    id      INTEGER PRIMARY KEY AUTOINCREMENT,
    user_id INTEGER NOT NULL REFERENCES users(id),
    tag_id  INTEGER NOT NULL REFERENCES tags(id),
    points  REAL NOT NULL DEFAULT 1.0
);

CREATE TABLE IF NOT EXISTS reading_list (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    user_id    INTEGER NOT NULL REFERENCES users(id),
    article_id INTEGER NOT NULL REFERENCES articles(id),
    status     TEXT NOT NULL DEFAULT 'valid',
    created_at TEXT NOT NULL,
    UNIQUE (user_id, article_id)
);

-- POST /api/admin/users: one row per address invited, sent again on a repeat.
CREATE TABLE IF NOT EXISTS invitations (
    id                    INTEGER PRIMARY KEY AUTOINCREMENT,
    email                 TEXT NOT NULL UNIQUE,
    name                  TEXT,
    custom_invite_subject TEXT,
    custom_invite_message TEXT,
    custom_invite_footnote TEXT,
    invited_by            INTEGER NOT NULL REFERENCES users(id),
    created_at            TEXT NOT NULL,
    sent_at               TEXT NOT NULL,
    sent_count            INTEGER NOT NULL DEFAULT 1
);
"""

# Every data table, children before parents, so a reset can empty them in order.
DATA_TABLES = (
    "invitations",
    "reading_list",
    "tag_follows",
    "user_follows",
    "podcast_episodes",
    "podcasts",
    "listings",
    "comments",
    "taggings",
    "tags",
    "articles",
    "collections",
    "org_memberships",
    "organizations",
    "api_keys",
    "users",
)
