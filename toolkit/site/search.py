"""The site's full-text search index: Pagefind over the post pages, into `pagefind/`.

Pagefind (a static search engine: a Rust indexer shipped on PyPI as `pagefind_bin`, and a
WebAssembly search that runs in the reader's browser) reads the part of each page marked
`data-pagefind-body` (the posts) and writes its index and scripts beside the site, so
search needs no server. The search page loads them only when a reader searches.

The index is split in parts, so that a changed post costs the indexing of its part, not of
the whole site. Each post page belongs to one part, chosen by a hash of its path; the
number of parts grows with the site (`part_count`: one part up to `PART_PAGES` posts,
then doubling). Part 0 is Pagefind's bundle itself, `pagefind/` (with `pagefind.js` and
the WebAssembly); part N is the index files alone, in `pagefind/part-NNN/`, and
`pagefind/parts.json` lists them: the search page merges them into part 0 with
Pagefind's `mergeIndex`. A site of up to `PART_PAGES` posts has one part, the same files
as one Pagefind run over the site, and an empty list.

What each part was made from is kept under `.toolkit/build/` (the pages' paths and the
digests of their bytes, from the build's manifest, and the Pagefind binary): a part is
indexed again only when that changed or its files are gone. The pages of a part are
hard-linked (copied across file systems) into a temporary folder that Pagefind indexes
(Pagefind given the output folder with a glob naming the pages would walk every folder
of the site for each part), and its output goes into a temporary folder first; a file of `pagefind/` is then written
only when its bytes changed and removed when no part has it any more, so an index that did
not change touches nothing and the output holds no index files left from earlier builds
(a part's folder that is not there yet, as in a first build, is that temporary folder,
renamed into place).
Its files are not in the build's manifest: `pagefind/` belongs to this step.
"""

from __future__ import annotations

import hashlib
import json
import os
from fnmatch import fnmatch
from pathlib import Path
from typing import TYPE_CHECKING, Any

from toolkit.errors import BuildError
from toolkit.fsutil import write_if_changed
from toolkit.site.parallel import available_cores

if TYPE_CHECKING:  # pragma: no cover
    import subprocess

INDEX_DIR = "pagefind"  # under the output folder
PARTS = "parts.json"  # in INDEX_DIR: the folders of the parts after the first
# Pagefind's ready-made search interfaces: the theme's search page asks `pagefind.js`
# itself, so these (about 400 KB) are not put in the site.
UNUSED = ("pagefind-*ui.js", "pagefind-*ui.css", "pagefind-highlight.js")
ENTRY = "pagefind-entry.json"  # the file every index has
# What the index leaves out of the posts: a heading's permalink (its `#` would show in
# every excerpt that starts at a heading).
EXCLUDED = ".header-anchor"
TIMEOUT = 300.0  # seconds Pagefind may take over one part
PART_PAGES = 40  # pages per part, on average, at most (until MAX_PARTS)
MAX_PARTS = 128
STATE_VERSION = 1


def part_count(pages: int) -> int:
    """How many parts an index of `pages` pages has: 1 up to PART_PAGES, then a power
    of two keeping the parts at PART_PAGES pages or fewer on average."""
    count = 1
    while pages > count * PART_PAGES and count < MAX_PARTS:
        count *= 2
    return count


def part_of(page: str, count: int) -> int:
    """The part a page (its path under the output folder) belongs to."""
    digest = hashlib.blake2b(page.encode("utf-8"), digest_size=8).digest()
    return int.from_bytes(digest, "big") % count


def part_folder(part: int) -> str:
    """Where part `part` lives under `pagefind/` ("" for the first)."""
    return f"part-{part:03d}" if part else ""


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
        raise BuildError(
            "search index not built: the pagefind_bin package is not "
            "installed (pip install pagefind-bin)"
        ) from None
    try:
        return str(get_executable())
    except (FileNotFoundError, OSError) as exc:
        raise BuildError(f"search index not built: {exc}") from None


def _signature(pages: dict[str, str]) -> str:
    text = "\n".join(f"{page}\t{digest}" for page, digest in sorted(pages.items()))
    return hashlib.blake2b(text.encode("utf-8"), digest_size=16).hexdigest()


def _identity(binary: str) -> str | None:
    """What tells a Pagefind binary from another: its path, size and modification time."""
    try:
        st = os.stat(binary)
    except OSError:
        return None
    return f"{binary}\0{st.st_size}\0{st.st_mtime_ns}"


