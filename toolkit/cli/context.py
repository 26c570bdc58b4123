"""State shared by every command: the global options and the configuration, loaded once."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

import click

from toolkit.cli.output import stderr
from toolkit.config import Config, load_config
from toolkit.redact import redact_url


@dataclass
class CliContext:
    """The global options and the configuration. The configuration's warnings (a `.env`
    open to other users) are printed on stderr once, when it is first loaded, unless -q."""

    config_path: str | None = None
    verbose: int = 0
    quiet: bool = False
    _config: Config | None = field(default=None, repr=False)

    @property
    def config(self) -> Config:
        if self._config is None:
            self._config = load_config(self.config_path)
            if not self.quiet:
                for warning in self._config.warnings:
                    click.echo(f"Warning: {warning}", err=True)
        return self._config

    def config_or_defaults(self) -> Config:
        """The configuration, or without a toolkit.toml the defaults (for `toolkit config`)."""
        if self._config is None:
            self._config = load_config(self.config_path, missing_ok=True)
        return self._config


# What an option decorator takes and gives back: a command's callback (or a command).
F = TypeVar("F", bound=Callable[..., Any])

pass_cli = click.make_pass_decorator(CliContext, ensure=True)


def setup_logging(verbose: int, quiet: bool) -> None:
    level = (
        logging.ERROR
        if quiet
        else {0: logging.WARNING, 1: logging.INFO}.get(verbose, logging.DEBUG)
    )
    handler = _LazyRichHandler()
    handler.addFilter(_redact_urls)
    logging.basicConfig(level=level, format="%(message)s", handlers=[handler], force=True)
    # The HTTP libraries log every request at INFO; keep them for -vv.
    for noisy in ("httpx", "httpcore", "uvicorn.access"):
        logging.getLogger(noisy).setLevel(logging.DEBUG if verbose > 1 else logging.WARNING)


class _LazyRichHandler(logging.Handler):
    """Log records printed by rich on stderr; rich is imported at the first record, so a
    command that logs nothing never pays for it."""

    def __init__(self) -> None:
        super().__init__()
        self._rich: logging.Handler | None = None

    def emit(self, record: logging.LogRecord) -> None:
        if self._rich is None:
            from rich.logging import RichHandler

            self._rich = RichHandler(console=stderr, show_time=False, show_path=False)
        self._rich.emit(record)


def _redact_urls(record: logging.LogRecord) -> bool:
    """Take credentials out of URLs in a log line (httpx logs every request's URL)."""
    message = record.getMessage()
    if "@" in message:
        record.msg, record.args = redact_url(message), None
    return True


def _set_verbose(ctx: click.Context, _param: click.Parameter, value: int) -> None:
    if value:
        cli = ctx.ensure_object(CliContext)
        cli.verbose += value
        setup_logging(cli.verbose, cli.quiet)


def _set_quiet(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    if value:
        cli = ctx.ensure_object(CliContext)
        cli.quiet = True
        setup_logging(cli.verbose, cli.quiet)


def common_options(command: F) -> F:
    """`-v` and `-q` on every command too, so `toolkit publish -v` works like `toolkit -v publish`."""
    command = click.option(
        "-q", "--quiet", is_flag=True, expose_value=False, callback=_set_quiet, help="Only errors."
    )(command)
    return click.option(
        "-v",
        "--verbose",
        count=True,
        expose_value=False,
        callback=_set_verbose,
        help="Say more (repeat for debug output).",
    )(command)


# `ctx.meta` key (shared by every context of a run): the command was given `--json`.
JSON_MODE = "toolkit.json"


def _set_json_mode(ctx: click.Context, _param: click.Parameter, value: bool) -> bool:
    if value:
        ctx.meta[JSON_MODE] = True
    return value


def json_option(command: F) -> F:
    """`--json` (the value `as_json`), the one option of every command that reports a
    result: its result document on stdout and nothing else there. On an expected failure
    the group prints `{"ok": false, "error", "errors"}` instead (`toolkit.cli.LazyGroup.
    invoke`); progress and messages go to stderr."""
    return click.option(
        "--json",
        "as_json",
        is_flag=True,
        callback=_set_json_mode,
        help="Print one JSON document on stdout and nothing else there.",
    )(command)


def print_json(document: object) -> None:
    """One JSON document on stdout (`toolkit.commands.results.to_json` of a result)."""
    click.echo(json.dumps(document, indent=2, ensure_ascii=False))


def lock_timeout_option(default: float, waits: str) -> Callable[[F], F]:
    """`--lock-timeout SECONDS` (env TOOLKIT_LOCK_TIMEOUT): how long `waits` waits for
    another toolkit run that holds .toolkit/run.lock."""
    return click.option(
        "--lock-timeout",
        type=click.FloatRange(min=0),
        default=default,
        show_default=True,
        envvar="TOOLKIT_LOCK_TIMEOUT",
        show_envvar=True,
        metavar="SECONDS",
        help=f"How long {waits} waits while another toolkit run holds .toolkit/run.lock.",
    )
