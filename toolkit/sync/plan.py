"""What a publish would do to each post, decided from local posts, the lock and the remote.

No I/O here: `decide` is a pure function of its inputs, which keeps the rules (below)
readable and testable on their own.

- no remote article is this post                      -> create
- outside adoption, only the title of an article the
  lock never held is the post's                       -> conflict (update with --force)
- the post names an article the account does not
  hold, or two articles could be it                   -> error
- the lock's article is gone from the website         -> conflict (create with --recreate)
- the remote body changed since the lock's record,
  and it is neither what an interrupted run was
  sending nor what we would send now                 -> conflict (update with --force)
- the post is what was last sent, or the remote body
  already equals what we would send                  -> unchanged (the lock is refreshed)
- otherwise                                           -> update

A run killed between the API taking an update and the lock recording it leaves a remote
body the lock does not know; the entry's pending digests (saved before the request went
out) say it is ours, so the next run converges instead of reporting a conflict. The same
for an older update the server committed late, over a newer one: its body digest is in
the entry's `unconfirmed`, and the post is sent again.

A post that takes over the lock entry of a file that is gone (a rename, `remote.py`) is
decided with that entry, and its reason starts `moved a.md -> b.md`. A lock entry whose
file is gone and that no post took is `gone`: said, never written, never a failure.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass, field, replace
from enum import StrEnum
from urllib.parse import urlsplit

from toolkit.clients.forem_models import Article
from toolkit.content import Payload, Post, Problem, images
from toolkit.content.payload import body_digest
from toolkit.content.post import parse_post
from toolkit.content.problems import PostError
from toolkit.sync.ledger import LedgerEntry
from toolkit.sync.remote import Match


class Action(StrEnum):
    CREATE = "create"
    UPDATE = "update"
    UNCHANGED = "unchanged"
    CONFLICT = "conflict"
    SKIP = "skip"
    ERROR = "error"
    GONE = "gone"  # a lock entry whose file is gone: its article stays on the website


@dataclass(frozen=True)
class PostPlan:
    """What publishing one post does, and why: decided once (`decide`), never changed
    after; what a write learns goes into the ledger and the `Outcome`, not here."""

    key: str  # the post's path, e.g. content/hello.md
    action: Action
    reason: str
    title: str = ""
    post: Post | None = None
    payload: Payload | None = None
    article: Article | None = None  # the remote article this post is, when known
    entry: LedgerEntry | None = None  # the post's lock entry (as an interrupted write left it)
    problems: list[Problem] = field(default_factory=list)
    moved_from: str | None = None  # the path the post had in toolkit.lock (a rename)

    @property
    def line(self) -> int:
        return self.problems[0].line if self.problems else 1

    @property
    def needs_write(self) -> bool:
        return self.action in (Action.CREATE, Action.UPDATE)

    @property
    def failed(self) -> bool:
        return self.action in (Action.CONFLICT, Action.ERROR)


def decide(
    post: Post,
    payload: Payload,
    match: Match,
    entry: LedgerEntry | None,
    *,
    force: bool = False,
    recreate: bool = False,
    drafts_only: bool = False,
) -> PostPlan:
    """What publishing `post` does, and why. `drafts_only` (watch) writes drafts only: a
    post that says `published: true` and would be written is skipped, left for
    `toolkit publish`, so saving a file never publishes anything."""
    plan = PostPlan(
        post.key,
        Action.UNCHANGED,
        "",
        title=post.title,
        post=post,
        payload=payload,
        article=match.article,
        entry=entry,
    )
    plan = _decide(plan, post, payload, match, entry, force=force, recreate=recreate)
    if match.moved_from is not None and plan.action is not Action.ERROR:
        plan = replace(
            plan,
            moved_from=match.moved_from,
            reason=f"moved {match.moved_from} -> {post.key}; {plan.reason}",
        )
    if drafts_only and post.published and plan.needs_write:
        live = plan.article is not None and plan.article.published
        plan = replace(
            plan,
            action=Action.SKIP,
            reason=(
                "published article: changes go live with `toolkit publish`"
                if live
                else "will be published by `toolkit publish`"
            ),
        )
    return plan


def _decide(
    plan: PostPlan,
    post: Post,
    payload: Payload,
    match: Match,
    entry: LedgerEntry | None,
    *,
    force: bool,
    recreate: bool,
) -> PostPlan:
    """`plan` (the post, its payload, its article and entry) with its action and reason."""
    draft = "" if post.published else " as a draft"
    if match.resembles is not None and match.article is None:
        weak = match.resembles
        if not force:
            shared, other = match.resemblance()
            return replace(
                plan,
                action=Action.CONFLICT,
                article=weak,
                reason=(
                    f"article {weak.id} has this {shared} but not this post's {other}, and "
                    "toolkit.lock never gave it to a post (written on the website?); "
                    "`toolkit publish --force` sends this post over it, another "
                    f"{shared} makes a new article"
                ),
            )
        match = replace(match, article=weak, resembles=None)
        plan = replace(plan, article=weak)
    if match.problem:
        gone = match.via == "toolkit.lock"  # the lock's article was deleted remotely
        if gone and recreate:
            return replace(
                plan, action=Action.CREATE, reason=f"creates it again{draft} (--recreate)"
            )
        if gone:
            return replace(plan, action=Action.CONFLICT, reason=match.problem)
        return replace(
            plan,
            action=Action.ERROR,
            reason=match.problem,
            problems=[Problem(post.key, match.line, match.problem)],
        )
    article = match.article
    if article is None:
        return replace(plan, action=Action.CREATE, reason=f"new post{draft}")
    remote_body = article.body_markdown or ""
    remote_digest = body_digest(remote_body)
    found = f"article {article.id}" + (
        f" (found by {match.via})" if match.via != "toolkit.lock" else ""
    )
    # The lock's entry when it records this very article.
    ours = entry if entry is not None and entry.article_id == article.id else None
    landed = late = False
    if (
        ours is not None
        and remote_digest != ours.remote_digest
        and remote_digest == ours.pending_body_digest
    ):
        ours = landed_entry(ours, article.edited_at, remote_digest)
        plan = replace(plan, entry=ours)
        landed = True
    elif (
        ours is not None
        and remote_digest != ours.remote_digest
        and remote_digest in ours.unconfirmed
    ):
        # An older update of ours, committed late (over a newer one): ours, not an edit.
        ours = late_entry(ours, article.edited_at, remote_digest)
        plan = replace(plan, entry=ours)
        late = True
    if (
        ours is not None
        and remote_digest != ours.remote_digest
        and remote_body != payload.body_markdown
    ):
        if force:
            return replace(
                plan,
                action=Action.UPDATE,
                reason=f"overwrites the website edit of {found} (--force)",
            )
        return replace(
            plan,
            action=Action.CONFLICT,
            reason=(
                f"{found} was edited on the website since the last publish; "
                "`toolkit pull` takes the website version, `toolkit publish --force` keeps yours"
            ),
        )
    unchanged_since_lock = (
        ours is not None
        and ours.sent_digest == payload.digest
        and ours.remote_digest == remote_digest
    )
    if unchanged_since_lock or (
        remote_body == payload.body_markdown and article.published in (None, post.published)
    ):
        # The API may reformat a body it stores; the lock remembers that what it holds is ours.
        return replace(
            plan,
            reason=f"{found} is up to date"
            + (" (an interrupted publish had sent it)" if landed else ""),
        )
    if (
        article.published is not None
        and article.published != post.published
        and remote_body == payload.body_markdown
    ):
        reason = f"{found}: {'publishes it' if post.published else 'turns it back into a draft'}"
    elif late:
        reason = (
            f"{found}: an older version an interrupted publish had sent landed "
            "late; sends the post again"
        )
    elif ours is not None:
        reason = f"{found}: {what_changed(post, payload.body_markdown, remote_body)}"
    else:
        reason = f"{found} differs from the post ({what_changed(post, payload.body_markdown, remote_body)})"
    return replace(plan, action=Action.UPDATE, reason=reason)


# Where an image or a link points, in Markdown or HTML: `](target`, `]: target`, `src="target`.
_TARGET = re.compile(r"(\]\(\s*<?|\]:\s*<?|src\s*=\s*[\"'])([^\s)>\"']+)")


def what_changed(post: Post, now: str, before: str) -> str:
    """Why a post is sent again, from what was sent before (`before`, the article's body
    when nobody edited it on the website) and what would be sent `now`: the settings
    (toolkit.toml changed a value toolkit writes: a canonical URL, image URLs), toolkit's
    template of the article (the same values, written otherwise), the front matter (the
    keys named) or the body."""

    try:
        sent = parse_post(post.path, post.key, before)
        sending = parse_post(post.path, post.key, now)
    except PostError:
        return "the post changed since the last publish"
    if not sent.meta and sending.meta:
        # Written on the website: its title, tags... are the article's fields, not its
        # text, so no key of its can be said to have changed.
        written = "the article's text on the website has no front matter"
        return written + ("; the body changed" if sent.body != sending.body else "")
    settings: list[str] = []
    front: list[str] = []
    for key in sorted(set(sent.meta) | set(sending.meta)):
        if sent.meta.get(key) == sending.meta.get(key):
            continue
        if (
            key == "description"
            and not _said(sent.meta.get(key))
            and not _said(sending.meta.get(key))
        ):
            continue  # an empty one, sent as null before and left out now: the template
        if _from_settings(post, key):
            settings.append(key)
        else:
            front.append(key)
    body = ""
    if sent.body != sending.body:
        body = "image URLs" if _only_image_urls(sent.body, sending.body) else "body"
    if body == "image URLs":
        settings.append(body)
    reasons = []
    if settings:
        reasons.append(f"toolkit.toml changed what is sent ({', '.join(settings)})")
    if front:
        reasons.append(f"the front matter changed ({', '.join(front)})")
    if body == "body":
        reasons.append("the body changed")
    if not reasons:  # the same values and body, written otherwise
        reasons.append(
            "toolkit's template of the article changed (the same front matter, written otherwise)"
        )
    return "; ".join(reasons)


def _said(value: object) -> bool:
    return isinstance(value, str) and bool(value.strip())


def _from_settings(post: Post, key: str) -> bool:
    """Whether toolkit writes `key` from its settings rather than from the post."""
    if key == "canonical_url":
        return "canonical_url" not in post.meta
    if key == "cover_image":
        cover = post.cover_image
        return cover is not None and images.is_relative(cover.strip())
    return False


def _only_image_urls(before: str, now: str) -> bool:
    """The two bodies differ only in where images and links point, each pair naming the
    same file (another base URL, or a relative path made absolute): a setting, not an
    edit."""
    old, new = before.split("\n"), now.split("\n")
    if len(old) != len(new):
        return False
    for a, b in zip(old, new, strict=True):
        if a == b:
            continue
        if _TARGET.sub(r"\1", a) != _TARGET.sub(r"\1", b):
            return False
        pairs = zip(_TARGET.findall(a), _TARGET.findall(b), strict=False)
        if any(_file_name(x[1]) != _file_name(y[1]) for x, y in pairs):
            return False
    return True


def _file_name(target: str) -> str:
    return posixpath.basename(urlsplit(target).path)


def late_entry(entry: LedgerEntry, edited_at: str | None, remote_digest: str) -> LedgerEntry:
    """The entry once an older unconfirmed update is seen landed: the remote holds it, and
    it cannot land again. What was sent with it is not known (its payload is not kept)."""
    return replace(
        entry,
        sent_digest="",
        remote_digest=remote_digest,
        remote_edited_at=edited_at,
        unconfirmed=tuple(d for d in entry.unconfirmed if d != remote_digest),
    )


def landed_entry(entry: LedgerEntry, edited_at: str | None, remote_digest: str) -> LedgerEntry:
    """The entry as it would read had the interrupted write's success been recorded."""
    return replace(
        entry,
        sent_digest=entry.pending_digest or entry.sent_digest,
        remote_digest=remote_digest,
        remote_edited_at=edited_at,
        pending_digest=None,
        pending_body_digest=None,
    )
