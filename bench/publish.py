"""Publish benchmarks against the sandbox (in its own process) with a 1-second window.

1. A first publish of 50 new posts. 10 creates per window means the 50th create cannot
   start before 4 full windows have passed: 4 s is the theoretical minimum. Printed: wall
   time of the CLI, the span from its first to its last create as the sandbox saw them,
   both divided by 4 s (target at most 1.05), and the 429s served (target 0).
2. A no-op publish of 2,000 posts whose articles are all in place: the HTTP requests made
   (target: only the list reads), wall time (target under 1.5 s) and peak memory.
"""

from __future__ import annotations

import random
import sys

from bench.common import WORK, SandboxProcess, project, run_cli
from toolkit.content.fields import slugify

WINDOW = 1.0
CONFIG = """[site]
title = "Publish benchmark"
url = "https://bench.example.com"

[forem]
rate_window = 1
"""
WORDS = (
    "sync lock draft article window limit retry request post title body tag site "
    "markdown front matter canonical payload digest remote local"
).split()


def write_posts(root, count: int, seed: int, title: str = "Benchmark post") -> None:
    rng = random.Random(seed)
    for index in range(count):
        paragraphs = [
            " ".join(rng.choice(WORDS) for _ in range(60)).capitalize() + "." for _ in range(5)
        ]
        (root / "content" / f"{slugify(title)}-{index:04}.md").write_text(
            f"---\ntitle: {title} {index}\npublished: true\ntags: bench, t{index % 7}\n"
            f"date: 2024-01-{index % 28 + 1:02}\n---\n" + "\n\n".join(paragraphs) + "\n"
        )


def first_publish(sandbox: SandboxProcess) -> None:
    root = project(WORK / "publish-50", CONFIG)
    write_posts(root, 50, seed=1)
    sandbox.control("POST", "/stats/reset")
    after = max((r["seq"] for r in sandbox.control("GET", "/requests")["requests"]), default=0)
    run = run_cli(["publish"], root, sandbox.env())
    if run.exit_code != 0:
        sys.exit(f"publish failed:\n{run.output}")
    creates = [
        r
        for r in sandbox.control("GET", f"/requests?after={after}")["requests"]
        if r["method"] == "POST" and r["route"] == "/api/articles"
    ]
    span = creates[-1]["time"] + creates[-1]["duration_ms"] / 1000 - creates[0]["time"]
    requests = sandbox.api_requests()
    too_many = sum(count for key, count in requests.items() if key.endswith(" 429"))
    minimum = 4 * WINDOW
    print(f"first publish of 50 posts, {WINDOW:g} s window (minimum {minimum:g} s):")
    print(f"  creates made: {len(creates)}, 429s served: {too_many}")
    print(
        f"  CLI wall time {run.seconds:.2f} s = {run.seconds / minimum:.3f} x the minimum "
        "(includes interpreter start-up and the list read)"
    )
    print(
        f"  first to last create {span:.2f} s = {span / minimum:.3f} x the minimum (target <= 1.05)"
    )


def noop_publish(sandbox: SandboxProcess, count: int = 2000) -> None:
    from toolkit.config import load_config
    from toolkit.content import load_posts, payload_for

    root = project(WORK / f"publish-{count}", CONFIG)
    write_posts(root, count, seed=2, title="Unchanged post")
    config = load_config(root / "toolkit.toml", env={})
    posts, _ = load_posts(config)
    articles = []
    for post in posts:
        article = payload_for(post, config).article
        articles.append({k: article[k] for k in ("title", "published", "tags", "body_markdown")})
    for start in range(0, len(articles), 250):
        sandbox.control("POST", "/articles", {"articles": articles[start : start + 250]})
    adopt = run_cli(["publish"], root, sandbox.env())  # finds every article, writes the lock
    if adopt.exit_code != 0:
        sys.exit(f"publish failed:\n{adopt.output}")
    runs = []
    for _ in range(3):
        sandbox.control("POST", "/stats/reset")
        runs.append((run_cli(["publish"], root, sandbox.env()), sandbox.api_requests()))
    run, requests = min(runs, key=lambda item: item[0].seconds)
    print(f"no-op publish of {count} posts (all unchanged):")
    print(
        f"  requests: {sum(requests.values())} ({', '.join(f'{k}: {v}' for k, v in sorted(requests.items()))})"
    )
    print(
        f"  wall time {run.seconds:.2f} s (best of 3; target under 1.5 s), "
        f"peak memory {run.peak_mb:.0f} MB"
    )
    print(f"  first run without toolkit.lock (adopting {count} articles): {adopt.seconds:.2f} s")


def main() -> None:
    with SandboxProcess("--rate-window", str(WINDOW), "--no-seed") as sandbox:
        first_publish(sandbox)
        noop_publish(sandbox)


if __name__ == "__main__":
    main()
