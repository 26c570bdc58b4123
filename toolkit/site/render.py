"""The work a build hands out: reading posts, rendering them, writing pages.

A `Renderer` does it all in the process that holds it; the parallel pool forks copies of
it (with the templates already compiled) and sends each copy jobs. Jobs and results are
small tuples and dicts: a rendered body stays in the process that rendered it until its
page is written (`bodies`), and each process writes its own files.

Two steps, because a post's page depends on other posts (series navigation, links):

1. `prepare`: read and check a post, say what its front matter holds, render its body;
2. `assemble`: put a body into its page template, or render a listing, and write it.
"""

from __future__ import annotations

import datetime as dt
import functools
import math
import os
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, TypedDict

from toolkit.config import Config
from toolkit.content import bodies_of
from toolkit.content.problems import PostError, Severity
from toolkit.errors import BuildError
from toolkit.localfiles import config_folders
from toolkit.redact import quoted
from toolkit.site.manifest import OutputRecord, PostInfo, ProblemRow
from toolkit.site.mirror_files import MirrorError, comment_thread, read_json
from toolkit.site.output import Written, digest_bytes, write_if_changed
from toolkit.site.theme_files import PAGE_TEMPLATES, PREMIUM, make_environment

if TYPE_CHECKING:  # pragma: no cover
    import jinja2
    from markupsafe import Markup

    from toolkit.content.bodies import SourceBodies
    from toolkit.content.post import Post
    from toolkit.site.markdown import MarkdownRenderer
    from toolkit.site.shapes import TocEntry

_WORD = re.compile(r"\w+")
WORDS_PER_MINUTE = 275
TOC_MINIMUM = 3  # a post shows its table of contents from this many headings (h2, h3)
# Folders of the site itself: a post with one of these slugs would overwrite them.
RESERVED_SLUGS = frozenset({"tags", "page", "static", "reading-list", "search", "pagefind"})


class PrepareJob(NamedTuple):
    """A post to read and check (`Renderer.prepare`)."""

    key: str
    path: str  # absolute
    render: bool  # whether to render its body when it can be built


class PostPageJob(NamedTuple):
    """A post's page to write (`Renderer.assemble`): its body is rendered where it is."""

    key: str
    path: str  # of the source, should its body have to be rendered here
    output: str
    context: dict[str, Any]  # all but the body, its table of contents and its comments
    slugs: dict[str, str]  # the posts it links to -> their slugs
    comments: str | None  # the mirror's comments file
    record: OutputRecord | None  # of the last write
    force: bool  # write whatever is there (`--clean`)


class ListingJob(NamedTuple):
    """A listing page to write (`Renderer.assemble`)."""

    template: str
    output: str
    context: dict[str, Any]
    record: OutputRecord | None  # of the last write
    force: bool  # write whatever is there (`--clean`)


PageJob = PostPageJob | ListingJob


class Prepared(TypedDict):
    """What `prepare` found of a post: the fields of its `manifest.PostRecord`."""

    key: str
    stat: list[int]  # mtime_ns, size; [0, 0] when it cannot be read
    digest: str  # of its bytes; "" when it cannot be read
    info: PostInfo | None  # None when it cannot be parsed
    problems: list[ProblemRow]
    excerpt: str | None
    links: list[str] | None  # None when the body was not rendered
    shown_from: str | None  # its date, when it is in the future (`PostRecord.shown_from`)


def reading_time(words: int) -> int:
    """Minutes, as the publishing API computes them (ceil(words / 275)), at least one."""
    return max(1, math.ceil(words / WORDS_PER_MINUTE))


# Non-word ASCII bytes to spaces: counting words this way is four times faster than a regex.
_ASCII_WORDS = bytes(c if chr(c).isalnum() or c == 0x5F else 0x20 for c in range(128)) + bytes(
    [0x20] * 128
)


def count_words(text: str) -> int:
    r"""Words as the publishing API counts them: runs of word characters (`\w+`)."""
    if text.isascii():
        return len(text.encode("ascii").translate(_ASCII_WORDS).split())
    return len(_WORD.findall(text))


def nested_toc(entries: list[TocEntry]) -> list[dict[str, Any]]:
    """The table of contents as the template shows it: each h2 with its h3 headings as
    `children` (an h3 before the first h2 stands on its own)."""
    nested: list[dict[str, Any]] = []
    parent: dict[str, Any] | None = None  # the last h2
    for entry in entries:
        item = {"id": entry["id"], "text": entry["text"], "children": []}
        if entry["level"] > 2 and parent is not None:
            parent["children"].append(item)
        else:
            nested.append(item)
            parent = item if entry["level"] == 2 else None
    return nested


