"""Where the content folder's files are served, for the images sent to the publishing API,
and which `canonical_url` the API receives.

dev.to cannot resolve `![x](./x.png)`: an image it receives must be an absolute URL. The
first known of these hosts a relative image (`image_host`):

1. `[site] assets_base_url`: the content folder's files are served under it;
2. in CI on GitHub (`GITHUB_ACTIONS=true`, `GITHUB_REPOSITORY`, `GITHUB_SHA`): the
   pushed commit's raw files, as dev-to-git and devto-cli send them
   (`https://raw.githubusercontent.com/<repository>/<sha>/<path from the repository's
   root>`; on GitHub Enterprise Server, `<GITHUB_SERVER_URL>/<repository>/raw/<sha>/...`,
   where `GITHUB_SERVER_URL` must be an http(s) origin);
3. the deployed site, when `[site] images_from_site = true` says the site at `[site] url`
   is deployed (the site copies a post's images at their path in the content folder).

When none is known, a post that `publish` would send with a relative image is an error
of `toolkit check` (and so of `plan` and `publish`, which send none of those posts).

`canonical_url` is sent only when the writer asked for it: the post's own, or, with
`[forem] canonical = "site"`, its page on the site. `[site] url` alone changes nothing
that is sent.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Protocol
from urllib.parse import quote

from toolkit.config.keys import origin_problem
from toolkit.errors import ConfigError

if TYPE_CHECKING:  # pragma: no cover
    from toolkit.config import Config

GITHUB = "https://github.com"
GITHUB_RAW = "https://raw.githubusercontent.com"
NOTHING_HOSTS = "set [site] assets_base_url, or publish from CI"


@dataclass(frozen=True)
class ImageHost:
    """The absolute base under which a file of the content folder is served (a relative
    image's path in the folder goes after it), or None when nothing is known to serve it."""

    base_url: str | None
    source: str  # what said so, for messages: "[site] assets_base_url", ...


NO_HOST = ImageHost(None, "nothing")


def git_root(start: Path) -> Path | None:
    """The folder of the git repository holding `start` (where `.git` is: a folder, or
    the file of a worktree or submodule), or None."""
    for folder in (start, *start.parents):
        if (folder / ".git").exists():
            return folder
    return None


@lru_cache(maxsize=16)
def _ci_base(
    content_dir: Path, server: str, repository: str, sha: str, workspace: str
) -> str | None:
    root = git_root(content_dir)
    if root is None and workspace:
        root = Path(os.path.realpath(workspace))
    if root is None:
        return None
    try:
        inside = content_dir.relative_to(root).as_posix()
    except ValueError:
        return None
    server = server.rstrip("/") or GITHUB
    repository = quote(repository.strip("/"))
    sha = quote(sha)
    if server == GITHUB:
        base = f"{GITHUB_RAW}/{repository}/{sha}"
    else:
        base = f"{server}/{repository}/raw/{sha}"
    return base if inside in ("", ".") else f"{base}/{quote(inside)}"


def commit_base(folder: Path, environ: Mapping[str, str] | None = None) -> str | None:
    """In CI on GitHub, the address of `folder`'s files in the pushed commit; else None."""
    env = os.environ if environ is None else environ
    repository, sha = env.get("GITHUB_REPOSITORY", ""), env.get("GITHUB_SHA", "")
    if env.get("GITHUB_ACTIONS") == "true" and repository.strip("/") and sha.strip():
        server = env.get("GITHUB_SERVER_URL", "") or GITHUB
        problem = origin_problem(server)
        if problem is not None:  # spliced into every image URL sent: an origin only
            raise ConfigError([f"GITHUB_SERVER_URL: {problem}"])
        return _ci_base(
            Path(os.path.realpath(folder)),
            server,
            repository,
            sha.strip(),
            env.get("GITHUB_WORKSPACE", ""),
        )
    return None


def image_host(config: Config, environ: Mapping[str, str] | None = None) -> ImageHost:
    """Who serves the content folder's files, from the first source known (module doc)."""
    site = config.site
    if site.assets_base_url:
        return ImageHost(site.assets_base_url, "[site] assets_base_url")
    base = commit_base(site.content_dir, environ)
    if base is not None:
        return ImageHost(base, "the pushed commit on GitHub")
    if site.images_from_site and site.url:
        return ImageHost(site.url, "[site] url (images_from_site)")
    return NO_HOST


def canonical_home(config: Config) -> str | None:
    """The site's address when the writer made the site the posts' canonical home."""
    return config.site.url if config.forem.canonical == "site" else None


class Addressed(Protocol):
    """What a post's canonical URL is made of (a `Post`, or a `known.KnownPost`)."""

    @property
    def slug(self) -> str: ...
    @property
    def canonical_url(self) -> str | None: ...


def canonical_url(post: Addressed, home: str | None) -> str | None:
    """The post's canonical URL: its own, else its page under `home`, else none. What the
    API receives is this with `home` the site when `[forem] canonical = "site"`
    (`canonical_home`); a remote article is matched to its post with `home` the site
    whenever `[site] url` is set."""
    if post.canonical_url:
        return post.canonical_url.strip()
    if home:
        return f"{home.rstrip('/')}/{post.slug}/"
    return None
