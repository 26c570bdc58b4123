"""Run every benchmark, or the ones named: `python -m bench site publish`."""

from __future__ import annotations

import importlib
import os
import sys

BENCHMARKS = [
    "site", "devices", "sandbox", "publish", "team", "mirror", "watch", "license", "runlog", "mcp",
    "export", "bodies", "scan",
]  # fmt: skip


def main(argv: list[str]) -> int:
    # Measure what a user runs: Python caching compiled modules. Some environments set
    # PYTHONDONTWRITEBYTECODE, which makes every command compile the project's modules
    # again and adds tens of milliseconds to each run.
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    names = argv or BENCHMARKS
    for name in names:
        if name not in BENCHMARKS:
            print(f"unknown benchmark {name!r}; choose from {', '.join(BENCHMARKS)}")
            return 2
        try:
            module = importlib.import_module(f"bench.{name}")
        except ModuleNotFoundError as exc:
            if exc.name != f"bench.{name}":
                raise
            continue
        print(f"\n== {name} ==", flush=True)
        module.main()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
