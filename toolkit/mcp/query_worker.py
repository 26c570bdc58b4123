"""The process a `query_run_log` call over the local run log runs in
(`python -m toolkit.mcp.query_worker`), so that the server can stop it: a DataFusion query
cannot be interrupted from another thread, a process can be killed.

Reads one JSON request on stdin (`config`: the toolkit.toml, `sql`, `since`,
`memory_limit`, `row_limit`) and writes one JSON answer on stdout: `{"answer": {...}}`
(`LogQuery` as `toolkit.commands.results.to_json` writes it) or `{"error": [lines]}`. The environment is the server's.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

from toolkit.commands.logs import query
from toolkit.commands.results import to_json
from toolkit.config import load_config
from toolkit.errors import ToolkitError


def answer(request: dict[str, Any]) -> dict[str, Any]:
    try:
        config = load_config(request["config"], env=os.environ)
        result = query(
            config,
            request["sql"],
            since=request.get("since"),
            local=True,
            memory_limit=request.get("memory_limit"),
            row_limit=request.get("row_limit"),
        )
    except ToolkitError as exc:
        return {"error": exc.lines}
    except Exception as exc:  # one line for the client; nothing of the process's state
        return {"error": [f"the query failed unexpectedly ({type(exc).__name__})"]}
    return {"answer": to_json(result)}


def main() -> None:
    request = json.loads(sys.stdin.buffer.read())
    sys.stdout.write(json.dumps(answer(request), default=str))
    sys.stdout.flush()


if __name__ == "__main__":  # pragma: no cover - run as a process
    main()
