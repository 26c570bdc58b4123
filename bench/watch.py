"""Watch benchmark: from a file write to the browser's reload event, on a 1,000-post site.

`toolkit watch --no-push` runs as a subprocess on a copy of the site benchmark's 1,000-post
corpus; a client listens on its live-reload stream. Each round edits one post and measures
the time until the reload event arrives (target: median at most 80 ms). The figure includes
the coalescing pause that lets an editor's save burst settle; it stops at the event, so the
browser's own reload of the page comes on top. The site benchmark prints this row in its
table too (measured once per process).
"""

from __future__ import annotations

import functools
import json
import queue
import re
import shutil
import subprocess
import threading
import time

from bench.common import TOOLKIT, WORK, median, print_rows

ROUNDS = 25


@functools.cache
def measure() -> list[float]:
    """Seconds from each of ROUNDS file writes to its reload event, sorted."""
    import httpx

    from bench.site_corpus import corpus

    root = WORK / "watch"
    shutil.rmtree(root, ignore_errors=True)
    shutil.copytree(corpus(1000) / "ours", root, ignore=shutil.ignore_patterns(".toolkit", "site"))
    process = subprocess.Popen(
        [*TOOLKIT, "--config", str(root / "toolkit.toml"), "watch", "--no-push", "--port", "0"],
        cwd=root,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        started = time.perf_counter()
        url = None
        assert process.stdout is not None
        for line in process.stdout:
            match = re.search(r"Serving (http://\S+?)/? ", line)
            if match:
                url = match.group(1)
                break
        if url is None:
            raise SystemExit("watch did not start")
        print(
            f"watch on 1000 posts: serving after {time.perf_counter() - started:.1f} s "
            "(cold build)",
            flush=True,
        )
        output = process.stdout
        threading.Thread(target=lambda: [None for _ in output], daemon=True).start()

        events: queue.Queue[tuple[float, str, object]] = queue.Queue()

        def listen() -> None:
            with httpx.stream("GET", f"{url}/__toolkit/events", timeout=None) as response:
                name = None
                for line in response.iter_lines():
                    if line.startswith("event: "):
                        name = line[7:]
                    elif line.startswith("data: ") and name:
                        events.put((time.perf_counter(), name, json.loads(line[6:])))

        threading.Thread(target=listen, daemon=True).start()
        events.get(timeout=10)  # the first "problems" event: connected
        latencies = []
        for round_ in range(ROUNDS):
            post = root / "content" / f"post-{(round_ * 37) % 1000:04d}.md"
            text = post.read_text(encoding="utf-8") + f"\nEdited in round {round_}.\n"
            time.sleep(0.3)
            written = time.perf_counter()
            post.write_text(text, encoding="utf-8")
            while True:
                arrived, name, _ = events.get(timeout=10)
                if name == "reload":
                    latencies.append(arrived - written)
                    break
    finally:
        process.terminate()
        process.wait(10)
        if process.stdout:
            process.stdout.close()
    return sorted(latencies)


def main() -> None:
    from bench.site_report import watch_row

    latencies = measure()
    print(
        f"file write -> reload event over {ROUNDS} edits: median "
        f"{median(latencies) * 1000:.0f} ms, fastest {latencies[0] * 1000:.0f} ms, "
        f"90th percentile {latencies[int(len(latencies) * 0.9)] * 1000:.0f} ms "
        f"(runs: {', '.join(f'{t * 1000:.0f}' for t in latencies)})"
    )
    print()
    print_rows([watch_row(latencies)])


if __name__ == "__main__":
    main()