def _load_state(path: Path) -> dict[str, object]:
    try:
        state = json.loads(path.read_bytes())
    except (OSError, ValueError):
        return {}
    return state if isinstance(state, dict) else {}


def build_index(
    output_dir: Path,
    work_dir: Path,
    pages: dict[str, str],
    state_path: Path,
    pages_changed: bool = True,
) -> tuple[list[str], list[str]]:
    """Bring the index in `output_dir/pagefind/` up to date with `pages` (each post page's
    path under the output folder -> the digest of its bytes), indexing again only the
    parts whose pages changed; `work_dir` holds the temporary folders, `state_path` what
    each part was made from. A site with no post page at all is indexed whole, as
    Pagefind does (it then takes every page), when `pages_changed` says a page changed.
    Returns the files written and removed (POSIX paths under the output folder); raises
    `BuildError` when Pagefind fails (the parts made are kept)."""
    return start_index(output_dir, work_dir, pages, state_path, pages_changed).finish()


def start_index(
    output_dir: Path,
    work_dir: Path,
    pages: dict[str, str],
    state_path: Path,
    pages_changed: bool = True,
) -> Indexing:
    """`build_index` in two halves: this one starts Pagefind on the first parts to make
    and returns at once, so that the build does the rest of its work while Pagefind
    runs; `finish()` of what it returns waits for Pagefind, makes the other parts and
    installs them, and returns (or raises) what `build_index` does. Raises `BuildError`
    when Pagefind cannot be found."""
    target = output_dir / INDEX_DIR
    if target.is_symlink() or (target.exists() and not target.is_dir()):
        target.unlink()  # may lead anywhere: replaced by a folder, never written through

    count = part_count(len(pages))
    parts: list[dict[str, str]] = [{} for _ in range(count)]
    for page, digest in pages.items():
        parts[part_of(page, count)][page] = digest
    # Part 0 always has an index (it holds the bundle); another part with no page has none.
    present = [i for i in range(count) if i == 0 or parts[i]]
    signatures = [_signature(part) if part else "" for part in parts]

    state = _load_state(state_path)
    # The Pagefind binary the parts were made with, if it is still there as it was: then
    # pagefind_bin is not even imported unless a part must be made. (The state only says
    # whether a part is up to date: the binary run is always pagefind_bin's.)
    binary = state.get("binary")
    tool = state.get("tool")
    if not isinstance(binary, str) or _identity(binary) != tool:
        binary = tool = None
    known = (
        state.get("parts")
        if (state.get("version") == STATE_VERSION and tool and state.get("count") == count)
        else None
    )
    done: list[str] = (
        [k if isinstance(k, str) else "" for k in known]
        if isinstance(known, list) and len(known) == count
        else [""] * count
    )

    def stale_parts() -> list[int]:
        return [
            i
            for i in present
            if done[i] != signatures[i]
            or not (target / part_folder(i) / ENTRY).is_file()
            or (not pages and pages_changed)
        ]

    stale = stale_parts()
    indexer = None
    if stale:
        binary = executable()
        current = _identity(binary)
        if current is None:
            raise BuildError(f"search index not built: {binary} cannot be run")
        if current != tool:  # another Pagefind: every part is made again
            tool, done = current, [""] * count
            stale = stale_parts()
        indexer = _Indexer(binary, output_dir, work_dir, {i: parts[i] for i in stale})
    return Indexing(
        target,
        state_path,
        state,
        indexer,
        present,
        signatures,
        {"version": STATE_VERSION, "binary": binary, "tool": tool, "count": count, "parts": done},
    )


