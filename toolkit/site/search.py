"""The site's full-text search index: Pagefind over the built pages, into `pagefind/`.

Pagefind (a static search engine: a Rust indexer shipped on PyPI as `pagefind_bin`, and a
WebAssembly search that runs in the reader's browser) reads the part of each page marked
`data-pagefind-body` (the posts) and writes its index and scripts beside the site, so
search needs no server. The search page loads them only when a reader searches.

It runs after a build that wrote or removed a page, never after one with nothing to do.
Pagefind writes into a temporary folder first; a file of `pagefind/` is then written only
when its bytes changed and removed when the new index no longer has it, so an index that
did not change touches nothing, and the output holds no index files left from earlier
builds. Its files are not in the build's manifest: `pagefind/` belongs to this step.
"""

from __future__ import annotations

import os
from pathlib import Path

from toolkit.errors import BuildError
from toolkit.fsutil import write_if_changed

INDEX_DIR = "pagefind"  # under the output folder
# Pagefind's ready-made search interfaces: the theme's search page asks `pagefind.js`
# itself, so these (about 400 KB) are not put in the site.
UNUSED = ("pagefind-*ui.js", "pagefind-*ui.css", "pagefind-highlight.js")
ENTRY = "pagefind-entry.json"  # the file every index has
# What the index leaves out of the posts: a heading's permalink (its `#` would show in
# every excerpt that starts at a heading).
EXCLUDED = ".header-anchor"
TIMEOUT = 300.0  # seconds Pagefind may take


def needed(output_dir: Path, written: list[str], removed: list[str]) -> bool:
    """Whether the index must be made again: a page changed, or there is none."""
    if any(name.endswith(".html") for name in (*written, *removed)):
        return True
    return not (output_dir / INDEX_DIR / ENTRY).is_file()


def remove_index(output_dir: Path) -> None:
    """Remove the index of earlier builds (search was turned off)."""
    folder = output_dir / INDEX_DIR
    if folder.is_dir() and not folder.is_symlink():
        import shutil

        shutil.rmtree(folder, ignore_errors=True)


def executable() -> str:
    """The Pagefind binary of the `pagefind_bin` package."""
    try:
        from pagefind_bin import get_executable  # type: ignore[import-untyped]  # no py.typed
    except ImportError:
        raise BuildError("search index not built: the pagefind_bin package is not "
                         "installed (pip install pagefind-bin)") from None
    try:
        return str(get_executable())
    except (FileNotFoundError, OSError) as exc:
        raise BuildError(f"search index not built: {exc}") from None


def build_index(output_dir: Path, work_dir: Path) -> tuple[list[str], list[str]]:
    """Index the pages of `output_dir` into its `pagefind/` folder, using `work_dir` for
    the temporary copy. Returns the files written and removed (POSIX paths under the
    output folder); raises `BuildError` when Pagefind fails."""
    import subprocess
    import tempfile

    binary = executable()
    work_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="search-", dir=work_dir) as temporary:
        fresh = Path(temporary) / INDEX_DIR
        try:
            # In the temporary folder: Pagefind reads a pagefind.yml/.toml/.json it finds in
            # its working folder, and this one has none.
            done = subprocess.run(
                [binary, "--site", str(output_dir), "--output-path", str(fresh), "--silent",
                 "--exclude-selectors", EXCLUDED],
                cwd=temporary, capture_output=True, text=True, timeout=TIMEOUT, check=False,
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise BuildError(f"search index not built: {exc}") from None
        if done.returncode != 0 or not (fresh / ENTRY).is_file():
            reason = (done.stderr or done.stdout).strip().splitlines()
            raise BuildError("search index not built: Pagefind failed"
                             + (f": {reason[-1][:300]}" if reason else ""))
        return _install(fresh, output_dir / INDEX_DIR)


def _install(fresh: Path, target: Path) -> tuple[list[str], list[str]]:
    """Make `target` hold exactly the files of `fresh` (but the `UNUSED` ones), writing
    only what changed. A symlink (or a file) in `target`'s place is replaced by a folder,
    never written or cleaned through: it may lead anywhere."""
    from fnmatch import fnmatch

    if target.is_symlink() or (target.exists() and not target.is_dir()):
        target.unlink()

    written: list[str] = []
    made: set[str] = set()
    for folder, _, files in os.walk(fresh):
        for name in files:
            if Path(folder) == fresh and any(fnmatch(name, pattern) for pattern in UNUSED):
                continue
            source = Path(folder) / name
            relative = source.relative_to(fresh).as_posix()
            made.add(relative)
            if write_if_changed(target / relative, source.read_bytes(), durable=False):
                written.append(f"{INDEX_DIR}/{relative}")
    removed: list[str] = []
    for folder, _, files in os.walk(target, topdown=False):
        for name in files:
            path = Path(folder) / name
            relative = path.relative_to(target).as_posix()
            if relative not in made:
                path.unlink()
                removed.append(f"{INDEX_DIR}/{relative}")
        if Path(folder) != target and not os.listdir(folder):
            os.rmdir(folder)
    return sorted(written), sorted(removed)
