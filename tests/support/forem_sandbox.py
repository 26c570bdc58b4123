"""The sandbox as the tests of interface A (the publishing API) use it: a `SandboxServer`
with the Forem conveniences it does not keep itself (it knows no interface in
particular): the accounts and their keys, clients bound to an account, the rate-limit
switch."""

from __future__ import annotations

from typing import Any, Self

import httpx

from toolkit import USER_AGENT
from toolkit.tls import shared_context
from toolkit_sandbox import forem
from toolkit_sandbox.server import SandboxServer


def sandbox_client(
    sandbox: SandboxServer, headers: dict[str, str], *, in_process: bool = True
) -> httpx.Client:
    """A client of `sandbox` (any interface) sending `headers`: its requests handed to the
    application without a socket (`in_process`, the same answers and records), or over
    loopback HTTP."""
    return httpx.Client(
        base_url=sandbox.base_url,
        headers=headers,
        timeout=30,
        verify=shared_context(),
        transport=sandbox.transport() if in_process else None,
    )


class ForemSandbox(SandboxServer):
    """A real sandbox (every interface), with helpers for interface A's accounts. Its
    own control requests (resets, faults, records: the tests' plumbing) are handed to
    the application in-process; every other client goes over the socket unless it asks
    for `transport()`."""

    control_in_process = True

    # The same server, typed as this class: a test's `with ForemSandbox() as server` has
    # the Forem conveniences below.
    def start(self) -> Self:
        super().start()
        return self

    def __enter__(self) -> Self:
        return self.start()

    def accounts(self) -> list[dict[str, str]]:
        """`[{"username", "api_key", "role"}]`, as GET /__sandbox/forem/accounts answers."""
        return forem.accounts(self)

    def api_key(self, username: str = "demo") -> str:
        return forem.api_key(self, username)

    @property
    def demo_api_key(self) -> str:
        return forem.api_key(self)

    def client(self, username: str | None = "demo", **kwargs: Any) -> httpx.Client:
        """An httpx client on the sandbox, with that account's `api-key` (None: anonymous)
        and toolkit's User-Agent. The caller closes it."""
        headers = {"User-Agent": USER_AGENT, **kwargs.pop("headers", {})}
        if username is not None:
            headers["api-key"] = self.api_key(username)
        kwargs.setdefault("verify", shared_context())
        return httpx.Client(base_url=self.base_url, headers=headers, **kwargs)

    def set_rate_limits(self, enabled: bool) -> None:
        self.control("POST", "/forem/rate-limits", {"enabled": enabled})
