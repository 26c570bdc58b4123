"""The speed devices, each measured with and without it, on 1,000 posts.

A speed device is code that is there only to be fast: imports put inside functions, the
collector's thresholds, lines printed without rich, a second Markdown engine, the caches
kept between runs. Each stays only if taking it out costs at least KEEP (5%) on a row that
matters to a writer:

- cold build: no output, no `.toolkit/` (search off, as in bench/site.py);
- one-post rebuild: one post's body edited, then `toolkit build`;
- no-change build: `toolkit build` again;
- check of one post: `toolkit check content/<one post>.md`.

A module that no quick row loads keeps imports inside functions only where a command a
writer runs shows they pay (`COMMAND_ROWS`): each such module is a device of its own, its
function-level imports taken out (imported before the command) on its command's row:

- check of a post with a Liquid tag (`{% embed %}`, no `{% katex %}`);
- a new post: `toolkit new "Bench post"` (the file removed before each run);
- `toolkit logs --local` over the run log, printed as a table;
- `toolkit mcp clients`, the clients of the MCP server's HTTP transport.

Every run is the real CLI in a subprocess of its own (`python -m bench.without DEVICE`,
which runs `toolkit.__main__.run` with the device taken out, see bench/without.py), in a
copy of bench/site.py's corpus made a git repository, as a writer's is. The runs with and
without a device take turns (ABBA), so that a machine busy with something else weighs on
both alike; each figure is a median. A cache is taken out by removing its file or folder
before each run (the run then writes it again, as a build without the cache would not: a
few milliseconds counted against leaving the cache out).

Before the figures, the import budget: the modules a quick row must not load (what keeps
it quick), and whether it loads any of them (`BUDGET`).

`python -m bench devices`, or `python -m bench.devices [--runs N] [DEVICE ...]`.
"""

from __future__ import annotations

import ast
import os
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

from bench.site_corpus import ROOT, corpus

WORK = ROOT / "bench" / "_work" / "devices"
KEEP = 0.05  # a device stays when leaving it out costs at least this much on one row
ROWS = ("cold build", "one-post rebuild", "no-change build", "check one post")
OPTIONAL = {"datafusion", "pyarrow", "py7zr"}  # the extras: imported on use, whatever this says
RENDERING = ("markdown_it", "markdown_it_pyrs", "jinja2", "pygments", "nh3", "pagefind_bin")
# Row -> (what runs it, the modules it must not load: a name covers its submodules).
BUDGET: dict[str, tuple[str, tuple[str, ...]]] = {
    "toolkit --help": ("--help", ("rich", "toolkit.commands", *RENDERING)),
    "no-change build": (
        "build",
        (
            "markdown_it",
            "markdown_it_pyrs",
            "jinja2",
            "pygments.lexers",
            "pygments.formatters",
            "nh3",
            "pagefind_bin",
            "frontmatter",
            "yaml",
            "multiprocessing",
            "subprocess",
            "shutil",
            "tempfile",
            "secrets",
            "rich",
        ),
    ),
    "one-post rebuild, no Liquid tag": (
        "build",
        ("toolkit.content.liquid", "toolkit.site.liquid_render", "toolkit.content.liquid_maths"),
    ),
    "check one post (piped)": ("check", ("rich", *RENDERING, "toolkit.site")),
}
LIQUID_TAG = "{% embed https://github.com/forem/forem %}"  # added to the Liquid post's body
NEW_TITLE = "Bench post"  # the title of `toolkit new`'s post: content/bench-post.md
# Row -> (the command's arguments, the modules it takes the function-level imports of);
# `{liquid}` is the path of the post with a Liquid tag.
COMMAND_ROWS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "check a Liquid post": (("check", "{liquid}"), ("toolkit.content.liquid_maths",)),
    "new post": (("new", NEW_TITLE), ("toolkit.mirror.threads",)),
    "logs --local": (
        ("logs", "--local", "SELECT command, COUNT(*) AS runs FROM toolkit GROUP BY command"),
        ("toolkit.clients", "toolkit.cli.logs"),
    ),
    "mcp clients": (("mcp", "clients"), ("toolkit.mcp.service", "toolkit.cli.mcp")),
}


@cache
def function_level_imports() -> dict[str, list[tuple[str, str]]]:
    """Module -> the (target module, kind) of each import inside one of its functions;
    kind is `stdlib`, `third-party`, `project` or `optional` (an extra's)."""
    table: dict[str, list[tuple[str, str]]] = {}
    for path in sorted((ROOT / "toolkit").rglob("*.py")):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        if is_package:
            parts.pop()
        module = ".".join(parts)
        package = module if is_package else module.rpartition(".")[0]
        tree = ast.parse(path.read_bytes())
        found: list[tuple[str, str]] = []
        for function in ast.walk(tree):
            if not isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            for node in ast.walk(function):
                for target in _targets(node, package):
                    found.append((target, _kind(target)))
        if found:
            table[module] = sorted(set(found))
    return table


