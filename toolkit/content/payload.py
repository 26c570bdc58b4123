"""What the publishing API receives for a post, byte for byte the same on every run.

`{"article": {"title", "published", "tags", "series", "body_markdown"}}` (plus
`organization_id` when set), where `body_markdown` is the post with its front matter
written again: toolkit's own keys removed, dates as quoted strings (the API answers 422
to an unquoted YAML date), relative images (body and `cover_image`) made absolute under
the base `hosting.image_host` found, an empty `description` left out (dev.to then makes
one from the body; sent as `null`, Forem's front-matter fixer would print "null"), a
`description` written over lines sent as one line (the fixer breaks a YAML block), and
`canonical_url` only when the writer asked for it (`hosting.canonical_url`). The
front matter wins over the JSON fields on the API side, so both are built from the same
values and never disagree.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml
from yaml.representer import SafeRepresenter

from toolkit.content import images
from toolkit.content.fields import FOREM_KEYS, LINE_BREAK, TOOLKIT_KEYS
from toolkit.content.hosting import canonical_url
from toolkit.content.post import Post
from toolkit.content.translate import scan

if TYPE_CHECKING:  # pragma: no cover
    from toolkit.content.bodies import SourceBodies


@dataclass(frozen=True)
class Payload:
    data: dict[str, Any]  # the JSON document to send
    digest: str  # sha256 of its canonical JSON: the "has it changed" fingerprint
    canonical_url: str | None = None  # the canonical_url its front matter sends, if any

    @property
    def article(self) -> dict[str, Any]:
        article: dict[str, Any] = self.data["article"]
        return article

    @property
    def body_markdown(self) -> str:
        body: str = self.data["article"]["body_markdown"]
        return body


def canonical_json(data: Any) -> bytes:
    return json.dumps(data, sort_keys=True, ensure_ascii=False, separators=(",", ":")).encode()


def body_digest(body_markdown: str) -> str:
    """Fingerprint of an article body, used to notice edits made on the website."""
    return hashlib.sha256(body_markdown.encode("utf-8")).hexdigest()


# PyYAML has CSafeDumper only when built with libyaml; its stubs always declare it.
if TYPE_CHECKING or hasattr(yaml, "CSafeDumper"):
    _BaseDumper = yaml.CSafeDumper
else:  # pragma: no cover - PyYAML built without libyaml
    _BaseDumper = yaml.SafeDumper


class _Dumper(_BaseDumper):
    """Block style, keys in the order given, long lines kept whole (libyaml's emitter when
    PyYAML has it: the same output, ten times faster)."""


def _str_presenter(dumper: SafeRepresenter, value: str) -> yaml.ScalarNode:
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


class _Fixed(str):
    """The value of a key Forem's front-matter fixer rewrites (`title`, `description`):
    it wraps what follows `key: ` up to the line's end in double quotes unless it is
    quoted already (`MarkdownProcessor::Fixer::Base.add_quotes_to_section`). So the value
    is written on one line (a `|` block became `"|"` and its lines a YAML error: 422 on
    every publish), and in double quotes when it holds a backslash (wrapped as it was, a
    plain `C:\new` would be read as an escape)."""


def _fixed_presenter(dumper: SafeRepresenter, value: str) -> yaml.ScalarNode:
    style = '"' if "\\" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", str(value), style=style)


class _Escaped(str):
    """A key or value whose text the fixer would rewrite: written in double quotes, with
    the colon of each `title:` and `description:` in it as `\\x3a` (see `sent_front_matter`)."""


def _escaped_presenter(dumper: SafeRepresenter, value: str) -> yaml.ScalarNode:
    return dumper.represent_scalar("tag:yaml.org,2002:str", str(value), style='"')


_Dumper.add_representer(str, _str_presenter)
_Dumper.add_representer(_Fixed, _fixed_presenter)
_Dumper.add_representer(_Escaped, _escaped_presenter)
FIXED_KEYS = ("title", "description")
_FOLDED = re.compile("[ \t]*[\r\n\x85\u2028\u2029][ \t\r\n\x85\u2028\u2029]*")


def one_line(text: str) -> str:
    """`text` on one line, as YAML's `>` folds it: each line break, with the blanks
    around it, one space (none at the ends). Text without a line break is as written."""
    if LINE_BREAK.search(text) is None:
        return text
    return _FOLDED.sub(" ", text).strip()


def _quoted_dates(value: Any) -> Any:
    """Dates and times as ISO strings; PyYAML then quotes them because they look like dates."""
    if isinstance(value, dt.datetime):
        return value.isoformat().replace("+00:00", "Z")
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, dict):
        return {str(k): _quoted_dates(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_quoted_dates(v) for v in value]
    return value


def dump_front_matter(meta: dict[str, Any]) -> str:
    return _dump(_quoted_dates(meta))


def _dump(meta: dict[str, Any]) -> str:
    return yaml.dump(
        meta,
        Dumper=_Dumper,
        sort_keys=False,
        allow_unicode=True,
        default_flow_style=False,
        width=1 << 30,  # a value on one line, however long (see `_Fixed`)
    )


# What Forem's fixer rewrites in the block (`MarkdownProcessor::Fixer::Base`): the text
# after `title:` or `description:` wherever it stands (its pattern has no `^`: in another
# key's value, or after a key such as `subtitle:`) is wrapped in double quotes to the
# line's end, and a line opening `published: ` in any case is lower-cased.
_FIXER_TEXT = re.compile(r"(title|description):")
_FIXER_KEY = re.compile(r"(?:title|description)\Z")
_PUBLISHED = re.compile(r"(?i)published\Z")
_OWN_KEYS = ("title", "description", "published")


def _guarded(value: Any, *, top: bool = False) -> Any:
    """`value` with every text the fixer would rewrite marked `_Escaped`: a string
    holding `title:` or `description:`, a key ending in either (`subtitle`), and a
    top-level key `Published`; the block's own `title`, `description` and `published`
    keys stay as they are (their one-line values are what the fixer expects)."""
    if isinstance(value, dict):
        guarded: dict[Any, Any] = {}
        for key, item in value.items():
            if isinstance(key, str) and not (top and key in _OWN_KEYS):
                if (
                    _FIXER_TEXT.search(key)
                    or _FIXER_KEY.search(key)
                    or (top and _PUBLISHED.match(key))
                ):
                    key = _Escaped(key)
            guarded[key] = _guarded(item)
        return guarded
    if isinstance(value, list):
        return [_guarded(item) for item in value]
    if isinstance(value, str) and _FIXER_TEXT.search(value):
        return _Escaped(value)
    return value


def _escape_fixer_text(match: re.Match[str]) -> str:
    at = match.start()
    if at == 0 or match.string[at - 1] == "\n":
        return match.group(0)  # the block's own `title:` or `description:` key
    return f"{match.group(1)}\\x3a"  # inside a double-quoted string (`_guarded`)


def sent_front_matter(meta: dict[str, Any]) -> str:
    """The front matter as sent, written so Forem's fixer leaves it as it is: each
    `title:` and `description:` in a value or key is written `title\\x3a` in a
    double-quoted string (YAML reads the same text), a key the fixer would match is
    quoted. Without it, a title `A description: b` was sent as
    `title: 'A description: b'`, which the fixer made `title: 'A description: "b'"`:
    a 422 on every publish."""
    text = _dump(_guarded(_quoted_dates(meta), top=True))
    return _FIXER_TEXT.sub(_escape_fixer_text, text)


def _rewrite_images(post: Post, content_dir: Path, base_url: str | None) -> str:
    if not base_url:
        return post.body

    def url_of(src: str) -> str | None:
        file = images.resolve(src, post.path, content_dir)
        relative = images.asset_path(file, content_dir)
        return images.absolute_url(base_url, relative) if relative is not None else None

    return rewrite_images(post.body, url_of)


def rewrite_images(
    body: str, url_of: Callable[[str], str | None], *, code_spans: bool = False
) -> str:
    """`body` with each relative image's source replaced by `url_of(source)` (when not
    None), where it reads as a target and outside fenced code (and code spans, with
    `code_spans`)."""
    replacements: dict[str, str] = {}
    for ref in images.find_images(body):
        if ref.src in replacements or not images.is_relative(ref.src):
            continue
        url = url_of(ref.src)
        if url is not None:
            replacements[ref.src] = url
    return replace_targets(body, replacements, code_spans=code_spans)


def replace_targets(body: str, replacements: dict[str, str], *, code_spans: bool = False) -> str:
    """`body` with each target of `replacements` replaced, where it reads as an image or
    link target (`images.TARGET_LEAD`), outside fenced code (and code spans, with
    `code_spans`)."""
    if not replacements:
        return body
    # Only where a source reads as an image or link target, and never inside fenced code.
    pattern = re.compile(
        images.TARGET_LEAD
        + "("
        + "|".join(re.escape(src) for src in sorted(replacements, key=len, reverse=True))
        + r")(?=[\s)>\"']|$)"
    )

    def sub(text: str) -> str:
        return pattern.sub(lambda m: m.group(1) + replacements[m.group(2)], text)

    lines = body.split("\n")
    for index, inside_code in enumerate(images.code_mask(body)):
        if inside_code:
            continue
        line = lines[index]
        spans = scan.code_spans(line) if code_spans else []
        if not spans:
            lines[index] = sub(line)
            continue
        parts, cursor = [], 0
        for start, stop in spans:
            parts += [sub(line[cursor:start]), line[start:stop]]
            cursor = stop
        parts.append(sub(line[cursor:]))
        lines[index] = "".join(parts)
    return "\n".join(lines)


def sent_body(post: Post, bodies: SourceBodies) -> str:
    """The body of a post written for another generator, as dev.to reads it: translated
    (`translate`), its images made absolute (`bodies.SourceBodies.image_url`), and its
    links to the writer's site (`/2020/other/`) too (`bodies.SourceBodies.link_url`)."""
    body = rewrite_images(
        bodies.translate(post).body, lambda src: bodies.image_url(src, post), code_spans=True
    )
    links: dict[str, str] = {}
    for target in images.find_references(body):
        url = bodies.link_url(target)
        if url is not None:
            links[target] = url
    return replace_targets(body, links, code_spans=True)


