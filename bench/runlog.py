"""Run-log benchmarks: shipping, the log service's queries, local queries, and what shipping
costs a no-op publish.

1. Ingest throughput: 200,000 events in a project's `.toolkit/events.jsonl`, shipped by
   toolkit's shipper to the sandbox (in its own process): events per second and the
   requests made (batches of at most 10,000 events / 2 MiB).
2. A `GROUP BY` over a stream of 1,000,000 events in the sandbox (`POST /api/v1/query`,
   HTTP included; median of 5; target under 1 s).
3. `toolkit logs --local` over a 1,000,000-line events file: the whole CLI, interpreter
   start-up included (median of 3; target under 2 s).
4. A no-op publish of 30 posts, with and without `[logs] base_url` (medians of 9,
   alternating): what shipping adds (target under 50 ms), and the shipment's own span as
   its events record it (from the run's end to the `ship` event); and, in-process, what
   the run log costs such a run when no log service is set (it only appends).
"""

from __future__ import annotations

import json
import random
import shutil
import statistics
import sys
import time
from pathlib import Path

import httpx

from bench.common import WORK, SandboxProcess, project, run_cli
from toolkit_sandbox.logs.http import PASSWORD, USERNAME

ROUTES = [
    "/api/articles",
    "/api/articles/{id}",
    "/api/articles/me/all",
    "/api/comments",
    "/api/readinglist",
    "/api/v1/ingest",
]
CONFIG = """[site]
title = "Run log benchmark"
url = "https://bench.example.com"

[forem]
rate_window = 1

[logs]
stream = "bench"
"""
GROUP_BY = (
    "SELECT status, COUNT(*) AS n, AVG(duration_ms) AS mean_ms, MAX(duration_ms) AS "
    "slowest_ms FROM bench WHERE event = 'request' GROUP BY status ORDER BY status"
)


def event_lines(count: int, seed: int = 1) -> list[str]:
    """Lines as the run log writes them: requests, with a post outcome now and then."""
    rng = random.Random(seed)
    lines = []
    start = time.time() - count / 1000
    for index in range(count):
        stamp = start + index / 1000
        moment = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(stamp))
        head = (
            f'{{"time":"{moment}.{int(stamp * 1000) % 1000:03d}Z",'
            f'"run_id":"{index // 500:016x}","seq":{index % 500},"command":"publish",'
            f'"version":"0.1.0",'
        )
        if index % 10 == 9:
            lines.append(
                head + f'"event":"post","post":"content/post-{index % 977}.md",'
                f'"action":"{rng.choice(["create", "update", "unchanged"])}",'
                '"outcome":"ok","message":"updated article 1001"}\n'
            )
        else:
            lines.append(
                head + f'"event":"request","method":"{rng.choice(["GET", "PUT", "POST"])}",'
                f'"route":"{rng.choice(ROUTES)}",'
                f'"status":{rng.choice([200, 200, 200, 201, 404, 422, 429])},'
                f'"duration_ms":{rng.random() * 400:.3f},"retries":0}}\n'
            )
    return lines


def logs_env(sandbox: SandboxProcess) -> dict[str, str]:
    return {
        **sandbox.env(),
        "LOGS_BASE_URL": sandbox.base_url,
        "LOGS_USERNAME": USERNAME,
        "LOGS_PASSWORD": PASSWORD,
    }


def ingest_throughput(sandbox: SandboxProcess) -> None:
    from toolkit.clients.logs import LogsClient
    from toolkit.config import Secret, load_config
    from toolkit.runlog.backlog import CURSOR_NAME, Cursor
    from toolkit.runlog.events import EventLog
    from toolkit.runlog.run import target_of
    from toolkit.runlog.shipping import Shipper

    root = project(WORK / "runlog-ship", CONFIG.replace('"bench"', '"shipped"'))
    (root / ".toolkit").mkdir()
    (root / ".toolkit" / "events.jsonl").write_text("".join(event_lines(200_000)))
    config = load_config(root / "toolkit.toml", env={"LOGS_BASE_URL": sandbox.base_url})
    sandbox.control("POST", "/stats/reset")
    client = LogsClient(sandbox.base_url, Secret(USERNAME), Secret(PASSWORD), timeout=120)
    shipper = Shipper(
        EventLog(config.state_dir),
        Cursor(config.state_dir / CURSOR_NAME),
        client,
        "shipped",
        target_of(config),
    )
    started = time.perf_counter()
    report = shipper.ship()
    seconds = time.perf_counter() - started
    client.close()
    if not report.ok:
        sys.exit(f"shipping failed: {report.problem}")
    requests = sum(
        row["count"]
        for row in sandbox.control("GET", "/stats")["requests"]
        if row["route"] == "/api/v1/ingest"
    )
    stored = query(sandbox, "SELECT COUNT(*) AS n FROM shipped")[0]["n"]
    print(
        f"ingest: 200,000 events shipped in {seconds:.2f} s = "
        f"{report.shipped / seconds:,.0f} events/s, {requests} requests "
        f"({report.batches} batches); the stream holds {stored:,}"
    )


def query(sandbox: SandboxProcess, sql: str) -> list[dict]:
    response = httpx.post(
        f"{sandbox.base_url}/api/v1/query",
        auth=(USERNAME, PASSWORD),
        # The stream is the SQL's FROM; the window covers every event the bench wrote.
        json={"query": sql, "startTime": "2000-01-01T00:00:00Z", "endTime": "2100-01-01T00:00:00Z"},
        timeout=120,
    )
    if response.status_code != 200:
        raise RuntimeError(f"query: {response.status_code} {response.text[:300]}")
    return response.json()


