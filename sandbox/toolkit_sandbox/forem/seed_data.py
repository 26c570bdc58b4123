"""The seed, as data: who exists, what they wrote, who answered whom.

Times are offsets in days (and hours) from BASE_TIME, a fixed moment, so the same seed
always gives the same rows. seed.py turns this into database rows.
"""

from __future__ import annotations

import datetime as dt
from typing import NotRequired, TypedDict


class SeedUser(TypedDict):
    id: int
    username: str
    name: str
    role: str
    credits: int
    key: bool  # has an API key
    email: str
    summary: str | None
    microblog_username: str | None
    codehost_username: str | None
    website_url: str | None
    location: str | None
    joined: int


class SeedOrganization(TypedDict):
    id: int
    username: str
    name: str
    summary: str
    microblog_username: str
    codehost_username: str
    url: str
    location: str
    tech_stack: str
    tag_line: str
    story: str | None
    credits: int
    joined: int
    members: list[tuple[int, str]]  # (user id, role)


class SeedArticle(TypedDict):
    id: int
    user: int
    title: str
    tags: list[str]
    published: bool
    day: int
    org: NotRequired[int]
    series: NotRequired[str]
    description: NotRequired[str]
    canonical_url: NotRequired[str]
    fm: NotRequired[bool]  # metadata in a front matter block
    reactions: NotRequired[int]
    views: NotRequired[int]
    hotness: NotRequired[int]
    featured: NotRequired[bool]
    edited: NotRequired[int]
    video: NotRequired[int]  # seconds


class SeedPodcast(TypedDict):
    id: int
    title: str
    slug: str
    published: bool


BASE_TIME = dt.datetime(2024, 5, 1, 9, 0, tzinfo=dt.UTC)

# username, name, role, credits, has an API key, profile fields, joined (days from BASE)
USERS: list[SeedUser] = [
    dict(
        id=1,
        username="demo",
        name="Demo Writer",
        role="user",
        credits=10,
        key=True,
        email="demo@example.com",
        summary="Writes the toolkit's own guide, in git.",
        microblog_username="demo_writes",
        codehost_username="demo-writer",
        website_url="https://demo.example.com",
        location="Lisbon",
        joined=-900,
    ),
    dict(
        id=2,
        username="sam",
        name="Sam Rivera",
        role="user",
        credits=0,
        key=True,
        email="sam@example.com",
        summary="Markdown nerd.",
        microblog_username=None,
        codehost_username="samr",
        website_url=None,
        location="Toronto",
        joined=-700,
    ),
    dict(
        id=3,
        username="admin",
        name="Sandbox Admin",
        role="super_admin",
        credits=100,
        key=True,
        email="admin@example.com",
        summary="Runs this little community.",
        microblog_username="sandbox_admin",
        codehost_username=None,
        website_url="https://admin.example.com",
        location=None,
        joined=-1200,
    ),
    dict(
        id=4,
        username="lee",
        name="Lee Park",
        role="user",
        credits=3,
        key=False,
        email="lee@example.com",
        summary="Technical writer.",
        microblog_username="leepark",
        codehost_username="leepark",
        website_url=None,
        location="Seoul",
        joined=-500,
    ),
    dict(
        id=5,
        username="kim",
        name="Kim Osei",
        role="user",
        credits=0,
        key=False,
        email="kim@example.com",
        summary=None,
        microblog_username=None,
        codehost_username="kimosei",
        website_url="https://kim.example.com",
        location="Accra",
        joined=-300,
    ),
    dict(
        id=6,
        username="pat",
        name="Pat Quinn",
        role="user",
        credits=0,
        key=False,
        email="pat@example.com",
        summary="Reader.",
        microblog_username=None,
        codehost_username=None,
        website_url=None,
        location=None,
        joined=-100,
    ),
]

ORGANIZATIONS: list[SeedOrganization] = [
    dict(
        id=1,
        username="acme",
        name="Acme Docs",
        summary="Documentation that ships with the code.",
        microblog_username="acmedocs",
        codehost_username="acme-docs",
        url="https://acme.example.com",
        location="Remote",
        tech_stack="Python, Markdown, git",
        tag_line="Docs that ship",
        story=None,
        credits=30,
        joined=-1000,
        members=[(1, "admin"), (2, "member")],
    ),
]

