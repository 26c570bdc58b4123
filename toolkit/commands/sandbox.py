"""`sandbox`: the local emulator of the remote interfaces, started for its caller to stop.

The emulator is a distribution of its own, `toolkit-sandbox` (the package `toolkit_sandbox`,
in `sandbox/`), which a writer's runtime install does not carry. toolkit imports it only
here and in the demo (`toolkit.commands.demo`), inside the functions that start it, after
`require_sandbox()`: without it every other command works, and these two say in one line
how to install it.
"""

from __future__ import annotations

import importlib.util
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from toolkit.errors import SandboxError

if TYPE_CHECKING:  # pragma: no cover
    from toolkit_sandbox.server import SandboxServer

DEFAULT_DB = Path(".toolkit") / "sandbox.db"
DEMO_USERNAME = "demo"

NOT_INSTALLED = (
    "the sandbox is not installed: it is the distribution toolkit-sandbox, in the folder "
    "sandbox/ of toolkit's repository (from a clone: pip install -e ./sandbox; with pipx: "
    "pipx inject toolkit 'git+https://github.com/toolkit-docs/toolkit#subdirectory=sandbox')"
)


def require_sandbox() -> None:
    """Raises `SandboxError` (saying how to install it) when the sandbox's distribution,
    `toolkit-sandbox`, is not installed beside toolkit."""
    if importlib.util.find_spec("toolkit_sandbox") is None:
        raise SandboxError(NOT_INSTALLED)


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

    @property
    def left_out(self) -> list[str]:
        """The interfaces this sandbox runs without, and why (one line each)."""
        from toolkit_sandbox.app import left_out

        names = {interface.name for interface in self.server.interfaces}
        return [] if "logs" in names else left_out()

    def shell_lines(self) -> list[str]:
        """`environment()` as one `export NAME=value ...` line per interface."""
        from toolkit_sandbox.envfile import shell_lines

        return shell_lines(self.environment())

    def write_env_file(self, path: Path) -> None:
        """`environment()` into the file `path` (`toolkit_sandbox.envfile`). Raises
        `SandboxError`."""
        from toolkit_sandbox.envfile import write_env_file

        write_env_file(path, self.environment())

    def environment(self) -> list[tuple[str, dict[str, str]]]:
        """What points a project at this sandbox: per interface it serves, the
        environment variables toolkit reads (base URL and the demo account's secret)."""
        from toolkit_sandbox.archive.seed import DEMO_API_KEY
        from toolkit_sandbox.licensing import seed as licensing

        url = self.base_url
        found: list[tuple[str, dict[str, str]]] = []
        if self.demo_api_key is not None:
            found.append(
                ("publishing", {"FOREM_BASE_URL": url, "FOREM_API_KEY": self.demo_api_key})
            )
        found.append(
            ("archive", {"CLOUDCONVERT_BASE_URL": url, "CLOUDCONVERT_API_KEY": DEMO_API_KEY})
        )
        found.append(
            (
                "licensing",
                {
                    "LICENSE_BASE_URL": url,
                    "LICENSE_API_TOKEN": licensing.token_for(licensing.DEMO_TOKEN_LABEL),
                },
            )
        )
        if not self.left_out:
            from toolkit_sandbox.logs.http import PASSWORD, USERNAME

            found.append(
                (
                    "logs",
                    {"LOGS_BASE_URL": url, "LOGS_USERNAME": USERNAME, "LOGS_PASSWORD": PASSWORD},
                )
            )
        return found


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
    require_sandbox()
    from toolkit_sandbox import forem
    from toolkit_sandbox.server import SandboxServer

    if db_path == DEFAULT_DB:  # toolkit's own folder, which a repository can hold a link in
        for path in (DEFAULT_DB.parent, DEFAULT_DB, DEFAULT_DB.with_suffix(".data")):
            if os.path.islink(path):
                raise SandboxError(
                    f"{path}: a symlink where toolkit keeps its own files, which it never "
                    "follows; remove the link (or choose --db)"
                )
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
