"""Which of the account's articles a post is.

Identity of a post's article, in order (`bind_posts`, over every post of the project at
once: which article one post is depends on what the others claim):

1. its `toolkit.lock` entry;
2. the `id:` of its front matter (devto-cli's convention);
3. the entry of `dev-to-git.json` naming its file (dev-to-git's, `devtogit.py`);
4. the one remote article whose `canonical_url` is the post's;
5. the one remote article with the same title that nothing else claims (when several
   carry it, the one whose body is the post's); two posts of one title and one such
   article: the post whose body it holds; a title alone never binds an article that
   holds another post's text (rule 6 gives it to that post: one retitled, and its old
   title taken by a new post);
6. for a post that none of these bind: the article of a lock entry whose file is gone,
   when that article's text (the Markdown after the front matter) is the post's; while
   adopting, the one unclaimed article whose text is the post's.

One claim per article: the claims of one rule are settled together, and two posts one
rule gives the same article (two files with one `id:`, two dev-to-git entries with one
id, one canonical_url, two lock entries) are both refused, each naming the other. An
article counts as claimed when the lock gives it to a post whose file is there (or is
no post now: `Identities.strays`), or when a stronger rule gave it to another post. An
`id:` or dev-to-git entry naming an article the account does not hold is an error
naming the post, never a create. Two candidates are never guessed at: the post is
refused with both ids named.

A title alone, or a text alone, is adoption's (no lock entry yet for this server): once
the lock has entries, rule 5 binds only an article that holds the post's text or whose
lock entry's file is gone (a rename), and rule 6 only the article of such an entry; any
other article with the post's title or text is the post's `Match.resembles`, a conflict
for `plan`, never written over without --force.

The lock and a text disagree when the lock gives an article to a file whose text is not
the article's while another post without an entry holds it (a file name used again
after a rename): both are refused, unless one names the article by `id:`. Named by the
lock's own file, it stays there; named by the other, that post takes the entry over.

An article whose lock entry's file is gone, bound to a post by any rule, is that post's
now: a rename (`Match.moved_from`), and the entry moves with it. The entries whose file
is gone and that nothing took are `Identities.gone`: their articles stay on the website
until `toolkit unpublish` or `toolkit forget` (`retire.py`).
"""

from __future__ import annotations

import os
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING

from toolkit.clients.forem_models import Article
from toolkit.content.problems import PostError
from toolkit.sync.devtogit import read_map
from toolkit.sync.ledger import Ledger, LedgerEntry
from toolkit.sync.remote import Gone, Identities, Match, RemoteState, text_of

if TYPE_CHECKING:  # pragma: no cover
    from toolkit.content.post import Post


def match_posts(
    remote: RemoteState,
    posts: Iterable[Post],
    ledger: Ledger,
    canonical_of: Callable[[Post], str | None],
    *,
    body_of: Callable[[Post], str] | None = None,
) -> dict[str, Match]:
    """The match of every post (keyed by post path): `bind_posts` with the project's
    dev-to-git.json (beside toolkit.lock)."""
    return bind_posts(
        remote, posts, ledger, canonical_of, mapped=read_map(ledger.path.parent), body_of=body_of
    ).matches


def bind_posts(
    remote: RemoteState,
    posts: Iterable[Post],
    ledger: Ledger,
    canonical_of: Callable[[Post], str | None],
    *,
    mapped: Mapping[str, int] | None = None,
    body_of: Callable[[Post], str] | None = None,
    holder: str | None = None,
) -> Identities:
    """Every post's article (the rules in the module's docstring), no article given to two
    posts, and the lock entries whose file is gone or is no post now.

    `posts` are all the project's posts (binding some alone could give one of them an
    article another post is); `mapped`: dev-to-git.json's post key -> article id;
    `body_of(post)`: the body_markdown the post would send (without it no two texts are
    ever the same). A lock entry's file is looked for beside toolkit.lock. `holder`: in a
    team's repository, whose key read `remote` (how a problem names the account).
    """
    return _Binder(remote, list(posts), ledger, canonical_of, mapped or {}, body_of, holder).run()