# Articles: author, organisation, series, tags, state and counters. `fm` articles keep
# their metadata in a front matter block, as a post published by toolkit would.
ARTICLES: list[SeedArticle] = [
    dict(
        id=1001,
        user=1,
        title="Docs as code, the short version",
        tags=["docs", "writing", "discuss"],
        published=True,
        day=0,
        series="Docs as Code",
        reactions=42,
        views=1500,
        hotness=900,
        fm=True,
        description="Why the guide lives next to the code, and what that buys you.",
    ),
    dict(
        id=1002,
        user=1,
        title="Front matter that survives a round trip",
        tags=["docs", "python"],
        published=True,
        day=7,
        series="Docs as Code",
        reactions=27,
        views=820,
        hotness=700,
        fm=True,
    ),
    dict(
        id=1003,
        user=1,
        title="Keeping a changelog in git",
        tags=["git", "writing"],
        published=True,
        day=14,
        reactions=12,
        views=400,
        hotness=500,
        fm=True,
        canonical_url="https://demo.example.com/blog/keeping-a-changelog",
    ),
    dict(
        id=1004,
        user=1,
        org=1,
        title="Publishing docs from CI",
        tags=["devops", "docs"],
        published=True,
        day=20,
        reactions=30,
        views=610,
        hotness=650,
        edited=21,
    ),
    dict(
        id=1005,
        user=1,
        title="Notes on static sites",
        tags=["webdev"],
        published=False,
        day=25,
        fm=True,
    ),
    dict(id=1006, user=1, title="Untitled ideas", tags=[], published=False, day=26),
    dict(
        id=1007,
        user=2,
        title="A tour of Markdown tables",
        tags=["markdown", "tutorial"],
        published=True,
        day=3,
        series="Markdown Deep Dives",
        reactions=55,
        views=2300,
        hotness=800,
    ),
    dict(
        id=1008,
        user=2,
        title="Markdown footnotes, explained",
        tags=["markdown"],
        published=True,
        day=10,
        series="Markdown Deep Dives",
        reactions=8,
        views=190,
        hotness=300,
    ),
    dict(
        id=1009,
        user=2,
        title="Screencast: setting up the toolkit",
        tags=["tutorial", "video"],
        published=True,
        day=12,
        reactions=21,
        views=700,
        hotness=600,
        video=707,
    ),
    dict(
        id=1010,
        user=2,
        title="Screencast: the watch command",
        tags=["video"],
        published=False,
        day=13,
        video=420,
    ),
    dict(
        id=1011,
        user=2,
        title="Ask: how do you review docs?",
        tags=["discuss", "help"],
        published=True,
        day=18,
        reactions=3,
        views=90,
        hotness=200,
        featured=False,
    ),
    dict(
        id=1012,
        user=3,
        title="Welcome to the sandbox",
        tags=["meta", "discuss"],
        published=True,
        day=-30,
        reactions=99,
        views=5000,
        hotness=950,
    ),
    dict(
        id=1013,
        user=4,
        title="Ten tips for technical writing",
        tags=["writing", "career"],
        published=True,
        day=5,
        reactions=64,
        views=3100,
        hotness=850,
    ),
    dict(
        id=1014,
        user=4,
        title="Lightning talk: docs in an hour",
        tags=["talks", "video"],
        published=True,
        day=16,
        reactions=17,
        views=480,
        hotness=400,
        video=3723,
    ),
    dict(
        id=1015,
        user=5,
        title="Testing documentation examples",
        tags=["testing", "python"],
        published=True,
        day=22,
        reactions=33,
        views=900,
        hotness=750,
    ),
    dict(
        id=1016,
        user=5,
        title="Open source maintainers and docs",
        tags=["opensource", "writing"],
        published=True,
        day=28,
        reactions=5,
        views=120,
        hotness=250,
    ),
    dict(
        id=1017,
        user=2,
        org=1,
        title="The Acme docs style guide",
        tags=["docs"],
        published=True,
        day=24,
        reactions=14,
        views=350,
        hotness=450,
    ),
]

PARAGRAPHS = [
    "Keeping the guide in the same repository as the code means a change and its "
    "documentation land in the same review. Nobody has to remember to update a wiki.",
    "Every post is a Markdown file with a small block of front matter on top: the title, "
    "whether it is published, a few tags. The rest is plain text that diffs well.",
    "## What you get\n\n- reviews for prose, like for code\n- history for free\n"
    "- one command to publish",
    "| step | command |\n| --- | --- |\n| check | `toolkit check` |\n| publish | `toolkit publish` |",
    '```python\nprint("hello, docs")\n```',
    "The same post feeds the static site and the publishing API, so the two never drift "
    "apart. When something is edited on the website, the next sync notices.",
]

