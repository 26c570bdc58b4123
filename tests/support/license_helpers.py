"""What the licence tests share: the sandbox's licensing service (interface D) as a test
steers it through its control API, the configuration of a premium project, and folder
snapshots."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import httpx

from tests.support.forem_sandbox import sandbox_client
from toolkit_sandbox.licensing import seed

APP = seed.APPLICATION_ID
OTHER_APP = seed.OTHER_APPLICATION_ID
LICENSED = seed.LICENSED_CUSTOMER
UNLICENSED = seed.UNLICENSED_CUSTOMER


class Licensing:
    """The sandbox's licensing service as a test steers it: tokens, licence states,
    notifications, outages, and the requests it served."""

    def __init__(self, sandbox: Any, *, in_process: bool = True):
        """`in_process`: its clients (the control API's, `api()`) hand their requests to
        the sandbox's application without a socket (the same answers and records);
        False: loopback HTTP."""
        self.sandbox = sandbox
        self.base_url: str = sandbox.base_url
        self._in_process = in_process
        self.http = self._client({})
        self.start = 0

    def _client(self, headers: dict[str, str]) -> httpx.Client:
        return sandbox_client(self.sandbox, headers, in_process=self._in_process)

    def close(self) -> None:
        self.http.close()

    def control(self, method: str, path: str, body: Any = None) -> Any:
        response = self.http.request(method, f"/__sandbox/licensing{path}", json=body)
        response.raise_for_status()
        return response.json() if response.content else None

    def token(self, label: str = seed.DEMO_TOKEN_LABEL) -> str:
        return next(t["token"] for t in self.control("GET", "/tokens") if t["label"] == label)

    def env(self, token: str | None = None) -> dict[str, str]:
        """The environment that points toolkit at this licensing service."""
        return {
            "LICENSE_BASE_URL": self.base_url,
            "LICENSE_API_TOKEN": self.token() if token is None else token,
        }

    def set_customer(self, customer: str, state: str, **more: Any) -> Any:
        return self.control("POST", "/customers", {"customer_id": customer, "state": state, **more})

    def set_user(self, user: str, **fields: Any) -> Any:
        return self.control("POST", "/users", {"user_id": user, **fields})

    def add_notifications(self, count: int, application_id: str = APP) -> list[str]:
        return self.control(
            "POST", "/notifications", {"count": count, "application_id": application_id}
        )["ids"]

    def outage(self, status: int | None = None, delay_ms: int = 0) -> None:
        self.control("POST", "/outage", {"status": status, "delay_ms": delay_ms})

    def misroute(self, **ids: str | None) -> None:
        """Every licence answer names these ids instead (None: leaves the field out)."""
        self.control("POST", "/misroute", ids)

    def api(self, token: str | None = None) -> httpx.Client:
        """A client of the API itself, with a bearer token (None: none)."""
        return self._client({"Authorization": f"Bearer {token}"} if token else {})

    def requests(self) -> list[dict[str, Any]]:
        """The licensing requests recorded since this test's reset."""
        records = self.sandbox.requests(after=self.start)
        return [r for r in records if r["interface"] == "licensing"]

    def reset(self) -> None:
        self.sandbox.reset()
        self.mark()

    def mark(self) -> None:
        """Count requests from now on."""
        answer = self.http.get("/__sandbox/requests", params={"limit": 1})
        self.start = answer.raise_for_status().json()["last_seq"]


PREMIUM_CONFIG = """
[site]
title = "Premium site"
url = "https://example.com/blog"

[license]
application_id = "{app}"
customer_id = "{customer}"
{extra}
"""


def premium_config(customer: str = LICENSED, app: str = APP, extra: str = "") -> str:
    return PREMIUM_CONFIG.format(app=app, customer=customer, extra=extra)


def snapshot(folder: Path) -> dict[str, tuple[bytes, int]]:
    """Every file under `folder` (the folder's own entries included) with its bytes and
    its modification time: what `refused` builds must leave exactly as it was."""
    if not folder.exists():
        return {}
    found: dict[str, tuple[bytes, int]] = {".": (b"", folder.stat().st_mtime_ns)}
    for path in sorted(folder.rglob("*")):
        data = path.read_bytes() if path.is_file() else b""
        found[path.relative_to(folder).as_posix()] = (data, path.stat().st_mtime_ns)
    return found


def digest(found: dict[str, tuple[bytes, int]]) -> str:
    return hashlib.sha256(repr(sorted(found.items())).encode()).hexdigest()