class Indexing:
    """An index being made (`start_index`): `finish()` once, or `abandon()`."""

    def __init__(
        self,
        target: Path,
        state_path: Path,
        state: dict[str, object],
        indexer: _Indexer | None,
        present: list[int],
        signatures: list[str],
        new_state: dict[str, Any],
    ):
        self._target = target
        self._state_path = state_path
        self._state = state
        self._indexer = indexer
        self._present = present
        self._signatures = signatures
        self._new_state = new_state

    def abandon(self) -> None:
        """Stop Pagefind and forget the parts being made (the build failed)."""
        if self._indexer is not None:
            self._indexer.abandon()
            self._indexer = None

    def finish(self) -> tuple[list[str], list[str]]:
        target, present, done = self._target, self._present, self._new_state["parts"]
        written: list[str] = []
        removed: list[str] = []
        failure: BuildError | None = None
        if self._indexer is not None:
            made, failure = self._indexer.finish()
            for i, (fresh_written, fresh_removed) in sorted(made.items()):
                written += fresh_written
                removed += fresh_removed
                done[i] = self._signatures[i]
            for i in self._indexer.parts:
                if i not in made:
                    done[i] = "?"  # not made: made again next time
            self._indexer = None
        # Parts this index does not have (empty, or of a larger index made before).
        removed += _remove_other_parts(target, {part_folder(i) for i in present if i})
        listing = (
            json.dumps(
                {"parts": [f"{part_folder(i)}/" for i in present if i]}, separators=(",", ":")
            ).encode("utf-8")
            + b"\n"
        )
        if write_if_changed(target / PARTS, listing, durable=False):
            written.append(f"{INDEX_DIR}/{PARTS}")
        if self._new_state != self._state:
            self._state_path.parent.mkdir(parents=True, exist_ok=True)
            write_if_changed(
                self._state_path, json.dumps(self._new_state).encode("utf-8"), durable=False
            )
        if failure is not None:
            raise failure
        return sorted(written), sorted(removed)


