"""Why a file that toolkit.lock records as a post is no post now: the words `plan` and
`pull` name it with (`remote.Identities.strays`)."""

from __future__ import annotations

from toolkit.config import Config
from toolkit.content.discover import excluded_by, is_post_path
from toolkit.content.post import load_post
from toolkit.content.problems import PostError
from toolkit.fsutil import describe_os_error


def not_a_post(config: Config, key: str) -> str:
    """Why the file at `key` (a project path that exists) is not a post."""
    path = config.root / key
    content_dir = config.site.content_dir
    if not is_post_path(path, content_dir):
        return f"not a .md file under {config.relative(content_dir)}/ with a name of its own"
    if not is_post_path(path, content_dir, excluded_by(config)):
        return "`[content] exclude` in toolkit.toml leaves it out"
    try:
        post = load_post(path, key)
    except PostError as exc:
        return exc.problem.message
    except OSError as exc:
        return describe_os_error(exc)
    if not post.has_front_matter:
        return "its first line is not the `---` that opens a front matter"
    return "it is not read as a post"
