"""A remote version of a post, written back in the writer's own form.

What the API holds is a post as `toolkit publish` sent it: front matter written again (keys
in a fixed order, tags as a comma string, dates quoted, toolkit's keys left out) and
relative images made absolute. Writing that over the writer's file would change lines the
writer never touched. So the remote version is merged into the file instead, three ways:

- the front matter key by key: a key whose value the remote side changed (compared as
  values, not as text) is set in the writer's text, in the writer's style (quotes, a tag
  list as a flow or block list or a comma string, an unquoted date), other lines and
  comments untouched; a key the remote removed is removed, one it added is added at the
  end;
- the body line by line (`toolkit.sync.merge`): first `base -> sent` against
  `base -> remote` (what the local post would send now, and what the website holds, both
  made from `base`, the body last sent), then the result against the writer's file with
  `sent` as the base, so a line that differs only by the transform (an image path) keeps
  the writer's form, and a line the remote changed takes the remote's, its image
  targets written back as the writer wrote them.

With `base == sent` (the post has not changed since it was last sent, or `--overwrite`)
the remote version wins everywhere; otherwise changes of both sides that overlap are
conflicts, written between markers.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from toolkit.clients.forem_models import Article
from toolkit.content.fields import FOREM_KEYS, parse_date, split_tags
from toolkit.content.images import TARGET_LEAD
from toolkit.content.payload import dump_front_matter
from toolkit.content.post import Post, parse_post
from toolkit.sync.merge import Merged, conflict_lines, line_ops, lines_of, merge_texts

_ABSENT = object()
# Where a Markdown or HTML image or link names its target.
_TARGET = re.compile(TARGET_LEAD + r"([^\s)>\"']+)")


@dataclass(frozen=True)
class Names:
    """How the two sides are named in conflict markers."""

    ours: str
    theirs: str


def split(text: str, key: str) -> tuple[dict[str, Any] | None, str]:
    """The front matter (the keys the API defines; None when there is no front matter)
    and the body of a post's text; `PostError` when it cannot be read."""
    post = parse_post(Path(key), key, text.replace("\r\n", "\n"))
    if post.body == post.source:
        return None, post.body
    return {k: post.meta[k] for k in FOREM_KEYS if k in post.meta}, post.body


def remote_meta(
    article: Article, meta: dict[str, Any] | None, base: dict[str, Any]
) -> dict[str, Any]:
    """The front matter of a remote article: its body's, with what its fields say where
    the body says nothing; `published` is always the article's state. A body without
    front matter (an editor that keeps the fields apart) changes only what the fields
    tell: the title, the tags, whether it is published."""
    if meta is None:
        meta = {k: v for k, v in base.items() if k not in ("title", "tags")}
        meta["tags"] = list(article.tags)
    meta = dict(meta)
    meta.setdefault("title", article.title)
    meta["published"] = bool(article.published)
    if "tags" not in meta and article.tags:
        meta["tags"] = ", ".join(article.tags)
    return meta


def _same(key: str, a: Any, b: Any) -> bool:
    """Whether two front matter values mean the same to the API."""
    if a is _ABSENT or b is _ABSENT:
        return a is b
    if key == "tags":
        return [t.lower() for t in split_tags(a)] == [t.lower() for t in split_tags(b)]
    if key == "published":
        return (a is True) == (b is True)
    if key == "date":
        return parse_date(a) == parse_date(b) if parse_date(a) else a == b
    if isinstance(a, str) and isinstance(b, str):
        return a.strip() == b.strip()
    return bool(a == b)


# -- the writer's front matter, edited in place ------------------------------------------


@dataclass
class _Span:
    key: str
    first: int  # first line (of the front matter text) of the key
    end: int  # one past its last line
    key_node: Node
    value: Node


