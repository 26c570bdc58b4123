"""What several benchmarks share: a sandbox in its own process, CLI runs with their cost."""

from __future__ import annotations

import os
import re
import shutil
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WORK = ROOT / "bench" / "_work"
TOOLKIT = [sys.executable, "-m", "toolkit"]


class SandboxProcess:
    """`toolkit sandbox --memory` in a subprocess, so it does not share a GIL with the client."""

    def __init__(self, *args: str, cpu: int | None = None):
        import httpx  # here: the site benchmark's floor process imports this module too

        self.process = subprocess.Popen(
            [*TOOLKIT, "sandbox", "--memory", "--port", "0", *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        if cpu is not None and hasattr(os, "sched_setaffinity"):
            os.sched_setaffinity(self.process.pid, {cpu})
        for line in self.process.stdout:
            match = re.search(r"(http://127\.0\.0\.1:\d+)", line)
            if match:
                self.base_url = match.group(1)
                break
        else:
            raise RuntimeError("the sandbox did not start")
        self.http = httpx.Client(base_url=self.base_url, timeout=120)
        accounts = self.http.get("/__sandbox/accounts").json()
        self.api_key = next(a["api_key"] for a in accounts if a["username"] == "demo")

    def env(self) -> dict[str, str]:
        return {**os.environ, "FOREM_BASE_URL": self.base_url, "FOREM_API_KEY": self.api_key}

    def control(self, method: str, path: str, body: object = None) -> object:
        response = self.http.request(method, f"/__sandbox{path}", json=body)
        if response.is_error:
            raise RuntimeError(
                f"{method} /__sandbox{path}: {response.status_code} {response.text[:300]}"
            )
        return response.json() if response.content else None

    def api_requests(self) -> dict[str, int]:
        """Requests to /api since the last stats reset, by `METHOD route status`."""
        rows = self.control("GET", "/stats")["requests"]
        return {
            f"{r['method']} {r['route']} {r['status']}": r["count"]
            for r in rows
            if r["route"].startswith("/api/")
        }

    def close(self) -> None:
        self.http.close()
        self.process.terminate()
        self.process.wait(10)
        self.process.stdout.close()

    def __enter__(self) -> SandboxProcess:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


@dataclass
class Run:
    seconds: float
    peak_mb: float  # the process's own peak resident memory
    exit_code: int
    output: str


def run_cli(args: list[str], cwd: Path, env: dict[str, str] | None = None) -> Run:
    """Run `toolkit ARGS` and measure its wall time and peak memory (wait4's rusage)."""
    started = time.perf_counter()
    process = subprocess.Popen(
        [*TOOLKIT, *args], cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT
    )
    output = process.stdout.read()
    _, status, usage = os.wait4(process.pid, 0)
    seconds = time.perf_counter() - started
    process.stdout.close()
    process.returncode = os.waitstatus_to_exitcode(status)
    return Run(seconds, usage.ru_maxrss / 1024, process.returncode, output.decode(errors="replace"))


def median(values: list[float]) -> float:
    return statistics.median(values)


@dataclass
class Row:
    """A line of a table of targets: the work measured, the figure, its target, and whether
    the figure meets it (or why there is no verdict)."""

    work: str
    figure: str
    target: str
    verdict: str


def verdict(value: float, limit: float) -> str:
    return "met" if value <= limit else "NOT MET"


def print_rows(rows: list[Row]) -> None:
    """The rows as aligned columns, under a header."""
    table = [Row("work", "measured", "target", "verdict"), *rows]
    widths = [
        max(len(getattr(row, name)) for row in table) for name in ("work", "figure", "target")
    ]
    for row in table:
        print(
            f"{row.work:<{widths[0]}}  {row.figure:<{widths[1]}}  "
            f"{row.target:<{widths[2]}}  {row.verdict}".rstrip()
        )


def project(folder: Path, config: str) -> Path:
    """A fresh project folder with `toolkit.toml` and an empty `content/`."""
    if folder.exists():
        shutil.rmtree(folder)
    (folder / "content").mkdir(parents=True)
    (folder / "toolkit.toml").write_text(config)
    return folder
