"""Benchmark of the scanners of a writer's or the website's text on hostile input: 1 MB of
Liquid openings that nothing closes, through `toolkit check` and a cold `toolkit build`.

`python -m bench scan` prints the figures and whether each meets its target (2 s for the
whole megabyte); nothing is asserted. The megabyte is five posts of 205 KB (a body may
hold 800 KB), each one kind of opening a quadratic scan read again for each:

- one line of `{% katex ` (a 90 KB one took `check` 91 s);
- one line of `x {%` (10,000 of them took `build` 73 s);
- lines of `{% katex` alone, and a `%}` at the very end;
- one line of 100,000 quote markers (`> `) before a tag;
- one line of backtick runs of falling lengths (720 KB took `check` minutes);

and a sixth of 205 KB of `## same` headings, numbered one after the other (10,000 took
`build` 19 s), measured on its own, and 1 MB of link labels nothing closes (`![`, `[^`,
`[a`: markdown-it-py renders them, the fast path leaving brackets nested so deep to it;
100 KB of `![` took `build` 5.5 s, 200 KB 13.7 s), also on its own. Each command runs three times in a fresh project
(`python -m toolkit`, interpreter start-up included); the median is shown.
"""

from __future__ import annotations

import shutil

from bench.common import WORK, Row, median, print_rows, project, run_cli, verdict

POST_BYTES = 1024 * 1024 // 5  # five posts: 1 MB
ROUNDS = 3
TARGET = 2.0  # seconds, for 1 MB through one command


def _fill(unit: str, ending: str = "") -> str:
    return unit * ((POST_BYTES - len(ending)) // len(unit)) + ending


def _falling_runs() -> str:
    """Runs of backticks of falling lengths on one line, with a tag: each run a code span
    opening that nothing closes."""
    runs, length = [], 2
    while sum(len(run) for run in runs) < POST_BYTES - 2000:
        runs.append("`" * length + "x")
        length += 1
    return "{% katex %}a{% endkatex %} " + "".join(reversed(runs))


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
        "backticks": _falling_runs(),
    }
    size, check, build = _measure(bodies, "openings")
    shown = f"{size / 1e6:.2f} MB of unclosed openings ({', '.join(bodies)})"
    headings = {"headings": _fill("## same\n\n")}
    heading_size, heading_check, heading_build = _measure(headings, "headings")
    heading_count = headings["headings"].count("##")
    labels = {
        "images": _fill("!["),
        "footnotes": _fill("[^"),
        "links": _fill("[a"),
        "words": _fill("[a ", "text"),
    }
    label_size, label_check, label_build = _measure(labels, "labels")
    shown_labels = f"{label_size / 1e6:.2f} MB of unclosed link labels (![, [^, [a)"
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
            Row(
                f"check, {shown_labels}",
                f"{label_check:.2f} s",
                f"< {TARGET:.0f} s",
                verdict(label_check, TARGET),
            ),
            Row(
                f"build, {shown_labels}",
                f"{label_build:.2f} s",
                f"< {TARGET:.0f} s",
                verdict(label_build, TARGET),
            ),
        ]
    )
