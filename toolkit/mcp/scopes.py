"""The scopes a token of the MCP server can carry, and what each one allows.

Light on purpose (the command line imports it for its help): no MCP SDK here.

    read          list and read posts, check them, plan a publish, read comments, the licence
    draft-write   change things that are not public: push drafts, build the site, export
    publish       make a post public (push_drafts with publish=true, with draft-write)
    logs          query the run log

Publishing is a human decision by default: no token gets `publish` unless the writer
ticks it on the authorization screen, and even then a tool publishes only when it is
asked to explicitly (`publish: true`).
"""

from __future__ import annotations

READ = "read"
DRAFT_WRITE = "draft-write"
PUBLISH = "publish"
LOGS = "logs"

SCOPES: dict[str, str] = {
    READ: "list and read posts, check them, plan a publish, read mirrored comments",
    DRAFT_WRITE: "push drafts to the publishing API, build the site, export an archive",
    PUBLISH: "make posts public (only when a tool is also asked to publish)",
    LOGS: "query the run log",
}
ALL = tuple(SCOPES)
# What the authorization screen ticks by default, and what a stdio server grants unless
# told otherwise: everything but `publish`.
DEFAULT = (READ, DRAFT_WRITE, LOGS)


def parse(text: str | None) -> list[str]:
    """Space-separated scopes in their canonical order, without repeats; unknown ones kept
    so that the caller can refuse them by name."""
    given = list(dict.fromkeys((text or "").split()))
    return [s for s in ALL if s in given] + [s for s in given if s not in SCOPES]


def unknown(scopes: list[str] | tuple[str, ...]) -> list[str]:
    return [s for s in scopes if s not in SCOPES]
