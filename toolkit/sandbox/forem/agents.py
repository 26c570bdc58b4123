"""The edge's User-Agent rule in front of interface A (opt-in: POST
/__sandbox/forem/user-agent-check)."""

from __future__ import annotations

import re

from starlette.responses import Response
from starlette.types import Scope

from toolkit.sandbox.forem.http import NAME
from toolkit.sandbox.state import SandboxState

# What the real edge refuses: no User-Agent, or one of a generic HTTP library.
GENERIC_AGENT = re.compile(
    r"^(python-requests|python-httpx|python-urllib|aiohttp|curl|wget|go-http-client|"
    r"okhttp|java|axios|node-fetch|libwww-perl|httpie)\b",
    re.IGNORECASE,
)


def user_agent(scope: Scope) -> str | None:
    for name, value in scope["headers"]:
        if name == b"user-agent":
            return value.decode("latin-1")
    return None


def refused(agent: str | None, path: str) -> bool:
    """The real edge's rule: no User-Agent, or a generic HTTP library's, gets a 403."""
    if not path.startswith("/api"):
        return False
    agent = (agent or "").strip()
    return not agent or GENERIC_AGENT.match(agent) is not None


def guard(scope: Scope, state: SandboxState) -> Response | None:
    """The edge's 403 with an empty body, when the rule is switched on."""
    if state.of(NAME).user_agent_check and refused(user_agent(scope), scope["path"]):
        return Response(status_code=403)
    return None
