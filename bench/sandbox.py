"""Sandbox benchmarks: start-up time, and requests per second on one core.

1. Start-up: `toolkit sandbox --memory --port 0` in a subprocess, from launch until it
   answers `GET /api/articles` (median of 5; the target is under 2 s).
2. Throughput: the sandbox in its own process pinned to CPU 0; the load comes from
   worker processes (httpx, one keep-alive connection each) pinned to the other CPUs.
   Measured for `GET /api/articles` (the default page of 30) and for
   `PUT /api/articles/{id}` (a new body each time, rate limits switched off).
"""

from __future__ import annotations

import multiprocessing
import os
import statistics
import subprocess
import sys
import time

import httpx

from bench.common import TOOLKIT, SandboxProcess

DURATION = 4.0  # seconds of load per measurement
WORKERS = 4
USER_AGENT = "toolkit-bench/1.0"


def startup_seconds() -> float:
    started = time.perf_counter()
    process = subprocess.Popen(
        [*TOOLKIT, "sandbox", "--memory", "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        line = process.stdout.readline()
        url = line.split("running at ", 1)[1].split()[0]
        with httpx.Client(base_url=url, headers={"User-Agent": USER_AGENT}) as client:
            while True:
                try:
                    if client.get("/api/articles").status_code == 200:
                        return time.perf_counter() - started
                except httpx.TransportError:
                    time.sleep(0.005)
    finally:
        process.terminate()
        process.communicate(timeout=20)


def _pin(cpus: set[int]) -> None:
    if cpus and hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, cpus)


def _load(args: tuple[str, str, str, list[int], float, set[int], multiprocessing.Event]) -> int:
    """One load worker: as many requests as it can until the deadline; returns the count."""
    base_url, api_key, kind, article_ids, duration, cpus, go = args
    _pin(cpus)
    done = 0
    headers = {"User-Agent": USER_AGENT, "api-key": api_key}
    with httpx.Client(base_url=base_url, headers=headers, timeout=30) as client:
        go.wait()
        deadline = time.perf_counter() + duration
        while time.perf_counter() < deadline:
            if kind == "get":
                response = client.get("/api/articles")
            else:
                article_id = article_ids[done % len(article_ids)]
                response = client.put(
                    f"/api/articles/{article_id}",
                    json={
                        "article": {
                            "body_markdown": f"Version {done} of this body, with *some* Markdown.\n"
                        }
                    },
                )
            if response.status_code != 200:
                raise RuntimeError(f"{kind}: {response.status_code} {response.text[:200]}")
            done += 1
    return done


def throughput(
    sandbox: SandboxProcess, kind: str, article_ids: list[int], load_cpus: set[int]
) -> float:
    context = multiprocessing.get_context("spawn")
    manager = context.Manager()
    try:
        go = manager.Event()
        jobs = [
            (
                sandbox.base_url,
                sandbox.api_key,
                kind,
                article_ids[index::WORKERS] or article_ids,
                DURATION,
                load_cpus,
                go,
            )
            for index in range(WORKERS)
        ]
        with context.Pool(WORKERS) as pool:
            pending = pool.map_async(_load, jobs)
            time.sleep(1.0)  # let every worker connect and wait for the start
            go.set()
            counts = pending.get(timeout=DURATION + 60)
    finally:
        manager.shutdown()
    return sum(counts) / DURATION


def main() -> None:
    runs = [startup_seconds() for _ in range(5)]
    print(
        f"start-up of `toolkit sandbox` until it answers: median {statistics.median(runs):.2f} s, "
        f"best {min(runs):.2f} s (target < 2 s)"
    )

    cpus = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []
    server_cpu = cpus[0] if cpus else None
    load_cpus = set(cpus[1:]) if len(cpus) > 1 else set()
    where = f"server on CPU {server_cpu}, load on CPUs {sorted(load_cpus) or 'shared'}"
    with SandboxProcess(cpu=server_cpu) as sandbox:
        sandbox.control("POST", "/rate-limits", {"enabled": False})
        ids = sandbox.control(
            "POST",
            "/articles",
            {
                "articles": [
                    {
                        "title": f"Bench article {n}",
                        "body_markdown": "Initial body.\n",
                        "published": True,
                        "tags": ["bench"],
                    }
                    for n in range(200)
                ]
            },
        )["ids"]
        rps_get = throughput(sandbox, "get", ids, load_cpus)
        rps_put = throughput(sandbox, "put", ids, load_cpus)
        requests = sandbox.api_requests()
    errors = {key: count for key, count in requests.items() if not key.endswith((" 200", " 201"))}
    print(f"throughput, one core ({where}, {WORKERS} client processes, {DURATION:g} s each):")
    print(f"  GET /api/articles (30 per page):          {rps_get:8.0f} requests/s")
    print(f"  PUT /api/articles/{{id}} (rate limits off): {rps_put:8.0f} requests/s")
    if errors:
        sys.exit(f"unexpected answers: {errors}")


if __name__ == "__main__":
    main()
