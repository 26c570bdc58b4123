"""Images a post refers to by a relative path, and where those files are.

A relative image has to exist on disk (the site copies it), and the API cannot resolve it,
so the payload rewrites it to an absolute URL under `assets_base_url`. Images are found in
Markdown (`![alt](src)`, `![alt][ref]` with `[ref]: src`) and in HTML `<img src>`, outside
fenced code blocks, which is where a reader of the source would see them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote, unquote, urlsplit

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_INLINE = re.compile(r"!\[(?:[^\]\\]|\\.)*\]\(\s*(<[^>\n]*>|[^\s)]+)")
_REFERENCE_USE = re.compile(r"!\[((?:[^\]\\]|\\.)*)\]\[((?:[^\]\\]|\\.)*)\]")
_REFERENCE_DEF = re.compile(r"^ {0,3}\[((?:[^\]\\]|\\.)+)\]:\s*(<[^>\n]*>|\S+)", re.MULTILINE)
_HTML_IMG = re.compile(r"<img\b[^>]*?\bsrc\s*=\s*([\"'])(.*?)\1", re.IGNORECASE | re.DOTALL)
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
        found.append((match.start(), match.group(2).strip()))
    found.sort()
    return [ImageRef(src, first_line + prose.count("\n", 0, pos)) for pos, src in found]


def resolve(src: str, post_path: Path, content_dir: Path) -> Path:
    """The file a relative `src` names: from the post's folder, or `content_dir` for `/x`."""
    path_part = unquote(urlsplit(src).path)
    if path_part.startswith("/"):
        return (content_dir / path_part.lstrip("/")).resolve()
    return (post_path.parent / path_part).resolve()


def asset_path(file: Path, content_dir: Path) -> str | None:
    """The file's POSIX path under `content_dir`, or None when it lies outside."""
    try:
        return file.relative_to(content_dir).as_posix()
    except ValueError:
        return None


def absolute_url(base_url: str, relative_path: str) -> str:
    return f"{base_url.rstrip('/')}/{quote(relative_path)}"
