"""`sandbox`: the local emulator of the remote interfaces, started for its caller to stop."""

from __future__ import annotations

import os
import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from toolkit.fsutil import atomic_write, describe_os_error

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

    @property
    def left_out(self) -> list[str]:
        """The interfaces this sandbox runs without, and why (one line each)."""
        from toolkit.sandbox.app import left_out

        names = {interface.name for interface in self.server.interfaces}
        return [] if "logs" in names else left_out()

    def environment(self) -> list[tuple[str, dict[str, str]]]:
        """What points a project at this sandbox: per interface it serves, the
        environment variables toolkit reads (base URL and the demo account's secret)."""
        from toolkit.sandbox.archive.seed import DEMO_API_KEY
        from toolkit.sandbox.licensing import seed as licensing

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
            from toolkit.sandbox.logs.http import PASSWORD, USERNAME

            found.append(
                (
                    "logs",
                    {"LOGS_BASE_URL": url, "LOGS_USERNAME": USERNAME, "LOGS_PASSWORD": PASSWORD},
                )
            )
        return found


ENV_FILE_HEADER = "# Written by toolkit sandbox: what points a project at it."


def shell_lines(environment: list[tuple[str, dict[str, str]]]) -> list[str]:
    """One `export NAME=value ...` line per interface, for a POSIX shell."""
    return [
        "export " + " ".join(f"{name}={shlex.quote(value)}" for name, value in values.items())
        for _, values in environment
    ]


def env_file_text(environment: list[tuple[str, dict[str, str]]]) -> str:
    """The `--env-file` text: one `export NAME=value` per line, under a comment naming
    the interface; a POSIX shell sources it, python-dotenv (toolkit's `.env`) and make
    read it."""
    lines = [ENV_FILE_HEADER]
    for label, values in environment:
        lines.append(f"# {label}")
        lines += [f"export {name}={shlex.quote(value)}" for name, value in values.items()]
    return "\n".join(lines) + "\n"


def write_env_file(path: Path, environment: list[tuple[str, dict[str, str]]]) -> None:
    """Write `env_file_text` to `path` (mode 600: it holds keys), never over a file that
    the sandbox did not write (a writer's own `.env`). Raises `SandboxError`."""
    from toolkit.sandbox.server import SandboxError

    try:
        if path.exists():
            with path.open(encoding="utf-8", errors="replace") as handle:
                first = handle.readline().rstrip("\n")
            if first != ENV_FILE_HEADER:
                raise SandboxError(
                    f"{path}: exists and was not written by toolkit sandbox; "
                    "not overwritten (choose another --env-file)"
                )
        else:  # made private before a key is in it; atomic_write keeps the mode
            path.parent.mkdir(parents=True, exist_ok=True)
            os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
        atomic_write(path, env_file_text(environment).encode("utf-8"))
    except OSError as exc:
        raise SandboxError(describe_os_error(exc)) from None


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
