"""`toolkit mcp`: the MCP server (stdio or HTTP), and the clients of its HTTP transport."""

from __future__ import annotations

from pathlib import Path

import click
from rich.markup import escape

from toolkit import signals
from toolkit.cli.context import CliContext, common_options, json_option, pass_cli, print_json
from toolkit.cli.output import stderr, stdout
from toolkit.mcp import scopes as scope_names
from toolkit.mcp.service import (
    McpClient,
    http_server,
    mcp_clients,
    revoke_client,
    stdio_server,
)
from toolkit.mcp.service import add_client as create

SCOPE = click.Choice(scope_names.ALL)


@click.group(invoke_without_command=True)
@click.option(
    "--transport",
    type=click.Choice(["stdio", "http"]),
    default="stdio",
    show_default=True,
    help="stdio: for an assistant that starts the server itself; "
    "http: Streamable HTTP at /mcp behind OAuth 2.1.",
)
@click.option(
    "--host",
    default=None,
    metavar="H",
    help="Address the HTTP transport listens on (default: [mcp] host, 127.0.0.1); "
    "anything but loopback needs TLS.",
)
@click.option(
    "--port",
    type=click.IntRange(0, 65535),
    default=None,
    metavar="P",
    help="Port of the HTTP transport (default: [mcp] port, 8765; 0: any free port).",
)
@click.option(
    "--tls-cert",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="TLS certificate (PEM) for the HTTP transport (default: [mcp] tls_cert).",
)
@click.option(
    "--tls-key",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Private key (PEM) of --tls-cert (default: [mcp] tls_key).",
)
@click.option(
    "--scope",
    "scopes",
    type=SCOPE,
    multiple=True,
    help="stdio only: a scope the session holds (repeat it; default: read, "
    "draft-write, logs; publish only when named). Over HTTP the writer grants "
    "scopes on the authorization screen.",
)
@common_options
@click.pass_context
def mcp(
    ctx: click.Context,
    transport: str,
    host: str | None,
    port: int | None,
    tls_cert: Path | None,
    tls_key: Path | None,
    scopes: tuple[str, ...],
) -> None:
    """Serve the toolkit to AI assistants over the Model Context Protocol: list, read and
    check posts, plan a publish, push drafts, read mirrored comments, build the site.

    Over stdio (the default) the assistant starts `toolkit mcp` itself and the server takes
    FOREM_API_KEY and the rest from its environment, as every command does. Over HTTP the
    server is its own OAuth 2.1 authorization server: an assistant registers, the writer
    approves it in the browser by typing TOOLKIT_MCP_OPERATOR_SECRET, and it gets tokens
    for the scopes ticked there. Clients and tokens live in .toolkit/mcp.db (hashed);
    `toolkit mcp clients` lists them, `toolkit mcp revoke ID` cuts one off. Ctrl-C stops.

    \b
    Example:
      toolkit mcp                                  # stdio, for an assistant's config
      toolkit mcp --scope read                     # stdio, read-only
      TOOLKIT_MCP_OPERATOR_SECRET=... toolkit mcp --transport http --port 8765
      toolkit mcp clients
      toolkit mcp revoke toolkit-0123456789abcdef
    """
    if ctx.invoked_subcommand is not None:
        signals.hand_back()  # a management command: Ctrl-C interrupts it as usual
        return
    cli = ctx.ensure_object(CliContext)
    if transport == "stdio":
        if host is not None or port is not None or tls_cert or tls_key:
            raise click.UsageError(
                "--host, --port, --tls-cert and --tls-key are for --transport http"
            )
        _serve_stdio(cli, scopes or scope_names.DEFAULT)
    else:
        if scopes:
            raise click.UsageError(
                "--scope is for stdio; over HTTP the writer grants scopes "
                "on the authorization screen"
            )
        _serve_http(cli, host, port, tls_cert, tls_key)


def _serve_stdio(cli: CliContext, scopes: tuple[str, ...]) -> None:
    session = stdio_server(cli.config, scopes=scopes)
    # stdout is the protocol's: everything said here goes to stderr. Ctrl-C and SIGTERM
    # are recorded (toolkit.signals) and end the session where it waits.
    with signals.stop_signals() as stop:
        if not stop.requested:
            if not cli.quiet:
                stderr.print(
                    f"toolkit MCP server on stdio, scopes: {' '.join(session.scopes)}", markup=False
                )
            session.serve(lambda: stop.requested)


