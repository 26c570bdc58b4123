"""Benchmark of the scanners of a writer's or the website's text on hostile input: 1 MB of
Liquid openings that nothing closes, through `toolkit check` and a cold `toolkit build`.

`python -m bench scan` prints the figures and whether each meets its target (2 s for the
whole megabyte); nothing is asserted. The megabyte is four posts of 256 KB (a body may
hold 800 KB), each one kind of opening a quadratic scan read again for each:

- one line of `{% katex ` (a 90 KB one took `check` 91 s);
- one line of `x {%` (10,000 of them took `build` 73 s);
- lines of `{% katex` alone, and a `%}` at the very end;
- one line of 130,000 quote markers (`> `) before a tag;

and a fifth of 256 KB of `## same` headings, numbered one after the other (10,000 took
`build` 19 s), measured on its own. Each command runs three times in a fresh project
(`python -m toolkit`, interpreter start-up included); the median is shown.
"""

from __future__ import annotations

import shutil

from bench.common import WORK, Row, median, print_rows, project, run_cli, verdict

POST_BYTES = 256 * 1024
ROUNDS = 3
TARGET = 2.0  # seconds, for 1 MB through one command


def _fill(unit: str, ending: str = "") -> str:
    return unit * ((POST_BYTES - len(ending)) // len(unit)) + ending


def _write(folder, bodies: dict[str, str]) -> int:
    size = 0
    for name, body in bodies.items():
        text = f"---\ntitle: Hostile {name}\npublished: true\n---\n{body}\n"
        (folder / "content" / f"{name}.md").write_text(text, encoding="utf-8")
        size += len(text.encode())
    return size


def _measure(bodies: dict[str, str], name: str) -> tuple[int, float, float]:
    """The bytes written, and the median seconds of `check` and of a cold `build`."""
    checks, builds = [], []
    for _ in range(ROUNDS):
        folder = project(WORK / "scan" / name, '[site]\ntitle = "Hostile"\n')
        size = _write(folder, bodies)
        check = run_cli(["check"], folder)
        build = run_cli(["build"], folder)
        for run, what in ((check, "check"), (build, "build")):
            if run.exit_code not in (0, 1):
                raise RuntimeError(f"{what} failed: {run.output[-500:]}")
        checks.append(check.seconds)
        builds.append(build.seconds)
    shutil.rmtree(WORK / "scan" / name, ignore_errors=True)
    return size, median(checks), median(builds)


def main() -> None:
    bodies = {
        "katex": _fill("{% katex "),
        "openings": _fill("x {%"),
        "katex-lines": _fill("{% katex\n", "%}"),
        "quotes": _fill("> ", "{% youtube x %}"),
    }
    size, check, build = _measure(bodies, "openings")
    shown = f"{size / 1e6:.2f} MB of unclosed openings ({', '.join(bodies)})"
    headings = {"headings": _fill("## same\n\n")}
    heading_size, heading_check, heading_build = _measure(headings, "headings")
    heading_count = headings["headings"].count("##")
    print_rows(
        [
            Row(f"check, {shown}", f"{check:.2f} s", f"< {TARGET:.0f} s", verdict(check, TARGET)),
            Row(f"build, {shown}", f"{build:.2f} s", f"< {TARGET:.0f} s", verdict(build, TARGET)),
            Row(
                f"check, {heading_count:,} headings of one text ({heading_size / 1e3:.0f} KB)",
                f"{heading_check:.2f} s",
                f"< {TARGET:.0f} s",
                verdict(heading_check, TARGET),
            ),
            Row(
                f"build, {heading_count:,} headings of one text ({heading_size / 1e3:.0f} KB)",
                f"{heading_build:.2f} s",
                "linear (no target)",
                "-",
            ),
        ]
    )
