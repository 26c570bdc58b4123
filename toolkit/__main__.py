"""`python -m toolkit` and the `toolkit` console script.

Ctrl-C is recorded from the first line (`toolkit.signals`), before the command line and
its imports load, so that a server command interrupted while starting stops cleanly.
"""

import gc

from toolkit.signals import install_early


def run() -> None:
    install_early()
    from toolkit.cli import main

    try:
        main()
    finally:
        # The process ends here. What it holds (the modules, a build's records) need not
        # be gone over once more by the collection Python makes on its way out: 10 ms and
        # more after a build of 1,000 posts. Files are closed and flushed as they would be.
        gc.freeze()


if __name__ == "__main__":  # pragma: no cover - exercised through `python -m toolkit`
    run()
