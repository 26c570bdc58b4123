"""The stdio transport, stoppable: the SDK's stdio server reads stdin on a worker thread,
which nothing can interrupt, so a server stopped by Ctrl-C or SIGTERM while its client
keeps stdin open would wait for the next line, or crash at exit (a daemon thread holding
stdin's lock). Here stdin is read by the event loop itself when it is a pipe or a
terminal (what assistants and people give it), so stopping cancels the read at once; a
regular file (which never blocks for long) keeps the SDK's way of reading.
"""

from __future__ import annotations

import asyncio
import os
import stat
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import anyio
from mcp.server.stdio import stdio_server

MAX_LINE = 32 * 1024 * 1024  # one JSON-RPC message per line


class StdinLines:
    """`async for line in StdinLines(reader)`: stdin's lines as text, until end of file."""

    def __init__(self, reader: asyncio.StreamReader):
        self.reader = reader

    def __aiter__(self) -> StdinLines:
        return self

    async def __anext__(self) -> str:
        line = await self.reader.readline()
        if not line:
            raise StopAsyncIteration
        return line.decode("utf-8", errors="replace")


@asynccontextmanager
async def stdin_lines() -> AsyncIterator[StdinLines | None]:
    """stdin read by the event loop, or None when it cannot be (a regular file)."""
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=MAX_LINE)
    fd = sys.stdin.fileno()
    mode = os.fstat(fd).st_mode
    if not (stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or os.isatty(fd)):
        yield None  # a file, /dev/null: nothing the event loop can wait on
        return
    blocking = os.get_blocking(fd)
    try:
        transport, _ = await loop.connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(fd, "rb", closefd=False)
        )
    except (ValueError, OSError):
        yield None
        return
    try:
        yield StdinLines(reader)
    finally:
        transport.close()
        os.set_blocking(fd, blocking)  # a terminal goes back to how the shell left it


async def serve_stdio(server: Any, stopping: Callable[[], bool]) -> None:
    """Run the low-level MCP `server` on stdin and stdout until stdin ends or `stopping()`."""
    async with anyio.create_task_group() as group:

        async def watch() -> None:
            while not stopping():
                await anyio.sleep(0.05)
            group.cancel_scope.cancel()

        group.start_soon(watch)
        async with stdin_lines() as lines, stdio_server(stdin=lines) as (read, write):  # type: ignore[arg-type]
            await server.run(read, write, server.create_initialization_options())
        group.cancel_scope.cancel()
