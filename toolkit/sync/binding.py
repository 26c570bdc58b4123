"""Every post of a project bound to its article at once (`remote.bind_posts`), for the
commands that ask about one post or one article (`unpublish`, `forget`, `diff`, `pull`):
which article a post is depends on what the others claim, so none is bound alone."""

from __future__ import annotations

from toolkit.config import Config
from toolkit.content import load_posts, payload_for
from toolkit.content.hosting import canonical_url
from toolkit.content.post import Post
from toolkit.content.problems import Problem
from toolkit.sync.devtogit import read_map
from toolkit.sync.ledger import Ledger
from toolkit.sync.remote import Identities, RemoteState, bind_posts


def bind_project(
    config: Config,
    remote: RemoteState,
    ledger: Ledger,
    loaded: tuple[list[Post], list[Problem]] | None = None,
    holder: str | None = None,
) -> tuple[Identities, list[Post], list[Problem]]:
    """The identities of every post of `config` (`loaded`: its posts and problems, when
    the caller has read them), with the posts and problems they were bound from
    (`holder`: a team's writer whose key read `remote`)."""
    posts, problems = loaded if loaded is not None else load_posts(config)
    bound = bind_posts(
        remote,
        posts,
        ledger,
        lambda post: canonical_url(post, config.site.url),
        mapped=read_map(config.root),
        body_of=lambda post: payload_for(post, config).body_markdown,
        holder=holder,
    )
    return bound, posts, problems
