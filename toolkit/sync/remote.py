"""The account's articles as one list read shows them, and which of them a post is.

Identity of a post's article, in order: its `toolkit.lock` entry; else the one remote
article whose `canonical_url` is the post's; else the one remote article with the same
title. Two candidates is never guessed at: the post is refused with both ids named.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from typing import TYPE_CHECKING

from toolkit.clients.forem_models import Article
from toolkit.sync.lock import Lock, LockEntry

if TYPE_CHECKING:  # pragma: no cover
    from toolkit.content.post import Post


@dataclass
class Match:
    article: Article | None
    via: str  # "toolkit.lock", "canonical_url", "title" or "" when nothing matched
    problem: str | None = None  # why the post cannot be matched safely


class RemoteState:
    def __init__(self, articles: Iterable[Article]):
        self.articles = list(articles)
        self.by_id = {a.id: a for a in self.articles}
        self._by_canonical: dict[str, list[Article]] = defaultdict(list)
        self._by_title: dict[str, list[Article]] = defaultdict(list)
        for article in self.articles:
            if article.canonical_url:
                self._by_canonical[article.canonical_url.strip()].append(article)
            self._by_title[article.title.strip()].append(article)

    def identify(
        self,
        entry: LockEntry | None,
        canonical_url: str | None,
        title: str,
        claimed: AbstractSet[int] = frozenset(),
    ) -> Match:
        """Find the post's article; `claimed` are ids the lock gives to other posts."""
        if entry is not None:
            article = self.by_id.get(entry.article_id)
            if article is not None:
                return Match(article, "toolkit.lock")
            return Match(
                None,
                "toolkit.lock",
                f"article {entry.article_id} (from toolkit.lock) is no longer on the website "
                "(deleted there?); `toolkit publish --recreate` creates it again",
            )
        for via, candidates in (
            ("canonical_url", self._by_canonical.get(canonical_url or "", [])),
            ("title", self._by_title.get(title.strip(), [])),
        ):
            free = [a for a in candidates if a.id not in claimed]
            if len(free) == 1:
                return Match(free[0], via)
            if len(free) > 1:
                ids = ", ".join(str(a.id) for a in free)
                return Match(
                    None,
                    via,
                    f"{len(free)} remote articles have this {via.replace('_', ' ')} (ids {ids}); "
                    "record the right one in toolkit.lock or make the post's "
                    f"{'canonical_url' if via == 'title' else 'title'} tell them apart",
                )
        return Match(None, "")


def match_posts(
    remote: RemoteState,
    posts: Iterable[Post],
    lock: Lock,
    canonical_of: Callable[[Post], str | None],
) -> dict[str, Match]:
    """The match of every post (keyed by post path), with the lock's claims respected and
    no remote article given to two posts: the second one gets a problem instead."""
    claimed = {entry.article_id for entry in lock.entries.values()}
    owner: dict[int, str] = {}
    matches: dict[str, Match] = {}
    for post in posts:
        entry = lock.get(post.key)
        others = claimed - ({entry.article_id} if entry else set())
        match = remote.identify(entry, canonical_of(post), post.title, others)
        if match.article is not None:
            first = owner.setdefault(match.article.id, post.key)
            if first != post.key:
                match = Match(
                    None,
                    match.via,
                    f"matches article {match.article.id}, which is already {first}'s; "
                    "give one of them another title or canonical_url",
                )
        matches[post.key] = match
    return matches