def in_scope(info: PostInfo, *, drafts: bool, premium: bool) -> bool:
    """Whether a post belongs on this build's site at all (errors aside)."""
    return (info["published"] or drafts) and (premium or not info["premium"])


def template_error(exc: Exception, template: str) -> BuildError:
    """A template failure as `file:line: message`, from Jinja2's rewritten traceback."""
    filename = getattr(exc, "filename", None)
    line = getattr(exc, "lineno", None)
    if not line:
        tb = exc.__traceback__
        while tb is not None:
            code = tb.tb_frame.f_code.co_filename
            if code.endswith((".html", ".xml")):
                filename, line = code, tb.tb_lineno
            tb = tb.tb_next
    where = f"{filename or template}:{line}" if line else (filename or template)
    return BuildError(f"{where}: {getattr(exc, 'message', None) or exc}")


class Renderer:
    """Everything a process needs to render and write pages, made once per build."""

    def __init__(
        self,
        config: Config,
        output_dir: Path,
        key_prefix: str,
        cache_dir: Path | None,
        *,
        drafts: bool,
        premium: bool,
        highlight_dir: Path | None = None,
    ):
        self.config = config
        self.output_dir = output_dir
        self.key_prefix = key_prefix
        self.cache_dir = cache_dir
        self.drafts = drafts
        self.premium = premium
        self.highlight_dir = highlight_dir  # code highlighted by earlier builds
        self.keep_highlights = True  # write what it highlights (see `keep_highlighted`)
        # Rendered bodies waiting for their page: HTML and table of contents, by post.
        self.bodies: dict[str, tuple[str, list[TocEntry]]] = {}
        self._env: jinja2.Environment | None = None
        self._markdown: MarkdownRenderer | None = None
        self._feed_markdown: MarkdownRenderer | None = None

    # -- what is made lazily, so a build with nothing to render never imports it --------

    @property
    def env(self) -> jinja2.Environment:
        if self._env is None:
            templates = self.config.site.templates_dir
            self._env = make_environment(
                templates,
                self.cache_dir,
                config_folders(self.config),
                templates / PREMIUM if self.premium else None,
            )
        return self._env

    @property
    def markdown(self) -> MarkdownRenderer:
        if self._markdown is None:
            from toolkit.site.markdown import HighlightCache, MarkdownRenderer

            site = self.config.site
            highlights = None
            if self.highlight_dir is not None:
                highlights = HighlightCache(self.highlight_dir)
                highlights.writable = self.keep_highlights
            self._markdown = MarkdownRenderer(
                site.content_dir,
                self.key_prefix,
                allow_raw_html=site.allow_raw_html,
                highlights=highlights,
            )
        return self._markdown

    def keep_highlighted(self, keep: bool) -> None:
        """Whether the code it highlights from now on is kept for later builds: not for
        a big batch of posts (a file for every block), only for a few."""
        self.keep_highlights = keep
        if self._markdown is not None and self._markdown.highlights is not None:
            self._markdown.highlights.writable = keep

    def warm(self) -> None:
        """Compile the templates once, before forking workers. (The markdown side is left
        to the workers: they import it side by side, while here it would hold them up.)"""
        for name in PAGE_TEMPLATES:
            self.template(name)

    def template(self, name: str) -> jinja2.Template:
        from jinja2 import TemplateError

        try:
            return self.env.get_template(name)
        except TemplateError as exc:
            raise template_error(exc, name) from None

    def reset_templates(self) -> None:
        """Forget compiled templates (a template file changed); the next use reloads."""
        if self._env is not None and self._env.cache is not None:  # None: it caches nothing
            self._env.cache.clear()

    # -- step 1 ------------------------------------------------------------------------

    def prepare(self, jobs: list[PrepareJob]) -> list[Prepared]:
        return [self._prepare_guarded(job.key, job.path, job.render) for job in jobs]

    def _prepare_guarded(self, key: str, path: str, render: bool) -> Prepared:
        """`_prepare_one`, with anything it did not foresee made the post's own error: one
        post never stops the build, here or in a worker process."""
        try:
            return self._prepare_one(key, path, render)
        except Exception as exc:
            self.bodies.pop(key, None)
            reason = (str(exc).splitlines() or [""])[0][:200]
            return {
                "key": key,
                "info": None,
                "excerpt": None,
                "links": None,
                "stat": [0, 0],
                "digest": "",
                "problems": [
                    ProblemRow(
                        1,
                        f"cannot be built: {type(exc).__name__}"
                        + (f": {reason}" if reason else ""),
                    )
                ],
                "shown_from": None,
            }

    def _prepare_one(self, key: str, path: str, render: bool) -> Prepared:
        from toolkit.content.rules import validate_post

        site = self.config.site
        result: Prepared = {
            "key": key,
            "info": None,
            "excerpt": None,
            "links": None,
            "stat": [0, 0],
            "digest": "",
            "problems": [],
            "shown_from": None,
        }
        try:  # at most MAX_FILE_BYTES, and never a FIFO or device
            from toolkit.content.post import post_from_bytes, read_post_file

            st, data = read_post_file(path, key)
        except PostError as exc:
            result["problems"] = [ProblemRow(1, exc.problem.message)]
            return result
        result["stat"] = [st.st_mtime_ns, st.st_size]
        result["digest"] = digest_bytes(data)
        try:
            post = post_from_bytes(Path(path), key, data)
        except PostError as exc:
            problem = exc.problem
            result["problems"] = [ProblemRow.of(problem)]
            return result
        if not post.has_front_matter:  # not a post (a code sample's README): left out
            return result
        post = self.read(post)
        # The rules of the post on its own; those between posts (a title used twice...)
        # are the builder's, over every post (`siteplan.post_problems`).
        now = dt.datetime.now(dt.UTC)

        bodies = bodies_of(self.config)
        problems = validate_post(post, site.content_dir, now=now, bodies=bodies)
        if post.reading is not None:
            problems += post.reading.problems
        rows = [ProblemRow.of(p) for p in sorted(problems)]
        if bodies is not None:
            rows += uncopied_images(post, bodies)
        if post.slug in RESERVED_SLUGS:
            rows.append(
                ProblemRow(
                    post.line_of("slug"),
                    f"slug: {post.slug!r} is taken by the site's own {post.slug}/ folder; "
                    "set another slug",
                    Severity.ERROR,
                )
            )
        result["problems"] = rows
        if post.published and post.date is not None and post.date > now:
            # Off the site until then (`rules`' future date): checked again on every build.
            result["shown_from"] = post.date.isoformat()
        info = post_info(post, site.url, site.content_dir)
        result["info"] = info
        if (
            render
            and in_scope(info, drafts=self.drafts, premium=self.premium)
            and not any(row.stops_site for row in rows)
        ):
            body = self.markdown.render(self.source_of(post), post.path)
            self.bodies[key] = (body.html, body.toc)
            result["excerpt"] = body.excerpt
            result["links"] = body.links
        return result

    def read(self, post: Post) -> Post:
        """`post` read as `publish` reads it: for the generator `[source]` names, if any
        (`sources.site_reader`)."""
        from toolkit.content.sources import site_reader

        return site_reader(self.config)(post)

    def source_of(self, post: Post) -> str:
        """The Markdown a post's page shows: as written, or, when the posts are written for
        another generator, translated as the API receives it (`payload.sent_body`)."""

        bodies = bodies_of(self.config)
        if bodies is None:
            return post.body
        from toolkit.content.payload import sent_body

        return sent_body(post, bodies)

    # -- step 2 ------------------------------------------------------------------------

    def assemble(self, jobs: list[PageJob]) -> list[tuple[str, Written]]:
        return [self._assemble_one(job) for job in jobs]

    def _assemble_one(self, job: PageJob) -> tuple[str, Written]:
        context = job.context
        if isinstance(job, PostPageJob):
            template = "post.html"
            context["post"]["body"], toc = self._body(job.key, job.path, job.slugs)
            context["post"]["toc"] = nested_toc(toc) if len(toc) >= TOC_MINIMUM else []
            context["post"]["comments"] = self._comments(job.comments)
        else:
            template = job.template
        from jinja2 import TemplateError

        try:
            text = self.template(template).render(context)
        except TemplateError as exc:
            raise template_error(exc, template) from None
        data = text.encode("utf-8")
        return job.output, write_if_changed(
            self.output_dir / job.output, data, job.record, job.force, self.output_dir
        )

    def _body(self, key: str, path: str, slugs: dict[str, str]) -> tuple[Markup, list[TocEntry]]:
        from markupsafe import Markup

        from toolkit.site.markdown import resolve_links

        body = self.bodies.pop(key, None)
        if body is None:  # rendered in another process, or not at all yet
            from toolkit.content.post import load_post

            post = self.read(load_post(Path(path), key))
            rendered = self.markdown.render(self.source_of(post), post.path)
            body = (rendered.html, rendered.toc)
        return Markup(resolve_links(body[0], slugs)), body[1]

    def feed_body(self, key: str, path: str, slugs: dict[str, str]) -> str:
        """A post's HTML for the feed ([site] feed_full_content): its links and images
        absolute under [site] url when there is one, else relative to the post's page
        (the feed's `xml:base`)."""
        from toolkit.site.markdown import MarkdownRenderer, resolve_links

        site = self.config.site
        prefix = f"{site.url}/" if site.url else "../"
        if self._feed_markdown is None:
            self._feed_markdown = MarkdownRenderer(
                site.content_dir,
                self.key_prefix,
                prefix,
                allow_raw_html=site.allow_raw_html,
                say_fallbacks=False,
            )
        from toolkit.content.post import load_post

        post = self.read(load_post(Path(path), key))
        return resolve_links(
            self._feed_markdown.render(self.source_of(post), post.path).html, slugs, prefix
        )

    @staticmethod
    def _comments(path: str | None) -> dict[str, Any] | None:
        if path is None:
            return None

        try:
            return comment_thread(read_json(Path(path)))
        except MirrorError:
            return None  # the builder reports the file; the page goes without it


