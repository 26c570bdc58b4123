"""What a build reads besides the posts: the templates (what each page template reaches)
and the mirror files (the comments and the reading list), each digested and checked once,
and again only when its stat changes or cannot be trusted (`Manifest.trusts`); and the
files it copies (`copy_files`)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from toolkit.config import Config
from toolkit.config.writers import writer_order
from toolkit.content.fields import slugify
from toolkit.site import mirror_files, theme_files
from toolkit.site.buildrun import BuildRun
from toolkit.site.manifest import FileRecord, FileTrouble, Manifest, ProblemRow, digest_of
from toolkit.site.mirror_files import MIRROR, MirrorError
from toolkit.site.output import UnreadableSource, copy_if_changed, write_if_changed
from toolkit.site.pages import ReadingList
from toolkit.site.render import Renderer
from toolkit.site.scan import Stat
from toolkit.site.siteplan import outdated


def _digest(manifest: Manifest, path: str, mtime: int, size: int) -> str:
    entry = manifest.files.get(path)
    if entry is None or entry.mtime_ns != mtime or entry.size != size or not manifest.trusts(mtime):
        entry = FileRecord(mtime, size, theme_files.file_digest(path), None)
        manifest.files[path] = entry
    return entry.digest


def update_templates(
    run: BuildRun,
    renderer: Renderer,
    config: Config,
    folders: tuple[str, ...],
    overlay: Path | None,
) -> None:
    """Each page template's digest over the templates it reaches, redone when any
    template file came, went or changed (Jinja2 is imported only then)."""
    manifest = run.manifest
    skipped: dict[str, str] = {}
    table = theme_files.template_table(config.site.templates_dir, folders, skipped, overlay)
    report_skipped(run, skipped, config)
    if (
        table == manifest.templates
        and manifest.closures
        and all(manifest.trusts(mtime) for _, mtime, _ in table.values())
    ):
        return
    digests = {path: _digest(manifest, path, mtime, size) for path, mtime, size in table.values()}
    manifest.closures = theme_files.closure_digests(renderer.env, table, digests)
    manifest.templates = table
    renderer.reset_templates()
    run.must_save()


def report_skipped(run: BuildRun, skipped: dict[str, str], config: Config) -> None:
    """Files of the templates folder left out (a symlink leading outside the project,
    a FIFO...), as warnings."""
    for path, reason in skipped.items():
        run.report(config.relative(Path(path)), ProblemRow.warning(reason))


def check_mirror_files(run: BuildRun, config: Config) -> ReadingList | None:
    """Digests of the mirror files, each checked once when it changes; broken ones are
    reported. Returns the reading list as (digest, loader of its template context), or
    None: one account's list; in a team's repository each writer's too."""

    scan, files = run.scan, run.manifest.files
    checked: list[tuple[str, int, int, Callable[[Any], None]]] = [
        (path, mtime, size, mirror_files.check_comments)
        for path, mtime, size in scan.comments.values()
    ]
    lists = ([scan.reading_list] if scan.reading_list is not None else []) + list(
        scan.writer_reading_lists.values()
    )
    checked += [(*stat, mirror_files.check_reading_list) for stat in lists]
    for path, mtime, size, check in checked:
        entry = files.get(path)
        digest = (
            None if entry is None or run.manifest.trusts(mtime) else theme_files.file_digest(path)
        )  # read only when the stat is in doubt
        if (
            entry is None
            or entry.mtime_ns != mtime
            or entry.size != size
            or (digest is not None and entry.digest != digest)
        ):
            digest = digest or theme_files.file_digest(path)
            try:
                check(mirror_files.read_json(Path(path)))
                trouble = None
            except MirrorError as exc:
                trouble = FileTrouble(exc.line, str(exc))
            files[path] = FileRecord(mtime, size, digest, trouble)
            run.must_save()
        trouble = files[path].trouble
        if trouble:
            run.report(config.relative(Path(path)), ProblemRow(trouble.line, trouble.message))
    mirror_dir = str(config.site.content_dir / MIRROR)
    live = {path for path, *_ in checked}
    for path in [p for p in files if p.startswith(mirror_dir) and p not in live]:
        del files[path]  # gone
        run.must_save()

    def readable(stat: Stat | None) -> str | None:
        return stat[0] if stat is not None and not files[stat[0]].trouble else None

    def items_of(path: str) -> list[dict[str, Any]]:
        return mirror_files.reading_list_items(json.loads(Path(path).read_bytes()))

    project = readable(scan.reading_list)
    writers = {
        w: p
        for w, s in sorted(scan.writer_reading_lists.items(), key=lambda i: writer_order(i[0]))
        if (p := readable(s))
    }
    if not writers:  # one account's list, as it always was
        if project is None:
            return None
        only = project
        return files[only].digest, lambda: {"items": items_of(only)}

    # A team's: a section per writer who saved something (after the project's own list,
    # when there is one), in the order writers are listed everywhere.
    def context() -> dict[str, Any]:
        lists = [(writer, items_of(p)) for writer, p in writers.items()]
        return {
            "items": items_of(project) if project is not None else [],
            "writers": [
                {"name": writer, "anchor": f"writer-{slugify(writer)}", "saved": saved}
                for writer, saved in lists
                if saved
            ],
        }

    digest = digest_of(
        files[project].digest if project is not None else None,
        *(f"{w}:{files[p].digest}" for w, p in writers.items()),
    )
    return digest, context