class _Indexer:
    """Indexes each of `parts` (part -> its pages) with Pagefind, a few at a time (each
    Pagefind uses threads too, but it is single-threaded for a good part of a small run),
    and installs each into its folder: the first few start when it is made."""

    def __init__(
        self, binary: str, output_dir: Path, work_dir: Path, parts: dict[int, dict[str, str]]
    ):
        import tempfile

        self.binary = binary
        self.output_dir = output_dir
        self.parts = parts
        self.made: dict[int, tuple[list[str], list[str]]] = {}
        self.failure: BuildError | None = None
        self._waiting = sorted(parts)
        self._running: list[tuple[int, Path, subprocess.Popen[str]]] = []
        self._at_once = max(1, available_cores())
        self._stopped = False  # a Pagefind could not be started: no more are
        work_dir.mkdir(parents=True, exist_ok=True)
        self._temporary = Path(tempfile.mkdtemp(prefix="search-", dir=work_dir))
        while self._waiting and len(self._running) < self._at_once and not self._stopped:
            self._start(self._waiting.pop(0))

    def _start(self, part: int) -> None:
        import subprocess

        pages = self.parts[part]
        folder = self._temporary / str(part)
        try:
            folder.mkdir()
            site = _stage(self.output_dir, folder / "site", pages)
            # In its own folder: Pagefind reads a pagefind.yml/.toml/.json it finds in
            # its working folder, and this one has none.
            process = subprocess.Popen(
                [
                    self.binary,
                    "--site",
                    str(site),
                    "--output-path",
                    str(folder / "out"),
                    "--silent",
                    "--exclude-selectors",
                    EXCLUDED,
                ],
                cwd=folder,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
        except OSError as exc:
            self.failure = self.failure or BuildError(f"search index not built: {exc}")
            self._stopped = True
            return
        self._running.append((part, folder, process))

    def _wait(self, part: int, folder: Path, process: subprocess.Popen[str]) -> None:
        import subprocess

        try:
            out, err = process.communicate(timeout=TIMEOUT)
        except subprocess.TimeoutExpired:
            process.kill()
            process.communicate()
            self.failure = self.failure or BuildError(
                f"search index not built: Pagefind took more than {TIMEOUT:.0f} s"
            )
            return
        fresh = folder / "out"
        if process.returncode != 0 or not (fresh / ENTRY).is_file():
            reason = (err or out).strip().splitlines()
            self.failure = self.failure or BuildError(
                "search index not built: Pagefind failed"
                + (f": {reason[-1][:300]}" if reason else "")
            )
            return
        self.made[part] = _install(fresh, self.output_dir / INDEX_DIR, part)

    def finish(self) -> tuple[dict[int, tuple[list[str], list[str]]], BuildError | None]:
        """What each part installed wrote and removed, and the first failure, if any."""
        try:
            while self._running:
                self._wait(*self._running.pop(0))
                if self._waiting and not self._stopped:
                    self._start(self._waiting.pop(0))
        finally:
            self.abandon()  # only the temporary folder is left by then
        return self.made, self.failure

    def abandon(self) -> None:
        """Stop the Pagefind processes still running; remove the temporary folder."""
        import shutil

        for _, _, process in self._running:
            process.kill()
            process.communicate()
        self._running = []
        shutil.rmtree(self._temporary, ignore_errors=True)


def _stage(output_dir: Path, site: Path, pages: dict[str, str]) -> Path:
    """Put the pages of one part into `site` at their paths: hard links (a copy where the
    output folder is on another file system); returns the folder to index. With no page
    at all (a site with no post), it is the output folder itself: Pagefind then indexes
    every page, as it did before the index was split (it makes no index of nothing)."""
    import shutil

    if not pages:
        return output_dir
    site.mkdir(parents=True)
    for page in sorted(pages):
        source = output_dir / page
        link = site / page
        link.parent.mkdir(parents=True, exist_ok=True)
        try:
            os.link(source, link)
        except OSError:
            shutil.copyfile(source, link)
    return site


def _wanted(relative: str, part: int) -> bool:
    """Whether a file Pagefind made for `part` goes into the site: the first part keeps
    Pagefind's bundle (but its ready-made interfaces); the others only their index."""
    if "/" in relative:
        return True  # index/, fragment/, filter/
    if part == 0:
        return not any(fnmatch(relative, pattern) for pattern in UNUSED)
    return relative == ENTRY or relative.endswith(".pf_meta")


def _install(fresh: Path, target: Path, part: int) -> tuple[list[str], list[str]]:
    """Make the folder of `part` under `target` hold exactly the wanted files of `fresh`,
    writing only what changed (the folders of the other parts and the list of parts are
    not the first part's)."""
    base = target / part_folder(part)
    if part and (base.is_symlink() or (base.exists() and not base.is_dir())):
        base.unlink()  # as for `pagefind/` itself: never written through
    prefix = f"{INDEX_DIR}/{part_folder(part)}/" if part else f"{INDEX_DIR}/"
    moved = _move_in(fresh, base, part, prefix)
    if moved is not None:
        return moved, []
    written: list[str] = []
    made: set[str] = set()
    for folder, _, files in os.walk(fresh):
        for name in files:
            source = Path(folder) / name
            relative = source.relative_to(fresh).as_posix()
            if not _wanted(relative, part):
                continue
            made.add(relative)
            if write_if_changed(base / relative, source.read_bytes(), durable=False):
                written.append(prefix + relative)
    removed: list[str] = []
    for folder, folders, files in os.walk(base, topdown=True):
        if part == 0 and Path(folder) == base:
            folders[:] = [f for f in folders if not f.startswith("part-")]
        for name in files:
            path = Path(folder) / name
            relative = path.relative_to(base).as_posix()
            if relative not in made and not (part == 0 and relative == PARTS):
                path.unlink()
                removed.append(prefix + relative)
    _remove_empty_folders(base, keep_parts=part == 0)
    return written, removed


def _move_in(fresh: Path, base: Path, part: int, prefix: str) -> list[str] | None:
    """When the folder of a part is not there yet (a first build), `fresh` becomes it:
    the files it does not want removed, the folder renamed, and no file read or written.
    Returns the files it holds, or None when `base` exists or the rename fails (another
    file system): then they are copied."""
    if os.path.lexists(base):
        return None
    written: list[str] = []
    for folder, _, files in os.walk(fresh):
        for name in files:
            relative = (Path(folder) / name).relative_to(fresh).as_posix()
            if _wanted(relative, part):
                written.append(prefix + relative)
            else:
                os.unlink(Path(folder) / name)
    try:
        os.rename(fresh, base)
    except OSError:
        return None
    _remove_empty_folders(base, keep_parts=part == 0)
    return written


def _remove_empty_folders(base: Path, *, keep_parts: bool) -> None:
    for folder, _, _ in os.walk(base, topdown=False):
        path = Path(folder)
        if path == base or (keep_parts and path.parent == base and path.name.startswith("part-")):
            continue
        if not os.listdir(path):
            os.rmdir(path)


def _remove_other_parts(target: Path, keep: set[str]) -> list[str]:
    """Remove the folders of parts but those in `keep`."""
    removed: list[str] = []
    try:
        entries = list(os.scandir(target))
    except OSError:
        return removed
    for entry in entries:
        if entry.name.startswith("part-") and entry.name not in keep:
            path = Path(entry.path)
            if entry.is_dir(follow_symlinks=False):
                import shutil

                removed += [
                    f"{INDEX_DIR}/{p.relative_to(target).as_posix()}"
                    for p in path.rglob("*")
                    if p.is_file()
                ]
                shutil.rmtree(path, ignore_errors=True)
            else:
                path.unlink(missing_ok=True)
                removed.append(f"{INDEX_DIR}/{entry.name}")
    return removed
