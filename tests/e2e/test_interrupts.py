"""Ctrl-C at any moment stops `toolkit sandbox` and `toolkit watch` cleanly: exit 0, no
traceback, no hang.

Each run is a real `python -m toolkit sandbox --memory --port 0` (or `watch --port 0
--no-push` in a small project), sent SIGINT at one of several moments: while it starts
(at varied delays), right after its "running" line, twice in a row. Runs go in
small parallel batches to keep the whole test short without making many runs compete
for the processor at once.

"While it starts" counts from the moment toolkit has installed its signal handlers,
which the test reads from /proc/<pid>/status (SigCgt, the signals the process catches).
A signal before that lands in the interpreter's own start-up (`site`, `runpy`), before
toolkit's first line, and kills the process as it would any Python program.

Each run has its own budget to stop, counted from its own signal (its readiness is the
moment before it): generous, as it only tells a hang from a slow stop on a loaded
machine. The module's tests run one after the other in one worker (`xdist_group`).
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

pytestmark = [
    pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="needs /proc"),
    pytest.mark.xdist_group("interrupts"),
]

SANDBOX = ("sandbox", "--memory", "--port", "0")
WATCH = ("watch", "--port", "0", "--no-push")
RUNS = {SANDBOX: 24, WATCH: 8}
PARALLEL = 4  # a start is mostly processor, a stop mostly waiting: four overlap both
MOMENTS = ("starting", "starting-twice", "running", "running-twice")
DELAYS = (0.0, 0.01, 0.03, 0.07, 0.15, 0.25)
STOP_WITHIN = 30.0  # a hang, not a slow stop under load (alone: 0.5-0.9 s)
READY = {"sandbox": "Sandbox running at", "watch": "Serving http"}
STOPPED = {"sandbox": "Sandbox stopped.", "watch": "stopped"}


def catches(pid: int, signum: int) -> bool:
    """Whether the process has a handler for `signum` (False once it is gone)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    match = re.search(r"^SigCgt:\s*([0-9a-f]+)$", status, re.MULTILINE)
    return match is not None and bool(int(match.group(1), 16) >> (signum - 1) & 1)


def interrupted_run(number: int, cwd: Path, command: tuple[str, ...] = SANDBOX) -> dict:
    moment = MOMENTS[number % len(MOMENTS)]
    delay = DELAYS[number // len(MOMENTS) % len(DELAYS)]
    process = subprocess.Popen(
        [sys.executable, "-m", "toolkit", *command],
        cwd=cwd,
        env={**os.environ, "PYTHONUNBUFFERED": "1", "COLUMNS": "200"},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    output = ""
    try:
        if moment.startswith("starting"):
            deadline = time.monotonic() + 20
            while not catches(process.pid, signal.SIGTERM) and process.poll() is None:
                assert time.monotonic() < deadline, "toolkit never installed its handlers"
                time.sleep(0.001)
        else:
            assert process.stdout is not None
            for line in process.stdout:
                output += line
                if READY[command[0]] in line:
                    break
        time.sleep(delay)
        process.send_signal(signal.SIGINT)
        signalled = time.monotonic()
        if moment.endswith("twice"):
            time.sleep(delay / 2)
            process.send_signal(signal.SIGINT)
        try:
            rest, _ = process.communicate(timeout=STOP_WITHIN)
            code: int | str = process.returncode
        except subprocess.TimeoutExpired:
            process.kill()
            rest, _ = process.communicate()
            code = "none: it hung and was killed"
        return {
            "command": command[0],
            "moment": moment,
            "delay": delay,
            "code": code,
            "output": output + rest,
            "seconds": time.monotonic() - signalled,
        }
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()


def project(root: Path) -> Path:
    """A small project of its own for each watch (each builds into its own folder)."""
    (root / "content").mkdir(parents=True)
    (root / "toolkit.toml").write_text('[site]\ntitle = "Interrupted"\n')
    (root / "content" / "hello.md").write_text("---\ntitle: Hello\n---\nText.\n")
    return root


@pytest.mark.e2e
def test_sigint_at_any_moment_stops_cleanly(tmp_path: Path) -> None:
    jobs = [
        (number, command, tmp_path if command == SANDBOX else project(tmp_path / str(number)))
        for command, runs in RUNS.items()
        for number in range(runs)
    ]
    with ThreadPoolExecutor(PARALLEL) as pool:
        runs = list(pool.map(lambda job: interrupted_run(job[0], job[2], job[1]), jobs))
    bad = [
        run
        for run in runs
        if run["code"] != 0
        or "Traceback" in run["output"]
        or STOPPED[run["command"]] not in run["output"]
    ]
    assert not bad, "\n\n".join(
        f"{run['command']} {run['moment']} +{run['delay']}s: exit code {run['code']} "
        f"after {run['seconds']:.2f} s\n{run['output'][-1500:]}"
        for run in bad
    )
    assert not (tmp_path / ".toolkit" / "sandbox.db").exists()  # --memory wrote nothing


def test_other_commands_get_keyboard_interrupt_back() -> None:
    """What the entry point records before the command is known is raised again for a
    command that does not serve, so Ctrl-C interrupts it as Python always does."""
    from toolkit import signals

    # Python's own handlers, as a new process has them, whatever earlier tests of this
    # worker (or the test runner) left in place; put back at the end.
    found = {signum: signal.getsignal(signum) for signum in signals.SIGNALS}
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    before = {signum: signal.getsignal(signum) for signum in signals.SIGNALS}
    signals.install_early()
    try:
        signal.raise_signal(signal.SIGINT)  # recorded, not raised
        record = signals.current()
        assert record is not None and record.requested
        with pytest.raises(KeyboardInterrupt):
            signals.hand_back()
        assert signal.getsignal(signal.SIGINT) is before[signal.SIGINT]
        assert signal.getsignal(signal.SIGTERM) is before[signal.SIGTERM]
    finally:
        left = signals.current()  # the record gone, whatever the assertions left in it
        if left is not None:
            left.received.clear()
            signals.hand_back()
        for signum, handler in found.items():
            signal.signal(signum, handler)
