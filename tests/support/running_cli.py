"""A command that serves until stopped (`toolkit watch`, `serve`, `sandbox`) run by the real
CLI in a thread of this process: its output line by line as it comes, and a stop as the
one Ctrl-C asks for. For the tests whose subject is what the command does, not the process:
a Python of its own costs more processor than most of these tests take in all. The tests of
the signal itself, of the process's start-up and exit, run `python -m toolkit`.

While it runs, the command has what a process would have to itself, and this process
gives it back when it stops: the standard output and error (`sys.stdout`, `sys.stderr`,
which click and the rich consoles look up on each write), the environment variables the
test gives, the working folder, the record of stop requests (`toolkit.signals`, which
the entry point installs in a real process) and the logging set-up. So one such command
runs at a time; the tests of a worker run one after the other anyway.
"""

from __future__ import annotations

import contextlib
import io
import logging
import os
import signal
import subprocess
import sys
import threading
import time
import traceback
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, TypeVar

from toolkit import signals
from toolkit.cli import main

T = TypeVar("T")
S = TypeVar("S")

_ONE_AT_A_TIME = threading.Lock()


class _Lines(io.TextIOBase):
    """A text stream that hands each complete line to `add` (what a pipe read line by line
    gives), and what is left unended when it is closed."""

    def __init__(self, add: Callable[[str], None]):
        super().__init__()
        self._add = add
        self._partial = ""
        self._mutex = threading.Lock()

    @property
    def encoding(self) -> str:  # type: ignore[override]  # io's own is read-only too
        return "utf-8"

    def isatty(self) -> bool:
        return False

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        with self._mutex:
            *whole, self._partial = (self._partial + text).split("\n")
            for line in whole:
                self._add(line)
        return len(text)

    def end(self) -> None:
        with self._mutex:
            if self._partial:
                self._add(self._partial)
                self._partial = ""


class RunningCli:
    """`toolkit ARGS` from `cwd` with `env` added to the environment, running in a thread
    until it ends or `stop()` asks it to. `lines` holds its output, stdout and stderr
    merged in the order written; `stdout` and `stderr` each stream's own. `news`: the
    condition notified on each line and when the command ends (a caller waiting on more
    than the output shares its own)."""

    def __init__(
        self,
        *args: str,
        cwd: Path,
        env: Mapping[str, str] | None = None,
        news: threading.Condition | None = None,
    ):
        if not _ONE_AT_A_TIME.acquire(blocking=False):
            raise RuntimeError("another in-process command is still running")
        self.args = list(args)
        self.lines: list[str] = []
        self.stdout: list[str] = []
        self.stderr: list[str] = []
        self.code: int | None = None
        self._news = news if news is not None else threading.Condition()
        self._stop = signals.StopSignals()  # what the entry point installs in a process
        self._out = _Lines(lambda line: self._add(self.stdout, line))
        self._err = _Lines(lambda line: self._add(self.stderr, line))
        self._taken: dict[str, Any] = {
            "stdout": sys.stdout,
            "stderr": sys.stderr,
            "cwd": os.getcwd(),
            "environ": {name: os.environ.get(name) for name in env or {}},
            "signals": contextlib.ExitStack(),
            "logging": (logging.root.handlers[:], logging.root.level),
        }
        try:
            os.chdir(cwd)
            os.environ.update(env or {})
            sys.stdout, sys.stderr = self._out, self._err
            self._taken["signals"].enter_context(signals.recorded_by(self._stop))
            self._thread = threading.Thread(target=self._run, name="toolkit " + " ".join(args))
            self._thread.start()
        except BaseException:
            self._give_back()
            raise

    def _run(self) -> None:
        code: int = 0
        try:
            main.main(self.args, prog_name="toolkit", standalone_mode=True)
        except SystemExit as exc:
            if isinstance(exc.code, str):
                self._err.write(exc.code + "\n")
            code = 1 if isinstance(exc.code, str) else (exc.code or 0)
        except BaseException:  # what Python prints when a command raises
            self._err.write(traceback.format_exc())
            code = 1
        finally:
            self._out.end()
            self._err.end()
            with self._news:
                self.code = code
                self._news.notify_all()

    def _add(self, stream: list[str], line: str) -> None:
        with self._news:
            stream.append(line)
            self.lines.append(line)
            self._news.notify_all()

    def _state(self) -> tuple[int, int | None]:
        with self._news:
            return len(self.lines), self.code

    def poll(self) -> int | None:
        """The exit code once the command has ended, None while it runs."""
        with self._news:
            return self.code

    def until(self, condition: Callable[[], T | None], timeout: float = 10.0) -> T:
        """The first truthy value of `condition()`, asked now and after each new line; fail
        (naming the output and what each thread was doing) when none comes within `timeout`
        seconds or the command ends first."""
        return until_news(
            self._news,
            self._state,
            condition,
            timeout,
            ended=lambda seen: None if seen[1] is None else f"the command ended ({seen[1]})",
            said=lambda: f"output:\n{self.output()}",
        )

    def output(self) -> str:
        with self._news:
            return "\n".join(self.lines)

    def stop(self, timeout: float = 30.0) -> int:
        """Ask the command to stop as Ctrl-C does (the record its wait looks at), wait for
        it to end, give this process back what the command had, and return its exit code."""
        if self._thread.is_alive():
            self._stop.request(signal.SIGINT)
        return self.wait(timeout)

    def wait(self, timeout: float = 30.0) -> int:
        """Wait for the command to end by itself (or after `stop`); its exit code."""
        self._thread.join(timeout)
        if self._thread.is_alive():
            failure = AssertionError(
                f"`toolkit {' '.join(self.args)}` did not end within {timeout} s; output:\n"
                f"{self.output()}\nwhat its threads were doing:\n{stacks()}"
            )
            self._stop.request(signal.SIGINT)
            self._thread.join(timeout)
            self._give_back()
            raise failure
        self._give_back()
        assert self.code is not None
        return self.code

    def _give_back(self) -> None:
        taken, self._taken = self._taken, {}
        if not taken:
            return
        try:
            sys.stdout, sys.stderr = taken["stdout"], taken["stderr"]
            os.chdir(taken["cwd"])
            for name, value in taken["environ"].items():
                if value is None:
                    os.environ.pop(name, None)
                else:
                    os.environ[name] = value
            taken["signals"].close()
            logging.root.handlers[:], level = taken["logging"]
            logging.root.setLevel(level)
        finally:
            _ONE_AT_A_TIME.release()

    def __enter__(self) -> RunningCli:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()


