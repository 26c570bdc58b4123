"""Benchmark of the licence gate: what a no-change `toolkit build --premium` adds to a
no-change public build of the 1,000-post site (`bench site`'s corpus).

`python -m bench license` prints the figures; nothing is asserted. The licensing service
is the sandbox's, in its own process on loopback (`toolkit sandbox --memory`). Measured:

- a no-change public build and a no-change premium build through the CLI, taking turns
  (`python -m toolkit`, interpreter start-up included), the median of each and of their
  differences: the premium build's overhead (target: under 50 ms);
- the licence requests each premium run makes (one: the customer's licence);
- in-process, the gate's question alone (`PremiumGate.check()`, one HTTP request on
  loopback) and the cost of importing the client it needs, which a public build never
  imports.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from bench.common import SandboxProcess, run_cli
from bench.site_corpus import corpus

ROUNDS = 11
CONFIG_NAME = "toolkit-license.toml"


def licensed_config(ours: Path) -> Path:
    """The corpus's configuration with a `[license]` section for the sandbox's demo
    application and licensed customer."""
    from toolkit_sandbox.licensing import seed

    base = (ours / "toolkit.toml").read_text(encoding="utf-8")
    path = ours / CONFIG_NAME
    path.write_text(
        base + f'\n[license]\napplication_id = "{seed.APPLICATION_ID}"\n'
        f'customer_id = "{seed.LICENSED_CUSTOMER}"\n',
        encoding="utf-8",
    )
    return path


def licence_requests(sandbox: SandboxProcess) -> int:
    rows = sandbox.control("GET", "/stats")["requests"]
    return sum(r["count"] for r in rows if r["interface"] == "licensing")


def import_cost() -> float:
    """Seconds to import the licensing client (httpx and friends) in a fresh interpreter."""
    code = (
        "import time; t = time.perf_counter(); import toolkit.license.client; "
        "print(time.perf_counter() - t)"
    )
    runs = [
        float(
            subprocess.run(
                [sys.executable, "-c", code], capture_output=True, text=True, check=True
            ).stdout
        )
        for _ in range(5)
    ]
    return statistics.median(runs)


def main() -> None:
    ours = corpus() / "ours"
    config = licensed_config(ours)
    with SandboxProcess() as sandbox:
        token = next(
            t["token"]
            for t in sandbox.control("GET", "/licensing/tokens")
            if t["label"] == "developer"
        )
        env = {**os.environ, "LICENSE_BASE_URL": sandbox.base_url, "LICENSE_API_TOKEN": token}
        public = ["--config", str(config), "-q", "build"]
        premium = [*public, "--premium"]
        for args in (public, premium):  # bring both folders up to date first
            first = run_cli(args, ours, env)
            if first.exit_code != 0:
                raise SystemExit(f"toolkit {' '.join(args)} failed:\n{first.output}")
        sandbox.control("POST", "/stats/reset")
        public_runs, premium_runs = [], []
        for _ in range(ROUNDS):  # taking turns spreads the machine's drift over both
            public_runs.append(run_cli(public, ours, env).seconds)
            premium_runs.append(run_cli(premium, ours, env).seconds)
        asked = licence_requests(sandbox)

        from toolkit.config import load_config
        from toolkit.license.gate import PremiumGate

        loaded = load_config(config, env=env)
        PremiumGate(loaded).check()  # the client imported, the connection path warm
        gate_runs = []
        for _ in range(ROUNDS):
            started = time.perf_counter()
            PremiumGate(loaded).check()
            gate_runs.append(time.perf_counter() - started)

    differences = [p - q for p, q in zip(premium_runs, public_runs, strict=True)]
    median_public = statistics.median(public_runs) * 1000
    median_premium = statistics.median(premium_runs) * 1000
    print(
        f"no-change public build (1,000 posts, CLI): {median_public:7.1f} ms (median of {ROUNDS})"
    )
    print(f"no-change premium build (same posts, CLI): {median_premium:7.1f} ms")
    print(
        f"premium overhead: {median_premium - median_public:+.1f} ms between the medians, "
        f"{statistics.median(differences) * 1000:+.1f} ms median of the paired runs "
        "(target: under 50 ms)"
    )
    print(
        f"licence requests: {asked} for {ROUNDS} premium runs "
        f"({asked / ROUNDS:.1f} per run), none for the public ones"
    )
    print(
        f"the gate in-process (one request on loopback): "
        f"{statistics.median(gate_runs) * 1000:.1f} ms; importing the licensing client: "
        f"{import_cost() * 1000:.1f} ms (a public build never imports it)"
    )
