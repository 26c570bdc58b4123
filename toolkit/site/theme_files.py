"""The theme: where templates and static files come from, and what each page depends on.

The default theme ships inside the package (`toolkit/site/theme`, the repository's root
`templates/` folder). A project's own `templates/` folder is laid over it: a template or a
static file with the same name wins, so a project overrides one file without copying the
rest. Nothing here imports Jinja2 or Pygments until a template really changed, so that a
build with nothing to do stays cheap.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import os
import posixpath
import threading
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pygments

from toolkit import localfiles
from toolkit.errors import BuildError
from toolkit.site.manifest import FileTable, ThemeFile

if TYPE_CHECKING:  # pragma: no cover
    import jinja2

THEME_DIR = Path(__file__).resolve().parent / "theme"
STATIC = "static"  # the subfolder of a templates folder that is copied, not rendered
PREMIUM = "premium"  # the subfolder laid over the templates in a premium build

# The templates a build renders directly; everything else is reached from these.
PAGE_TEMPLATES = (
    "post.html",
    "index.html",
    "tag.html",
    "tags.html",
    "reading_list.html",
    "search.html",
    "404.html",
    "feed.xml",
    "sitemap.xml",
)
# How every template is read: every environment made here uses these, so a template
# parsed or compiled once serves them all (`_references`, `_compiled_cache`).
SYNTAX: dict[str, Any] = {"trim_blocks": True, "lstrip_blocks": True, "keep_trailing_newline": True}
COMPILED_KEPT = 256  # compiled templates kept in memory (a theme has a few dozen)
_compiled: OrderedDict[tuple[str, str | None], bytes] = OrderedDict()
_compiled_lock = threading.Lock()  # builds may run in several threads (the MCP server)

# The Pygments styles of code blocks: one for light pages, one for prefers-color-scheme: dark.
PYGMENTS_LIGHT = "default"
PYGMENTS_DARK = "github-dark"

_THEME_FOLDERS = (os.path.realpath(THEME_DIR),)  # where the theme's own symlinks may lead


def _walk(
    folder: Path, *, static: bool, folders: tuple[str, ...] | None, skipped: dict[str, str]
) -> dict[str, os.stat_result]:
    """Files of a templates folder by POSIX name: the templates, or the static files.

    Symlinks are followed only when they lead into `folders`, a symlinked folder at most
    once (a link back up cannot loop); what leads elsewhere, and what is not a file, goes
    to `skipped` (absolute path -> why) and is never opened. `folders=None`: the theme
    that ships with toolkit, whose own links are trusted.
    """
    found: dict[str, os.stat_result] = {}
    if static:
        folder = folder / STATIC
    if folders is None:
        if not folder.is_dir():
            return found
        folders = _THEME_FOLDERS
    else:
        kind, _, reason = localfiles.classify_path(folder, folders)
        if reason:
            skipped[str(folder)] = reason
        if kind != localfiles.FOLDER:
            return found
    followed: set[str] = set()  # real paths of the symlinked folders walked
    stack = [(folder, "")]
    while stack:
        current, prefix = stack.pop()
        with os.scandir(current) as entries:
            for entry in entries:
                if entry.name.startswith("."):
                    continue
                name = prefix + entry.name
                if entry.is_file(follow_symlinks=False):  # the common case, inline
                    found[name] = entry.stat(follow_symlinks=False)
                    continue
                kind, st, reason = localfiles.classify_entry(entry, folders)
                if kind == localfiles.FOLDER:
                    if not static and not prefix and entry.name == STATIC:
                        continue
                    if entry.is_symlink():
                        target = os.path.realpath(entry.path)
                        if target in followed:
                            continue
                        followed.add(target)
                    stack.append((Path(entry.path), name + "/"))
                elif kind == localfiles.FILE and st is not None:
                    found[name] = st
                elif reason:
                    skipped[entry.path] = reason
    return found


def _overlay(
    project_dir: Path,
    *,
    static: bool,
    folders: tuple[str, ...] | None,
    skipped: dict[str, str] | None,
    overlay: Path | None = None,
) -> FileTable:
    table: FileTable = {}
    skipped = {} if skipped is None else skipped
    allowed_folders = folders or localfiles.project_folders(project_dir)
    layers: list[tuple[Path, tuple[str, ...] | None, dict[str, str]]] = [
        (THEME_DIR, None, {}),
        (project_dir, allowed_folders, skipped),
    ]
    if overlay is not None:  # a premium build: `templates/premium/` over the rest
        layers.append((overlay, allowed_folders, skipped))
    for folder, allowed, refused in layers:  # the later layer's files win
        for name, st in _walk(folder, static=static, folders=allowed, skipped=refused).items():
            table[name] = ThemeFile(
                str(folder / STATIC / name if static else folder / name),
                st.st_mtime_ns,
                st.st_size,
            )
    return dict(sorted(table.items()))


def template_table(
    project_dir: Path,
    folders: tuple[str, ...] | None = None,
    skipped: dict[str, str] | None = None,
    overlay: Path | None = None,
) -> FileTable:
    """Every template a page can use, resolved the way the loader resolves it.

    `folders`: where a symlink may lead (by default the templates folder itself);
    `skipped` receives the files refused, with the reason; `overlay` (a premium build's
    `templates/premium/`) is laid over the project's templates.
    """
    return _overlay(project_dir, static=False, folders=folders, skipped=skipped, overlay=overlay)


def static_table(
    project_dir: Path,
    folders: tuple[str, ...] | None = None,
    skipped: dict[str, str] | None = None,
    overlay: Path | None = None,
) -> FileTable:
    """Every static file to copy under `static/`: the theme's, overlaid by the project's
    (and by `overlay`'s own `static/`)."""
    return _overlay(project_dir, static=True, folders=folders, skipped=skipped, overlay=overlay)


def file_digest(path: str | Path) -> str:
    with open(path, "rb") as handle:
        return hashlib.blake2b(handle.read(), digest_size=16).hexdigest()


def make_environment(
    project_dir: Path,
    cache_dir: Path | None = None,
    folders: tuple[str, ...] | None = None,
    overlay: Path | None = None,
) -> jinja2.Environment:
    """The Jinja2 environment of a build: the project's templates over the theme's, and
    `overlay` (a premium build's `templates/premium/`) over both.

    A project template is loaded only from where `template_table` takes it: a symlink
    leading outside `folders` (by default the templates folder) is passed over, and the
    theme's template of that name is used, as the table says.
    """
    import jinja2

    allowed = folders or localfiles.project_folders(project_dir)
    loaders = [_project_loader(str(project_dir), allowed), jinja2.FileSystemLoader(str(THEME_DIR))]
    if overlay is not None:
        loaders.insert(0, _project_loader(str(overlay), allowed))
    loader = jinja2.ChoiceLoader(loaders)
    disk = None
    if cache_dir is not None:
        with contextlib.suppress(OSError):
            cache_dir.mkdir(parents=True, exist_ok=True)
            disk = jinja2.FileSystemBytecodeCache(str(cache_dir))
    return jinja2.Environment(
        loader=loader,
        autoescape=jinja2.select_autoescape(["html", "xml"], default_for_string=True),
        undefined=jinja2.StrictUndefined,
        # Template changes are noticed by the builder (`closure_digests`), which then
        # clears the cache; checking every template's mtime on each use would cost a stat
        # per include per page.
        auto_reload=False,
        bytecode_cache=_compiled_cache(disk),
        **SYNTAX,
    )


def _project_loader(searchpath: str, folders: tuple[str, ...]) -> jinja2.FileSystemLoader:
    import jinja2
    from jinja2.loaders import split_template_path

    class ProjectLoader(jinja2.FileSystemLoader):
        def get_source(
            self, environment: jinja2.Environment, template: str
        ) -> tuple[str, str, Callable[[], bool]]:
            filename = posixpath.join(searchpath, *split_template_path(template))
            if os.path.lexists(filename) and not within_project(filename):
                raise jinja2.TemplateNotFound(template)
            return super().get_source(environment, template)

    def within_project(filename: str) -> bool:
        kind, _, _ = localfiles.classify_path(filename, folders)
        return kind == localfiles.FILE and localfiles.within(os.path.realpath(filename), folders)

    return ProjectLoader(searchpath)


def closure_digests(
    env: jinja2.Environment, table: FileTable, digests: dict[str, str]
) -> dict[str, str]:
    """For each page template, a digest of every template file it can reach.

    A page is rendered again exactly when one of those files changed. A template that
    names another one in a way that is only known at run time (a variable in
    `include`) is taken to reach every template.
    """
    from jinja2 import TemplateSyntaxError

    references: dict[str, set[str] | None] = {}

    def referenced(name: str) -> set[str] | None:
        if name not in references:
            path = table[name].path
            try:
                found = _references(Path(path).read_text(encoding="utf-8"), name, path)
            except TemplateSyntaxError as exc:
                raise BuildError(f"{exc.filename or path}:{exc.lineno}: {exc.message}") from None
            references[name] = None if found is None else set(found)
        return references[name]

    result: dict[str, str] = {}
    for page in PAGE_TEMPLATES:
        if page not in table:
            raise BuildError(f"template {page} not found in the project or the theme")
        reached: set[str] = set()
        pending = [page]
        dynamic = False
        while pending:
            name = pending.pop()
            if name in reached:
                continue
            reached.add(name)
            if name not in table:
                raise BuildError(
                    f"{table[page].path}: uses template {name!r}, which does not exist"
                )
            names = referenced(name)
            if names is None:
                dynamic = True
                break
            pending.extend(names)
        members = sorted(table) if dynamic else sorted(reached)
        hasher = hashlib.blake2b(digest_size=16)
        for name in members:
            hasher.update(f"{name}\0{table[name].path}\0{digests[table[name].path]}\n".encode())
        result[page] = hasher.hexdigest()
    return result


def pygments_version() -> str:

    return pygments.__version__


def _compact_rules(lines: list[str], prefix: str = "") -> str:
    """Pygments' rules, one per token type, grouped by their declarations
    (`.a,.b{color:#123}`): a third of the bytes. Each selector names one token class, so
    the order of the groups does not matter. `prefix` goes before each selector."""
    groups: dict[str, list[str]] = {}
    for line in lines:
        rule = line.split("/*", 1)[0].strip()
        if "{" not in rule:
            continue
        selector, _, body = rule.partition("{")
        declarations = ";".join(
            part.strip() for part in body.rstrip("} ").split(";") if part.strip()
        )
        groups.setdefault(declarations, []).append(prefix + selector.strip())
    return "\n".join(
        f"{','.join(selectors)}{{{declarations}}}" for declarations, selectors in groups.items()
    )


def pygments_css() -> bytes:
    """The stylesheet of highlighted code, light and dark; the same bytes on every run.

    Dark follows the theme's own rule: the reader's system setting, unless the theme
    toggle chose (`data-theme` on the root element)."""
    from pygments.formatters import HtmlFormatter

    def lines(style: str) -> list[str]:
        formatter = HtmlFormatter(style=style)
        # Only the rules under .highlight: the full stylesheet also styles every <pre>.
        found: list[str] = (
            formatter.get_background_style_defs(".highlight")  # type: ignore[no-untyped-call]  # unannotated in types-Pygments
            + formatter.get_token_style_defs(".highlight")  # type: ignore[no-untyped-call]  # unannotated in types-Pygments
        )
        return found

    dark = lines(PYGMENTS_DARK)
    chosen, system = ':root[data-theme="dark"] ', 'html:not([data-theme="light"]) '
    text = (
        f"/* Code highlighting, generated by Pygments {pygments_version()} "
        f"(styles {PYGMENTS_LIGHT} and {PYGMENTS_DARK}). */\n"
        f"{_compact_rules(lines(PYGMENTS_LIGHT))}\n"
        f"{_compact_rules(dark, chosen)}\n"
        f"@media (prefers-color-scheme: dark) {{\n"
        f"{_compact_rules(dark, system)}\n}}\n"
    )
    return text.encode("utf-8")


@functools.lru_cache(maxsize=COMPILED_KEPT)
def _references(source: str, name: str, path: str) -> frozenset[str] | None:
    """The templates `source` names, or None when it names one only known at run time.
    Kept for the process: a build parses only the templates it has not seen as they are."""
    from jinja2 import meta

    found = list(meta.find_referenced_templates(_parser().parse(source, name, path)))
    return None if None in found else frozenset(n for n in found if n)


@functools.cache
def _parser() -> jinja2.Environment:
    import jinja2

    return jinja2.Environment(**SYNTAX)


def _compiled_cache(disk: jinja2.BytecodeCache | None) -> jinja2.BytecodeCache:
    """Compiled templates, kept for the life of the process by template file and source
    checksum (the last `COMPILED_KEPT`), and in `disk` (the project's cache folder) for
    the next process. A disk that cannot be written (full, read-only) only costs the next
    build the compiling it would have saved."""
    import jinja2

    class CompiledTemplates(jinja2.BytecodeCache):
        def load_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
            with _compiled_lock:
                kept = _compiled.get((bucket.key, bucket.checksum))
            if kept is not None:
                bucket.bytecode_from_string(kept)
            elif disk is not None:
                disk.load_bytecode(bucket)
                if bucket.code is not None:
                    self._keep(bucket)

        def dump_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
            self._keep(bucket)
            if disk is not None:
                with contextlib.suppress(OSError):
                    disk.dump_bytecode(bucket)

        def _keep(self, bucket: jinja2.bccache.Bucket) -> None:
            code = bucket.bytecode_to_string()
            with _compiled_lock:
                _compiled[(bucket.key, bucket.checksum)] = code
                _compiled.move_to_end((bucket.key, bucket.checksum))
                while len(_compiled) > COMPILED_KEPT:
                    _compiled.popitem(last=False)

    return CompiledTemplates()