def _targets(node: ast.AST, package: str) -> list[str]:
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if not isinstance(node, ast.ImportFrom):
        return []
    base = node.module or ""
    if node.level:
        anchor = package.split(".")
        anchor = anchor[: len(anchor) - (node.level - 1)]
        base = ".".join([*anchor, base] if base else anchor)
    # `from package import module` names a module: import it as one
    return [base, *(f"{base}.{a.name}" for a in node.names if _is_module(f"{base}.{a.name}"))]


def _is_module(name: str) -> bool:
    if not name.startswith("toolkit."):
        return False
    path = ROOT.joinpath(*name.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def _kind(target: str) -> str:
    top = target.split(".")[0]
    if top == "toolkit":
        return "project"
    if top in OPTIONAL:
        return "optional"
    return "stdlib" if top in sys.stdlib_module_names else "third-party"


def counts() -> dict[str, int]:
    """How many import statements sit inside functions in toolkit/ (an inner function's
    once), by the kind of what each imports."""
    totals: dict[str, int] = {}
    for path in sorted((ROOT / "toolkit").rglob("*.py")):
        tree = ast.parse(path.read_bytes())
        inside = {
            id(node): node
            for function in ast.walk(tree)
            if isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef)
            for node in ast.walk(function)
            if isinstance(node, ast.Import | ast.ImportFrom)
        }
        for node in inside.values():
            name = node.names[0].name if isinstance(node, ast.Import) else node.module or "toolkit"
            kind = "project" if isinstance(node, ast.ImportFrom) and node.level else _kind(name)
            totals[kind] = totals.get(kind, 0) + 1
    totals["all"] = sum(totals.values())
    return totals


@dataclass
class Project:
    """A copy of the corpus as a writer's repository: a git work tree with its posts."""

    folder: Path
    post: Path  # the post that is edited and checked
    liquid: Path  # a post with a Liquid tag in its body
    rounds: int = 0

    def run(self, device: str, args: list[str]) -> float:
        """`toolkit ARGS` in the project, through bench/without.py's DEVICE; its wall time."""
        command = [sys.executable, "-m", "bench.without", device, "--", *args]
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        env.pop("GITHUB_ACTIONS", None)
        started = time.perf_counter()
        done = subprocess.run(command, cwd=self.folder, env=env, capture_output=True)
        wall = time.perf_counter() - started
        if done.returncode != 0:
            raise SystemExit(f"{' '.join(command)} failed:\n{done.stderr.decode()}")
        return wall

    def edit(self) -> None:
        self.rounds += 1
        with self.post.open("a", encoding="utf-8") as handle:
            handle.write(f"\nEdited in round {self.rounds} of the benchmark.\n")

    def clean(self) -> None:
        for name in ("site", ".toolkit"):
            shutil.rmtree(self.folder / name, ignore_errors=True)

    def forget_new(self) -> None:
        """Remove the posts `toolkit new` wrote, so that the next one has the same name."""
        for path in (self.folder / "content").glob("bench-post*.md"):
            path.unlink()

    def args(self, row: str) -> list[str]:
        """The arguments of a row of `COMMAND_ROWS`."""
        liquid = str(self.liquid.relative_to(self.folder))
        return [arg.replace("{liquid}", liquid) for arg in COMMAND_ROWS[row][0]]


def _git(folder: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=Bench", "-c", "user.email=bench@example.com", *args],
        cwd=folder,
        check=True,
        capture_output=True,
    )


