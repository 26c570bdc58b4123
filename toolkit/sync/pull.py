"""`toolkit pull`: bring remote articles into `content/` as posts.

An article no local post maps to becomes a new file, named from its title or slug (reduced
to a safe file name inside `content/`), never written over an existing file. Its front
matter keeps only what the publishing API defines: a remote article cannot make itself
premium or choose the path of its page. A post whose article was edited on the website
takes that version when the post itself has not changed since it was last published
(nothing is lost); when both changed, only `overwrite` replaces the post. A post whose
content is what the website holds is never rewritten, `overwrite` or not. Every pulled post
is recorded in `toolkit.lock` as in sync, so `toolkit publish` right after a pull writes
nothing. The caller (`toolkit.commands.pull`) holds the run lock from before this reads
`toolkit.lock` to its end.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path

from toolkit.clients.forem import ForemClient
from toolkit.clients.forem_models import Article
from toolkit.config import Config
from toolkit.content import load_posts, payload_for
from toolkit.content.payload import body_digest, dump_front_matter
from toolkit.content.post import FOREM_KEYS, load_post, parse_post, slugify
from toolkit.content.problems import PostError
from toolkit.content.rules import canonical_url
from toolkit.errors import UnsafeNameError
from toolkit.fsutil import atomic_write, path_inside, safe_name
from toolkit.sync.lock import Lock, LockEntry
from toolkit.sync.remote import RemoteState, match_posts


class PullAction(StrEnum):
    CREATED = "created"  # a new local post
    OVERWRITTEN = "overwritten"  # a local post replaced by its remote version
    DIFFERS = "differs"  # remote differs; left alone (needs --overwrite)
    UNCHANGED = "unchanged"
    FAILED = "failed"


@dataclass
class PullOutcome:
    path: str
    action: PullAction
    article_id: int
    message: str = ""


@dataclass
class PullResult:
    outcomes: list[PullOutcome] = field(default_factory=list)
    lock_wait: str | None = None  # said while another run held the run lock

    def count(self, action: PullAction) -> int:
        return sum(1 for o in self.outcomes if o.action is action)

    @property
    def failed(self) -> list[PullOutcome]:
        return [o for o in self.outcomes if o.action is PullAction.FAILED]


def post_text(article: Article) -> str:
    """A post file for a remote article: front matter (from its body, else from its fields)
    and body. `published` always says the remote state, so a draft stays a draft."""
    body_markdown = (article.body_markdown or "").replace("\r\n", "\n")
    try:
        parsed = parse_post(Path(f"{article.slug or article.id}.md"), "remote", body_markdown)
        meta, body = dict(parsed.meta), parsed.body
    except PostError:  # the API accepted it, so this is rare: keep the body whole
        meta, body = {}, body_markdown
    meta.setdefault("title", article.title)
    meta["published"] = bool(article.published)
    if "tags" not in meta and article.tags:
        meta["tags"] = ", ".join(article.tags)
    if article.canonical_url and article.canonical_url != article.url:
        meta.setdefault("canonical_url", article.canonical_url)
    if article.cover_image:
        meta.setdefault("cover_image", article.cover_image)
    if article.published and article.published_at:
        meta.setdefault("date", article.published_at)  # the site sorts and shows posts by it
    # Only the keys the API defines, in its order: anything else (`premium`, `slug`, ...)
    # would let the remote side decide what only the writer may.
    ordered = {key: meta[key] for key in FOREM_KEYS if key in meta}
    return f"---\n{dump_front_matter(ordered)}---\n{body}"


def _safe_stem(text: str, fallback: str) -> str:
    try:
        return safe_name(text)
    except UnsafeNameError:
        return fallback


def file_stem_for(article: Article, taken: Callable[[str], bool]) -> str:
    """From the title; else the remote slug (with the API's random suffix); else + the id.
    The slug comes from the server: only what is left of it as a safe file name is used."""
    plain = _safe_stem(slugify(article.title), f"post-{article.id}")
    remote = _safe_stem(article.slug, plain)
    for stem in (plain, remote):
        if not taken(stem):
            return stem
    return f"{remote}-{article.id}"


def pull_articles(config: Config, client: ForemClient, *, overwrite: bool = False) -> PullResult:
    """Write the remote articles as posts; the caller holds the run lock."""
    result = PullResult()
    lock = Lock.load(config.lock_path, config.forem.base_url)
    posts, _ = load_posts(config)
    remote = RemoteState(client.iter_my_articles("all"))
    matches = match_posts(remote, posts, lock, lambda p: canonical_url(p, config.site.url))
    by_key = {p.key: p for p in posts}
    owned = {m.article.id: key for key, m in matches.items() if m.article is not None}
    content_dir = config.site.content_dir
    slugs = {p.slug for p in posts}

    def taken(stem: str) -> bool:
        return stem in slugs or (content_dir / f"{stem}.md").exists()

    for article in sorted(remote.articles, key=lambda a: a.id):
        text = post_text(article)
        key = owned.get(article.id)
        if key is None:
            stem = file_stem_for(article, taken)
            slugs.add(stem)
            try:
                path = path_inside(content_dir, f"{stem}.md")
            except UnsafeNameError as exc:
                result.outcomes.append(
                    PullOutcome(
                        config.relative(content_dir / f"{stem}.md"),
                        PullAction.FAILED,
                        article.id,
                        exc.message,
                    )
                )
                continue
            action = PullAction.CREATED
        else:
            post, entry = by_key[key], lock.get(key)
            remote_changed = entry is None or entry.remote_digest != body_digest(
                article.body_markdown or ""
            )
            payload = payload_for(post, config)
            local_clean = entry is not None and entry.sent_digest == payload.digest
            # What the post would send is what the website holds: the same content, only
            # written another way (quotes, key order, the defaults publish fills in).
            same = (
                payload.body_markdown == (article.body_markdown or "").replace("\r\n", "\n")
                and bool(article.published) == post.published
            )
            if post.source == text or same or not (remote_changed or overwrite):
                result.outcomes.append(PullOutcome(key, PullAction.UNCHANGED, article.id))
                continue
            if not (local_clean or overwrite):
                result.outcomes.append(
                    PullOutcome(
                        key,
                        PullAction.DIFFERS,
                        article.id,
                        "the website version differs and the post has changes of its own; "
                        "`toolkit pull --overwrite` replaces the post",
                    )
                )
                continue
            path, action = post.path, PullAction.OVERWRITTEN
        relative = config.relative(path)
        atomic_write(path, text.encode("utf-8"))
        try:
            post = load_post(path, relative)
            payload = payload_for(post, config)
        except PostError as exc:
            result.outcomes.append(PullOutcome(relative, PullAction.FAILED, article.id, str(exc)))
            continue
        lock.record(
            relative,
            LockEntry(
                article_id=article.id,
                url=article.url,
                sent_digest=payload.digest,
                remote_digest=body_digest(article.body_markdown or ""),
                remote_edited_at=article.edited_at,
                published=bool(article.published),
                published_at=article.published_at,
            ),
        )
        result.outcomes.append(PullOutcome(relative, action, article.id))
    return result
