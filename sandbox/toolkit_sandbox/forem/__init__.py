"""Interface A: the Forem-compatible publishing API (dev.to's API v0), under `/api`.

All 30 endpoints of the seed spec plus `GET /api/tags`, with the real methods and
paths (reference/NOTES.md) for the ones the seed leaves out; one module per resource.
Besides `/api` it owns `/images` (the placeholder images its answers link to). It does
not own `/api/v1`: that is the log service's (interface E, Parseable's paths).

    from toolkit_sandbox import forem
    forem.interface()   # -> Interface, composed by toolkit_sandbox.app
    forem.accounts(sandbox), forem.api_key(sandbox, "sam")   # of a running SandboxServer
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from toolkit_sandbox.interface import Interface

if TYPE_CHECKING:
    from toolkit_sandbox.protocols import ControlClient


def accounts(sandbox: ControlClient) -> list[dict[str, str]]:
    """A running sandbox's accounts with API keys, `[{"username", "api_key", "role"}]`,
    as `GET /__sandbox/forem/accounts` answers."""
    found: list[dict[str, str]] = sandbox.control("GET", "/forem/accounts")
    return found


def api_key(sandbox: ControlClient, username: str | None = None) -> str:
    """The API key of one account of a running sandbox, the demo account's by default
    (KeyError: no such account)."""
    from toolkit_sandbox.forem.seed import DEMO_USERNAME

    username = username or DEMO_USERNAME
    for account in accounts(sandbox):
        if account["username"] == username:
            return account["api_key"]
    raise KeyError(f"no sandbox account {username!r}")


def interface() -> Interface:
    from toolkit_sandbox.forem import (
        agents,
        articles,
        comments,
        community,
        control,
        http,
        images,
        listings,
        schema,
        seed,
        users,
    )
    from toolkit_sandbox.forem.state import ForemState

    return Interface(
        name=http.NAME,
        prefixes=("/api", "/images"),
        excludes=("/api/v1",),
        routes=[
            *articles.routes,
            *comments.routes,
            *listings.routes,
            *users.routes,
            *community.routes,
            *images.routes,
        ],
        error=http.error,
        throttled=http.throttled,
        caller=http.caller_of,
        guard=agents.guard,
        control_routes=control.routes,
        control_aliases=True,
        ddl=schema.DDL,
        tables=schema.DATA_TABLES,
        schema_version=schema.SCHEMA_VERSION,
        seed=seed.load,
        state=ForemState.create,
    )