def front_matter_for_api(
    post: Post,
    content_dir: Path,
    canonical_home: str | None,
    assets_base_url: str | None,
    bodies: SourceBodies | None = None,
) -> dict[str, Any]:
    """The front matter as the API will read it, in a fixed key order."""
    meta = dict(post.meta)
    for key in TOOLKIT_KEYS:
        meta.pop(key, None)
    description = meta.get("description")
    if description is None or (isinstance(description, str) and not description.strip()):
        meta.pop("description", None)
    if post.tags or "tags" in meta:
        meta["tags"] = ", ".join(post.tags)
    canonical = canonical_url(post, canonical_home)
    if canonical:
        meta["canonical_url"] = canonical
    else:
        meta.pop("canonical_url", None)  # an empty one: nothing asked for
    cover = post.cover_image
    if cover and images.is_relative(cover.strip()) and bodies is not None:
        url = bodies.image_url(cover.strip(), post)
        if url is not None:
            meta["cover_image"] = url
    elif cover and images.is_relative(cover.strip()) and assets_base_url:
        relative = images.asset_path(
            images.resolve(cover.strip(), post.path, content_dir), content_dir
        )
        if relative is not None:
            meta["cover_image"] = images.absolute_url(assets_base_url, relative)
    meta["published"] = post.published
    if post.title:
        meta["title"] = post.title
    for key in FIXED_KEYS:  # a title with a line break is `check`'s error
        if isinstance(meta.get(key), str):
            meta[key] = _Fixed(one_line(meta[key]))
    ordered = {key: meta[key] for key in FOREM_KEYS if key in meta}
    ordered.update((key, value) for key, value in meta.items() if key not in ordered)
    return ordered


