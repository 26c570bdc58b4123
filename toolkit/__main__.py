"""`python -m toolkit` and the `toolkit` console script.

Ctrl-C is recorded from the first line (`toolkit.signals`), before the command line and
its imports load, so that a server command interrupted while starting stops cleanly.
"""

import gc

from toolkit.signals import install_early

# Python's cyclic collector, for a command that does its work and ends: a collection
# after every 100,000 new objects rather than 700. Nearly all that a command makes stays
# alive until it ends, and almost none of it is in a cycle (a clean build of 1,000 posts
# leaves a few hundred objects to collect), so the collector, which goes over the young
# objects each time, found little: 8 ms of a build after a one-post edit. The commands
# that serve until stopped go back to Python's thresholds (`cli.main`).
QUICK_COMMAND_THRESHOLDS = (100_000, 50, 100)


def run() -> None:
    install_early()
    gc.set_threshold(*QUICK_COMMAND_THRESHOLDS)
    from toolkit.cli import main  # here: after install_early(), so Ctrl-C while it loads is seen

    try:
        main()
    finally:
        # The process ends here. What it holds (the modules, a build's records) need not
        # be gone over once more by the collection Python makes on its way out: 10 ms and
        # more after a build of 1,000 posts. Files are closed and flushed as they would be.
        gc.freeze()


if __name__ == "__main__":  # pragma: no cover - exercised through `python -m toolkit`
    run()
