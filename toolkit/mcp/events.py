"""What the MCP server tells its owner: every authorization decision and every tool call.

The server is given one `McpListener` when it is built (`toolkit.mcp.service`), and calls
`mcp_event` for each decision: a client registered, an authorization approved or denied
on the screen (a wrong operator secret too), a token issued, refreshed or refused, a
family of tokens revoked, a request refused for its scopes, a tool called and how it
ended. The run log records them by passing a listener that appends them to its events;
without one they go to the `toolkit.mcp` logger.

An event never holds a token, a code, a client secret or the operator secret: only
client ids, scopes, tool names and one-line reasons.
"""

from __future__ import annotations

import logging
from dataclasses import asdict, dataclass, replace
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:  # pragma: no cover
    from toolkit.runlog.run import Run

log = logging.getLogger("toolkit.mcp")

AUTHORIZATION = "authorization"
TOOL = "tool"
MAX_TEXT = 300  # characters of a detail or client id kept: they may come from anyone


def clip(value: str, limit: int = MAX_TEXT) -> str:
    """`value` cut to `limit` characters (saying so), for what an attacker may have sent."""
    return value if len(value) <= limit else value[:limit] + f"... ({len(value)} characters)"


@dataclass(frozen=True)
class McpEvent:
    kind: str  # AUTHORIZATION or TOOL
    action: str  # register, consent, token, refresh, client_credentials, refused, revoke, call...
    outcome: str  # "ok", "denied" (refused by a rule) or "error" (could not be done)
    client_id: str | None = None
    scopes: tuple[str, ...] = ()
    tool: str | None = None
    detail: str = ""  # one line, never a secret
    status: int | None = None  # the HTTP status answered, when there is one
    duration_ms: float | None = None
    transport: str = "http"

    def to_json(self) -> dict[str, Any]:
        """Hand-written: the run log leaves an event's empty fields out."""
        data = asdict(self)
        data["scopes"] = list(self.scopes)
        return {key: value for key, value in data.items() if value not in (None, "", [])}

    def __str__(self) -> str:
        who = f" client {self.client_id}" if self.client_id else ""
        what = f" {self.tool}" if self.tool else ""
        detail = f": {self.detail}" if self.detail else ""
        return f"mcp {self.kind} {self.action}{what} {self.outcome}{who}{detail}"


class McpListener(Protocol):
    """Receives the server's events; called from the server's threads, so it must be
    quick and thread-safe."""

    def mcp_event(self, event: McpEvent) -> None:
        """One decision or tool call."""


class LogListener:
    """The default listener: each event as one line of the `toolkit.mcp` logger (refusals
    as warnings, the rest at info level, shown with -v)."""

    def mcp_event(self, event: McpEvent) -> None:
        log.log(logging.WARNING if event.outcome == "denied" else logging.INFO, "%s", event)


class RunLogListener(LogListener):
    """The listener of `toolkit mcp`: each event in the session's run of the run log
    (`event` "mcp"), and as a line of the `toolkit.mcp` logger."""

    def __init__(self, run: Run):
        self.run = run

    def mcp_event(self, event: McpEvent) -> None:
        self.run.event(
            "mcp",
            action=f"{event.kind} {event.action}",
            outcome=event.outcome,
            tool=event.tool,
            client=event.client_id,
            scopes=" ".join(event.scopes) or None,
            message=event.detail or None,
            status=event.status,
            duration_ms=event.duration_ms,
            reason=event.transport,
        )
        super().mcp_event(event)


class EventRecorder:
    """Keeps every event (tests, benchmarks)."""

    def __init__(self) -> None:
        self.events: list[McpEvent] = []

    def mcp_event(self, event: McpEvent) -> None:
        self.events.append(event)


def tell(listener: McpListener, event: McpEvent) -> None:
    """Give `event` to `listener`, its attacker-controlled parts cut to a few hundred
    characters; a listener that fails never fails the request."""
    if len(event.detail) > MAX_TEXT or len(event.client_id or "") > MAX_TEXT:
        event = replace(
            event,
            detail=clip(event.detail),
            client_id=clip(event.client_id) if event.client_id else None,
        )
    try:
        listener.mcp_event(event)
    except Exception:  # a broken listener is the owner's problem, not the client's
        log.exception("the MCP event listener failed")
