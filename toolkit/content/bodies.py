"""A post's body as sent and shown, for a project whose posts another generator keeps.

`SourceBodies` ties the translation (`translate`) to the project: the writer's site
(`[source] url`), its static folder, the page of each post, and who hosts an image file.
The API payload, `toolkit check` and the site all ask it, so they agree. A dev.to-style
project (`[source] generator = "devto"`) has no `SourceBodies`: nothing changes for it.

Images, resolved as the writer's generator serves them:

- a root-relative path (`/images/x.png`, Jekyll's `baseurl` removed first) is a file of the
  static folder (`[source] static_dir`, else the generator's: Hugo `static/`, Astro and Next
  `public/` or `src/public/`, Eleventy `public/`, Jekyll the site's root), else of the
  content folder;
- a relative path is beside the post (a page bundle's siblings), or anywhere in the project
  it leads to from the post's folder (Astro's `../../assets/hero.png`: `src/assets/`, whose
  files the site serves under names of its own);
- a percent-encoded name (`screen%20shot.png`) is the file of the decoded name, else of the
  name as written.

Such a file is made absolute by the first of: `[site] assets_base_url` (the content folder's
files), the pushed commit's raw file in CI (`hosting.commit_base`), the writer's site (a
static file at its path there; a bundle's sibling under the post's page, where Hugo and
Eleventy serve them), `[site] images_from_site`. A file of neither folder has only the
pushed commit to serve it. None known: `toolkit check` says so, as for any relative image.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, unquote, urlsplit

import yaml

from toolkit.content import images
from toolkit.content.discover import find_posts, post_suffixes
from toolkit.content.front_matter import load_front_matter, load_toml_front_matter
from toolkit.content.hosting import commit_base
from toolkit.content.post import Post, load_post
from toolkit.content.problems import PostError
from toolkit.content.sources.permalink import is_bundle, page_url
from toolkit.content.translate import Site, Translation, translate

if TYPE_CHECKING:  # pragma: no cover
    from toolkit.config import Config

# Where each generator keeps the files it serves as they are (relative to the project).
STATIC_DIRS = {
    "hugo": ("static",),
    "astro": ("public", "src/public"),
    "next": ("public", "src/public"),
    "eleventy": ("public",),
    "jekyll": (".",),
}
# Generators that serve a page bundle's files (beside `x/index.md`; Eleventy's `x/x.md`)
# under the page's address.
BUNDLE_SERVED = ("hugo", "eleventy")


def static_dir(config: Config) -> Path | None:
    """The generator's static folder: `[source] static_dir`, else its usual one."""
    source = config.source
    if source.static_dir is not None:
        folder = source.static_dir
        return folder if folder.is_absolute() else config.root / folder
    for name in STATIC_DIRS.get(source.generator, ()):
        if (config.root / name).is_dir():
            return config.root / name
    return None


def default_page_url(post: Post, site_url: str | None) -> str | None:
    """The post's page on the writer's site, when nothing better is known: its slug."""
    if not site_url:
        return None
    return f"{site_url.rstrip('/')}/{post.slug}/"


