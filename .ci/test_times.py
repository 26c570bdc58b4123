"""Where the suite's time goes: sums up what tests/support/plugin.py wrote with
TOOLKIT_TEST_TIMES=<prefix> (one JSON-lines file per worker), or a `--junitxml` report.

    TOOLKIT_TEST_TIMES=/tmp/times python -m pytest -n 2 ...
    python .ci/test_times.py /tmp/times            # the plugin's records
    python .ci/test_times.py report.xml            # a junit report: per-file totals only

Prints the per-file totals (the slowest first), the time of the tests of each kind
(browser, server, e2e, socket, fast), of the tests that started a process or opened a
socket, of the property-based (hypothesis) tests, each worker's span (when its first
test started and its last one ended), and of each fixture's set-up. Times
are summed over the workers: the wall time of a run is about this sum over the workers'
count."""

from __future__ import annotations

import glob
import json
import sys
import xml.etree.ElementTree as ET
from collections import defaultdict
from typing import Any


def from_plugin(prefix: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    records = [
        {**json.loads(line), "worker": name[len(prefix) + 1 : -len(".jsonl")]}
        for name in sorted(glob.glob(f"{prefix}.*.jsonl"))
        for line in open(name, encoding="utf-8")
        if line.strip()
    ]
    return [r for r in records if "test" in r], [r for r in records if "fixture" in r]


def from_junit(path: str) -> list[dict[str, Any]]:
    tests = []
    for case in ET.parse(path).getroot().iter("testcase"):
        module = case.get("classname", "").split(".")
        # classname is the module's dotted path (then the class, if any): back to the file.
        parts = [p for p in module if not p[:1].isupper()]
        tests.append({"file": "/".join(parts) + ".py", "call": float(case.get("time", 0))})
    return tests


def seconds(test: dict[str, Any]) -> float:
    return sum(float(test.get(phase, 0.0)) for phase in ("setup", "call", "teardown"))


def add(row: list[float], test: dict[str, Any]) -> None:
    row[0] += 1
    row[1] += seconds(test)
    if len(row) > 2:
        row[2] += float(test.get("processor", 0.0))


def table(title: str, rows: dict[str, list[float]], limit: int | None = None) -> None:
    """Rows of [count, seconds] or [count, seconds, processor seconds], the slowest first."""
    print(f"\n{title}")
    ordered = sorted(rows.items(), key=lambda item: -item[1][1])
    for name, (count, total, *processor) in ordered[:limit]:
        cpu = f"  {processor[0]:8.1f} s cpu" if processor else ""
        print(f"  {total:8.1f} s{cpu}  {int(count):5d}  {name}")


def main(source: str) -> None:
    fixtures: list[dict[str, Any]] = []
    plugin = not source.endswith(".xml")
    if plugin:
        tests, fixtures = from_plugin(source)
    else:
        tests = from_junit(source)
    total = sum(seconds(t) for t in tests)
    print(f"{len(tests)} tests, {total:.1f} s in all (summed over the workers)")
    if plugin:
        cpu = sum(t.get("processor", 0.0) for t in tests)
        pythons = sum(t.get("pythons", 0) for t in tests)
        print(
            f"{cpu:.1f} s of processor (the tests' own, their threads' and their waited-for"
            f" children's); {pythons} Python processes started"
        )

    per_file: dict[str, list[float]] = defaultdict(lambda: [0, 0.0, 0.0] if plugin else [0, 0.0])
    for test in tests:
        add(per_file[test["file"]], test)
    table("Per file (the 40 slowest): seconds, [processor,] tests, file", per_file, 40)
    if not plugin:
        return

    kinds: dict[str, list[float]] = defaultdict(lambda: [0, 0.0, 0.0])
    for test in tests:
        for name in test["kinds"] or ["fast"]:
            add(kinds[name], test)
        for name, hit in (
            ("started a process", test["processes"]),
            ("started Python (`python -m toolkit`, a script)", test.get("pythons", 0)),
            ("opened a socket", test["sockets"]),
            ("hypothesis (property-based)", test["hypothesis"]),
        ):
            if hit:
                add(kinds[name], test)
    table("By kind (a test may count in several rows): seconds, processor, tests, kind", kinds)

    workers: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for test in tests:
        if "started" in test:
            workers[test["worker"]].append(test)
    if workers:
        print(
            "\nPer worker (seconds since its plugins loaded): tests, first test started, "
            "last one ended, in tests (each one's whole protocol), between tests"
        )
        for worker, ran in sorted(workers.items()):
            first = min(t["started"] for t in ran)
            last = max(t["started"] + t["protocol"] for t in ran)
            inside = sum(t["protocol"] for t in ran)
            print(
                f"  {worker}: {len(ran):5d}  {first:6.1f}  {last:6.1f}  {inside:6.1f}"
                f"  {last - first - inside:6.1f}"
            )

    setups: dict[str, list[float]] = defaultdict(lambda: [0, 0.0])
    for fixture in fixtures:
        setups[fixture["fixture"]][0] += 1
        setups[fixture["fixture"]][1] += fixture["seconds"]
    table(
        "Fixture set-up (the 15 costliest; nested fixtures count in each): seconds, set-ups, fixture",
        setups,
        15,
    )


if __name__ == "__main__":
    main(sys.argv[1])