def sandbox_group_by(sandbox: SandboxProcess) -> None:
    lines = event_lines(1_000_000, seed=2)
    with httpx.Client(base_url=sandbox.base_url, auth=(USERNAME, PASSWORD), timeout=120) as http:
        for start in range(0, len(lines), 25_000):
            body = (
                "[" + ",".join(line.rstrip("\n") for line in lines[start : start + 25_000]) + "]"
            ).encode()
            answer = http.post(
                "/api/v1/ingest",
                content=body,
                headers={"X-P-Stream": "bench", "Content-Type": "application/json"},
            )
            if answer.status_code != 200:
                sys.exit(f"ingest failed: {answer.status_code} {answer.text[:200]}")
    times = []
    for _ in range(5):
        started = time.perf_counter()
        rows = query(sandbox, GROUP_BY)
        times.append(time.perf_counter() - started)
    total = sum(row["n"] for row in rows)
    median = statistics.median(times)
    print(
        f"sandbox GROUP BY over 1,000,000 events ({total:,} requests counted, {len(rows)} "
        f"groups): median {median * 1000:.0f} ms, best {min(times) * 1000:.0f} ms "
        f"(target < 1000 ms: {'met' if median < 1 else 'MISSED'})"
    )


def local_query() -> None:
    root = project(WORK / "runlog-local", CONFIG)
    (root / ".toolkit").mkdir()
    path = root / ".toolkit" / "events.jsonl"
    path.write_text("".join(event_lines(1_000_000, seed=3)))
    size = path.stat().st_size
    runs = [
        run_cli(["-q", "logs", "--local", "--format", "json", GROUP_BY], root) for _ in range(3)
    ]
    if any(run.exit_code for run in runs):
        sys.exit(f"toolkit logs --local failed:\n{runs[0].output}")
    rows = json.loads(runs[0].output)
    median = statistics.median(run.seconds for run in runs)
    print(
        f"toolkit logs --local over 1,000,000 lines ({size / 1e6:.0f} MB, {len(rows)} groups):"
        f" median {median:.2f} s, peak {max(r.peak_mb for r in runs):.0f} MB "
        f"(target < 2 s: {'met' if median < 2 else 'MISSED'})"
    )
    shutil.rmtree(root)


def shipping_overhead(sandbox: SandboxProcess) -> None:
    from bench.publish import write_posts

    root = project(WORK / "runlog-noop", CONFIG)
    write_posts(root, 30, seed=4, title="Run log post")
    sandbox.control("POST", "/forem/rate-limits", {"enabled": False})
    first = run_cli(["publish"], root, sandbox.env())
    if first.exit_code != 0:
        sys.exit(f"publish failed:\n{first.output}")
    plain, shipping = [], []
    for _ in range(9):
        plain.append(run_cli(["publish"], root, sandbox.env()).seconds)
        run = run_cli(["publish"], root, logs_env(sandbox))
        if run.exit_code != 0 or "not shipped" in run.output:
            sys.exit(f"publish with shipping failed:\n{run.output}")
        shipping.append(run.seconds)
    spans = shipment_spans(root)
    added = statistics.median(shipping) - statistics.median(plain)
    print(
        f"no-op publish of 30 posts: median {statistics.median(plain) * 1000:.0f} ms without a "
        f"log service, {statistics.median(shipping) * 1000:.0f} ms shipping its events: "
        f"{added * 1000:+.0f} ms (target < 50 ms: {'met' if added < 0.05 else 'MISSED'})"
    )
    print(
        f"  the shipment itself (run end to ship event): median {statistics.median(spans):.0f} "
        f"ms over {len(spans)} runs"
    )
    sandbox.control("POST", "/forem/rate-limits", {"enabled": True})


def local_cost() -> None:
    """What the run log costs a run without a log service: a no-op publish of 30 posts
    writes about 35 events (start, the list read, 30 post outcomes, end)."""
    from toolkit.config import load_config
    from toolkit.runlog.run import recorded

    root = project(WORK / "runlog-cost", CONFIG)
    config = load_config(root / "toolkit.toml", env={})
    times = []
    for _ in range(20):
        started = time.perf_counter()
        with recorded(config, "publish") as run:
            run.event(
                "request",
                method="GET",
                route="/api/articles/me/all",
                status=200,
                duration_ms=3.2,
                retries=0,
            )
            for index in range(30):
                run.event(
                    "post",
                    post=f"content/post-{index}.md",
                    action="unchanged",
                    outcome="ok",
                    message="unchanged",
                    article_id=1000 + index,
                )
        times.append(time.perf_counter() - started)
    print(
        f"the run log without a log service: {statistics.median(times) * 1000:.1f} ms for the "
        f"32 events of a no-op publish of 30 posts (median of 20 runs)"
    )


def shipment_spans(root: Path) -> list[float]:
    import datetime as dt

    events = [
        json.loads(line) for line in (root / ".toolkit" / "events.jsonl").read_text().splitlines()
    ]
    ends = {e["run_id"]: e["time"] for e in events if e.get("action") == "end"}
    return [
        (
            dt.datetime.fromisoformat(e["time"]) - dt.datetime.fromisoformat(ends[e["run_id"]])
        ).total_seconds()
        * 1000
        for e in events
        if e["event"] == "ship"
    ]


def main() -> None:
    with SandboxProcess() as sandbox:
        ingest_throughput(sandbox)
        sandbox_group_by(sandbox)
        shipping_overhead(sandbox)
    local_cost()
    local_query()


if __name__ == "__main__":
    main()
