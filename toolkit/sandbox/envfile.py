"""The file `toolkit sandbox --env-file` writes, and the lines it prints: the environment
variables that point a project at a running sandbox, one group per interface."""

from __future__ import annotations

import os
import shlex
from pathlib import Path

from toolkit.fsutil import atomic_write, describe_os_error
from toolkit.sandbox.server import SandboxError

Environment = list[tuple[str, dict[str, str]]]  # (interface, {variable: value})


ENV_FILE_HEADER = "# Written by toolkit sandbox: what points a project at it."


def shell_lines(environment: Environment) -> list[str]:
    """One `export NAME=value ...` line per interface, for a POSIX shell."""
    return [
        "export " + " ".join(f"{name}={shlex.quote(value)}" for name, value in values.items())
        for _, values in environment
    ]


def env_file_text(environment: Environment) -> str:
    """The `--env-file` text: one `export NAME=value` per line, under a comment naming
    the interface; a POSIX shell sources it, python-dotenv (toolkit's `.env`) and make
    read it."""
    lines = [ENV_FILE_HEADER]
    for label, values in environment:
        lines.append(f"# {label}")
        lines += [f"export {name}={shlex.quote(value)}" for name, value in values.items()]
    return "\n".join(lines) + "\n"


def write_env_file(path: Path, environment: Environment) -> None:
    """Write `env_file_text` to `path` (mode 600: it holds keys), never over a file that
    the sandbox did not write (a writer's own `.env`). Raises `SandboxError`."""
    try:
        if path.exists() and not path.is_file():  # a FIFO or a device would block the read
            raise SandboxError(
                f"{path}: not a regular file; not written (choose another --env-file)"
            )
        if path.exists():
            with path.open(encoding="utf-8", errors="replace") as handle:
                first = handle.readline(len(ENV_FILE_HEADER) + 2).rstrip("\n")
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
