"""Mirror files made to stand on their own: the links to a server that will be gone taken
out, so that a site built from them links nothing to it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from toolkit.mirror_layout import MIRROR

__all__ = ["unlink_origin"]


def unlink_origin(content_dir: Path, origin: str) -> None:
    """Take the URLs of `origin` out of the mirror files of `content_dir` (the demo's
    copy): the sandbox stops when the demo ends, so the demo's site must link nothing to
    it (no comment author, "Join the discussion" or reading-list link to a dead server)."""
    folder = content_dir / MIRROR

    def strip(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: strip(v) for k, v in value.items()}
        if isinstance(value, list):
            return [strip(v) for v in value]
        if isinstance(value, str) and (value == origin or value.startswith(origin + "/")):
            return None
        return value

    for path in sorted(folder.rglob("*.json")) if folder.is_dir() else []:
        data = json.loads(path.read_text(encoding="utf-8"))
        path.write_text(
            json.dumps(strip(data), indent=2, sort_keys=True, ensure_ascii=False) + "\n",
            encoding="utf-8",
        )
