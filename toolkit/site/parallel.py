"""Spreading a build over the machine's cores: forked copies of one `Renderer`.

Why not `multiprocessing.Pool`: a post's body is rendered in step 1 and put into its page in
step 2, and the body should not travel between processes. Here each worker keeps what it
rendered, and step-2 jobs are routed to the worker that holds the body; everything else
goes to whichever worker is free. Workers are forked after the templates are compiled, so
they start with nothing to import or compile; jobs and results are small tuples.

One chunk of jobs is in flight per worker at a time: with a request and a reply each under
way, neither side can block on a full pipe while the other waits to send.
"""

from __future__ import annotations

import os
import signal
import threading
import traceback
from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar, cast

from toolkit.errors import BuildError

if TYPE_CHECKING:  # pragma: no cover
    from multiprocessing.connection import Connection
    from multiprocessing.process import BaseProcess

    from toolkit.site.render import Renderer

Job = TypeVar("Job")
# Called in the parent as each chunk comes back: (worker, the results of the chunk's jobs).
# The results come out of a pipe, whatever the operation returns: `prepare` or `assemble`.
OnReply = Callable[[int, list[Any]], None]

# multiprocessing itself is imported only when a pool is made: a small rebuild never needs it.

# Below this many posts to render, forking costs more than it saves.
POOL_THRESHOLD = 48


def available_cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # pragma: no cover - not Linux
        return os.cpu_count() or 1


def default_processes() -> int:
    """All cores, unless other threads run in this process (watch's server): forking a
    threaded process can copy a lock another thread holds, so then stay in-process."""
    if not hasattr(os, "fork"):
        return 1  # pragma: no cover
    if threading.active_count() > 1:
        return 1
    return available_cores()


def _serve(renderer: Renderer, connection: Connection) -> None:
    # Ctrl-C reaches the whole process group: the parent decides, workers just stop.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    while True:
        try:
            operation, jobs = connection.recv()
        except (EOFError, OSError):
            break
        if operation == "stop":
            break
        try:
            reply = ("ok", getattr(renderer, operation)(jobs))
        except BuildError as exc:
            reply = ("build-error", exc.message)
        except BaseException:
            reply = ("crash", traceback.format_exc())
        connection.send(reply)
    connection.close()


class WorkerPool:
    """`processes` forked workers, each with its own copy of `renderer`."""

    def __init__(self, renderer: Renderer, processes: int):
        import multiprocessing

        context = multiprocessing.get_context("fork")
        self._connections: list[Connection] = []
        self._processes: list[BaseProcess] = []
        for _ in range(processes):
            parent_end, child_end = context.Pipe()
            process = context.Process(target=_serve, args=(renderer, child_end), daemon=True)
            process.start()
            child_end.close()
            self._connections.append(parent_end)
            self._processes.append(process)

    def __len__(self) -> int:
        return len(self._processes)

    def run(
        self,
        operation: str,
        shared: list[list[Job]],
        routed: dict[int, list[list[Job]]] | None = None,
        on_reply: OnReply = lambda worker, results: None,
    ) -> None:
        """Run chunks of jobs: `routed[i]` on worker i first, then `shared` on any worker.
        `on_reply(worker, results)` is called in the parent as each chunk comes back."""
        from multiprocessing.connection import wait

        queues = [deque((routed or {}).get(i, [])) for i in range(len(self))]
        pending = deque(shared)
        busy: dict[Connection, int] = {}

        def feed(worker: int) -> None:
            queue = queues[worker] if queues[worker] else pending
            if queue:
                connection = self._connections[worker]
                connection.send((operation, queue.popleft()))
                busy[connection] = worker

        for worker in range(len(self)):
            feed(worker)
        while busy:
            for ready in wait(list(busy)):
                connection = cast("Connection", ready)  # wait() returns those given that are ready
                worker = busy.pop(connection)
                try:
                    status, payload = connection.recv()
                except (EOFError, OSError):
                    raise BuildError("a build worker stopped unexpectedly") from None
                if status == "build-error":
                    raise BuildError(payload)
                if status == "crash":
                    raise RuntimeError(f"a build worker failed:\n{payload}")
                feed(worker)  # first, so the worker is busy while the reply is handled
                on_reply(worker, payload)

    def close(self) -> None:
        for connection in self._connections:
            try:
                connection.send(("stop", None))
            except OSError:
                pass
        for process in self._processes:
            process.join(timeout=5)
            if process.is_alive():
                process.terminate()
                process.join()
        for connection in self._connections:
            connection.close()


def chunked(jobs: list[Job], size: int) -> list[list[Job]]:
    return [jobs[i : i + size] for i in range(0, len(jobs), size)]
