"""`toolkit diff PATH`: a post against its article on the website.

The two texts compared are what `toolkit publish` would send for the post now and the
body the website holds (each with its front matter, as the API has it), as a unified
diff. The lock says which side moved since the post was last sent: `status` is
`in sync`, `changed here`, `changed on the website`, `changed on both sides`, `differs`
(no record of a last send to tell), or `not on the website`.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from pathlib import Path

from toolkit.clients.forem import ForemClient
from toolkit.config import Config
from toolkit.content import load_posts, payload_for
from toolkit.content.payload import body_digest
from toolkit.errors import ContentError, SyncError
from toolkit.sync.binding import bind_project, team_account
from toolkit.sync.ledger import Ledger
from toolkit.sync.remote import RemoteState

IN_SYNC = "in sync"
CHANGED_HERE = "changed here"
CHANGED_THERE = "changed on the website"
CHANGED_BOTH = "changed on both sides"
DIFFERS = "differs"
NOT_THERE = "not on the website"


@dataclass(frozen=True)
class PostDiff:
    path: str
    status: str
    article_id: int | None = None
    url: str | None = None
    diff: str = ""  # unified diff: `---` what publish would send, `+++` what the website holds


def diff_post(config: Config, client: ForemClient, path: str | Path) -> PostDiff:
    posts, problems = load_posts(config, [path])
    errors = [p for p in problems if p.is_error]
    if errors:
        raise ContentError(str(errors[0]))
    content_dir = config.site.content_dir
    if len(posts) != 1 or not posts[0].path.resolve().is_relative_to(content_dir.resolve()):
        raise ContentError(f"{path}: not a post under {config.relative(content_dir)}/")
    post = posts[0]
    ledger = Ledger.of(config)
    remote = RemoteState(client.iter_my_articles("all"))
    # Bound with every post, as publish binds it.
    everyone, problems = load_posts(config)
    others = [p for p in everyone if p.key != post.key]
    match = bind_project(
        config, remote, ledger, ([post, *others], problems), team_account(config, post.key)
    )[0].matches[post.key]
    if match.problem:
        raise SyncError(f"{post.key}: {match.problem}")
    # A title or a text alone (outside adoption) is shown, never taken as the post's article.
    article = match.article or match.resembles
    if article is None:
        return PostDiff(post.key, NOT_THERE)
    payload = payload_for(post, config)
    raw = article.body_markdown or ""
    theirs = raw.replace("\r\n", "\n")
    diff = "".join(
        difflib.unified_diff(
            payload.body_markdown.splitlines(keepends=True),
            theirs.splitlines(keepends=True),
            f"{post.key} (what publish would send)",
            f"article {article.id} (on the website)",
        )
    )
    entry = match.entry
    if payload.body_markdown == theirs and bool(article.published) == post.published:
        status = IN_SYNC
    elif entry is None:
        status = DIFFERS
    else:
        here = entry.sent_digest != payload.digest
        there = entry.remote_digest != body_digest(raw)
        status = {
            (True, True): CHANGED_BOTH,
            (True, False): CHANGED_HERE,
            (False, True): CHANGED_THERE,
            (False, False): IN_SYNC,
        }[(here, there)]
    return PostDiff(post.key, status, article.id, article.url, diff)