def project(name: str, undated: bool = False, commits: int = 20) -> Project:
    """The 1,000-post corpus copied into bench/_work/devices/NAME, in a git repository of
    `commits` commits (the posts added a share at a time); `undated`: their `date:` lines
    taken out, so that each post's date is its first commit's, as for many writers."""
    source = corpus(1000) / "ours"
    folder = WORK / name
    stamp = folder / ".stamp"
    wanted = (
        f"{(source.parent / 'stamp').read_text(encoding='utf-8')} {undated} {commits} {LIQUID_TAG}"
    )
    if not stamp.is_file() or stamp.read_text(encoding="utf-8") != wanted:
        print(f"making {folder.relative_to(ROOT)}/ ...", flush=True)
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
        shutil.copytree(source / "content", folder / "content")
        for config in ("toolkit.toml", "search.toml"):
            shutil.copy(source / config, folder / config)
        posts = sorted((folder / "content").glob("*.md"))
        with (folder / "content" / "post-0499.md").open("a", encoding="utf-8") as handle:
            handle.write(f"\n{LIQUID_TAG}\n")
        if undated:
            for post in posts:
                text = post.read_text(encoding="utf-8")
                kept = [line for line in text.split("\n") if not line.startswith("date:")]
                post.write_text("\n".join(kept), encoding="utf-8")
        (folder / ".gitignore").write_text("/site/\n/.toolkit/\n/.stamp\n", encoding="utf-8")
        _git(folder, "init", "-q", "-b", "main")
        _git(folder, "add", ".gitignore", "toolkit.toml", "search.toml")
        share = -(-len(posts) // commits)
        for start in range(0, len(posts), share):
            part = [str(p.relative_to(folder)) for p in posts[start : start + share]]
            _git(folder, "add", *part)
            _git(folder, "commit", "-q", "-m", f"posts from {start}")
        _git(folder, "add", "content")
        _git(folder, "commit", "-q", "--allow-empty", "-m", "images")
        stamp.write_text(wanted, encoding="utf-8")
    content = folder / "content"
    subprocess.run(["git", "checkout", "-q", "--", "content"], cwd=folder, check=True)
    return Project(folder, content / "post-0500.md", content / "post-0499.md")


@dataclass
class Device:
    """One device: how a run goes without it (`runner`: bench/without.py's DEVICE), or
    what is removed before each run without it (`remove`, paths under the project)."""

    name: str
    what: str
    runner: str = "none"
    remove: tuple[str, ...] = ()
    rows: tuple[str, ...] = ROWS
    search: bool = False  # the rows with search on (the default configuration)
    undated: bool = False  # on the corpus without `date:` lines

    def prepare(self, folder: Path) -> None:
        for pattern in self.remove:
            for path in folder.glob(pattern):
                if path.is_dir():
                    shutil.rmtree(path)
                else:
                    path.unlink()


@dataclass
class Figures:
    with_: dict[str, list[float]] = field(default_factory=dict)
    without: dict[str, list[float]] = field(default_factory=dict)

    def cost(self, row: str) -> float:
        """How much longer the row takes without the device (0.10: 10% longer)."""
        return statistics.median(self.without[row]) / statistics.median(self.with_[row]) - 1


def measure(device: Device, proj: Project, runs: int, cold_runs: int) -> Figures:
    figures = Figures()
    build = ["--config", "search.toml", "build"] if device.search else ["build"]
    check = ["check", str(proj.post.relative_to(proj.folder))]
    steps: dict[str, tuple[Callable[[], None], list[str], int]] = {
        "cold build": (proj.clean, build, cold_runs),
        "one-post rebuild": (proj.edit, build, runs),
        "no-change build": (lambda: None, build, runs),
        "check one post": (lambda: None, check, runs),
        **{row: (proj.forget_new, proj.args(row), runs) for row in COMMAND_ROWS},
    }
    proj.clean()
    proj.run("none", build)  # the state every row but the cold one starts from
    for row in device.rows:
        before, args, count = steps[row]
        if row != "cold build":
            before()
            proj.run("none", args)  # the row's first run writes what the others find
        for turn in range(count):
            order = (True, False) if turn % 2 == 0 else (False, True)
            for kept in order:
                before()
                if kept:
                    figures.with_.setdefault(row, []).append(proj.run("none", args))
                else:
                    device.prepare(proj.folder)
                    figures.without.setdefault(row, []).append(proj.run(device.runner, args))
    proj.forget_new()
    return figures


def devices(imports: dict[str, Path]) -> list[Device]:
    found = [
        Device("gc", "collector thresholds raised, gc.freeze() at exit (__main__.py)", "gc"),
        Device("console", "a line printed without rich when rich would print it as is", "console"),
        Device("markdown-pyrs", "markdown-it-pyrs, with its 967-line writer", "markdown-pyrs"),
        Device(
            "build manifest",
            "what the last build made (the incremental build)",
            remove=(".toolkit/build/*.json",),
            rows=ROWS[1:3],
        ),
        Device(
            "highlight cache",
            "Pygments' output by code block",
            remove=(".toolkit/build/highlight",),
        ),
        Device("template cache", "Jinja's compiled templates", remove=(".toolkit/build/jinja",)),
        Device(
            "known-posts cache",
            "title, slug and canonical URL of every post by its stat",
            remove=(".toolkit/known-posts.json",),
            rows=ROWS[1:],
        ),
        Device(
            "git-dates cache",
            "each undated post's first commit, by HEAD",
            remove=(".toolkit/git-dates.json", ".toolkit/build/git-dates.json"),
            rows=ROWS[1:],
            undated=True,
        ),
        Device(
            "search state",
            "the search index's parts, by what each holds (search on)",
            remove=(".toolkit/build/*.search",),
            rows=ROWS[1:3],
            search=True,
        ),
    ]
    for kind, listing in imports.items():
        found.append(
            Device(
                f"imports ({kind})",
                f"function-level imports of {kind} modules",
                f"imports={listing}",
            )
        )
    for row, (_, modules) in COMMAND_ROWS.items():
        for module in modules:
            found.append(
                Device(
                    f"imports ({module_path(module)})",
                    f"the function-level imports of {module}",
                    f"imports={module_imports(module)}",
                    rows=(row,),
                )
            )
    return found


def module_path(module: str) -> str:
    """`toolkit.clients` -> `clients/__init__.py`, `toolkit.cli.mcp` -> `cli/mcp.py`."""
    path = Path(*module.split(".")[1:])
    if (ROOT / "toolkit" / path / "__init__.py").is_file():
        return (path / "__init__.py").as_posix()
    return path.with_suffix(".py").as_posix()


def module_imports(module: str) -> Path:
    """A file for bench/without.py's `imports=`: what `module` imports inside its
    functions (the extras left out: they are imported on use whatever this says)."""
    path = WORK / f"imports-{module}.txt"
    targets = sorted(
        {t for t, kind in function_level_imports().get(module, []) if kind != "optional"}
    )
    path.write_text("".join(f"{t}\n" for t in targets), encoding="utf-8")
    return path


def probe(proj: Project) -> dict[str, Path]:
    """The function-level import targets of what `toolkit check` and `toolkit build` load,
    by kind, each in a file for bench/without.py's `imports=`."""
    targets: dict[str, set[str]] = {}
    for args in (["build"], ["check", str(proj.post.relative_to(proj.folder))]):
        out = WORK / "probe.txt"
        proj.run(f"probe={out}", args)
        for line in out.read_text(encoding="utf-8").splitlines():
            target, kind = line.split()
            targets.setdefault(kind, set()).add(target)
            targets.setdefault("all", set()).add(target)
    files = {}
    for kind, names in sorted(targets.items()):
        path = WORK / f"imports-{kind}.txt"
        path.write_text("".join(f"{n}\n" for n in sorted(names)), encoding="utf-8")
        files[kind] = path
    return files


def over_budget(proj: Project, work: Path = WORK) -> dict[str, list[str]]:
    """Row of BUDGET -> the modules it loads that it should not (each run's list of loaded
    modules written in `work`)."""
    found = {}
    for row, (command, banned) in BUDGET.items():
        args = [command]
        if command == "check":
            args.append(str(proj.post.relative_to(proj.folder)))
        if row.startswith("one-post"):
            proj.edit()
        out = work / "modules.txt"
        proj.run(f"modules={out}", args)
        loaded = out.read_text(encoding="utf-8").split()
        found[row] = [
            name for name in loaded if any(name == b or name.startswith(b + ".") for b in banned)
        ]
    return found


def main(argv: list[str] | None = None) -> None:
    import argparse

    parser = argparse.ArgumentParser(prog="python -m bench.devices")
    parser.add_argument("--runs", type=int, default=5, help="runs of each kind (cold: 3)")
    parser.add_argument("names", nargs="*", help="devices to measure (default: all)")
    args = parser.parse_args(argv if argv is not None else [])
    dated = project("dated")
    undated: Project | None = None
    print(
        "import statements inside functions in toolkit/, by what they import:", counts(), flush=True
    )
    proj = dated
    proj.clean()
    proj.run("none", ["build"])
    print("import budget (modules a row must not load):")
    for row, extra in over_budget(dated).items():
        print(f"  {row:32} {'within' if not extra else 'OVER: ' + ', '.join(extra)}")
    chosen = [d for d in devices(probe(dated)) if not args.names or d.name in args.names]
    results: list[tuple[Device, Figures]] = []
    for device in chosen:
        proj = dated
        if device.undated:
            undated = undated or project("undated", undated=True)
            proj = undated
        print(f"measuring {device.name} ...", flush=True)
        figures = measure(device, proj, args.runs, max(1, min(3, args.runs)))
        results.append((device, figures))
        for row in device.rows:
            print(
                f"  {row:19} with {statistics.median(figures.with_[row]):6.3f} s"
                f"  without {statistics.median(figures.without[row]):6.3f} s"
                f"  {figures.cost(row):+6.1%}",
                flush=True,
            )
    print()
    wide = max([22, *(len(device.name) for device, _ in results)])
    print(f"{'device':{wide}} {'row':19} {'with':>8} {'without':>8} {'cost':>7}  verdict")
    for device, figures in results:
        keep = any(figures.cost(row) >= KEEP for row in device.rows)
        for index, row in enumerate(device.rows):
            verdict = ("keep" if keep else "fold back") if index == 0 else ""
            print(
                f"{device.name if index == 0 else '':{wide}} {row:19}"
                f" {statistics.median(figures.with_[row]):8.3f}"
                f" {statistics.median(figures.without[row]):8.3f}"
                f" {figures.cost(row):+7.1%}  {verdict}"
            )


if __name__ == "__main__":
    main(sys.argv[1:])
