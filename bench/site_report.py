"""The site benchmark's report: the detail lines of each corpus size and the table of
targets (see `bench/site.py`)."""

from __future__ import annotations

import os

from bench.common import Row, print_rows, verdict
from bench.site_corpus import SEARCH_CONFIG, SEED
from bench.site_measure import MEMORY_TARGET_MB, NO_CHANGE_TARGET_S, Figures, median


def _runs(values: list[float], scale: float = 1, digits: int = 2) -> str:
    return ", ".join(f"{v * scale:.{digits}f}" for v in values)


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}{'' if number == 1 else 's'}"


def _pages(counts: list[int]) -> str:
    if len(set(counts)) == 1:
        return f"{counts[0]} HTML pages each run"
    return f"HTML PAGES DIFFER FROM RUN TO RUN: {', '.join(map(str, counts))}"


def details(f: Figures) -> None:
    """The detail lines of one corpus size."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    walls = [r.wall for r in f.cold]
    print(
        f"-- {f.posts} posts of ~1,000 words (seed {SEED}), {cores} cores; median of "
        f"{f.cold_runs} cold / {f.warm_runs} warm runs --"
    )
    print(
        f"toolkit build, cold, search off   {median(walls):6.2f} s   "
        f"{f.posts / median(walls):5.0f} posts/s   CPU {median([r.cpu for r in f.cold]):.1f} s"
        f"   {_pages(f.pages)}   (runs: {_runs(walls)})"
    )
    if f.floor:
        print(
            f"  the stack's floor               {median(f.floor):6.2f} s   (markdown-it-py + "
            "Pygments + Jinja2 only, post pages only, 2 processes)"
        )
    if f.memory:
        print(
            f"  peak memory                     {f.memory.own:6.0f} MB toolkit main + workers "
            f"(PSS, summed)   {f.memory.largest:.0f} MB largest process (RSS)   "
            f"({f.memory.runs} sampled runs)"
        )
    print(
        f"toolkit build, no change          {median(f.no_change):6.3f} s   "
        f"(runs: {_runs(f.no_change, digits=3)})"
    )
    print(
        f"toolkit build, one post edited    {median(f.one_post):6.3f} s   "
        f"(runs: {_runs(f.one_post, digits=3)})"
    )
    if f.in_process:
        print(
            f"SiteBuilder.build(), one post, in-process (as watch)   "
            f"{median(f.in_process) * 1000:5.0f} ms   (runs: {_runs(f.in_process, 1000, 0)})"
        )
    if f.hugo:
        hugo = [r.wall for r in f.hugo]
        print(
            f"hugo, cold                        {median(hugo):6.2f} s   "
            f"{f.posts / median(hugo):5.0f} posts/s   CPU {median([r.cpu for r in f.hugo]):.1f} s"
            f"   {_pages(f.hugo_pages)}   (runs: {_runs(hugo)})"
        )
        if f.hugo_memory:
            print(
                f"  peak memory                     {f.hugo_memory.own:6.0f} MB (PSS)   "
                f"{f.hugo_memory.largest:.0f} MB (RSS)   ({f.hugo_memory.runs} sampled run)"
            )
        print(f"ratio toolkit / hugo, cold        {median(walls) / median(hugo):6.2f}x")
    if f.search_cold:
        search = [r.wall for r in f.search_cold]
        print(
            f"toolkit build, cold, search on    {median(search):6.2f} s   "
            f"CPU {median([r.cpu for r in f.search_cold]):.1f} s   {_pages(f.search_pages)}   "
            f"(runs: {_runs(search)}; {SEARCH_CONFIG}, the default configuration)"
        )
    if f.search_memory:
        print(
            f"  peak memory                     {f.search_memory.own:6.0f} MB toolkit main + "
            f"workers, {f.search_memory.pagefind:.0f} MB Pagefind (PSS)   "
            f"({f.search_memory.runs} sampled runs)"
        )
    if f.pagefind:
        alone = [r.wall for r in f.pagefind]
        print(
            f"  Pagefind alone, built site      {median(alone):6.2f} s   peak "
            f"{max(r.largest_mb for r in f.pagefind):.0f} MB (RSS)   (runs: {_runs(alone)})"
        )
    if f.hugo_search:
        both = [h.wall + p.wall for h, p in f.hugo_search]
        print(
            f"hugo then Pagefind, cold          {median(both):6.2f} s   CPU "
            f"{median([h.cpu + p.cpu for h, p in f.hugo_search]):.1f} s   (runs: {_runs(both)})"
        )
    if f.search_one_post:
        print(
            f"toolkit build, one post, search on {median(f.search_one_post):5.3f} s   "
            f"(runs: {_runs(f.search_one_post, digits=3)})"
        )
    if f.help:
        print(
            f"toolkit --help                    {median(f.help):6.3f} s   "
            f"(runs: {_runs(f.help, digits=3)})"
        )
        print(
            f"toolkit check <one post>          {median(f.check):6.3f} s   "
            f"(runs: {_runs(f.check, digits=3)})"
        )
    p = f.problems
    built = ", ".join(map(str, sorted(p.built))) or "?"
    print(
        f"toolkit build problems: {_count(len(p.errors), 'error')}, "
        f"{_count(len(p.warnings), 'warning')} over {p.builds} builds; "
        f"posts built: {built} of {f.posts}"
    )
    for line in [*p.errors, *p.warnings][:10]:
        print(f"  {line}")


def report(
    results: list[Figures], latencies: list[float] | None, why: str, hugo: str | None, version: str
) -> None:
    """The table of targets: every row with its figure, its target and its verdict."""
    rows: list[Row] = []
    refused = {f.posts: f.problems.refused for f in results}
    for f in results:
        if refused[f.posts] or f.problems.errors:
            print("!" * 88)
            print(
                f"!!! THE TOOLKIT REFUSED {len(refused[f.posts])} OF THE {f.posts} POSTS "
                f"({_count(len(f.problems.errors), 'error')}): its figures do not compare "
                "with Hugo's."
            )
            print("!" * 88)
    if not hugo:
        print(
            "hugo is not installed: the cold builds have no ratio. Get it with "
            "`apt-get install hugo` (Debian, Ubuntu) or from https://gohugo.io/installation/"
        )
    else:
        print(f"Hugo: {version}, measured in the same run on the same posts")
    print(
        "Every time is a whole process (`toolkit ...` as typed in the project folder), the "
        "median of the runs above;\na peak memory is the median over cold runs sampled every "
        "10 ms, apart from the timed ones.\n"
    )
    for f in results:
        rows.append(_cold_row(f, refused[f.posts]))
    for f in results:
        megabytes = MEMORY_TARGET_MB.get(f.posts)
        if f.memory and megabytes:
            # The largest process, as the figures the targets were set against were taken;
            # the main process and its workers together beside it.
            mb = f.memory.largest
            rows.append(
                Row(
                    f"peak memory, {f.posts:,} posts (largest process, RSS)",
                    f"{mb:.0f} MB ({f.memory.own:.0f} MB all, PSS)",
                    f"at most {megabytes} MB",
                    verdict(mb, megabytes),
                )
            )
    for f in results:
        seconds = NO_CHANGE_TARGET_S.get(f.posts)
        if seconds:
            rows.append(
                Row(
                    f"no-change `toolkit build`, {f.posts:,} posts",
                    f"{median(f.no_change):.3f} s",
                    f"at most {seconds:.2f} s",
                    verdict(median(f.no_change), seconds),
                )
            )
    small = results[0]
    rows.append(
        Row(
            f"one post changed, `toolkit build`, {small.posts:,} posts",
            f"{median(small.one_post):.3f} s",
            "at most 0.20 s",
            verdict(median(small.one_post), 0.20),
        )
    )
    rows.append(watch_row(latencies, why))
    for name, values in (
        ("`toolkit --help`", small.help),
        ("`toolkit check <one post>`", small.check),
    ):
        rows.append(
            Row(name, f"{median(values):.3f} s", "at most 0.15 s", verdict(median(values), 0.15))
        )
    print_rows(rows)
    print(
        "\nWith the search index (Pagefind, the default; the rows above have it off, "
        "[site] search = false),\nagainst Hugo followed by the same Pagefind binary:\n"
    )
    print_rows(_search_rows(small, refused[small.posts]))


def _cold_row(f: Figures, refused: set[str]) -> Row:
    work = f"cold build, {f.posts:,} posts, both cores, vs Hugo"
    toolkit = median([r.wall for r in f.cold])
    if not f.hugo:
        return Row(work, f"{toolkit:.2f} s (no Hugo)", "at most 0.80x Hugo", "no ratio")
    hugo = median([r.wall for r in f.hugo])
    ratio = toolkit / hugo
    judged = verdict(ratio, 0.8)
    if refused:
        judged = f"NOT COMPARABLE: {len(refused)} posts refused"
    return Row(work, f"{ratio:.2f}x ({toolkit:.2f} s / {hugo:.2f} s)", "at most 0.80x Hugo", judged)


def _search_rows(f: Figures, refused: set[str]) -> list[Row]:
    if not f.search_cold:
        return []
    none = "none set"
    search = median([r.wall for r in f.search_cold])
    extra = search - median([r.wall for r in f.cold])
    one = median(f.search_one_post)
    rows = [
        Row(
            f"one post changed, `toolkit build`, search on, {f.posts:,} posts",
            f"{one:.3f} s",
            "at most 0.40 s",
            verdict(one, 0.40),
        )
    ]
    work = f"cold build, {f.posts:,} posts, search on, vs Hugo then Pagefind"
    if f.hugo_search:
        hugo = median([h.wall + p.wall for h, p in f.hugo_search])
        pagefind = median([p.wall for _, p in f.hugo_search])
        judged = verdict(search / hugo, 0.8)
        if refused:
            judged = f"NOT COMPARABLE: {len(refused)} posts refused"
        rows.append(
            Row(
                work,
                f"{search / hugo:.2f}x ({search:.2f} s / {hugo:.2f} s, of which "
                f"Pagefind {pagefind:.2f} s)",
                "at most 0.80x",
                judged,
            )
        )
    else:
        rows.append(
            Row(work, f"{search:.2f} s (no Hugo or no Pagefind)", "at most 0.80x", "no ratio")
        )
    rows.append(
        Row(
            f"cold build, {f.posts:,} posts, search on (the default)",
            f"{search:.2f} s ({extra:+.2f} s over search off)",
            none,
            "-",
        )
    )
    if f.pagefind:
        alone = median([r.wall for r in f.pagefind])
        rows.append(
            Row(
                f"Pagefind alone, whole built {f.posts:,}-post site",
                f"{alone:.2f} s, peak {max(r.largest_mb for r in f.pagefind):.0f} MB",
                none,
                "-",
            )
        )
    if f.search_memory:
        memory = f.search_memory
        rows.append(
            Row(
                "peak memory, search on: toolkit / Pagefind (PSS)",
                f"{memory.own:.0f} MB / {memory.pagefind:.0f} MB",
                f"{none} (100 MB is the build's)",
                "-",
            )
        )
    return rows


def watch_row(latencies: list[float] | None, why: str = "") -> Row:
    """The watch row: file write to the reload event (the browser's own reload after it is
    not in the figure)."""
    work = "watch: save to the reload event, 1,000 posts"
    if not latencies:
        return Row(work, why or "not measured", "at most 80 ms median", "-")
    value = median(latencies)
    return Row(work, f"{value * 1000:.0f} ms", "at most 80 ms median", verdict(value, 0.080))
