"""The file `toolkit sandbox --env-file` writes, and the lines it prints: the environment
variables that point a project at a running sandbox, one group per interface.

The file ends with a line holding the digest of the lines above it, so the sandbox knows
a file whose whole content is its own from one the writer has added to (their real key,
as the README suggests doing): only the first is ever overwritten."""

from __future__ import annotations

import hashlib
import os
import shlex
from pathlib import Path

from toolkit.fsutil import atomic_write, describe_os_error
from toolkit_sandbox.server import SandboxError

Environment = list[tuple[str, dict[str, str]]]  # (interface, {variable: value})


ENV_FILE_HEADER = "# Written by toolkit sandbox: what points a project at it."
# The last line: the sha256 of every line above it, which an edit no longer matches.
DIGEST_LINE = "# toolkit sandbox: sha256 {digest} (any change keeps this file from being rewritten)"
MAX_OWN_BYTES = 1 << 16  # a file of ours is a few hundred bytes; a larger one is not ours


def shell_lines(environment: Environment) -> list[str]:
    """One `export NAME=value ...` line per interface, for a POSIX shell."""
    return [
        "export " + " ".join(f"{name}={shlex.quote(value)}" for name, value in values.items())
        for _, values in environment
    ]


def _signed(text: str) -> str:
    return text + DIGEST_LINE.format(digest=hashlib.sha256(text.encode()).hexdigest()) + "\n"


def env_file_text(environment: Environment) -> str:
    """The `--env-file` text: one `export NAME=value` per line, under a comment naming
    the interface, and a last line with the digest of the rest; a POSIX shell sources it,
    python-dotenv (toolkit's `.env`) and make read it."""
    lines = [ENV_FILE_HEADER]
    for label, values in environment:
        lines.append(f"# {label}")
        lines += [f"export {name}={shlex.quote(value)}" for name, value in values.items()]
    return _signed("\n".join(lines) + "\n")


def is_own(data: bytes) -> bool:
    """Whether `data` is an env file exactly as the sandbox wrote it: its header first,
    and a last line whose digest is that of everything above it."""
    if len(data) > MAX_OWN_BYTES or not data.startswith(ENV_FILE_HEADER.encode() + b"\n"):
        return False
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    body, _, last = text.removesuffix("\n").rpartition("\n")
    return bool(last) and text == _signed(body + "\n")


def write_env_file(path: Path, environment: Environment) -> None:
    """Write `env_file_text` to `path` (mode 600: it holds keys), never over a file whose
    whole content is not the sandbox's own (a writer's `.env`, or one of ours they added
    a line to). Raises `SandboxError`."""
    try:
        if path.exists() and not path.is_file():  # a FIFO or a device would block the read
            raise SandboxError(
                f"{path}: not a regular file; not written (choose another --env-file)"
            )
        if path.exists():
            with path.open("rb") as handle:
                data = handle.read(MAX_OWN_BYTES + 1)
            if not data.startswith(ENV_FILE_HEADER.encode() + b"\n"):
                raise SandboxError(
                    f"{path}: exists and was not written by toolkit sandbox; "
                    "not overwritten (choose another --env-file)"
                )
            if not is_own(data):
                raise SandboxError(
                    f"{path}: changed since toolkit sandbox wrote it (a key of yours may be "
                    "in it); not overwritten (choose another --env-file, or delete it)"
                )
        else:  # made private before a key is in it; atomic_write keeps the mode
            path.parent.mkdir(parents=True, exist_ok=True)
            os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
        atomic_write(path, env_file_text(environment).encode("utf-8"))
    except OSError as exc:
        raise SandboxError(describe_os_error(exc)) from None
