"""Which front-matter key each field is read from, per generator, in order.

For every field the value comes from dev.to's own key first (`DEVTO`), then from the
generator's keys (`GENERATOR_KEYS[generator]`), then from `toolkit.toml` (the site's
address for `canonical_url`, `[source] adopted`, the time zone of a date). The article id
comes from `[source] id_key`, then the keys the writers' old tools kept (`ID_KEYS`).
`docs/sources.md` shows these tables.
"""

from __future__ import annotations

from functools import cache

# The fields a post's front matter gives, in the order `check -v` shows them.
FIELDS = (
    "title",
    "published",
    "date",
    "tags",
    "cover_image",
    "canonical_url",
    "series",
    "description",
    "article",
    "slug",
)

# dev.to's own keys: read first whatever the generator.
DEVTO: dict[str, tuple[str, ...]] = {
    "title": ("title",),
    "published": ("published",),
    "date": ("date",),
    "tags": ("tags",),
    "cover_image": ("cover_image",),
    "canonical_url": ("canonical_url",),
    "series": ("series",),
    "description": ("description",),
    "slug": ("slug",),
}

# Each generator's keys for a field, after dev.to's.
GENERATOR_KEYS: dict[str, dict[str, tuple[str, ...]]] = {
    "devto": {},
    "hugo": {
        "date": ("publishDate", "pubdate"),
        "cover_image": ("images", "image", "cover"),
        "canonical_url": ("canonical", "canonicalURL"),
        "description": ("summary",),
        "tags": ("keywords",),
    },
    "jekyll": {
        "cover_image": ("image",),
        "canonical_url": ("canonical",),
        "description": ("excerpt",),
    },
    "astro": {
        "date": ("pubDate", "pubDatetime", "publishDate", "publishedAt"),
        "cover_image": ("heroImage", "ogImage", "image", "cover"),
        "canonical_url": ("canonical", "canonicalURL"),
    },
    "eleventy": {
        "cover_image": ("image", "cover"),
        "canonical_url": ("canonical",),
    },
    "next": {
        "date": ("created", "publishedAt", "pubDate"),
        "cover_image": ("coverImage", "image", "cover", "ogImage"),
        "canonical_url": ("canonical", "canonicalUrl"),
        "description": ("excerpt", "summary"),
    },
}

# The key naming a post's page outright (its path on the site, or its address).
PAGE_KEYS: dict[str, tuple[str, ...]] = {
    "hugo": ("url",),
    "jekyll": ("permalink",),
    "eleventy": ("permalink",),
}

# The keys the writers' old cross-posting tools kept each post's article in.
ID_KEYS = ("id", "devtoId", "devto_id", "dev_to")
# `<key>: true` keeps a post off dev.to (besides `[source] skip_key`).
SKIP_KEYS = ("devtoSkip",)
# `<key>: true` is a draft of the writer's site: never sent.
DRAFT_KEYS = ("draft",)


@cache
def keys_for(generator: str, field: str) -> tuple[str, ...]:
    """The keys `field` is read from for `generator`, in order."""
    own = DEVTO.get(field, ())
    theirs = GENERATOR_KEYS.get(generator, {}).get(field, ())
    return own + tuple(key for key in theirs if key not in own)
