"""`toolkit serve`: the built site on a local web server, in the foreground."""

from __future__ import annotations

import click

from toolkit.cli.context import CliContext, common_options, pass_cli
from toolkit.signals import stop_signals


@click.command()
@click.option(
    "--host",
    default="127.0.0.1",
    show_default=True,
    help="Address to listen on; anything but a loopback address (0.0.0.0, a LAN "
    "address) exposes the site to the network.",
)
@click.option(
    "--port",
    default=8000,
    show_default=True,
    type=click.IntRange(0, 65535),
    help="Port to listen on (0: any free port).",
)
@click.option(
    "--dir",
    "folder",
    type=click.Path(file_okay=False),
    default=None,
    help="The built site to serve (default: [site] output_dir, `site/`).",
)
@common_options
@pass_cli
def serve(cli: CliContext, host: str, port: int, folder: str | None) -> None:
    """Serve the built site on http://127.0.0.1 to look at it in a browser.

    Only this machine can reach it, unless --host names an address others can reach (to
    look at it from a phone on the same network): then it says so. Serves it as a static
    host does: clean URLs (`/post/` is post/index.html, `/post`
    redirects there), and the site's own 404 page for a missing address. It serves the
    site as built: run `toolkit build` first (`make serve` does both), or use
    `toolkit watch` to rebuild on every save. Ctrl-C stops it.

    When [source] names another generator (Hugo, Jekyll...), the site is that generator's
    unless [site] enabled = true: this says so in one line and exits 0.

    \b
    Example:
      toolkit serve                               # site/ at http://127.0.0.1:8000/
      toolkit serve --port 8001 --dir .toolkit/demo/site
      toolkit serve --host 0.0.0.0                # reachable from the local network
    """
    from toolkit.commands.serve import serve as serve_site
    from toolkit.site.enabled import left_to_generator, site_enabled

    config = cli.config
    if not site_enabled(config):
        if not cli.quiet:
            click.echo(left_to_generator(config), err=True)
        return
    with stop_signals() as stop:
        if not stop.requested:
            running = serve_site(config, host=host, port=port, folder=folder)
            try:
                if not cli.quiet:
                    click.echo(
                        f"Serving {config.relative(running.folder)}/ at {running.url} "
                        "(Ctrl-C to stop)"
                    )
                if running.exposed:  # said even with -q: the site is open to others
                    click.echo(
                        f"Warning: {host} is not a loopback address: the site is exposed to "
                        f"every machine that can reach this one on port "
                        f"{running.server.port}",
                        err=True,
                    )
                stop.wait(lambda: running.running)
            finally:
                running.stop()
        if not cli.quiet:
            click.echo("stopped")
