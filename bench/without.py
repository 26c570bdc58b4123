"""`python -m bench.without DEVICE -- ARGS`: the toolkit CLI, as the `toolkit` script runs
it, with one speed device taken out. bench/devices.py measures each device this way.

DEVICE is one of:

- `none`: nothing taken out (`toolkit.__main__.run`);
- `gc`: Python's own collector thresholds, and no `gc.freeze()` at exit;
- `console`: rich prints every line (no plain-text writing of a line rich would leave as
  it is);
- `markdown-pyrs`: markdown-it-pyrs cannot be imported, so every post goes to
  markdown-it-py;
- `imports=FILE`: the modules FILE lists (one per line) imported before the command, as
  they would be if the imports now inside functions were at the top of their modules;
- `probe=FILE`: run the command, then import, until nothing new loads, the targets of the
  function-level imports (`bench.devices.function_level_imports`) of every toolkit module
  loaded; write those targets to FILE, one per line, with their kind;
- `modules=FILE`: run the command, then write the names of the modules it loaded to FILE.
"""

from __future__ import annotations

import contextlib
import importlib
import sys


def _run(args: list[str]) -> None:
    sys.argv = ["toolkit", *args]
    from toolkit.__main__ import run

    run()


def _without_gc(args: list[str]) -> None:
    sys.argv = ["toolkit", *args]
    from toolkit.signals import install_early

    install_early()
    from toolkit.cli import main

    main()


def _probe(args: list[str], out: str) -> None:
    from bench.devices import function_level_imports

    with contextlib.suppress(SystemExit):
        _run(args)
    table = function_level_imports()
    done: set[str] = set()
    wanted: dict[str, str] = {}
    while True:
        loaded = sorted(m for m in sys.modules if m in table and m not in done)
        if not loaded:
            break
        for module in loaded:
            done.add(module)
            for target, kind in table[module]:
                if kind == "optional" or target in wanted:
                    continue
                try:
                    importlib.import_module(target)
                except ImportError:  # a platform's module (msvcrt, winreg)
                    continue
                wanted[target] = kind
    with open(out, "w", encoding="utf-8") as handle:
        handle.writelines(f"{target} {kind}\n" for target, kind in sorted(wanted.items()))


def main() -> None:
    device, _, *args = sys.argv[1:]
    if device == "none":
        _run(args)
    elif device == "gc":
        _without_gc(args)
    elif device == "console":
        from toolkit.cli import output

        output._plain_stream = lambda console: None  # rich for every line
        _run(args)
    elif device == "markdown-pyrs":
        sys.modules["markdown_it_pyrs"] = None  # type: ignore[assignment]
        _run(args)
    elif device.startswith("imports="):
        with open(device.partition("=")[2], encoding="utf-8") as handle:
            for line in handle:
                if line.strip():
                    with contextlib.suppress(ImportError):
                        importlib.import_module(line.split()[0])
        _run(args)
    elif device.startswith("modules="):
        with contextlib.suppress(SystemExit):
            _run(args)
        with open(device.partition("=")[2], "w", encoding="utf-8") as handle:
            handle.writelines(f"{name}\n" for name in sorted(sys.modules))
    elif device.startswith("probe="):
        _probe(args, device.partition("=")[2])
    else:
        raise SystemExit(f"unknown device {device!r}")


if __name__ == "__main__":
    main()
