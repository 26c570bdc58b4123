"""Comment threads of articles and podcast episodes.

Threads are top-level comments with nested `children`, each level in order of creation
(oldest first). A comment's `id_code` is its integer id in base 26. A deleted comment
that still has replies stays in the thread as the real service shows it:
`body_html` `<p>[deleted]</p>` and an empty `user`; a deleted comment without replies
is gone. Comments are written through the control API only (POST/DELETE
/__sandbox/comments), as the public API has no comment writes.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from starlette.routing import Route

from toolkit_sandbox.forem import serializers as ser
from toolkit_sandbox.forem import text
from toolkit_sandbox.forem.http import Ctx, endpoint
from toolkit_sandbox.interface import ErrorAnswer
from toolkit_sandbox.limits import fits64
from toolkit_sandbox.store import inserted_id

COMMENT_SELECT = """
SELECT c.*, u.username AS u_username, u.name AS u_name, u.microblog_username AS u_microblog,
       u.codehost_username AS u_codehost, u.website_url AS u_website
FROM comments c JOIN users u ON u.id = c.user_id
"""
DELETED_HTML = "<p>[deleted]</p>"


def comment_json(row: sqlite3.Row, base: str, children: list[dict[str, Any]]) -> dict[str, Any]:
    if row["deleted"]:
        user: dict[str, Any] = {}
        body = DELETED_HTML
    else:
        user = ser.shared_user(row, base, with_id=True)
        body = row["body_html"]
    return {
        "type_of": "comment",
        "id_code": text.base26(row["id"]),
        "created_at": text.iso(row["created_at"]),
        "body_html": body,
        "user": user,
        "children": children,
    }


def _threads(rows: list[sqlite3.Row], base: str, root: int | None) -> list[dict[str, Any]]:
    """Nest rows (already in creation order) under `root` (None: the top level)."""
    by_parent: dict[int | None, list[sqlite3.Row]] = {}
    for row in rows:
        by_parent.setdefault(row["parent_id"], []).append(row)

    def build(parent: int | None) -> list[dict[str, Any]]:
        return [comment_json(row, base, build(row["id"])) for row in by_parent.get(parent, [])]

    return build(root)


def _target_rows(db: sqlite3.Connection, kind: str, target: int) -> list[sqlite3.Row]:
    return db.execute(
        f"{COMMENT_SELECT} WHERE c.commentable_type = ? AND c.commentable_id = ? "
        "ORDER BY c.created_at, c.id",
        (kind, target),
    ).fetchall()


def _target_exists(db: sqlite3.Connection, kind: str, target: int) -> bool:
    if kind == "Article":
        sql = "SELECT 1 FROM articles WHERE id = ? AND published = 1"
    else:
        sql = "SELECT 1 FROM podcast_episodes WHERE id = ?"
    return db.execute(sql, (target,)).fetchone() is not None


@endpoint()
async def list_comments(ctx: Ctx) -> list[dict[str, Any]]:
    article_id, episode_id = ctx.int_param("a_id"), ctx.int_param("p_id")
    if article_id is not None:
        kind, target = "Article", article_id
    elif episode_id is not None:
        kind, target = "PodcastEpisode", episode_id
    else:
        raise ErrorAnswer(404)
    if not fits64(target):  # `find` with an out-of-range id: RecordNotFound, a 404
        raise ErrorAnswer(404)
    with ctx.store.read() as db:
        if not _target_exists(db, kind, target):
            raise ErrorAnswer(404)
        rows = _target_rows(db, kind, target)
    return _threads(rows, ctx.base, None)


def comment_tree(db: sqlite3.Connection, comment_id: int, base: str) -> dict[str, Any] | None:
    """One comment with all its descendants, or None when there is no such comment."""
    row = db.execute(f"{COMMENT_SELECT} WHERE c.id = ?", (comment_id,)).fetchone()
    if row is None:
        return None
    rows = _target_rows(db, row["commentable_type"], row["commentable_id"])
    return comment_json(row, base, _threads(rows, base, row["id"]))


@endpoint()
async def show_comment(ctx: Ctx) -> dict[str, Any]:
    comment_id = text.from_base26(ctx.path_param("id"))
    with ctx.store.read() as db:
        tree = comment_tree(db, comment_id, ctx.base) if comment_id is not None else None
    if tree is None:
        raise ErrorAnswer(404)
    return tree


def refresh_counts(db: sqlite3.Connection, kind: str, target: int) -> None:
    """An article's comments_count is its number of comments not deleted."""
    if kind != "Article":
        return
    db.execute(
        "UPDATE articles SET comments_count = (SELECT COUNT(*) FROM comments WHERE "
        "commentable_type = 'Article' AND commentable_id = ? AND deleted = 0) WHERE id = ?",
        (target, target),
    )


def add_comment(
    db: sqlite3.Connection,
    *,
    kind: str,
    target: int,
    user_id: int,
    parent_id: int | None,
    body_markdown: str,
    body_html: str,
) -> int:
    now = text.stored(text.now())
    comment_id = inserted_id(
        db.execute(
            "INSERT INTO comments (commentable_type, commentable_id, parent_id, user_id, "
            "body_markdown, body_html, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
            (kind, target, parent_id, user_id, body_markdown, body_html, now),
        )
    )
    if kind == "Article":
        db.execute("UPDATE articles SET last_comment_at = ? WHERE id = ?", (now, target))
        refresh_counts(db, kind, target)
    return comment_id


def delete_comment(db: sqlite3.Connection, comment_id: int) -> bool:
    """Delete a comment: gone when it has no replies, a `[deleted]` placeholder when it
    has. Placeholders left without replies go too. False when there is no such comment."""
    row = db.execute("SELECT * FROM comments WHERE id = ?", (comment_id,)).fetchone()
    if row is None or row["deleted"]:
        return False
    current: sqlite3.Row | None = row
    while current is not None:
        has_replies = db.execute(
            "SELECT 1 FROM comments WHERE parent_id = ?", (current["id"],)
        ).fetchone()
        if has_replies:
            db.execute("UPDATE comments SET deleted = 1 WHERE id = ?", (current["id"],))
            break
        db.execute("DELETE FROM comments WHERE id = ?", (current["id"],))
        parent = current["parent_id"]
        current = None
        if parent is not None:
            candidate = db.execute("SELECT * FROM comments WHERE id = ?", (parent,)).fetchone()
            if candidate is not None and candidate["deleted"]:
                current = candidate
    refresh_counts(db, row["commentable_type"], row["commentable_id"])
    return True


routes = [
    Route("/api/comments", list_comments, methods=["GET"]),
    Route("/api/comments/{id}", show_comment, methods=["GET"]),
]
