"""`toolkit logs`: SQL over the run log, printed as a table, JSON or CSV."""

from __future__ import annotations

import csv
import json
import sys
from typing import Any

import click
from rich.console import Console
from rich.table import Table
from rich.text import Text

from toolkit.cli.context import CliContext, common_options, json_option, pass_cli, print_json
from toolkit.cli.output import stderr, stdout
from toolkit.commands.logs import LogQuery
from toolkit.commands.logs import query as run_query
from toolkit.runlog.times import parse_duration


def _check_since(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    if value is not None:
        try:
            parse_duration(value)
        except ValueError as exc:
            raise click.BadParameter(str(exc)) from None
    return value


def cell(value: Any) -> str:
    """A value as a table or CSV cell: nothing for null, whole numbers without `.0`."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    if isinstance(value, list | dict):
        return json.dumps(value, ensure_ascii=False)
    return str(value)


MAX_PIPED_WIDTH = 1_000  # characters a table's line may take when not on a terminal


def print_table(result: LogQuery) -> None:
    table = Table(show_edge=False, pad_edge=False, header_style="bold")
    for name in result.fields:
        table.add_column(Text(name))
    for record in result.records:
        table.add_row(*(Text(cell(record.get(name))) for name in result.fields))
    # On a terminal the table fits its width; into a pipe or a file, nothing is wrapped
    # (a route or a column's name cut in two would not be found by grep).
    if stdout.is_terminal:
        stdout.print(table)
    else:
        Console(width=MAX_PIPED_WIDTH, highlight=False).print(table)


def _csv(result: LogQuery) -> None:
    writer = csv.writer(sys.stdout, lineterminator="\n")
    writer.writerow(result.fields)
    for record in result.records:
        writer.writerow([cell(record.get(name)) for name in result.fields])


@click.command()
@click.argument("query", metavar="QUERY")
@click.option(
    "--stream",
    metavar="NAME",
    help="The log stream, which is also the table's name (default: [logs] stream).",
)
@click.option(
    "--since",
    metavar="DURATION",
    callback=_check_since,
    help="Only events of the last DURATION: 30m, 1h, 7d, 1h30m.",
)
@click.option(
    "--start", metavar="T", help="Only events from T on (RFC 3339, e.g. 2024-05-01T03:00:00Z)."
)
@click.option("--end", metavar="T", help="Only events before T (RFC 3339).")
@click.option(
    "--format",
    "output",
    type=click.Choice(["table", "json", "csv"]),
    default="table",
    show_default=True,
    help="How to print the records (json: one array of objects).",
)
@json_option
@click.option(
    "--local",
    is_flag=True,
    help="Query .toolkit/events.jsonl here with the same SQL, no service needed.",
)
@common_options
@pass_cli
def logs(
    cli: CliContext,
    query: str,
    stream: str | None,
    since: str | None,
    start: str | None,
    end: str | None,
    output: str,
    local: bool,
    as_json: bool,
) -> None:
    """Ask the run log a question in SQL: what every toolkit run did, request by request.

    Every command records its run in .toolkit/events.jsonl (one event per line: time,
    run_id, command, event, post, action, method, route, status, duration_ms, wait_ms,
    message...); with [logs] base_url set, each run ships its events to that log stream.
    QUERY runs there (POST /api/v1/query, Basic auth from LOGS_USERNAME and LOGS_PASSWORD),
    or with --local over the local log on the same engine (Apache DataFusion); the table
    is named exactly after the stream (quote a name with capitals: FROM "MyStream"; an
    unquoted name is read in lower case). Times are in UTC and filter on p_timestamp (when an event
    was shipped; locally, when it happened), to the minute. A query the service refuses
    exits 1 with its message. --json prints the whole answer as one document (the source,
    the fields, the records), where --format json prints the records only.

    \b
    Example:
      toolkit logs "SELECT status, COUNT(*) AS n FROM toolkit WHERE event = 'request' GROUP BY status"
      toolkit logs --since 1d "SELECT post, message FROM toolkit WHERE event = 'post' AND outcome = 'failed'"
      toolkit logs --local --format csv "SELECT command, outcome, duration_ms FROM toolkit WHERE event = 'run' AND action = 'end'"
      toolkit logs --local --json "SELECT command, COUNT(*) AS runs FROM toolkit WHERE event = 'run' AND action = 'end' GROUP BY command"
    """
    if since is not None and (start is not None or end is not None):
        raise click.UsageError("give either --since or --start/--end, not both")
    result = run_query(
        cli.config, query, stream=stream, since=since, start=start, end=end, local=local
    )
    if as_json and output != "table":
        raise click.UsageError("--json prints the whole answer: leave --format out")
    if as_json:
        from toolkit.commands.results import to_json

        print_json(to_json(result))
        return
    if output == "json":
        click.echo(json.dumps(result.records, indent=2, ensure_ascii=False))
    elif output == "csv":
        _csv(result)
    else:
        print_table(result)
    if not cli.quiet:
        skipped = (
            f"; {result.skipped} line(s) of the log are not events and were left out"
            if result.skipped
            else ""
        )
        stderr.print(
            f"{len(result.records)} record(s) from {result.source}{skipped}",
            markup=False,
            highlight=False,
        )