class _Binder:
    """One binding of every post: the rules in order, each rule's claims settled together
    (two claims on one article: both refused)."""

    def __init__(
        self,
        remote: RemoteState,
        posts: list[Post],
        ledger: Ledger,
        canonical_of: Callable[[Post], str | None],
        mapped: Mapping[str, int],
        body_of: Callable[[Post], str] | None,
        holder: str | None = None,
    ):
        self.remote = remote
        self.posts = posts
        self.ledger = ledger
        self.canonical_of = canonical_of
        self.mapped = mapped
        self.body_of = body_of
        self.holder = holder  # a team's: whose key read `remote`
        root = ledger.path.parent
        self.entries = dict(ledger.entries)
        self.adopting = not self.entries  # no ledger yet: a title alone may bind
        present = {post.key for post in posts}
        self.gone = {
            key: e
            for key, e in self.entries.items()
            if key not in present and not os.path.lexists(root / key)
        }
        self.strays = {
            key: e for key, e in self.entries.items() if key not in present and key not in self.gone
        }
        # article id -> the paths whose lock entry holds it (their file is there)
        self.held: dict[int, list[str]] = defaultdict(list)
        for key, e in sorted(self.entries.items()):
            if key not in self.gone:
                self.held[e.article_id].append(key)
        self.free: dict[int, str] = {}  # article id -> the gone path whose entry holds it
        for key, e in sorted(self.gone.items()):
            self.free.setdefault(e.article_id, key)
        # article id -> the paths dev-to-git.json names for it
        self.map_keys: dict[int, list[str]] = defaultdict(list)
        for key, article_id in sorted(mapped.items()):
            self.map_keys[article_id].append(key)
        self.released: dict[int, str] = {}  # article id -> the path the lock gave it to
        self.owner: dict[int, str] = {}  # article id -> the post bound to it in this run
        self.matches: dict[str, Match] = {}
        self._texts: dict[str, str] = {}  # post key -> its text
        self._article_texts: dict[int, str] = {}  # article id -> its text
        self._by_text: dict[str, list[Article]] | None = None  # text -> its articles

    # -- what the rules ask --------------------------------------------------------------

    def text(self, post: Post) -> str:
        if post.key not in self._texts:
            try:
                body = self.body_of(post) if self.body_of is not None else ""
            except (PostError, ValueError):
                body = ""
            self._texts[post.key] = text_of(body)
        return self._texts[post.key]

    def article_text(self, article: Article) -> str:
        if article.id not in self._article_texts:
            self._article_texts[article.id] = text_of(article.body_markdown or "")
        return self._article_texts[article.id]

    def same_text(self, post: Post, article: Article) -> bool:
        mine = self.text(post)
        return bool(mine) and self.article_text(article) == mine

    def with_text(self, post: Post) -> list[Article]:
        """The remote articles whose text is the post's (none for a post without text)."""
        if self._by_text is None:
            self._by_text = defaultdict(list)
            for article in self.remote.articles:
                self._by_text[self.article_text(article)].append(article)
        mine = self.text(post)
        return list(self._by_text.get(mine, [])) if mine else []

    def taken(self, article: Article) -> bool:
        return bool(self.held.get(article.id)) or article.id in self.owner

    def settle(self, post: Post, match: Match) -> None:
        article = match.article
        if article is not None:
            self.owner[article.id] = post.key
            if match.via != "toolkit.lock" and article.id in self.released:
                match.moved_from = self.released[article.id]
                match.entry = self.entries[match.moved_from]
            elif match.via != "toolkit.lock" and article.id in self.free:
                match.moved_from = self.free[article.id]
                match.entry = self.gone[match.moved_from]
        self.matches[post.key] = match

    def settle_claims(self, claims: list[tuple[Post, Match]]) -> None:
        """Settle one rule's claims: an article two posts claim is neither's."""
        by_article: dict[int, list[Post]] = defaultdict(list)
        for post, match in claims:
            if match.article is not None:
                by_article[match.article.id].append(post)
        for post, match in claims:
            rivals = by_article[match.article.id] if match.article is not None else [post]
            if len(rivals) > 1:
                assert match.article is not None
                others = ", ".join(p.key for p in rivals if p is not post)
                match = Match(
                    None,
                    "claims",
                    f"{_rule_name(match.via)} gives article {match.article.id} to {others} "
                    "too; one article is one post: keep it only in the one that is the "
                    f"article (`id: {match.article.id}`)",
                    match.line,
                    contested=(match.article.id,),
                )
            self.settle(post, match)

    # -- the rules, strongest first ------------------------------------------------------

    def run(self) -> Identities:
        rest = self.by_lock()
        rest = self.by_name(rest)
        rest = self.by_canonical_url(rest)
        rest = self.by_title(rest)
        self.by_text(rest)
        moved = {m.moved_from for m in self.matches.values() if m.moved_from}
        left = [
            Gone(key, e, self.remote.by_id.get(e.article_id))
            for key, e in sorted(self.gone.items())
            if key not in moved
        ]
        strays = [
            Gone(key, e, self.remote.by_id.get(e.article_id))
            for key, e in sorted(self.strays.items())
        ]
        return Identities(self.matches, left, strays)

    def by_lock(self) -> list[Post]:
        """Rule 1; the posts left for the others. A lock entry whose article holds the text
        of another post and not its own is refused with that post (a file name used again
        after a rename), unless one of them names the article (`id:`)."""
        rest: list[Post] = []
        bound: list[tuple[Post, LedgerEntry, Article]] = []
        for post in self.posts:
            entry = self.entries.get(post.key)
            if entry is None:
                rest.append(post)
                continue
            article = self.remote.by_id.get(entry.article_id)
            if article is None:
                match = self.remote.identify(entry, None, post.title)
                match.entry = entry
                self.settle(post, match)
                continue
            others = [k for k in self.held[article.id] if k != post.key]
            if others:
                problem = (
                    f"toolkit.lock gives article {article.id} to {', '.join(others)} too; "
                    "one article is one post: `toolkit forget` the entry that is wrong"
                )
                self.settle(post, Match(None, "claims", problem, contested=(article.id,)))
                continue
            bound.append((post, entry, article))
        for post, entry, article in bound:
            # (Without a post that has no entry, nothing can disagree with the lock.)
            if not rest or post.article_id == article.id or self.same_text(post, article):
                self.settle(post, Match(article, "toolkit.lock", entry=entry))
                continue
            holders = [
                p
                for p in rest
                if _named_id(p, self.mapped) in (None, article.id) and self.same_text(p, article)
            ]
            naming = [p for p in holders if _named_id(p, self.mapped) == article.id]
            if not holders:
                self.settle(post, Match(article, "toolkit.lock", entry=entry))
            elif len(naming) == 1:
                # The writer says which file is the article: it takes the entry over.
                self.held[article.id].remove(post.key)
                self.released[article.id] = post.key
                rest.append(post)
            else:
                keys = ", ".join(p.key for p in holders)
                problem = (
                    f"toolkit.lock gives article {article.id} to {post.key}, but it holds "
                    f"the text of {keys} (renamed, and {post.key} is a new file?); add "
                    f"`id: {article.id}` to the front matter of the one that is the article"
                )
                self.settle(post, Match(None, "claims", problem, contested=(article.id,)))
                for other in holders:
                    line = other.line_of("title")
                    self.settle(
                        other, Match(None, "claims", problem, line, contested=(article.id,))
                    )
                rest = [p for p in rest if p not in holders]
        return sorted(rest, key=lambda p: p.key)

    def by_name(self, posts: list[Post]) -> list[Post]:
        """Rules 2 and 3: the article a post's `id:` or dev-to-git.json names."""
        rest: list[Post] = []
        claims: list[tuple[Post, Match]] = []
        for post in posts:
            named = _named(post, self.mapped.get(post.key))
            if named is None:
                rest.append(post)
                continue
            if isinstance(named, Match):
                own, mapped = post.article_id, self.mapped.get(post.key)
                named.contested = tuple(i for i in (own, mapped) if i is not None)
                self.settle(post, named)
                continue
            via, article_id, line = named
            article = self.remote.by_id.get(article_id)
            holders = [k for k in self.held.get(article_id, []) if k != post.key]
            mapped_too = [k for k in self.map_keys.get(article_id, []) if k != post.key]
            if article is None:
                unknown = _unknown(
                    _said(post, via), article_id, self.ledger.server, self.holder, self.entries
                )
                self.settle(post, Match(None, via, unknown, line))
            elif holders:
                problem = (
                    f"{_said(post, via)} names article {article_id}, which toolkit.lock gives to "
                    f"{', '.join(holders)}; one article is one post"
                )
                self.settle(post, Match(None, via, problem, line))
            elif via == "dev-to-git.json" and mapped_too:
                problem = (
                    f"dev-to-git.json names article {article_id} for {', '.join(mapped_too)} "
                    "too; one article is one post: keep one of its entries"
                )
                self.settle(post, Match(None, "claims", problem, line, contested=(article_id,)))
            else:
                claims.append((post, Match(article, via, line=line)))
        self.settle_claims(claims)
        return rest

    def by_canonical_url(self, posts: list[Post]) -> list[Post]:
        """Rule 4: the one unclaimed article whose canonical_url is the post's."""
        rest: list[Post] = []
        claims: list[tuple[Post, Match]] = []
        for post in posts:
            canonical = self.canonical_of(post)
            candidates = [a for a in self.remote.by_canonical(canonical) if not self.taken(a)]
            if len(candidates) == 1:
                claims.append((post, Match(candidates[0], "canonical_url")))
            elif len(candidates) > 1:
                self.settle(
                    post, _ambiguous(candidates, "canonical_url", post.line_of("canonical_url"))
                )
            else:
                rest.append(post)
        self.settle_claims(claims)
        return rest

    def by_title(self, posts: list[Post]) -> list[Post]:
        """Rule 5: the one unclaimed article with the post's title. Outside adoption (once
        toolkit.lock has entries) a title alone binds only an article whose lock entry's
        file is gone (a rename); an article the lock never held needs the post's text too,
        else the post is told it (`Match.resembles`) and nothing is written over it."""
        rest: list[Post] = []
        by_title: list[tuple[Post, list[Article]]] = []
        # The texts of the posts left here: an article holding one of them is that post's
        # (rule 6), never another's by a title alone.
        texts = {self.text(post) for post in posts} - {""}
        for post in posts:
            candidates = [a for a in self.remote.by_title(post.title) if not self.taken(a)]
            if len(candidates) > 1:
                same = [a for a in candidates if self.same_text(post, a)]
                if same:
                    candidates = same
            by_title.append((post, candidates))
        wanted: dict[int, list[Post]] = defaultdict(list)
        for post, candidates in by_title:
            if len(candidates) == 1:
                wanted[candidates[0].id].append(post)
        for post, candidates in by_title:
            if len(candidates) > 1:
                self.settle(post, _ambiguous(candidates, "title", post.line_of("title")))
                continue
            if not candidates:
                rest.append(post)
                continue
            article = candidates[0]
            rivals = wanted[article.id]
            holders = [p for p in rivals if self.same_text(p, article)]
            if len(rivals) > 1 and len(holders) != 1:
                keys = ", ".join(p.key for p in rivals)
                problem = (
                    f"{keys} have the title of article {article.id} and it holds the text "
                    f"of {'none' if not holders else 'several'} of them; add `id: "
                    f"{article.id}` to the front matter of the one it is"
                )
                line = post.line_of("title")
                self.settle(post, Match(None, "title", problem, line, contested=(article.id,)))
            elif len(rivals) > 1 and holders[0] is not post:
                rest.append(post)
            elif self.same_text(post, article):
                self.settle(post, Match(article, "title and body"))
            elif not (self.adopting or article.id in self.free):
                self.settle(post, Match(None, "title", resembles=article))
            elif self.article_text(article) in texts:
                rest.append(post)  # the article holds another post's text: rule 6's
            else:
                self.settle(post, Match(article, "title"))
        return rest

    def by_text(self, posts: list[Post]) -> None:
        """Rule 6: the article of a gone post's lock entry whose text is the post's; while
        adopting, any unclaimed article whose text is the post's (a post retitled after it
        was published, and the lock lost since). Outside adoption, an article the lock never
        held with the post's text is what the post `resembles`: a conflict, not a new
        article beside it."""
        claims: list[tuple[Post, Match]] = []
        for post in posts:
            same = [a for a in self.with_text(post) if not self.taken(a)]
            bound = same if self.adopting else [a for a in same if a.id in self.free]
            if len(bound) > 1:
                self.settle(post, _ambiguous(bound, "body", 1))
            elif bound:
                claims.append((post, Match(bound[0], "body")))
            elif len(same) > 1:
                self.settle(post, _ambiguous(same, "body", 1))
            elif same:
                self.settle(post, Match(None, "body", resembles=same[0]))
            else:
                self.settle(post, Match(None, ""))
        self.settle_claims(claims)


