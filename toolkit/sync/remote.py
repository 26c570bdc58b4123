"""The account's articles as one list read shows them (`RemoteState`), and what binding a
post to one of them gives (`Match`, `Identities`; the rules that bind are
`toolkit.sync.identity`'s)."""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field

from toolkit.clients.forem_models import Article
from toolkit.sync.ledger import LedgerEntry


@dataclass
class Match:
    article: Article | None
    # "toolkit.lock", "id", "dev-to-git.json", "canonical_url", "title", "title and body",
    # "body", or "" when nothing matched
    via: str
    problem: str | None = None  # why the post cannot be matched safely
    line: int = 1  # the post's line the problem is about
    entry: LedgerEntry | None = None  # the lock entry that goes with the article, if any
    moved_from: str | None = None  # the path whose lock entry this post takes over
    # Outside adoption: the one unclaimed article with the post's title and not its text
    # (`via` "title"), or with its text and not its title, that the lock never held (`via`
    # "body"). Not the post's article (nothing is written over it without --force), nor a
    # new one's (pull writes no second file for it).
    resembles: Article | None = None
    # The articles a refused match is about (two claims on one, or several candidates):
    # none of them is a new article to pull beside the post.
    contested: tuple[int, ...] = ()

    def resemblance(self) -> tuple[str, str]:
        """What the post shares with the article it `resembles`, and what it does not:
        ("title", "text") or ("text", "title")."""
        return ("title", "text") if self.via == "title" else ("text", "title")


@dataclass
class Gone:
    """A lock entry whose file is gone and that no post took over."""

    key: str
    entry: LedgerEntry
    article: Article | None  # None: gone from the website too


@dataclass
class Identities:
    matches: dict[str, Match]  # post key -> its match
    gone: list[Gone]
    # Lock entries whose file is there but is no post now (no front matter, excluded)
    strays: list[Gone] = field(default_factory=list)

    def contested(self) -> dict[int, list[str]]:
        """Article id -> the posts whose claim on it was refused or that only resemble it."""
        found: dict[int, list[str]] = defaultdict(list)
        for key, match in sorted(self.matches.items()):
            ids = match.contested + ((match.resembles.id,) if match.resembles else ())
            for article_id in ids:
                found[article_id].append(key)
        return dict(found)


FRONT_MATTER = re.compile(r"\A---[ \t]*\r?\n(?:.*?\r?\n)?---[ \t]*(?:\r?\n|\Z)", re.DOTALL)


def text_of(body_markdown: str) -> str:
    """The Markdown of an article after its front matter, without outer blank space: what
    stays the same when a post is renamed or retitled."""
    return FRONT_MATTER.sub("", body_markdown, count=1).strip()


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

    def by_canonical(self, url: str | None) -> list[Article]:
        return list(self._by_canonical.get(url.strip(), [])) if url else []

    def by_title(self, title: str) -> list[Article]:
        return list(self._by_title.get(title.strip(), [])) if title.strip() else []

    def identify(
        self,
        entry: LedgerEntry | None,
        canonical_url: str | None,
        title: str,
        claimed: AbstractSet[int] = frozenset(),
    ) -> Match:
        """Find the post's article by the lock, canonical_url and title only; `claimed`
        are ids the lock gives to other posts. (What a create that got no answer left
        behind is found this way; `bind_posts` applies every rule.)"""
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