# Comments: (id, target, parent, author, day, hours, markdown). Targets are
# ("Article", id) or ("PodcastEpisode", id). Threads go four levels deep.
COMMENTS = [
    (40001, ("Article", 1001), None, 2, 1, 0, "Great overview! How do you handle images?"),
    (
        40002,
        ("Article", 1001),
        40001,
        1,
        1,
        2,
        "Relative paths, rewritten to absolute URLs at publish time.",
    ),
    (40003, ("Article", 1001), 40002, 2, 2, 0, "Nice. And the **canonical URL**?"),
    (40004, ("Article", 1001), 40003, 4, 2, 5, "Same question here - does it point at the site?"),
    (40005, ("Article", 1001), None, 5, 3, 0, "Bookmarked for the team."),
    (40006, ("Article", 1002), None, 4, 8, 0, "Quoting the dates saved me an afternoon."),
    (40007, ("Article", 1002), 40006, 1, 8, 3, "Unquoted dates are a 422 on the real API."),
    (40008, ("Article", 1002), 40007, 4, 9, 0, "Good to know!"),
    (40009, ("Article", 1003), None, 5, 15, 0, "Do you use conventional commits?"),
    (
        40010,
        ("Article", 1003),
        40009,
        1,
        15,
        1,
        "Mostly, and the changelog is generated from them.",
    ),
    (40011, ("Article", 1003), 40010, 5, 15, 4, "Neat \N{THUMBS UP SIGN}"),
    (40012, ("Article", 1003), None, 6, 16, 0, "Thanks for writing this up."),
    (40013, ("Article", 1012), None, 1, -29, 0, "Hello, sandbox!"),
    (40014, ("Article", 1007), None, 1, 4, 0, "Tables are underrated."),
    (40015, ("Article", 1007), 40014, 2, 4, 6, "Agreed - alignment rows especially."),
    (40016, ("PodcastEpisode", 301), None, 4, 3, 0, "Great first episode."),
    (40017, ("PodcastEpisode", 301), 40016, 5, 3, 2, "Looking forward to the next one."),
]

PODCASTS: list[SeedPodcast] = [
    dict(id=1, title="Docs Talk", slug="docstalk", published=True),
    dict(id=2, title="Shelved Show", slug="shelvedshow", published=False),
]

# id, podcast, title, day, active ("reachable")
EPISODES = [
    (301, 1, "Ep. 1: Why docs as code", 2, True),
    (302, 1, "Ep. 2: Front matter everywhere", 16, True),
    (303, 1, "Ep. 3: The one we pulled", 23, False),
    (304, 2, "Pilot", 5, True),
]

# id, user, org, category, title, tags, published, bumped (day or None), created (day)
LISTINGS = [
    (501, 1, None, "cfp", "DocsConf call for papers", ["events", "docs"], True, 20, 20),
    (502, 1, 1, "jobs", "Technical writer at Acme", ["hiring", "writing"], True, 21, 21),
    (503, 1, None, "mentors", "Mentoring new technical writers", ["writing"], False, None, 22),
    (504, 2, None, "products", "Markdown linter, lifetime licence", ["markdown"], True, 15, 15),
    (505, 3, None, "events", "Sandbox meetup", ["events"], True, 25, 25),
    (506, 2, None, "forhire", "Available for docs contracts", ["writing"], False, None, 26),
    (507, 5, None, "misc", "Free stickers", [], True, 10, 10),
    (
        508,
        4,
        None,
        "education",
        "A course on technical writing",
        ["writing", "career"],
        True,
        12,
        12,
    ),
]

# follower, followed, day
USER_FOLLOWS = [(2, 1, 2), (4, 1, 5), (5, 1, 9), (6, 1, 12), (1, 4, 6), (1, 2, 7)]

# user, tag, points
TAG_FOLLOWS = [
    (1, "docs", 3.0),
    (1, "writing", 2.0),
    (1, "python", 1.0),
    (1, "git", 0.5),
    (2, "markdown", 2.0),
]

# user, article, day
READING_LIST = [(1, 1007, 30), (1, 1013, 31), (1, 1015, 32), (1, 1012, 33), (2, 1001, 30)]