@dataclass
class SourceBodies:
    """What the bodies of a project kept with another generator need (module doc)."""

    generator: str
    content_dir: Path
    static_dir: Path | None = None
    project_dir: Path | None = None  # where a relative image may lead (the project)
    site_url: str | None = None
    assets_base_url: str | None = None  # the content folder's files, as `image_host` says
    commit_base: Callable[[Path], str | None] = field(default=lambda _folder: None)
    fallback_url: str | None = None  # `[site] images_from_site`: the toolkit site's url
    page_url: Callable[[Post], str | None] | None = None  # the permalink rule's
    posts: Callable[[], Mapping[str, Path]] = field(default=dict)  # a name -> a post file
    load: Callable[[Path], Post | None] = field(default=lambda _path: None)

    @cached_property
    def _named(self) -> Mapping[str, Path]:
        return self.posts()

    def page_of_post(self, post: Post) -> str | None:
        if self.page_url is not None:
            return self.page_url(post)
        return default_page_url(post, self.site_url)

    def page_of(self, name: str) -> str | None:
        """The page of the post a Hugo `ref` or Jekyll `post_url`/`link` names."""
        key = name.strip().strip("/").removesuffix(".md").removesuffix(".mdx")
        key = key.removesuffix("/index").removesuffix("/_index")
        found = self._named.get(key) or self._named.get(key.rsplit("/", 1)[-1])
        if found is None:
            return self._hugo_page(key)
        post = self.load(found)
        return self.page_of_post(post) if post is not None else None

    def _hugo_page(self, key: str) -> str | None:
        """A page of the Hugo site that is no post (`ref "about"`: `content/about.md`),
        served at its path under the site: found from the posts' folder up to the
        project's, never outside it."""
        if self.generator != "hugo" or not self.site_url or self.project_dir is None:
            return None
        if not key or any(part in ("", ".", "..") for part in key.split("/")):
            return None
        project = _real(self.project_dir)
        folder = _real(self.content_dir)
        while folder == project or project in folder.parents:
            for name in (f"{key}.md", f"{key}/index.md", f"{key}/_index.md"):
                file = Path(os.path.realpath(folder / name))
                if file.is_file() and images.asset_path(file, folder) is not None:
                    return f"{self.site_url.rstrip('/')}/{quote(key.lower())}/"
            if folder == project:
                break
            folder = folder.parent
        return None

    def site(self) -> Site:
        return Site(self.site_url, self.page_of)

    def translate(self, post: Post) -> Translation:
        return translate(post.body, self.generator, self.site(), mdx=post.path.suffix == ".mdx")

    # -- images --

    def locate(self, src: str, post: Post) -> Path:
        """The file of the content or static folder an image's `src` names (`os.devnull`
        when none is: a name no file has, or a path leading out of both folders)."""
        if images.unusable(src) is not None:
            return Path(os.devnull)
        try:
            path = urlsplit(src).path
        except ValueError:
            path = src
        candidates: list[str] = [unquote(path), path] if "%" in path else [path]
        for written in candidates:
            for folder, relative in self._places(written, post):
                try:
                    file = Path(os.path.realpath(folder / relative))
                except (OSError, ValueError):
                    continue
                if file.is_file() and self._inside(file, relative=not written.startswith("/")):
                    return file
        return Path(os.devnull)  # nothing of the content or static folder

    def _places(self, written: str, post: Post) -> list[tuple[Path, str]]:
        if not written.startswith("/"):
            return [(post.path.parent, written)]
        base = urlsplit(self.site_url).path.rstrip("/") if self.site_url else ""
        if base and (written == base or written.startswith(base + "/")):
            written = written[len(base) :]
        places = [(self.static_dir, written.lstrip("/"))] if self.static_dir else []
        return [*places, (self.content_dir, written.lstrip("/"))]

    def _inside(self, file: Path, relative: bool = False) -> bool:
        """`file` is one of the content or static folder, or of the project for a path
        relative to the post (`relative`)."""
        folders = (self.content_dir, self.static_dir, self.project_dir if relative else None)
        for folder in folders:
            if folder is not None and images.asset_path(file, _real(folder)) is not None:
                return True
        return False

    def image_url(self, src: str, post: Post) -> str | None:
        """The absolute address an image's `src` is sent with, or None (module doc)."""
        file = self.locate(src, post)
        if not file.is_file():
            return None
        content = _real(self.content_dir)
        in_content = images.asset_path(file, content)
        if in_content is not None and self.assets_base_url:
            return images.absolute_url(self.assets_base_url, in_content)
        committed = self.commit_base(file.parent)
        if committed:
            return f"{committed}/{quote(file.name)}"
        if self.site_url:
            served = self._served(file, post)
            if served:
                return served
        if in_content is not None and self.fallback_url:
            return images.absolute_url(self.fallback_url, in_content)
        return None

    def in_folders(self, file: Path) -> bool:
        """`file` is one of the content or static folder (else only the pushed commit
        serves it)."""
        return self._inside(file)

    def static_shown(self) -> str:
        """The static folder as a message names it (`public/`)."""
        folder = self.static_dir
        if folder is None:
            return "the static folder"
        if self.project_dir is not None:
            try:
                folder = folder.relative_to(self.project_dir)
            except ValueError:
                pass
        return f"{folder.as_posix()}/" if folder != Path(".") else "the project's top folder"

    def _served(self, file: Path, post: Post) -> str | None:
        """Where the writer's site serves `file`."""
        assert self.site_url is not None
        if self.static_dir is not None:
            in_static = images.asset_path(file, _real(self.static_dir))
            if in_static is not None:
                return images.absolute_url(self.site_url, in_static)
        if self.generator in BUNDLE_SERVED and is_bundle(post.path, self.generator):
            beside = images.asset_path(file, _real(post.path.parent))
            page = self.page_of_post(post) if beside is not None else None
            if page and beside is not None and not page.endswith((".html", ".htm")):
                return page.rstrip("/") + "/" + quote(beside)
        return None

    def link_url(self, target: str) -> str | None:
        """A root-relative link's address on the writer's site (dev.to would read
        `/2020/other/` as one of its own pages), or None for any other target."""
        if not self.site_url or not target.startswith("/") or target.startswith("//"):
            return None
        if any(ord(char) < 33 or ord(char) == 127 for char in target):
            return None
        parts = urlsplit(self.site_url)
        base = parts.path.rstrip("/")
        if base and (target == base or target.startswith(base + "/")):
            return f"{parts.scheme}://{parts.netloc}{target}"
        return self.site_url.rstrip("/") + target


