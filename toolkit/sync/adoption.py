"""What a project written for another generator holds back from dev.to.

- A post the writer keeps off dev.to (`Post.held`: a draft of their site, a skip key,
  Jekyll's `published: false`, a date still to come) is never sent, whatever else says.
- A post named by its id key as a dev.to slug or address (`dev_to:`) is bound to the
  account's article of that slug, looked up in the list the plan reads (the lock then
  keeps the binding); one the account does not hold is an error, never a create.
- Adopting toolkit publishes nothing old: with `[source] adopted`, a post dated before it
  (or with no date at all) that no rule binds to an article is not on dev.to and stays
  so, until the writer opts it in: `crosspost: true` in its front matter (by path), an
  earlier `adopted` (by date), or no `adopted` (all).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import replace
from typing import TYPE_CHECKING

from toolkit.content.sources import ref_slug
from toolkit.content.sources.dates import DateUnread, read_date
from toolkit.redact import quoted

if TYPE_CHECKING:  # pragma: no cover
    from collections.abc import Callable

    from toolkit.clients.forem_models import Article
    from toolkit.config.sections import SourceConfig
    from toolkit.content.post import Post
    from toolkit.sync.remote import Match

OPT_IN_KEY = "crosspost"


def resolve_ref(post: Post, articles: list[Article]) -> tuple[Post, str | None]:
    """`post` bound by its `dev_to:` slug or address to the account's article of that slug
    (its `id`), or a problem saying the account holds none."""
    reading = post.reading
    if reading is None or reading.article_ref is None or post.article_id is not None:
        return post, None
    key = reading.ref_key or "dev_to"
    slug = ref_slug(reading.article_ref)
    address = reading.article_ref.rstrip("/")
    found = [a for a in articles if a.url and a.url.rstrip("/") == address]
    found = found or [a for a in articles if slug and a.slug == slug]
    if slug and not found:  # an article renamed since: its address still names it
        found = [a for a in articles if a.url and a.url.rstrip("/").endswith("/" + slug)]
    if len(found) == 1:
        return replace(post, meta={**post.meta, "id": found[0].id}), None
    if not found:
        return post, (
            f"{key}: names the dev.to article {quoted(reading.article_ref, 80)}, which is not one of "
            "this account's articles; correct or remove it (toolkit never creates a post "
            "that names an article)"
        )
    ids = ", ".join(str(a.id) for a in found)
    return (
        post,
        f"{key}: {len(found)} articles have the slug {slug!r} (ids {ids}); name one by its id",
    )


def adopted_on(source: SourceConfig) -> dt.datetime | None:
    """`[source] adopted` as a time (midnight in the site's time zone for a day)."""
    try:
        return read_date(source.adopted, source.timezone)
    except DateUnread:
        return None


def not_on_devto(post: Post, adopted: dt.datetime | None, dated: str | None = None) -> str | None:
    """Why `post`, which no rule binds to an article, is not created: it predates the
    adoption and was not opted in. None when it is sent as a new post. `dated`: an
    undated post's date from elsewhere (`content.dates.project_dates`: its first commit)."""
    if (
        adopted is None
        or post.meta.get(OPT_IN_KEY) is True
        or (post.reading is not None and post.reading.opted_in)
    ):
        return None
    when = post.date
    if when is None and dated is not None:
        when = read_date(dated)
    # Compared day by day in the site's time zone (adopted's): a post of the adoption's
    # day is new, whatever its hour.
    if when is not None and when.astimezone(adopted.tzinfo).date() >= adopted.date():
        return None
    dated = f"dated {when.date().isoformat()}" if when is not None else "no date"
    return (
        f"not on dev.to ({dated}, before toolkit was adopted on {adopted.date().isoformat()}): "
        f"`{OPT_IN_KEY}: true` in its front matter sends it; so does an earlier [source] "
        "adopted in toolkit.toml (all of them: remove it)"
    )


def not_bound_and_old(
    match: Match,
    post: Post,
    adopted: dt.datetime | None,
    first_dated: Callable[[Post], str | None],
) -> str | None:
    """`not_on_devto` for a post no identity rule bound (`match`); `first_dated(post)`:
    an undated post's date from elsewhere, asked only when needed."""
    if adopted is None or match.article is not None or match.via:
        return None
    dated = first_dated(post) if post.date is None else None
    return not_on_devto(post, adopted, dated)
