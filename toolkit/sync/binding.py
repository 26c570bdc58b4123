"""Every post of a project bound to its article at once (`identity.bind_posts`), for the
commands that ask about one post or one article (`unpublish`, `forget`, `diff`, `pull`):
which article a post is depends on what the others claim, so none is bound alone."""

from __future__ import annotations

from toolkit.config import Config
from toolkit.content import load_posts, payload_for
from toolkit.content.accounts import Account, account_of
from toolkit.content.hosting import canonical_url
from toolkit.content.post import Post
from toolkit.content.problems import Problem
from toolkit.sync.devtogit import read_map
from toolkit.sync.identity import bind_posts
from toolkit.sync.ledger import Ledger
from toolkit.sync.remote import Identities, RemoteState


def bind_project(
    config: Config,
    remote: RemoteState,
    ledger: Ledger,
    loaded: tuple[list[Post], list[Problem]] | None = None,
    account: Account | None = None,
) -> tuple[Identities, list[Post], list[Problem]]:
    """The identities of every post of `config` (`loaded`: its posts and problems, when
    the caller has read them), with the posts and problems they were bound from
    (`account`: in a team's repository, the writer whose key read `remote`; only their
    posts are bound, as publish binds them)."""
    posts, problems = loaded if loaded is not None else load_posts(config)
    if account is not None:
        posts = [p for p in posts if account.owns(config, p.key)]
        problems = [p for p in problems if account.owns(config, p.path)]
    bound = bind_posts(
        remote,
        posts,
        ledger,
        lambda post: canonical_url(post, config.site.url),
        mapped=read_map(config.root),
        body_of=lambda post: payload_for(post, config).body_markdown,
        holder=account.writer if account is not None else None,
    )
    return bound, posts, problems


def team_account(config: Config, key: str) -> Account | None:
    """In a team's repository, the account of the post at `key` (whose key reads the
    remote list the post is bound against); None otherwise."""
    return account_of(config, key) if config.writers is not None else None
