"""Interface A, the Forem-compatible publishing API, under `/api`.

All 30 endpoints of the seed spec plus `GET /api/tags`, with the real methods and
paths (reference/NOTES.md) for the ones the seed leaves out. One module per resource.
"""

from __future__ import annotations

from starlette.routing import BaseRoute


def routes() -> list[BaseRoute]:
    from toolkit.sandbox.forem import articles, comments, community, listings, users

    return [
        *articles.routes,
        *comments.routes,
        *listings.routes,
        *users.routes,
        *community.routes,
    ]
