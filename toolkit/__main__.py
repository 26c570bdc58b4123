"""`python -m toolkit` and the `toolkit` console script.

Ctrl-C is recorded from the first line (`toolkit.signals`), before the command line and
its imports load, so that a server command interrupted while starting stops cleanly.
"""

from toolkit.signals import install_early


def run() -> None:
    install_early()
    from toolkit.cli import main

    main()


if __name__ == "__main__":  # pragma: no cover - exercised through `python -m toolkit`
    run()
