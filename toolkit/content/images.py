"""Images a post refers to by a relative path, and where those files are.

A relative image has to exist on disk (the site copies it), and the API cannot resolve it,
so the payload rewrites it to an absolute URL under `assets_base_url`. Images are found in
Markdown (`![alt](src)`, `![alt][ref]` with `[ref]: src`) and in HTML `<img src>`, outside
fenced code blocks, which is where a reader of the source would see them.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote, unquote, urlsplit

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
# Each pattern stops at the next bracket (or `<`): a failed match never scans past the
# place where the next one starts, so a body full of `![` or `<img` costs linear time.
# (CommonMark does not allow unescaped brackets in a label either.)
_INLINE = re.compile(r"!\[(?:[^\[\]\\]|\\.)*\]\(\s*(<[^>\n]*>|[^\s)]+)")
_REFERENCE_USE = re.compile(r"!\[((?:[^\[\]\\]|\\.)*)\]\[((?:[^\[\]\\]|\\.)*)\]")
_REFERENCE_DEF = re.compile(r"^ {0,3}\[((?:[^\[\]\\]|\\.)+)\]:\s*(<[^>\n]*>|\S+)", re.MULTILINE)
_HTML_IMG = re.compile(r"<img\b[^<>]*?\bsrc\s*=\s*(?:\"([^\"<>]*)\"|'([^'<>]*)')", re.IGNORECASE)
_SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")


@dataclass(frozen=True)
class ImageRef:
    src: str  # as written in the post (angle brackets removed)
    line: int  # 1-based line of the file


def is_relative(src: str) -> bool:
    """Relative to the post or to the content folder (`/x.png`): not a URL, not an anchor."""
    return bool(src) and not (_SCHEME.match(src) or src.startswith(("//", "#")))


def code_mask(body: str) -> list[bool]:
    """For each line of `body`, whether it lies inside a fenced code block."""
    mask: list[bool] = []
    fence: str | None = None
    for line in body.split("\n"):
        match = _FENCE.match(line)
        if fence is None:
            if match:
                fence = match.group(1)
            mask.append(fence is not None)
        else:
            mask.append(True)
            if match and match.group(1)[0] == fence[0] and len(match.group(1)) >= len(fence):
                if not line.strip()[len(match.group(1)) :].strip():
                    fence = None
    return mask


def find_images(body: str, first_line: int = 1) -> list[ImageRef]:
    """Every image of `body` (relative or not), with its file line, in reading order."""
    if "![" not in body and "<img" not in body.lower():
        return []  # the common case costs one scan
    mask = code_mask(body)
    lines = body.split("\n")
    prose = "\n".join("" if inside else line for line, inside in zip(lines, mask, strict=True))
    definitions = {
        m.group(1).strip().lower(): m.group(2).strip("<>") for m in _REFERENCE_DEF.finditer(prose)
    }
    found: list[tuple[int, str]] = []
    for match in _INLINE.finditer(prose):
        found.append((match.start(), match.group(1).strip("<>")))
    for match in _REFERENCE_USE.finditer(prose):
        label = (match.group(2) or match.group(1)).strip().lower()
        if label in definitions:
            found.append((match.start(), definitions[label]))
    for match in _HTML_IMG.finditer(prose):
        src = match.group(1) if match.group(1) is not None else match.group(2)
        found.append((match.start(), src.strip()))
    found.sort()
    refs = []
    line, counted = first_line, 0  # the line of `counted`, counting only forward
    for pos, src in found:
        line += prose.count("\n", counted, pos)
        counted = pos
        refs.append(ImageRef(src, line))
    return refs


# What comes right before a target the payload rewrites (`](`, a reference definition's
# `]:`, an HTML `src=`), as one group: the sent body's targets and their writer's form
# are told apart by it (`toolkit.content.payload`, `toolkit.sync.restore`).
TARGET_LEAD = r"(\]\(\s*<?|\]:\s*<?|src\s*=\s*[\"'])"

# Every link or image target: `](src`, a reference definition, an HTML `src`/`href`.
_LINK_INLINE = re.compile(r"\]\(\s*(<[^>\n]*>|[^\s)]+)")
_HTML_REF = re.compile(
    r"<(?:img|a|source|video|audio)\b[^<>]*?\b(?:src|href)\s*=\s*(?:\"([^\"<>]*)\"|'([^'<>]*)')",
    re.IGNORECASE,
)


def find_references(body: str) -> list[str]:
    """Every target a reader's browser would fetch or follow from `body` (images, links,
    reference definitions, HTML `src` and `href`), outside fenced code, as written; for
    the site, which copies the files of the content folder that posts refer to."""
    if "](" not in body and "]:" not in body and "<" not in body:
        return []
    mask = code_mask(body)
    lines = body.split("\n")
    prose = "\n".join("" if inside else line for line, inside in zip(lines, mask, strict=True))
    found = [m.group(1).strip("<>") for m in _LINK_INLINE.finditer(prose)]
    found += [m.group(2).strip("<>") for m in _REFERENCE_DEF.finditer(prose)]
    for match in _HTML_REF.finditer(prose):
        found.append((match.group(1) if match.group(1) is not None else match.group(2)).strip())
    return list(dict.fromkeys(found))


NAME_MAX = 255  # bytes of one file name, on every common file system
PATH_MAX = 4096  # bytes of a whole path (Linux)


def unusable(src: str) -> str | None:
    """Why a relative `src` can name no file on any file system (a NUL or another control
    character, a name longer than `NAME_MAX` bytes, a path past `PATH_MAX`), or None. Such
    a name is a problem of its post, found without asking the file system."""
    try:
        path = unquote(urlsplit(src).path)
    except ValueError:
        path = src
    if any(ord(char) < 32 or ord(char) == 127 for char in path):
        return "it holds a control character"
    try:
        encoded = os.fsencode(path)
    except UnicodeError:
        return "it holds a character no file name can"
    if len(encoded) > PATH_MAX:
        return f"it is longer than {PATH_MAX} bytes"
    if any(len(name) > NAME_MAX for name in encoded.split(b"/")):
        return f"a name in it is longer than {NAME_MAX} bytes"
    return None


def resolve(src: str, post_path: Path, content_dir: Path) -> Path:
    """The file a relative `src` names: from the post's folder, or `content_dir` for `/x`.

    Symlinks resolved: the real file, which is used only when it lies in the content
    folder (`asset_path`), so neither `../../etc/passwd` nor a symlink leading out of the
    folder ever names a file to publish or copy. A name no file system can hold
    (`unusable`) names nothing: a path outside the content folder is returned for it.
    """
    if unusable(src) is not None:
        return Path(os.devnull)
    try:
        return Path(os.path.realpath(_joined(src, post_path, content_dir)))
    except (OSError, ValueError):  # the file system refused the name: nothing to use
        return Path(os.devnull)


def written_path(src: str, post_path: Path, content_dir: Path) -> Path:
    """The path `src` names as written, `..` folded but no symlink followed."""
    return Path(os.path.normpath(_joined(src, post_path, content_dir)))


def _joined(src: str, post_path: Path, content_dir: Path) -> str:
    try:
        path_part = unquote(urlsplit(src).path)
    except ValueError:  # `urlsplit` refuses a broken `[` host; a path has none
        path_part = src
    if path_part.startswith("/"):
        return os.path.join(content_dir, path_part.lstrip("/"))
    return os.path.join(post_path.parent, path_part)


def asset_path(file: Path, content_dir: Path) -> str | None:
    """The file's POSIX path under `content_dir`, or None when it lies outside."""
    try:
        return file.relative_to(content_dir).as_posix()
    except ValueError:
        return None


def absolute_url(base_url: str, relative_path: str) -> str:
    return f"{base_url.rstrip('/')}/{quote(relative_path)}"
