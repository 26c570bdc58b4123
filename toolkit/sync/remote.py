"""The account's articles as one list read shows them, and which of them a post is.

Identity of a post's article, in order (`bind_posts`):

1. its `toolkit.lock` entry;
2. the `id:` of its front matter (devto-cli's convention);
3. the entry of `dev-to-git.json` naming its file (dev-to-git's, `devtogit.py`);
4. the one remote article whose `canonical_url` is the post's;
5. the one remote article with the same title that nothing else claims (when several
   carry it, the one whose body is the post's); two posts of one title and one such
   article: the post whose body it holds;
6. for a post that none of these bind: the article of a lock entry whose file is gone,
   when that article's text (the Markdown after the front matter) is the post's.

An article counts as claimed when the lock gives it to a post whose file is there, or
when a rule above gave it to another post in this run. An `id:` or dev-to-git entry
naming an article the account does not hold is an error naming the post, never a
create. Two candidates are never guessed at: the post is refused with both ids named.

An article whose lock entry's file is gone, bound to a post by any rule, is that post's
now: a rename (`Match.moved_from`), and the entry moves with it. The entries whose file
is gone and that nothing took are `Identities.gone`: their articles stay on the website
until `toolkit unpublish` or `toolkit forget` (`retire.py`).
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from typing import TYPE_CHECKING

from toolkit.clients.forem_models import Article
from toolkit.sync.devtogit import read_map
from toolkit.sync.ledger import Ledger, LedgerEntry

if TYPE_CHECKING:  # pragma: no cover
    from toolkit.content.post import Post


@dataclass
class Match:
    article: Article | None
    # "toolkit.lock", "id", "dev-to-git.json", "canonical_url", "title", "title and body",
    # "body", or "" when nothing matched
    via: str
    problem: str | None = None  # why the post cannot be matched safely
    line: int = 1  # the post's line the problem is about
    entry: LedgerEntry | None = None  # the lock entry that goes with the article, if any
    moved_from: str | None = None  # the gone path whose entry this post takes over


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


def match_posts(
    remote: RemoteState,
    posts: Iterable[Post],
    ledger: Ledger,
    canonical_of: Callable[[Post], str | None],
) -> dict[str, Match]:
    """The match of every post (keyed by post path): `bind_posts` with the project's
    dev-to-git.json (beside toolkit.lock), without the body rules."""
    return bind_posts(
        remote, posts, ledger, canonical_of, mapped=read_map(ledger.path.parent)
    ).matches


def bind_posts(
    remote: RemoteState,
    posts: Iterable[Post],
    ledger: Ledger,
    canonical_of: Callable[[Post], str | None],
    *,
    mapped: Mapping[str, int] | None = None,
    body_of: Callable[[Post], str] | None = None,
) -> Identities:
    """Every post's article (the rules in the module's docstring), no article given to two
    posts, and the lock entries whose file is gone.

    `mapped`: dev-to-git.json's post key -> article id; `body_of(post)`: the body_markdown
    the post would send (the body rules are skipped without it). A lock entry's file is
    looked for beside toolkit.lock.
    """
    posts = list(posts)
    mapped = mapped or {}
    root = ledger.path.parent
    entries = dict(ledger.entries)
    present = {post.key for post in posts}
    gone = {
        key: e for key, e in entries.items() if key not in present and not (root / key).exists()
    }
    held = {e.article_id: key for key, e in entries.items() if key not in gone}
    free: dict[int, str] = {}  # article id -> the gone path whose entry holds it
    for key, e in sorted(gone.items()):
        free.setdefault(e.article_id, key)
    owner: dict[int, str] = {}  # article id -> the post bound to it in this run
    matches: dict[str, Match] = {}
    texts: dict[str, str] = {}

    def text(post: Post) -> str:
        if post.key not in texts:
            texts[post.key] = text_of(body_of(post)) if body_of is not None else ""
        return texts[post.key]

    def same_text(post: Post, article: Article) -> bool:
        mine = text(post)
        return bool(mine) and text_of(article.body_markdown or "") == mine

    def bind(post: Post, match: Match) -> None:
        article = match.article
        if article is not None:
            first = owner.setdefault(article.id, post.key)
            if first != post.key:
                match = Match(
                    None,
                    match.via,
                    f"matches article {article.id}, which is already {first}'s; "
                    "give one of them another title or canonical_url, or an `id:`",
                    match.line,
                )
            elif match.via != "toolkit.lock" and article.id in free:
                match.moved_from = free[article.id]
                match.entry = gone[match.moved_from]
        matches[post.key] = match

    def taken(article: Article) -> bool:
        return article.id in held or article.id in owner

    by_title: list[tuple[Post, list[Article]]] = []
    for post in posts:
        entry = entries.get(post.key)
        if entry is not None:
            article = remote.by_id.get(entry.article_id)
            if article is None:
                bind(post, remote.identify(entry, None, post.title))
            else:
                bind(post, Match(article, "toolkit.lock", entry=entry))
            continue
        named = _named(post, mapped.get(post.key))
        if isinstance(named, Match):
            bind(post, named)
            continue
        if named is not None:
            via, article_id, line = named
            article = remote.by_id.get(article_id)
            holder = held.get(article_id)
            if article is None:
                unknown = _unknown(_said(post, via), article_id, ledger.server)
                bind(post, Match(None, via, unknown, line))
            elif holder is not None and holder != post.key:
                problem = (
                    f"{_said(post, via)} names article {article_id}, which toolkit.lock "
                    f"gives to {holder}; "
                    "one article is one post"
                )
                bind(post, Match(None, via, problem, line))
            else:
                bind(post, Match(article, via, line=line))
            continue
        canonical = canonical_of(post)
        candidates = [a for a in remote.by_canonical(canonical) if not taken(a)]
        if len(candidates) == 1:
            bind(post, Match(candidates[0], "canonical_url"))
            continue
        if len(candidates) > 1:
            bind(post, _ambiguous(candidates, "canonical_url", post.line_of("canonical_url")))
            continue
        by_title.append((post, []))
    # Titles last: an article a stronger rule bound is no candidate.
    for post, candidates in by_title:
        candidates.extend(a for a in remote.by_title(post.title) if not taken(a))
        if len(candidates) > 1 and body_of is not None:
            same = [a for a in candidates if same_text(post, a)]
            if same:
                candidates[:] = same
    wanted: dict[int, list[Post]] = defaultdict(list)
    for post, candidates in by_title:
        if len(candidates) == 1:
            wanted[candidates[0].id].append(post)
    for post, candidates in by_title:
        if len(candidates) > 1:
            bind(post, _ambiguous(candidates, "title", post.line_of("title")))
            continue
        if candidates:
            article = candidates[0]
            rivals = wanted[article.id]
            if len(rivals) == 1:
                bind(post, Match(article, "title"))
                continue
            holders = [p for p in rivals if same_text(p, article)]
            if len(holders) != 1:
                keys = ", ".join(p.key for p in rivals)
                problem = (
                    f"{keys} have the title of article {article.id} and it holds the text "
                    f"of {'none' if not holders else 'several'} of them; add `id: "
                    f"{article.id}` to the front matter of the one it is"
                )
                bind(post, Match(None, "title", problem, post.line_of("title")))
                continue
            if holders[0] is post:
                bind(post, Match(article, "title and body"))
                continue
        # The text of an article whose file is gone: the same post, renamed.
        same = [
            remote.by_id[article_id]
            for article_id in free
            if article_id in remote.by_id
            and article_id not in owner
            and same_text(post, remote.by_id[article_id])
        ]
        if len(same) > 1:
            bind(post, _ambiguous(same, "body", 1))
        else:
            bind(post, Match(same[0] if same else None, "body" if same else ""))
    moved = {m.moved_from for m in matches.values() if m.moved_from}
    left = [
        Gone(key, e, remote.by_id.get(e.article_id))
        for key, e in sorted(gone.items())
        if key not in moved
    ]
    return Identities(matches, left)


def _named(post: Post, mapped_id: int | None) -> tuple[str, int, int] | Match | None:
    """The article the post names itself (`id:`) or dev-to-git.json names for it, as
    (rule, article id, line); a Match with a problem when the two disagree."""
    own = post.article_id
    if own is not None and mapped_id is not None and own != mapped_id:
        return Match(
            None,
            "id",
            f"{post.key_named('id')}: {own}, but dev-to-git.json names article {mapped_id} for this file; "
            "make them agree",
            post.line_of("id"),
        )
    if own is not None:
        return "id", own, post.line_of("id")
    if mapped_id is not None:
        return "dev-to-git.json", mapped_id, 1
    return None


def _said(post: Post, via: str) -> str:
    """The rule `via` as a message names it: the key the post wrote its id in."""
    return f"{post.key_named('id')}:" if via == "id" else via


def _unknown(named: str, article_id: int, server: str) -> str:
    where = f" on {server}" if server else ""
    return (
        f"{named} names article {article_id}, which is not one of this account's "
        f"articles{where}; correct or remove it (toolkit never creates a post that "
        "names an article)"
    )


def _ambiguous(candidates: list[Article], via: str, line: int) -> Match:
    ids = ", ".join(str(a.id) for a in candidates)
    what = via.replace("_", " ")
    return Match(
        None,
        via,
        f"{len(candidates)} remote articles have this {what} (ids {ids}); "
        "add `id: N` (the right one) to the front matter",
        line,
    )
