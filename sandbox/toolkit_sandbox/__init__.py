"""The sandbox: faithful local emulators of the remote interfaces toolkit talks to.

One ASGI application (app.py) composed of emulated interfaces, one folder each behind
the seam in interface.py (`forem/`, `archive/`, `licensing/` and `logs/`),
served by uvicorn (server.py), state in SQLite (store.py), with the generic layers
every interface shares: request recording (recorder.py), injected faults (faults.py),
body limits (limits.py) and a control API under `/__sandbox` (control.py). README.md
beside this file documents the composition, the control API and each interface.

    from toolkit_sandbox import SandboxServer, forem

    with SandboxServer() as sandbox:
        print(sandbox.base_url, forem.api_key(sandbox))
"""

from __future__ import annotations

from typing import Any

__all__ = ["SandboxError", "SandboxServer"]


def __getattr__(name: str) -> Any:
    # Imported on first use: the helpers of this package (text, frontmatter...) do not
    # need uvicorn.
    if name in __all__:
        from toolkit_sandbox import server

        return getattr(server, name)
    raise AttributeError(name)
