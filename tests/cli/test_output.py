"""A line the CLI prints to a file: written as rich would write it, with or without rich."""

from __future__ import annotations

import io
import sys

import pytest

from toolkit.cli import output


@pytest.mark.parametrize(
    "text",
    [
        "built 3 posts: 2 files written, 1 unchanged, 0 removed in 0.1 s → site/",
        "built 1 post: into a:smile:folder/",  # an emoji code, which rich replaces
        "a\ttab and a\rreturn",  # control characters, which rich rewrites
    ],
)
def test_a_line_to_a_file_is_what_rich_writes(monkeypatch, text):
    from rich.console import Console

    monkeypatch.delenv("FORCE_COLOR", raising=False)
    monkeypatch.delenv("TTY_COMPATIBLE", raising=False)
    expected = io.StringIO()
    Console(file=expected, highlight=False, soft_wrap=True).print(text, markup=False)
    written = io.StringIO()
    monkeypatch.setattr(sys, "stderr", written)
    lazy = output._LazyConsole(stderr=True, highlight=False, soft_wrap=True)
    output.print_line(lazy, text)  # type: ignore[arg-type]  # a lazy Console
    assert written.getvalue() == expected.getvalue()
    # Only the line rich would leave as it is goes without it.
    assert (lazy._console is None) == text.startswith("built 3")
    assert not output.is_terminal(lazy)  # type: ignore[arg-type]
