from __future__ import annotations

import os
from pathlib import Path

import click
from rich.markup import escape
from rich.progress import BarColumn, DownloadColumn, Progress, TaskID, TextColumn, TimeElapsedColumn

from toolkit.cli.context import CliContext, common_options, json_option, pass_cli, print_json
from toolkit.cli.output import stderr, stdout
from toolkit.cli.progress import Countdown, status_column
from toolkit.commands.export import export as run_export
from toolkit.commands.results import to_json
from toolkit.config.keys import ARCHIVE_FORMATS, EXPORT_SOURCES


def _megabytes(size: int) -> str:
    return f"{size / 1e6:.1f} MB"


def _shown(path: Path) -> str:
    """A path as the user would type it: relative to here when inside."""
    relative = os.path.relpath(path)
    return str(path) if relative.startswith("..") else relative


class ExportReporter:
    """The export's progress: bars on a terminal (files and bytes up, the job's state
    while waiting, bytes down); otherwise one line as each phase starts (not with -q)."""

    def __init__(self, *, quiet: bool, enabled: bool):
        self.enabled = enabled and not quiet
        self.bars: Progress | None = None
        self.files = 0
        self.size = 0
        self.up: TaskID | None = None
        self.down: TaskID | None = None
        self.phase = ""

    def __enter__(self) -> ExportReporter:
        return self

    def __exit__(self, *exc_info: object) -> None:
        if self.bars is not None:
            self.bars.stop()
            self.bars = None

    def _line(self, phase: str, text: str) -> None:
        if self.enabled and self.bars is None and self.phase != phase:
            self.phase = phase
            stderr.print(text, markup=False, highlight=False)

    def collected(self, files: int, size: int) -> None:
        self.files, self.size = files, size
        if not self.enabled:
            return
        if stderr.is_terminal:
            self.bars = Progress(
                TextColumn("{task.description:<11}"),
                BarColumn(),
                DownloadColumn(),
                status_column(),
                TimeElapsedColumn(),
                console=stderr,
                transient=True,
            )
            self.up = self.bars.add_task("uploading", total=size, status=f"0/{files} files")
            self.bars.start()
        else:
            self._line("up", f"uploading {files} files ({_megabytes(size)})")

    def uploaded(self, files: int, size: int) -> None:
        if self.bars is not None and self.up is not None:
            self.bars.update(self.up, completed=size, status=f"{files}/{self.files} files")

    def processing(self, status: str, seconds: float) -> None:
        if self.bars is not None and self.up is not None:
            self.bars.update(
                self.up, description="waiting", status=f"archive {escape(status)} ({seconds:.0f} s)"
            )
        self._line("wait", "waiting for the archive")

    def downloaded(self, size: int, total: int | None) -> None:
        if self.bars is not None:
            if self.down is None:
                self.down = self.bars.add_task("downloading", total=total, status="")
            self.bars.update(self.down, completed=size)
        self._line(
            "down",
            "downloading the archive" + (f" ({_megabytes(total)})" if total is not None else ""),
        )

    def paused(self, seconds: float, reason: str) -> None:
        if self.bars is not None and self.up is not None:
            self.bars.update(self.up, status=Countdown(seconds, reason))
        elif self.enabled:
            stderr.print(f"waiting {seconds:.1f} s: {reason}", markup=False, highlight=False)


@click.command()
@click.option(
    "--source",
    type=click.Choice(EXPORT_SOURCES),
    default=None,
    help="What to bundle: the built site (site/) or the posts and their files "
    "(content/). Default: [archive] source, `site`.",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(ARCHIVE_FORMATS),
    default=None,
    help="Archive format. Default: [archive] format, `zip`.",
)
@click.option(
    "--output",
    type=click.Path(dir_okay=False),
    default=None,
    help="The archive file to write. Default: [archive] output, else "
    "<source>.<format> beside toolkit.toml.",
)
@json_option
@common_options
@pass_cli
def export(
    cli: CliContext, source: str | None, fmt: str | None, output: str | None, as_json: bool
) -> None:
    """Bundle the built site, or the posts with their files, into one archive made by the
    archive-task API (CloudConvert API v2, or the sandbox's), and verify it.

    One request creates the job (an upload task per file, the archive task, the export
    task); the files go up streamed from disk, a few at a time; toolkit waits for the
    archive (at most [archive] deadline seconds), downloads it beside --output, checks
    that it is complete, that it opens and that its entries are exactly the files sent,
    then moves it into place. Any failure is one line and exit 1, and nothing is written
    at --output. RAR archives are checked for their size and signature only. Needs
    CLOUDCONVERT_API_KEY.

    \b
    Example:
      toolkit export
      toolkit export --source content --format tar.gz --output posts.tar.gz
      CLOUDCONVERT_BASE_URL=http://127.0.0.1:8787 toolkit export --json
    """

    with ExportReporter(quiet=cli.quiet, enabled=not as_json) as reporter:
        result = run_export(cli.config, source=source, fmt=fmt, output=output, progress=reporter)
    if as_json:
        print_json(to_json(result))
        return
    for path, reason in result.skipped:
        stderr.print(f"{path}: left out: {reason}", markup=False, highlight=False)
    checked = "verified" if result.listed else "size and signature checked"
    stdout.print(
        f"{_shown(result.output)}: {result.size:,} bytes, {result.entries} entries "
        f"({result.format}, {checked})",
        markup=False,
        highlight=False,
    )
    if not cli.quiet:
        stderr.print(
            f"exported {result.source} ({_megabytes(result.source_bytes)}) in "
            f"{result.seconds:.1f} s with {result.requests} requests",
            markup=False,
            highlight=False,
        )
