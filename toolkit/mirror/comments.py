"""Mirror the comment threads of the account's published articles into the repository.

One list read of the account's articles says, through `comments_count`, which articles
have new or deleted comments since the last mirror; only those are fetched again. Each
file is `content/_mirror/comments/<slug>.json`, named after the local post's slug (or the
remote slug for an article no post maps to) reduced to a safe file name, holding a small
header and the threads with their nested children exactly as the API returned them. Files
are rewritten only when their bytes change, so git shows real changes only; a file whose
article is gone (deleted, or turned back into a draft) is removed.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from toolkit.clients.forem import ForemClient
from toolkit.clients.forem_models import Article
from toolkit.errors import UnsafeNameError
from toolkit.fsutil import path_inside, safe_name, stable_json, write_if_changed


@dataclass
class MirrorReport:
    fetched: list[str] = field(default_factory=list)  # files whose threads were fetched again
    written: list[str] = field(default_factory=list)  # files whose content changed
    removed: list[str] = field(default_factory=list)
    unchanged: int = 0
    requests: int = 0


def _stored_count(path: Path) -> int | None:
    try:
        header = json.loads(path.read_text(encoding="utf-8")).get("article", {})
    except (OSError, ValueError, AttributeError):
        return None
    count = header.get("comments_count") if isinstance(header, dict) else None
    return count if isinstance(count, int) else None


def _stem(name: str, article: Article) -> str:
    try:
        return safe_name(name)
    except UnsafeNameError:
        return str(article.id)


def comments_document(article: Article, threads: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "article": {
            "id": article.id,
            "title": article.title,
            "url": article.url,
            "comments_count": article.comments_count,
        },
        "comments": threads,
    }


def mirror_comments(
    client: ForemClient,
    articles: list[Article],
    folder: Path,
    name_of: Callable[[Article], str],
    *,
    full: bool = False,
    relative: Callable[[Path], str] = str,
) -> MirrorReport:
    """Bring `folder` up to date with the threads of the published `articles`.

    `name_of(article)` gives the file stem, made safe here too (names come from the
    server); `full` fetches every thread regardless of `comments_count` (to pick up
    edited comments, which do not change the count).
    """
    report = MirrorReport()
    wanted: set[Path] = set()
    before = client.requests_made
    for article in sorted((a for a in articles if a.published), key=lambda a: a.id):
        path = path_inside(folder, f"{_stem(name_of(article), article)}.json")
        wanted.add(path)
        if not full and path.exists() and _stored_count(path) == article.comments_count:
            report.unchanged += 1
            continue
        threads: list[dict[str, Any]] = []
        if article.comments_count or full:
            threads = client.comments_json(article_id=article.id)
            report.fetched.append(relative(path))
        if write_if_changed(path, stable_json(comments_document(article, threads))):
            report.written.append(relative(path))
        else:
            report.unchanged += 1
    if folder.is_dir():
        for stale in sorted(set(folder.glob("*.json")) - wanted):
            stale.unlink()
            report.removed.append(relative(stale))
    report.requests = client.requests_made - before
    return report


def mirror_podcast_comments(
    client: ForemClient, podcast_slug: str, folder: Path, *, relative: Callable[[Path], str] = str
) -> MirrorReport:
    """Threads of every episode of one podcast, into `folder/<podcast>/<episode id>.json`,
    the podcast's slug reduced to a safe folder name.

    Episodes carry no comment count, so each one is fetched; files still change only when
    their threads did.
    """
    report = MirrorReport()
    before = client.requests_made
    target = path_inside(folder, safe_name(podcast_slug))
    page = 1
    while True:
        episodes = client.podcast_episodes(username=podcast_slug, page=page, per_page=100)
        for episode in episodes:
            threads = client.comments_json(podcast_episode_id=episode.id)
            path = path_inside(target, f"{safe_name(str(episode.id))}.json")
            report.fetched.append(relative(path))
            document = {
                "episode": {"id": episode.id, "title": episode.title, "path": episode.path},
                "comments": threads,
            }
            if write_if_changed(path, stable_json(document)):
                report.written.append(relative(path))
            else:
                report.unchanged += 1
        if len(episodes) < 100:
            break
        page += 1
    report.requests = client.requests_made - before
    return report
