"""Ctrl-C and SIGTERM as a request to stop, for the commands that serve until stopped.

Python turns SIGINT into a `KeyboardInterrupt` raised wherever the main thread happens
to be: halfway through importing a module or starting a server, inside `Thread.join`
while stopping one, inside the lock of a `threading.Event` that a handler then wants
too (a hang). No command can stop cleanly from all of those places. So `toolkit
sandbox` and `toolkit watch` only *record* a signal (`StopSignals`), and their main
thread looks at the record where stopping is safe: before starting, and while waiting.
Signals that come while stopping are recorded as well, which makes a second Ctrl-C
harmless; stopping is bounded anyway (about a second with open connections).

The entry point installs the record first thing (`install_early`), before the heavy
imports, so a Ctrl-C during start-up stops a server command cleanly too. The command
group hands the signals back to Python's own handling (`hand_back`) for every other
command, replaying one that came in the meantime, so Ctrl-C interrupts a `publish` as
it always did. A signal that comes before toolkit's first line runs (interpreter
start-up) is Python's business: the process dies of it, as any Python program does.

This module imports nothing that the interpreter has not loaded already (not even
`typing`): it runs before everything else, and the shorter that is, the sooner a
Ctrl-C is handled.
"""

from __future__ import annotations

import contextlib
import signal
import time

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from typing import Any

SIGNALS = (signal.SIGINT, signal.SIGTERM)
POLL_SECONDS = 0.05


class StopSignals:
    """SIGINT and SIGTERM recorded, never raised. Handlers installed from the main thread
    only; elsewhere (a test runner's worker thread) nothing is installed and `requested`
    stays false."""

    def __init__(self) -> None:
        self.received: list[int] = []
        self._previous: dict[int, Any] = {}

    @property
    def requested(self) -> bool:
        return bool(self.received)

    def _record(self, signum: int, frame: object) -> None:
        # Nothing but an append: the main thread may be anywhere, holding any lock.
        self.received.append(signum)

    def request(self, signum: int = signal.SIGINT) -> None:
        """Ask the command waiting on this record to stop, as the signal would."""
        self.received.append(signum)

    def install(self) -> None:
        for signum in SIGNALS:
            try:
                self._previous[signum] = signal.signal(signum, self._record)
            except ValueError:  # not the main thread: signals are not ours to take
                return

    def restore(self) -> None:
        """Put back the handlers that were there before `install`."""
        for signum, handler in self._previous.items():
            signal.signal(signum, handler if handler is not None else signal.SIG_DFL)
        self._previous.clear()

    def hold(self) -> None:
        """Keep further signals pending for the rest of the process: the command has
        stopped, and at the very end of the interpreter's shutdown SIGINT has its default
        action again, which would kill the process that is exiting cleanly."""
        if hasattr(signal, "pthread_sigmask"):
            signal.pthread_sigmask(signal.SIG_BLOCK, SIGNALS)

    def wait(self, running: Callable[[], bool] = lambda: True) -> None:
        """Block until a signal is recorded or `running()` turns false.

        Polling rather than an `Event`: setting an event from a signal handler deadlocks
        when the signal lands while the main thread holds the event's own lock."""
        while not self.received and running():
            time.sleep(POLL_SECONDS)


_process: StopSignals | None = None


def install_early() -> None:
    """Record SIGINT and SIGTERM for the whole process (the entry point calls this)."""
    global _process
    if _process is None:
        _process = StopSignals()
        _process.install()


def hand_back() -> None:
    """Python's own signal handling again, for a command that does not serve: a signal
    recorded so far is raised now (a `KeyboardInterrupt`, or the end of the process)."""
    global _process
    if _process is None:
        return
    process, _process = _process, None
    process.restore()
    if process.received:
        signal.raise_signal(process.received[0])


@contextlib.contextmanager
def recorded_by(record: StopSignals) -> Iterator[StopSignals]:
    """`record`, not the signals, is what the server commands started meanwhile wait on:
    a program that runs one in a thread of its own (where no handler can be installed)
    stops it with `record.request()`, as Ctrl-C stops it in its own process. The process's
    record is put back at the end."""
    global _process
    previous, _process = _process, record
    try:
        yield record
    finally:
        _process = previous


def current() -> StopSignals | None:
    """The process's record, once the entry point (or `recorded_by`) installed one."""
    return _process


@contextlib.contextmanager
def stop_signals() -> Iterator[StopSignals]:
    """The record a server command waits on. In the real process it is the one the entry
    point installed, and it stays to the end (then signals are held), so a Ctrl-C after
    the server stopped cannot turn a clean exit into an error. Called in-process (tests),
    handlers are installed for the duration and the previous ones put back."""
    if _process is not None:
        try:
            yield _process
        finally:
            _process.hold()
        return
    own = StopSignals()
    own.install()
    try:
        yield own
    finally:
        own.restore()
