"""A team's repository against the sandbox (in its own process), 1-second window.

1. Three writers, ten new posts each, published with one key (the posts in one folder)
   and then as a team (`[writers]`, each writer's key): the team's thirty creates fit
   three windows at once, as dev.to's limits are per key. Printed: wall time, pauses and
   429s of each (target for the team: 0 pauses, 0 429s).
2. A no-op plan of 26 writers with 3 posts each: the requests made (one list read per
   writer and one organisation lookup) and the wall time.
"""

from __future__ import annotations

import json
import sys

from bench.common import WORK, SandboxProcess, project, run_cli

WINDOW = 1.0
CONFIG = """[site]
title = "Team benchmark"

[forem]
rate_window = 1
organization = "acme"
"""


def _posts(root, writers: list[str], per: int, *, team: bool) -> None:
    for writer in writers:
        folder = root / "content" / (writer if team else "")
        folder.mkdir(parents=True, exist_ok=True)
        for n in range(per):
            (folder / f"{writer}-{n}.md").write_text(
                f"---\ntitle: {writer} post {n}\npublished: true\n---\nText {n} of {writer}.\n"
            )


def _users(sandbox: SandboxProcess, names: list[str]) -> dict[str, str]:
    keys = {}
    for name in names:
        added = sandbox.control(
            "POST", "/forem/users", {"username": name, "organizations": ["acme"]}
        )
        keys[f"FOREM_API_KEY_{name.upper()}"] = added["api_key"]  # type: ignore[index]
    return keys


def creates(sandbox: SandboxProcess) -> None:
    writers = ["ann", "bob", "cat"]
    keys = _users(sandbox, writers)
    print(f"three writers, ten creates each, {WINDOW:g} s window:")
    for team in (False, True):
        root = project(WORK / f"team-creates-{team}", CONFIG + ("\n[writers]\n" if team else ""))
        _posts(root, writers, 10, team=team)
        sandbox.control("POST", "/stats/reset")
        run = run_cli(["publish", "--json"], root, {**sandbox.env(), **keys})
        if run.exit_code != 0:
            sys.exit(f"publish failed:\n{run.output}")
        document = json.loads(run.output)
        too_many = sum(c for k, c in sandbox.api_requests().items() if k.endswith(" 429"))
        print(
            f"  {'as a team (a key each)' if team else 'with one key':<24} creates "
            f"{document['summary']['create']}, pauses {len(document['waits'])}, 429s "
            f"{too_many}, wall time {run.seconds:.2f} s"
        )


def noop_plan(sandbox: SandboxProcess, count: int = 26, per: int = 3) -> None:
    writers = [f"w{n:02}" for n in range(count)]
    keys = _users(sandbox, writers)
    root = project(WORK / "team-noop", CONFIG + "\n[writers]\n")
    _posts(root, writers, per, team=True)
    env = {**sandbox.env(), **keys}
    if run_cli(["publish"], root, env).exit_code != 0:
        sys.exit("the first publish failed")
    sandbox.control("POST", "/stats/reset")
    run = run_cli(["plan"], root, env)
    requests = sandbox.api_requests()
    print(f"no-op plan of {count} writers x {per} posts:")
    print(f"  requests: {dict(sorted(requests.items()))}")
    print(f"  wall time {run.seconds:.2f} s (exit {run.exit_code})")


def main() -> None:
    with SandboxProcess("--rate-window", str(WINDOW), "--no-seed") as sandbox:
        creates(sandbox)
        noop_plan(sandbox)


if __name__ == "__main__":
    main()
