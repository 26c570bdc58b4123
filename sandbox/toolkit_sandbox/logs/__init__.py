"""Interface E: the log-stream service (Parseable), under `/api/v1`.

Ingest (`POST /api/v1/ingest` with `X-P-Stream`, `POST /api/v1/logstream/{name}`),
DataFusion SQL queries (`POST /api/v1/query`, a JSON array or newline-delimited JSON),
the streams, their creation, deletion and schemas (`/api/v1/logstream...`), `about`, the
liveness and readiness probes, with Parseable's Basic auth
and `text/plain` errors (http.py); events typed as Parseable types them (records.py),
stored as Parquet files under the sandbox's data folder (storage.py). It owns `/api/v1`,
which interface A leaves to it, so none of A's rules (its 404 body, its User-Agent check,
its `api-key`) apply there.

    from toolkit_sandbox import logs
    logs.interface()   # -> Interface, composed by toolkit_sandbox.app
"""

from __future__ import annotations

import importlib.util

from toolkit_sandbox.interface import Interface

# What the log service's storage and SQL need: toolkit's `sql` extra (or this distribution's `logs`).
ENGINE = ("datafusion", "pyarrow")
MISSING = (
    "log stream (/api/v1) left out: its SQL engine is not installed (pip install 'toolkit[sql]')"
)


def available() -> bool:
    """Whether the SQL engine (DataFusion, pyarrow) can be imported; without it the
    sandbox runs without this interface."""
    for name in ENGINE:
        try:
            if importlib.util.find_spec(name) is None:
                return False
        except (ImportError, ValueError):  # ValueError: blocked in sys.modules
            return False
    return True


def interface() -> Interface:
    from toolkit_sandbox.logs import api, control, http
    from toolkit_sandbox.logs.storage import LogsState

    return Interface(
        name=http.NAME,
        prefixes=("/api/v1",),
        routes=api.routes,
        error=http.error,
        caller=http.caller_of,
        max_body=http.MAX_BODY,
        wrong_method=405,  # actix's resources answer a method they lack with 405
        control_routes=control.routes,
        state=LogsState.create,
    )
