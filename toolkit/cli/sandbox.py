"""`toolkit sandbox`: run the local emulator of the remote interfaces in the foreground."""

from __future__ import annotations

from pathlib import Path

import click

from toolkit.cli.context import common_options
from toolkit.commands.sandbox import DEFAULT_DB, RunningSandbox
from toolkit.commands.sandbox import sandbox as start_sandbox
from toolkit.signals import stop_signals


@click.command()
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option(
    "--port",
    default=8787,
    show_default=True,
    type=click.IntRange(0, 65535),
    help="Port to listen on (0: any free port).",
)
@click.option(
    "--db",
    "db_path",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help=f"SQLite file holding the state (default: {DEFAULT_DB}).",
)
@click.option("--memory", is_flag=True, help="Keep the state in memory; gone when it stops.")
@click.option(
    "--rate-window",
    type=click.FloatRange(min=0.001),
    default=30.0,
    show_default=True,
    help="Seconds of the article rate-limit window (10 published creates, 30 updates).",
)
@click.option(
    "--no-seed",
    is_flag=True,
    help="Start a new database with the accounts only: no articles, comments, listings.",
)
@click.option("--allow-remote", is_flag=True, help="Allow a --host that is not a loopback address.")
@click.option(
    "--env-file",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Also write the environment lines to this file (one `export NAME=value` a line; "
    "a shell sources it, toolkit reads it as .env); never over a file it did not write.",
)
@common_options
def sandbox(
    host: str,
    port: int,
    db_path: Path | None,
    memory: bool,
    rate_window: float,
    no_seed: bool,
    allow_remote: bool,
    env_file: Path | None,
) -> None:
    """Run the sandbox: a local emulator of every remote interface (publishing, archive
    tasks, licensing, log stream), with seeded demo accounts, on loopback.

    The publishing API (Forem, dev.to) is under /api, archive tasks under /v2, licensing
    under /appsmarket/v2, the log stream under /api/v1, all on one origin. It prints its
    base URL, then the environment lines that point a project at it, one per interface
    (`export FOREM_BASE_URL=... FOREM_API_KEY=...`: paste them into another shell, or
    write them with --env-file), then serves until Ctrl-C. The keys are the demo
    accounts' (fake keys). The database is seeded with other users' articles and the demo
    account's own; --no-seed starts an empty one (the accounts only), which a blog's
    first `toolkit pull` leaves as it is. The control API for scripts is under
    /__sandbox/ (GET /__sandbox lists it).

    \b
    Example:
      toolkit sandbox                        # state in .toolkit/sandbox.db, port 8787
      toolkit sandbox --memory --no-seed --env-file .env   # a blog's .env pointed at it
      toolkit sandbox --memory --port 0      # throwaway state, any free port
      toolkit sandbox --rate-window 1        # rate limits per second, for quick tests
    """
    if memory and db_path is not None:
        raise click.UsageError("--db and --memory exclude each other")
    path = None if memory else (db_path or DEFAULT_DB)
    # Ctrl-C and SIGTERM are recorded, never raised mid-way (toolkit.signals): one that
    # comes while starting stops the sandbox as soon as it has started, further ones
    # while stopping change nothing. They work even when the parent ignored SIGINT (a
    # background job of a non-interactive shell starts that way).
    with stop_signals() as stop:
        if not stop.requested:
            running = start_sandbox(
                host=host,
                port=port,
                db_path=path,
                rate_window=rate_window,
                seed=not no_seed,
                allow_remote=allow_remote,
            )
            try:
                if env_file is not None:
                    running.write_env_file(env_file)
                _announce(running, env_file)
                stop.wait(lambda: running.running)
            finally:
                running.stop()
        click.echo("Sandbox stopped.")


def _announce(running: RunningSandbox, env_file: Path | None) -> None:
    where = (
        "in memory"
        if running.db_path is None
        else (f"{running.db_path} ({'new' if running.created else 'reopened'})")
    )
    click.echo(f"Sandbox running at {running.base_url}  (state: {where})")
    for line in running.left_out:
        click.echo(line)
    click.echo("Point a project at it (one line per interface; paste them into its shell):")
    for line in running.shell_lines():
        click.echo(f"  {line}")
    if env_file is not None:
        click.echo(f"Written to {env_file} too.")
    others = ", ".join(f"{a['username']} ({a['role']})" for a in running.accounts)
    click.echo(f"Accounts: {others or 'none'}; keys at {running.base_url}/__sandbox/accounts")
    click.echo("Press Ctrl-C to stop.")
