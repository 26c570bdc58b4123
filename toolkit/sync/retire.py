"""Taking a post off the website on purpose (`unpublish`), and forgetting a gone one.

`unpublish_post` sets the article unpublished (`published: false` on the remote; never a
delete: dev.to keeps the draft, and `publish` can bring it back). The article is the
post's lock entry's, or, for a post still there without one, the one its identity rules
bind it to (`remote.bind_posts`). Forem reads `published` from the front matter of
`body_markdown` before the JSON field, so a body whose front matter says `published:` has
that line set to `false`; nothing else of the body changes. For a post whose file is
gone, the lock entry is dropped once the article is unpublished (nothing public is left
to speak of). A post still there has its own top-level `published: true` line set to
`published: false` too (nothing else of the file changes), since the file is the source
of truth and the next publish would otherwise publish it again; its entry records the
new remote body.

`forget_post` drops the lock entry of a post whose file is gone (or is no post now);
the article stays as it is on the website.

Both bind every post of the project first (`binding.bind_project`), as `plan` does: the
article of the post named is the one its binding with all the others gives it, and the
entry of a gone file that a renamed post took over is that post's (named, not touched).

Both are called with the run lock held (`toolkit.commands`).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from toolkit import localfiles
from toolkit.clients.forem import ForemClient
from toolkit.config import Config
from toolkit.content import PostError, load_project_post, payload_for
from toolkit.content.payload import body_digest
from toolkit.content.post import read_post_file
from toolkit.errors import SyncError
from toolkit.fsutil import atomic_write, describe_os_error
from toolkit.sync.binding import bind_project, team_account
from toolkit.sync.ledger import Ledger, LedgerEntry
from toolkit.sync.remote import FRONT_MATTER, Identities, Match, RemoteState
from toolkit.sync.stray import not_a_post

# A top-level `published:` line: its value, then the comment that may follow it (kept).
PUBLISHED_LINE = re.compile(r"^published[ \t]*:.*?([ \t]+#.*?)?(\r?)$", re.MULTILINE)
BOM = "\ufeff"


@dataclass
class RetireResult:
    path: str  # the post's project-relative path
    action: str  # "unpublished", "already unpublished" or "forgotten"
    article_id: int
    url: str | None
    gone: bool  # the post's file is gone
    message: str
    notes: list[str] = field(default_factory=list)
    requests: int = 0


def post_key(config: Config, given: str | Path) -> str:
    """The lock's name of a path as typed (relative to the working folder, or absolute);
    SyncError for one outside the project."""
    absolute = Path(os.path.abspath(given))
    key = config.relative(absolute)
    if Path(key).is_absolute() or key == "." or key.startswith("../"):
        raise SyncError(f"{given}: not a path in this project ({config.root})")
    if localfiles.leads_out(config.root, absolute):
        raise SyncError(f"{given}: leads out of the project through a symlink; not followed")
    return key


def unpublished_body(body_markdown: str) -> str:
    """The body with its front matter's `published:` lines set to `false`, a comment on
    the line kept (the body as it is when its front matter has none, or it has no front
    matter). A byte-order mark before the front matter is kept, as the post reads past it."""
    bom = BOM if body_markdown.startswith(BOM) else ""
    text = body_markdown[len(bom) :]
    found = FRONT_MATTER.match(text)
    if found is None:
        return body_markdown
    block = PUBLISHED_LINE.sub(r"published: false\1\2", found.group(0))
    return bom + block + text[found.end() :]


def unpublish_post(config: Config, client: ForemClient, given: str | Path) -> RetireResult:
    key = post_key(config, given)
    ledger = Ledger.of(config)
    path = config.root / key
    gone = not path.exists()
    entry = ledger.get(key)
    if gone and entry is None:
        raise SyncError(f"{key}: no such post, and toolkit.lock has no entry for it")
    remote = RemoteState(client.iter_my_articles("all"))
    bound, posts, _ = bind_project(config, remote, ledger, account=team_account(config, key))
    notes: list[str] = []
    published_locally = False
    replaces: str | None = None
    match = bound.matches.get(key)
    if match is not None:  # a post: the article every post's binding gives it
        post = next(p for p in posts if p.key == key)
        article_id = _bound_article(key, match)
        published_locally = post.published
        replaces = match.moved_from
    elif gone:
        assert entry is not None
        _not_taken_over(key, bound)
        article_id = entry.article_id
    elif entry is not None:  # there, but no post now: its entry's article
        article_id = entry.article_id
    else:
        raise SyncError(f"{key}: {not_a_post(config, key)}, and toolkit.lock has no entry for it")
    article = remote.by_id.get(article_id)
    if article is None:
        raise SyncError(
            f"{key}: article {article_id} is not on the website any more"
            + (f"; `toolkit forget {key}` drops its entry" if gone else "")
        )
    if article.published is False:
        action, message = "already unpublished", f"article {article_id} is already unpublished"
        current = article
    else:
        body = article.body_markdown or ""
        data: dict[str, Any] = {"published": False}
        new_body = unpublished_body(body)
        if new_body != body:
            data["body_markdown"] = new_body
        # The answer is the article's show form, without `published` (and its
        # `published_at` stays): the 200 is the word that it is done.
        current = client.update_article(article_id, {"article": data})
        action, message = "unpublished", f"article {article_id} is unpublished (a draft now)"
    if gone:
        ledger.forget(key)
        message += f"; toolkit.lock forgets {key}"
    else:
        remote_body = current.body_markdown
        if remote_body is None:
            remote_body = unpublished_body(article.body_markdown or "")
        sent = ""  # unknown: the next publish compares the bodies
        if config.source.generator != "devto":
            # The post is the generator's: its `published:` (Jekyll: render it) is not
            # dev.to's, so the file is left as it is.
            published_locally = False
            notes.append(
                f"{key} is left as it is (written for {config.source.generator}): "
                "`devtoSkip: true` in it keeps the next `toolkit publish` from publishing "
                "it again"
            )
        if published_locally:
            changed, sent, problem = _unpublish_file(config, key, path, remote_body)
            if changed:
                message += f"; {key} says `published: false` now"
            else:
                notes.append(
                    f"{key} still says `published: true` ({problem}): the next "
                    "`toolkit publish` publishes it again; set `published: false` in it"
                )
        ledger.record(
            key,
            LedgerEntry(
                article_id=article_id,
                url=current.url or article.url,
                sent_digest=sent,
                remote_digest=body_digest(remote_body),
                remote_edited_at=current.edited_at,
                published=False,
            ),
            replaces=replaces,
        )
    return RetireResult(
        key,
        action,
        article_id,
        current.url or article.url,
        gone,
        message,
        notes,
        requests=client.requests_made,
    )


def _unpublish_file(
    config: Config, key: str, path: Path, remote_body: str
) -> tuple[bool, str, str]:
    """Set the post's own `published:` line to false (nothing else of the file changes):
    (whether it was changed, the digest of what the post now sends when the website holds
    just that, else "", why it was not changed)."""
    try:
        _, data = read_post_file(path, key)
        text = data.decode("utf-8")
    except PostError as exc:
        return False, "", exc.problem.message
    except UnicodeDecodeError:
        return False, "", "not valid UTF-8 text"
    changed = unpublished_body(text)
    if changed == text:
        return False, "", "no `published:` line of its own to change"
    try:
        atomic_write(path, changed.encode("utf-8"))
    except OSError as exc:
        return False, "", describe_os_error(exc)
    try:
        payload = payload_for(load_project_post(config, path, key), config)
    except PostError:
        return True, "", ""
    return True, (payload.digest if payload.body_markdown == remote_body else ""), ""


def _bound_article(key: str, match: Match) -> int:
    """The article a post is, bound with every other post; SyncError when it is none."""
    if match.problem is not None:
        raise SyncError(f"{key}:{match.line}: {match.problem}")
    if match.resembles is not None:
        shared = match.resemblance()[0]
        raise SyncError(
            f"{key}: only its {shared} is article {match.resembles.id}'s, which toolkit.lock "
            f"never gave to a post; it is not unpublished on a {shared} alone "
            f"(`toolkit diff {key}` shows both)"
        )
    if match.article is None:
        raise SyncError(f"{key}: no article on the website is this post (never published?)")
    if match.via == "title" and match.moved_from is None:
        raise SyncError(
            f"{key}: only its title is article {match.article.id}'s; it is not unpublished "
            f"on a title alone (add `id: {match.article.id}` to the front matter if it is "
            "this post's article)"
        )
    return match.article.id


def _not_taken_over(key: str, bound: Identities) -> None:
    """SyncError when the lock entry of `key` (a gone file) is another post's now."""
    for other, match in sorted(bound.matches.items()):
        if match.moved_from == key and match.article is not None:
            raise SyncError(
                f"{key} is {other} now (article {match.article.id}, renamed): its entry "
                f"moves there at the next publish; `toolkit unpublish {other}` unpublishes it"
            )


def forget_post(config: Config, client: ForemClient, given: str | Path) -> RetireResult:
    key = post_key(config, given)
    ledger = Ledger.of(config)
    entry = ledger.get(key)
    if entry is None:
        raise SyncError(f"{key}: toolkit.lock has no entry for it")
    remote = RemoteState(client.iter_my_articles("all"))
    bound, _, problems = bind_project(config, remote, ledger, account=team_account(config, key))
    unreadable = {p.path for p in problems if p.is_error}
    if key in bound.matches or key in unreadable:
        raise SyncError(
            f"{key} is still there: forget is for a post whose file is gone or is no post "
            f"now (delete it first, or `toolkit unpublish {key}` to take its article down)"
        )
    _not_taken_over(key, bound)
    ledger.forget(key)
    return RetireResult(
        key,
        "forgotten",
        entry.article_id,
        entry.url,
        not (config.root / key).exists(),
        f"toolkit.lock forgets {key}; article {entry.article_id} stays on the website as it is",
        requests=client.requests_made,
    )
