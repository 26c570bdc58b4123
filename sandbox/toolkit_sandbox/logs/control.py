"""Interface E's control routes, under `/__sandbox/logs/`: its credentials and what its
streams hold."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from toolkit_sandbox.logs.api import storage_of
from toolkit_sandbox.logs.http import PASSWORD, USERNAME


async def credentials(request: Request) -> Response:
    """The user and password of the log service (Basic auth)."""
    return JSONResponse({"username": USERNAME, "password": PASSWORD})


async def streams(request: Request) -> Response:
    """Each stream: its fields, its Parquet files and its rows."""
    storage = storage_of(request)
    found = [storage.get(name) for name in storage.names()]
    return JSONResponse(
        {
            "streams": [stream.describe() for stream in found if stream is not None],
            "folder": str(storage.folder),
        }
    )


routes = [
    Route("/credentials", credentials, methods=["GET"]),
    Route("/streams", streams, methods=["GET"]),
]