def _spans(text: str, lines: list[str]) -> dict[str, _Span]:
    # The writer's own front matter, which toolkit's bounded loader has already read.
    root = yaml.compose(text, Loader=yaml.SafeLoader)
    if not isinstance(root, MappingNode):
        return {}
    starts = [(k.start_mark.line, k, v) for k, v in root.value if isinstance(k, ScalarNode)]
    spans = {}
    for index, (first, key_node, value) in enumerate(starts):
        end = starts[index + 1][0] if index + 1 < len(starts) else len(lines)
        while end > first + 1 and (not lines[end - 1].strip() or lines[end - 1].startswith("#")):
            end -= 1  # blank lines and comments before the next key are not this key's
        spans[str(key_node.value)] = _Span(str(key_node.value), first, end, key_node, value)
    return spans


def _scalar_text(value: Any, style: str | None, was: Any) -> str | None:
    """A value as one line of YAML in the style the writer used; None when it needs more."""
    if isinstance(was, dt.date) and isinstance(value, str) and parse_date(value):
        return value.strip()  # the writer's unquoted date stays unquoted
    if isinstance(value, (dt.date, dt.datetime)):
        value = value.isoformat()
    quote = style if style in ("'", '"') and isinstance(value, str) else None
    text = yaml.dump(
        value, Dumper=yaml.SafeDumper, default_style=quote, allow_unicode=True, width=1_000_000
    )
    text = text.removesuffix("...\n").rstrip("\n")
    if "\n" in text or text.startswith(("|", ">")):
        return None
    return text


def _tags_like(value: Any, was: Any) -> Any:
    """Tags in the form the writer used: a list stays a list, a string a string."""
    tags = split_tags(value)
    if isinstance(was, list):
        return tags
    if isinstance(was, str):
        return ", ".join(tags)
    return value


def _value_lines(span: _Span, lines: list[str], value: Any, was: Any) -> list[str]:
    """The lines of `span` with its value replaced by `value`, in the writer's style."""
    node, key_line = span.value, span.first
    one_line = node.start_mark.line == node.end_mark.line == key_line
    if isinstance(node, ScalarNode) and one_line and not isinstance(value, list):
        text = _scalar_text(value, node.style, was)
        if text is not None:
            line = lines[key_line]
            new = line[: node.start_mark.column] + text + line[node.end_mark.column :]
            return [new, *lines[key_line + 1 : span.end]]
    if isinstance(node, SequenceNode) and isinstance(value, list):
        items = [_scalar_text(item, None, None) for item in value]
        if all(text is not None for text in items):
            texts = [t for t in items if t is not None]
            if node.flow_style and one_line:
                line = lines[key_line]
                flow = "[" + ", ".join(texts) + "]"
                new = line[: node.start_mark.column] + flow + line[node.end_mark.column :]
                return [new, *lines[key_line + 1 : span.end]]
            if not node.flow_style and node.value:
                first_item = lines[node.value[0].start_mark.line]
                prefix = first_item[: first_item.index("-")] if "-" in first_item else ""
                return [lines[key_line], *(f"{prefix}- {t}\n" for t in texts)]
    return lines_of(dump_front_matter({span.key: value}))


def _edited_front_matter(
    text: str,
    local_meta: dict[str, Any],
    edits: dict[str, Any],
    conflicts: dict[str, Any],
    names: Names,
) -> str:
    """The writer's front matter text with `edits` (key -> new value, or `_ABSENT` to
    remove) made and `conflicts` (key -> the remote value) written between markers."""
    lines = lines_of(text)
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += "\n"
    spans = _spans(text, lines)
    appended: list[str] = []
    replaced: list[tuple[_Span, list[str]]] = []
    for key, value in [*edits.items(), *conflicts.items()]:
        was = local_meta.get(key, _ABSENT)
        if key == "tags" and value is not _ABSENT and was is not _ABSENT:
            value = _tags_like(value, was)
        span = spans.get(key)
        if key in conflicts:
            theirs = [] if value is _ABSENT else lines_of(dump_front_matter({key: value}))
            ours = lines[span.first : span.end] if span else []
            block = conflict_lines(ours, theirs, names.ours, names.theirs)
        elif value is _ABSENT:
            block = []
        elif span is not None:
            block = _value_lines(span, lines, value, was)
        else:
            appended.extend(lines_of(dump_front_matter({key: value})))
            continue
        if span is None:
            appended.extend(block)
        else:
            replaced.append((span, block))
    for span, block in sorted(replaced, key=lambda item: item[0].first, reverse=True):
        lines[span.first : span.end] = block
    return "".join(lines + appended)


