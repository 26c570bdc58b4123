"""Where the CLI writes: results on stdout, progress and diagnostics on stderr.

Both are rich consoles, made when first used: importing rich takes longer than a command
with nothing to print (`toolkit build` with nothing to do) takes in all.
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO, cast

if TYPE_CHECKING:  # pragma: no cover
    from rich.console import Console


class _LazyConsole:
    """A rich `Console` made on first use; everything else is the console's own."""

    def __init__(self, **options: Any):
        self._options = options
        self._console: Console | None = None

    def _made(self) -> Console:
        if self._console is None:
            from rich.console import Console

            self._console = Console(**self._options)
        return self._console

    def __getattr__(self, name: str) -> Any:
        return getattr(self._made(), name)

    # Special methods are looked up on the type, never through __getattr__.
    def __enter__(self) -> Console:
        return self._made().__enter__()

    def __exit__(self, *exc_info: Any) -> None:
        self._made().__exit__(*exc_info)


stdout = cast("Console", _LazyConsole(highlight=False, soft_wrap=True))
stderr = cast("Console", _LazyConsole(stderr=True, highlight=False, soft_wrap=True))

# What rich would write otherwise than as it is: a control character or a tab, or an
# emoji code (`:name:`).
_REWRITTEN = re.compile(r"[\x00-\x08\x0b-\x1f\x7f\t]|:\S*:")


def _plain_stream(console: Console) -> TextIO | None:
    """The stream of the lazy `console` when rich is not imported yet and would write to it
    as to a file (not a terminal, and no TTY_COMPATIBLE or FORCE_COLOR saying otherwise):
    then a line of plain text is written without rich, which takes longer to import than
    `toolkit build` with little to do takes to run."""
    lazy = cast("_LazyConsole", console)
    if (
        not isinstance(lazy, _LazyConsole)
        or lazy._console is not None
        or any(name in os.environ for name in ("TTY_COMPATIBLE", "FORCE_COLOR"))
    ):
        return None
    stream = sys.stderr if lazy._options.get("stderr") else sys.stdout
    try:
        return None if stream.isatty() else stream
    except (AttributeError, ValueError):
        return None


def is_terminal(console: Console) -> bool:
    """`console.is_terminal`, without importing rich for a stream that is a file."""
    return _plain_stream(console) is None and console.is_terminal


def print_line(console: Console, text: str) -> None:
    """`console.print(text, markup=False)`: as rich writes it, without rich when it would
    write `text` as it is."""
    stream = _plain_stream(console)
    if stream is None or _REWRITTEN.search(text):
        console.print(text, markup=False)
        return
    stream.write(text + "\n")
    stream.flush()


def shown_path(path: Path) -> str:
    """A path as the user would type it: relative to the working folder when inside it."""
    try:
        relative = os.path.relpath(path)
    except ValueError:  # pragma: no cover - another drive
        return str(path)
    return str(path) if relative.startswith("..") else relative


def toolkit_command() -> str:
    """How to run toolkit again from here: `toolkit` when that is the one running, else
    the path it was started by (`.venv/bin/toolkit` after `make install`, which does not
    put it on PATH), or `python -m toolkit`."""
    import shutil  # here: `toolkit build` with nothing to do never needs it

    started = Path(sys.argv[0])
    if started.name != "toolkit":
        return "python -m toolkit" if started.name == "__main__.py" else "toolkit"
    on_path = shutil.which("toolkit")
    if on_path is not None and Path(on_path).resolve() == started.resolve():
        return "toolkit"
    return shown_path(started)


def in_github_actions() -> bool:
    return os.environ.get("GITHUB_ACTIONS") == "true"


def _escape(value: str, *, property_value: bool = False) -> str:
    # The workflow-command escaping GitHub documents for messages and properties.
    value = value.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    if property_value:
        value = value.replace(":", "%3A").replace(",", "%2C")
    return value


def github_annotation(
    level: str, message: str, file: str | None = None, line: int | None = None
) -> str:
    """`::error file=content/a.md,line=3::message`: shown on the commit by GitHub Actions."""
    properties = []
    if file:
        properties.append(f"file={_escape(file, property_value=True)}")
    if line:
        properties.append(f"line={line}")
    head = f"::{level}" + (" " + ",".join(properties) if properties else "")
    return f"{head}::{_escape(message)}"