def build_payload(
    post: Post,
    content_dir: Path,
    *,
    canonical_home: str | None = None,
    assets_base_url: str | None = None,
    organization_id: int | None = None,
    bodies: SourceBodies | None = None,
) -> Payload:
    """The deterministic payload of a post that passed validation. `assets_base_url`:
    where the content folder's files are served (`hosting.image_host`); `canonical_home`:
    the site's address when the site is the posts' canonical home; `bodies`: the
    project's generator, when the posts are written for another one (`bodies`)."""
    meta = front_matter_for_api(post, content_dir, canonical_home, assets_base_url, bodies)
    if bodies is None:
        body = _rewrite_images(post, content_dir, assets_base_url)
    else:
        body = sent_body(post, bodies)
    body_markdown = f"---\n{sent_front_matter(meta)}---\n{body}"
    article: dict[str, Any] = {
        "title": post.title,
        "published": post.published,
        "tags": post.tags,
        "series": post.series,
        "body_markdown": body_markdown,
    }
    org = post.organization_id or organization_id
    if org:
        article["organization_id"] = org
    data = {"article": article}
    canonical = meta.get("canonical_url")
    return Payload(
        data=data,
        digest=hashlib.sha256(canonical_json(data)).hexdigest(),
        canonical_url=canonical if isinstance(canonical, str) else None,
    )