def _rule_name(via: str) -> str:
    return {
        "id": "id:",
        "body": "its text",
        "canonical_url": "the canonical_url",
    }.get(via, via)


def _named_id(post: Post, mapped: Mapping[str, int]) -> int | None:
    """The article id the post's `id:` or dev-to-git.json names (None: neither)."""
    named = _named(post, mapped.get(post.key))
    if isinstance(named, Match):
        return 0  # two names that disagree: not the article's
    return named[1] if named is not None else None


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


def _unknown(
    named: str,
    article_id: int,
    server: str,
    holder: str | None = None,
    entries: Mapping[str, LedgerEntry] | None = None,
) -> str:
    """`named`: the rule as said (`_said`); `holder`: a team's account, named (and the post
    toolkit.lock gives the article to, another writer's, said)."""
    where = f" on {server}" if server else ""
    whose = f"{holder}'s" if holder is not None else "this account's"
    held = [k for k, e in (entries or {}).items() if e.article_id == article_id]
    elsewhere = f" (toolkit.lock gives it to {held[0]})" if holder is not None and held else ""
    return (
        f"{named} names article {article_id}, which is not one of {whose} "
        f"articles{where}{elsewhere}; correct or remove it (toolkit never creates a post "
        "that names an article)"
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
        contested=tuple(a.id for a in candidates),
    )
