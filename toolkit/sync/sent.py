"""The body last sent for each post: the base of `toolkit pull --merge`.

`toolkit.lock` holds only digests. The bodies themselves are kept in
`.toolkit/sent/<sha256>.md` (not committed), named by the digest the lock records as
`remote_digest` (the body the remote held after a publish, or that a pull took); keeping a
post's new body removes its previous one. A body is used only when its bytes still hash to
its name.

Where `.toolkit/` is not there (another clone, CI), the base is looked for in the post's
git history: the most recent of its last `GIT_VERSIONS` committed versions whose payload,
made now, hashes to the lock's `sent_digest`.
"""

from __future__ import annotations

import logging
import re
import subprocess
from collections.abc import Callable
from pathlib import Path

from toolkit.content.payload import body_digest
from toolkit.fsutil import quick_write

log = logging.getLogger(__name__)

GIT_VERSIONS = 50
GIT_TIMEOUT = 20.0  # seconds for one git command
_DIGEST = re.compile(r"[0-9a-f]{64}")


def _folder(state_dir: Path) -> Path:
    return state_dir / "sent"


def keep(state_dir: Path, body: str, previous: str | None = None) -> None:
    """Keep `body` as a post's last sent body (and drop `previous`, the digest of the one
    it replaces). A cache: failing to write it is logged, never fatal."""
    digest = body_digest(body)
    folder = _folder(state_dir)
    try:
        path = folder / f"{digest}.md"
        if not path.exists():
            quick_write(path, body.encode("utf-8"))  # a cache: checked when read
        if previous and previous != digest and _DIGEST.fullmatch(previous):
            (folder / f"{previous}.md").unlink(missing_ok=True)
    except OSError as exc:
        log.warning("%s: cannot keep the body sent (%s)", folder, exc.strerror or exc)


def recall(state_dir: Path, digest: str) -> str | None:
    """The body kept under `digest`, if it is there and whole."""
    if not _DIGEST.fullmatch(digest):
        return None
    try:
        text = (_folder(state_dir) / f"{digest}.md").read_bytes().decode("utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    return text if body_digest(text) == digest else None


def from_git(
    root: Path, path: Path, matches: Callable[[str], str | None], *, limit: int = GIT_VERSIONS
) -> str | None:
    """The first committed version of `path` (newest first) for which `matches(text)`
    gives a body; None when there is none, or no git."""
    try:
        relative = path.resolve().relative_to(root.resolve()).as_posix()
        listed = subprocess.run(
            ["git", "log", f"-{limit}", "--format=%H", "--", relative],
            cwd=root,
            capture_output=True,
            text=True,
            timeout=GIT_TIMEOUT,
            check=False,
        )
        if listed.returncode != 0:
            return None
        for commit in listed.stdout.split():
            shown = subprocess.run(
                ["git", "show", f"{commit}:./{relative}"],
                cwd=root,
                capture_output=True,
                timeout=GIT_TIMEOUT,
                check=False,
            )
            if shown.returncode != 0:
                continue
            try:
                text = shown.stdout.decode("utf-8")
            except UnicodeDecodeError:
                continue
            body = matches(text)
            if body is not None:
                return body
    except (OSError, ValueError, subprocess.TimeoutExpired):
        return None
    return None
