"""What the sandbox's modules read of each other, as protocols: the seam (`interface.py`),
the store, the state, the control API and the interfaces name these instead of importing
the classes that have them, so no two modules of the sandbox import each other. A leaf:
it imports nothing of the sandbox.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from typing import Any, Protocol


class Runtime(Protocol):
    """An interface's runtime state in a running sandbox (`Interface.state`)."""

    def reset(self) -> None:
        """Back to the start, with the rest of the sandbox (POST /__sandbox/reset)."""


class Schema(Protocol):
    """What the store reads of an interface (an `Interface`): its tables and its seed."""

    @property
    def name(self) -> str: ...
    @property
    def ddl(self) -> str: ...
    @property
    def tables(self) -> tuple[str, ...]: ...
    @property
    def schema_version(self) -> str: ...
    @property
    def seed(self) -> Callable[[sqlite3.Connection, bool], None] | None: ...


class Application(Protocol):
    """What the control API reads of the application it answers for (a `SandboxApp`)."""

    async def quiescent(self) -> bool:
        """Wait until no request is in flight (True), or a while (False)."""
        ...

    def owner_name(self, path: str) -> str | None: ...
    def control_index(self) -> dict[str, str]: ...
    def describe(self) -> dict[str, Any]: ...


class ControlClient(Protocol):
    """A running sandbox as its control API's client (a `SandboxServer`)."""

    def control(self, method: str, path: str, body: Any = None) -> Any: ...