# -- image targets back as the writer wrote them ----------------------------------------


def _target_map(sent_body: str, local_body: str) -> dict[str, str]:
    """Targets the transform rewrote (absolute URL -> the writer's relative path), from
    the lines of the sent body that differ from the writer's one for one."""
    sent, local = lines_of(sent_body), lines_of(local_body)
    mapping: dict[str, str] = {}
    ops = line_ops(sent, local)
    # A run of sent lines removed right before as many local lines put in: changed one
    # for one.
    for removed, added in zip(ops, ops[1:], strict=False):
        if removed[0] != "delete" or added[0] != "insert":
            continue
        i1, i2, j1, j2 = removed[1], removed[2], added[3], added[4]
        if i2 - i1 != j2 - j1:
            continue
        for sent_line, local_line in zip(sent[i1:i2], local[j1:j2], strict=True):
            ours = [m.group(2) for m in _TARGET.finditer(local_line)]
            theirs = [m.group(2) for m in _TARGET.finditer(sent_line)]
            if len(ours) == len(theirs):
                mapping.update((t, o) for t, o in zip(theirs, ours, strict=True) if t != o)
    return mapping


def _unrewrite(mapping: dict[str, str]) -> Callable[[str], str]:
    def line(text: str) -> str:
        if not mapping:
            return text
        return _TARGET.sub(lambda m: m.group(1) + mapping.get(m.group(2), m.group(2)), text)

    return line


# -- the whole post ----------------------------------------------------------------------


def writer_form(
    post: Post,
    *,
    sent: str,
    base: str,
    theirs: str,
    article: Article,
    prefer_theirs: bool,
    names: Names,
) -> Merged:
    """The writer's file (`post`) with the remote version (`theirs`) merged in, from
    `base` (the body last sent); `sent` is what the post would send now. `PostError`
    when one of the three cannot be read."""
    sent_meta, sent_body = split(sent, post.key)
    base_meta, base_body = split(base, post.key)
    theirs_found, theirs_body = split(theirs, post.key)
    sent_meta, base_meta = sent_meta or {}, base_meta or {}
    theirs_meta = remote_meta(article, theirs_found, base_meta)

    mapping = _target_map(sent_body, post.body)
    sent_cover, local_cover = sent_meta.get("cover_image"), post.meta.get("cover_image")
    if isinstance(sent_cover, str) and isinstance(local_cover, str) and sent_cover != local_cover:
        mapping[sent_cover] = local_cover

    edits: dict[str, Any] = {}
    clashes: dict[str, Any] = {}
    for key in FOREM_KEYS:
        b = base_meta.get(key, _ABSENT)
        o = sent_meta.get(key, _ABSENT)
        t = theirs_meta.get(key, _ABSENT)
        if _same(key, t, b) or _same(key, t, o):
            continue
        if key == "cover_image" and isinstance(t, str):
            t = mapping.get(t, t)
        if _same(key, o, b) or prefer_theirs:
            if t is _ABSENT and key not in post.meta:
                continue
            edits[key] = t
        else:
            clashes[key] = t
    front_matter = post.front_matter
    if edits or clashes:
        front_matter = _edited_front_matter(front_matter, post.meta, edits, clashes, names)

    remote_merged = merge_texts(
        base_body,
        sent_body,
        theirs_body,
        prefer_theirs=prefer_theirs,
        names=(names.ours, names.theirs),
    )
    body = merge_texts(
        sent_body,
        post.body,
        remote_merged.text,
        prefer_theirs=True,
        from_theirs=_unrewrite(mapping),
    )

    source = post.source
    body_start = len(source) - len(post.body)
    if post.front_matter:
        fm_start = source.index(post.front_matter, 3)
    else:  # an empty block: the keys go after the opening fence
        fm_start = source.index("\n") + 1 if "\n" in source[:body_start] else body_start
    head = source[:fm_start] + front_matter + source[fm_start + len(post.front_matter) : body_start]
    return Merged(head + body.text, remote_merged.conflicts + len(clashes))