def _serve_http(
    cli: CliContext, host: str | None, port: int | None, tls_cert: Path | None, tls_key: Path | None
) -> None:
    with signals.stop_signals() as stop:
        if not stop.requested:
            running = http_server(
                cli.config,
                host=host,
                port=port,
                tls_cert=tls_cert,
                tls_key=tls_key,
                # The screen's one-time code: shown even with --quiet (it is how the
                # writer gets in once too many wrong secrets were tried).
                announce=lambda line: click.echo(line, err=True),
            )
            try:
                click.echo(
                    f"MCP server at {running.url}  (authorization server "
                    f"{running.issuer_url}; clients in .toolkit/mcp.db)"
                )
                if running.local_url != running.url:
                    click.echo(f"Listening at {running.local_url}")
                click.echo("Press Ctrl-C to stop.")
                stop.wait(lambda: running.running)
            finally:
                running.stop()
        click.echo("MCP server stopped.")


# -- the clients of the HTTP transport ------------------------------------------------------


def _show(client: McpClient) -> str:
    state = (
        "revoked"
        if client.revoked
        else (f"granted {' '.join(client.granted)}" if client.granted else "no live token")
    )
    uris = ", ".join(client.redirect_uris) or "client_credentials"
    return (
        f"{client.client_id}  {client.name}  [{client.origin}]  scopes "
        f"{' '.join(client.scopes) or '-'}; {state}; created {client.created_at}; {uris}"
    )


@mcp.command()
@click.option("--all", "show_all", is_flag=True, help="Revoked clients too.")
@json_option
@common_options
@pass_cli
def clients(cli: CliContext, show_all: bool, as_json: bool) -> None:
    """List the clients of the HTTP transport: id, name, who registered it, its scopes,
    what its live tokens hold.

    \b
    Example:
      toolkit mcp clients --all
    """
    found = mcp_clients(cli.config, include_revoked=show_all)
    if as_json:
        from toolkit.commands.results import to_json

        print_json(to_json(found))
        return
    for client in found:
        stdout.print(_show(client), markup=False, highlight=False)
    if not cli.quiet:
        stderr.print(f"{len(found)} client{'s' if len(found) != 1 else ''}", markup=False)


@mcp.command()
@click.argument("client_id")
@json_option
@common_options
@pass_cli
def revoke(cli: CliContext, client_id: str, as_json: bool) -> None:
    """Revoke a client: every token it holds stops working at once (a running server
    included), and it cannot be authorized again.

    \b
    Example:
      toolkit mcp revoke toolkit-0123456789abcdef
    """
    client = revoke_client(cli.config, client_id)
    if as_json:
        from toolkit.commands.results import to_json

        print_json(to_json(client))
        return
    stdout.print(f"revoked {escape(client.client_id)} ({escape(client.name)})", highlight=False)


@mcp.command("add-client")
@click.argument("name")
@click.option(
    "--scope",
    "scopes",
    type=SCOPE,
    multiple=True,
    help="A scope it may ask for (repeat it; default: read).",
)
@json_option
@common_options
@pass_cli
def add_client(cli: CliContext, name: str, scopes: tuple[str, ...], as_json: bool) -> None:
    """Create a confidential client for the client_credentials grant: a script or CI job
    acting for itself, with no writer at a browser to approve it. Prints its id and secret;
    the secret is shown this once (only its hash is kept).

    \b
    Example:
      toolkit mcp add-client "nightly check" --scope read
    """
    created = create(cli.config, name, scopes or (scope_names.READ,))
    if as_json:
        from toolkit.commands.results import to_json

        print_json({**to_json(created.client), "client_secret": created.client_secret})
    else:
        click.echo(f"client_id: {created.client.client_id}")
        click.echo(f"client_secret: {created.client_secret}")
    if not cli.quiet:
        stderr.print("Keep the secret somewhere safe: it is not shown again.", markup=False)
