"""The sandbox: a faithful local emulator of the publishing API (interface A).

One Starlette application (app.py) served by uvicorn (server.py), state in SQLite
(store.py, schema.py), a deterministic seed (seed.py, seed_data.py), the API under
`/api` (forem/), and a control API under `/__sandbox` (control.py) for tests and
scripts. README.md beside this file documents behaviour, the control API and where
the sandbox knowingly differs from the real service.

    from toolkit.sandbox import SandboxServer

    with SandboxServer() as sandbox:
        print(sandbox.base_url, sandbox.demo_api_key)
"""

from __future__ import annotations

from typing import Any

__all__ = ["SandboxError", "SandboxServer"]


def __getattr__(name: str) -> Any:
    # Imported on first use: the helpers of this package (text, frontmatter...) do not
    # need uvicorn.
    if name in __all__:
        from toolkit.sandbox import server

        return getattr(server, name)
    raise AttributeError(name)
