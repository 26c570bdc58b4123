"""`sandbox`: the local emulator of the remote interfaces, started for its caller to stop."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    from toolkit.sandbox.server import SandboxServer

DEFAULT_DB = Path(".toolkit") / "sandbox.db"
DEMO_USERNAME = "demo"


@dataclass
class RunningSandbox:
    """A started sandbox: where it listens, its state, its accounts. `stop()` ends it."""

    server: SandboxServer
    db_path: Path | None  # None: in memory
    created: bool  # this start created (and seeded) the database
    accounts: list[dict[str, str]] = field(default_factory=list)  # username, api_key, role

    @property
    def base_url(self) -> str:
        return self.server.base_url

    @property
    def running(self) -> bool:
        return self.server.running

    @property
    def demo_api_key(self) -> str | None:
        return next((a["api_key"] for a in self.accounts if a["username"] == DEMO_USERNAME), None)

    def stop(self) -> None:
        self.server.stop()


def sandbox(
    *,
    host: str = "127.0.0.1",
    port: int = 8787,
    db_path: Path | None = DEFAULT_DB,
    rate_window: float = 30.0,
    seed: bool = True,
    allow_remote: bool = False,
) -> RunningSandbox:
    """Start the sandbox on `host:port` (0: any free port) with its state in `db_path`
    (None: in memory), rate-limit windows of `rate_window` seconds, seeded unless `seed`
    is false; a non-loopback `host` only with `allow_remote`. Raises `SandboxError`."""
    from toolkit.sandbox import forem
    from toolkit.sandbox.server import SandboxServer

    server = SandboxServer(
        db_path=db_path,
        rate_window=rate_window,
        seed=seed,
        host=host,
        port=port,
        allow_remote=allow_remote,
    )
    server.start()
    try:
        return RunningSandbox(server, db_path, server.created, forem.accounts(server))
    except BaseException:
        server.stop()
        raise
