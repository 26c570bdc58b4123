"""Benchmark of `toolkit build` on 1,000 and 5,000 generated posts, side by side with Hugo.

`python -m bench site` (or `make bench`) prints the figures and, at the end, a table of the
performance targets: each row's figure, its target, and whether it is met. Nothing is
asserted. `python -m bench.site --posts 200 --runs 1` is a quick look at one small corpus. The corpora are generated with a fixed seed into `bench/_work/site/<posts>/`
(git-ignored): posts of about 1,000 words, most with a fenced code block, some with a table
or an image (small real PNGs, shipped in both copies), in series and under 20 tags; the
larger corpus starts with the posts of the smaller. Every toolkit figure is the real CLI
(`.venv/bin/toolkit ...`) as a subprocess in the project folder, wall time including
interpreter start-up; each is the median of a few runs (the counts are printed):

- cold build, search off (`[site] search = false`, as Hugo builds no search index), after
  removing the output and the whole `.toolkit/` state folder; posts per second, HTML pages
  of each run, CPU time; peak memory of the toolkit's own processes (main and workers, PSS
  summed), in cold runs of its own (sampling /proc costs time);
- no-change rebuild, and one-post rebuild (one post's body edited);
- Hugo (`hugo` on PATH) on the same posts with a minimal equivalent layout (post pages,
  paginated index and tag pages, tags list, feed, sitemap, code highlighting with CSS
  classes), cold, taking turns with the toolkit; the ratio of the two cold builds;
- on 1,000 posts only: the stack's floor, the one-post rebuild in-process (what `toolkit
  watch` does on every save), `toolkit --help` and `toolkit check <one post>`, and the
  search index apart: cold build and one-post rebuild with search on (the default), Pagefind
  alone on the built site, and Pagefind's peak memory beside the toolkit's; Hugo followed by
  the same Pagefind binary on Hugo's output (its post layout marks `data-pagefind-body` as
  the toolkit's theme does), taking turns with the cold builds with search on;
- the watch row, from `bench/watch.py`.

Every toolkit build's problems are counted: a run whose build refused posts says so loudly,
as its figures do not compare with Hugo's.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
from pathlib import Path

from bench import site_measure
from bench.site_corpus import ROOT
from bench.site_measure import _watch, floor, measure
from bench.site_report import details, report


def main(argv: list[str] | None = None) -> None:
    """`python -m bench.site [--posts N] [--runs N]`: one corpus size, N runs of each kind
    (a quick look; `make bench` measures the sizes of SIZES)."""
    import argparse

    m = site_measure  # the repeats that `measure` reads, set here for a quick look

    parser = argparse.ArgumentParser(prog="python -m bench.site")
    parser.add_argument("--posts", type=int, help="one corpus of this many posts")
    parser.add_argument("--runs", type=int, help="runs of each kind (default: as SIZES says)")
    args = parser.parse_args(argv if argv is not None else [])
    if args.posts or args.runs:
        runs = args.runs
        m.SIZES = {args.posts or min(m.SIZES): (runs or 3, runs or 3)}
        if runs:
            m.REPEAT_SEARCH = m.REPEAT_COMMAND = m.REPEAT_MEMORY = runs
    started = time.perf_counter()
    toolkit = str(ROOT / ".venv" / "bin" / "toolkit")
    if not Path(toolkit).exists():
        toolkit = shutil.which("toolkit") or toolkit
    hugo = shutil.which("hugo")
    results = [
        measure(posts, cold, warm, toolkit, hugo, everything=posts == min(m.SIZES))
        for posts, (cold, warm) in m.SIZES.items()
    ]
    if args.posts:
        latencies, why = None, "not measured (--posts)"
    else:
        print("measuring watch (bench/watch.py) ...", flush=True)
        latencies, why = _watch()
    version = ""
    if hugo:
        version = subprocess.run([hugo, "version"], capture_output=True, text=True).stdout
    print()
    for figures in results:
        details(figures)
        print()
    report(results, latencies, why, hugo, version.strip())
    print(f"\nsite benchmark: {time.perf_counter() - started:.0f} s in all")


if __name__ == "__main__":
    if sys.argv[1:2] == ["--floor"]:
        floor(Path(sys.argv[2]), Path(sys.argv[3]))
    else:
        main(sys.argv[1:])