def uncopied_images(post: Post, bodies: SourceBodies) -> list[ProblemRow]:
    """The images of a post kept for another generator that its page here cannot show: a
    file the post names outside the content folder (Astro's `../../assets/`), which the
    site does not copy, and nothing hosts (`SourceBodies.image_url`)."""
    from toolkit.content import images

    content = Path(os.path.realpath(bodies.content_dir))
    found = [(ref.src, ref.line, "image") for ref in images.find_images(post.body, post.body_line)]
    cover = post.cover_image
    if isinstance(cover, str):
        found.append((cover.strip(), post.line_of("cover_image"), post.key_named("cover_image")))
    rows: list[ProblemRow] = []
    for src, line, label in found:
        if not images.is_relative(src) or src.startswith("/"):
            continue
        file = bodies.locate(src, post)
        if not file.is_file() or images.asset_path(file, content) is not None:
            continue
        if bodies.image_url(src, post) is None:
            rows.append(
                ProblemRow(
                    line,
                    f"{label}: {quoted(src, 80)} is outside the content folder: the site does "
                    "not copy it, and its page shows none (publish from CI, or move it into "
                    "the content folder)",
                    Severity.WARNING,
                )
            )
    return rows


def post_info(post: Post, site_url: str | None, content_dir: Path) -> PostInfo:
    """What the rest of the site needs to know about a post: JSON, kept in the manifest."""
    from toolkit.content import images
    from toolkit.content.rules import site_canonical_url, site_cover, site_tag

    date = post.date
    cover = site_cover(post.cover_image)
    cover_file = None  # the cover's path under the content folder, when it is a file there
    # [file, whether it existed] of each relative image, once per file: the post's problems
    # depend on them. Each `src` is resolved once, however many times the post shows it.
    relative_images: dict[str, bool] = {}

    @functools.cache
    def resolve(src: str) -> Path:
        return images.resolve(src, post.path, content_dir)

    def local(src: str) -> Path | None:
        if not images.is_relative(src):
            return None
        target = resolve(src)
        if str(target) not in relative_images:
            relative_images[str(target)] = target.is_file()
        return target

    for ref in images.find_images(post.body, post.body_line):
        local(ref.src)
    if cover and (target := local(cover)) is not None:
        cover_file = images.asset_path(target, content_dir)
    files = {cover_file} if cover_file else set()
    for src in images.find_references(post.body):
        if images.is_relative(src) and images.unusable(src) is None:
            relative = images.asset_path(resolve(src), content_dir)
            if relative is not None:
                files.add(relative)
    return {
        "title": post.title,
        "slug": post.slug,
        "date": date.isoformat() if date else None,
        "date_written": date.isoformat() if date else None,
        "tags": [tag for tag in post.tags if site_tag(tag)],
        "description": post.description.strip(),
        "series": post.series.strip() if post.series else None,
        "published": post.published,
        "premium": post.premium,
        "pinned": post.pinned,
        "canonical": site_canonical_url(post, site_url),
        "cover": cover,
        "cover_file": cover_file,
        "words": count_words(post.body),
        "images": [[file, existed] for file, existed in relative_images.items()],
        "files": sorted(files),
    }