def _real(folder: Path) -> Path:
    return Path(os.path.realpath(folder))


def source_bodies(config: Config, environ: Mapping[str, str] | None = None) -> SourceBodies | None:
    """The project's `SourceBodies`, or None for a dev.to-style project (whose posts are
    sent as written, `.mdx` files excepted)."""
    generator = config.source.generator
    if generator == "devto":
        return None
    site = config.site
    env = os.environ if environ is None else environ

    def posts() -> Mapping[str, Path]:
        names: dict[str, Path] = {}
        content = site.content_dir
        for path in find_posts(content, (), suffixes=post_suffixes(config)):
            try:
                relative = path.relative_to(content).with_suffix("").as_posix()
            except ValueError:
                continue
            folder = relative.rsplit("/", 1)
            stem = folder[-1]
            if stem in ("index", "_index") and len(folder) > 1:
                relative = folder[0]
                stem = relative.rsplit("/", 1)[-1]
            names.setdefault(relative, path)
            names.setdefault(stem, path)
        return names

    def load(path: Path) -> Post | None:
        try:
            return load_post(path, config.relative(path))
        except PostError:
            return None

    return SourceBodies(
        generator=generator,
        content_dir=site.content_dir,
        static_dir=static_dir(config),
        project_dir=config.root,
        site_url=config.source.url,
        assets_base_url=site.assets_base_url,
        commit_base=lambda folder: commit_base(folder, env),
        fallback_url=site.url if site.images_from_site else None,
        page_url=_page_url_of(config),
        posts=posts,
        load=load,
    )


def _page_url_of(config: Config) -> Callable[[Post], str | None]:
    """The post's page on the writer's site by the generator's permalink rule, from its
    front matter as written (a post read for dev.to has dev.to's keys in `meta`)."""
    pages: dict[tuple[Path, str], str | None] = {}

    def page(post: Post) -> str | None:
        key = (post.path, post.front_matter)
        if key not in pages:
            if len(pages) > 10_000:
                pages.clear()
            pages[key] = page_url(
                post.path, written_meta(post), config.source, config.site.content_dir
            )
        return pages[key]

    return page


def written_meta(post: Post) -> Mapping[str, Any]:
    """The post's front matter as the writer wrote it."""
    if post.reading is None:
        return post.meta
    try:
        if post.toml:
            meta: Any = load_toml_front_matter(post.front_matter)
        else:
            meta = load_front_matter(post.front_matter)
    except (yaml.YAMLError, ValueError, RecursionError):  # it was read once already
        return post.meta
    return meta if isinstance(meta, dict) else post.meta
