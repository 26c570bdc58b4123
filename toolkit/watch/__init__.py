"""`toolkit watch`: live preview while writing, with the remote draft kept up to date."""

from toolkit.watch.session import WatchOptions, WatchReporter, WatchSession

__all__ = ["WatchOptions", "WatchReporter", "WatchSession"]