def referenced(run: BuildRun, posts: list[str]) -> set[str]:
    """The files of the content folder that the posts on the site refer to (images, the
    cover, linked files), by their path in the folder."""
    files: set[str] = set()
    records = run.manifest.posts
    for key in posts:
        info = records[key].info
        if info is not None:
            files.update(info["files"])
    return files


def copy_files(
    run: BuildRun,
    config: Config,
    output_dir: Path,
    folders: tuple[str, ...],
    overlay: Path | None,
    posts: list[str],
) -> None:
    """The theme's static files (the project's over them), the code stylesheet, and the
    files of the content folder that the site's `posts` refer to, at the same relative
    path; not the rest of the folder (a writer's code samples, notes)."""
    outputs = run.manifest.outputs
    wanted = referenced(run, posts)
    skipped: dict[str, str] = {}
    copies: dict[str, tuple[str, int, int]] = {
        f"{theme_files.STATIC}/{name}": (path, mtime, size)
        for name, (path, mtime, size) in theme_files.static_table(
            config.site.templates_dir, folders, skipped, overlay
        ).items()
    }
    report_skipped(run, skipped, config)
    for relative, stat in run.scan.assets.items():
        if relative not in wanted:
            continue
        if relative in run.produced or relative in copies:
            run.report(
                config.relative(Path(stat[0])),
                ProblemRow.warning(f"not copied: the site makes its own {relative}"),
            )
        else:
            copies[relative] = stat
    for output, (path, mtime, size) in copies.items():
        key = digest_of(path, mtime, size)
        try:
            copied = copy_if_changed(
                path, output_dir / output, outputs.get(output), key, run.force, output_dir
            )
        except UnreadableSource as exc:  # the rest goes on
            run.report(config.relative(Path(path)), ProblemRow.warning(f"not copied: {exc}"))
            continue
        run.record(output, key, copied)
    # The stylesheet of highlighted code is made, not copied.
    output = f"{theme_files.STATIC}/pygments.css"
    if output in copies:
        return  # the project brings its own
    key = digest_of(
        "pygments",
        theme_files.pygments_version(),
        theme_files.PYGMENTS_LIGHT,
        theme_files.PYGMENTS_DARK,
    )
    if not outdated(run, output_dir, output, key):
        run.keep(output)
    else:
        run.record(
            output,
            key,
            write_if_changed(
                output_dir / output,
                theme_files.pygments_css(),
                outputs.get(output),
                run.force,
                output_dir,
            ),
        )