def until_news(
    news: threading.Condition,
    state: Callable[[], S],
    condition: Callable[[], T | None],
    timeout: float,
    ended: Callable[[S], str | None],
    said: Callable[[], str],
) -> T:
    """The first truthy value of `condition()`, asked now and each time `state()` changes
    (whoever changes it notifies `news`); fail when none comes within `timeout` seconds,
    or once `ended(state)` says why no more will come, with what `said()` gives and, on a
    timeout, what each thread was doing."""
    deadline = time.monotonic() + timeout
    while True:
        seen = state()
        value = condition()
        if value:
            return value
        why = ended(seen)
        with news:
            arrived = why is None and news.wait_for(
                lambda seen=seen: state() != seen,  # type: ignore[misc]
                deadline - time.monotonic(),
            )
        if not arrived:
            raise AssertionError(
                "condition not met "
                + (f"before {why}" if why else "in time")
                + f"; {said()}"
                + ("" if why else f"\nwhat its threads were doing:\n{stacks()}")
            )


def stacks() -> str:
    """The stack of each thread of this process."""
    names = {thread.ident: thread.name for thread in threading.enumerate()}
    with contextlib.suppress(Exception):
        return "\n".join(
            f"Thread {names.get(ident, ident)}:\n" + "".join(traceback.format_stack(frame))
            for ident, frame in sys._current_frames().items()
        )
    return "(not available)"


def start_toolkit(
    project: Any, *args: str, env: Mapping[str, str] | None = None, merged: bool = False
) -> subprocess.Popen[str]:
    """`toolkit --config <project>/toolkit.toml ARGS` as a real process, from the project's
    folder, its output captured (`merged`: the standard error into the output), for the
    tests whose subject is the process itself."""
    return subprocess.Popen(
        [sys.executable, "-m", "toolkit", "--config", str(project.root / "toolkit.toml"), *args],
        cwd=project.root,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT if merged else subprocess.PIPE,
        text=True,
        env={**os.environ, "COLUMNS": "200", **(env or {})},
    )
