"""`serve`: the built site on a local web server, as a static host would serve it."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from toolkit.config import Config
from toolkit.errors import ServeError
from toolkit.serving import BackgroundServer, is_loopback


@dataclass
class RunningSite:
    """A started server of a built site. `stop()` ends it."""

    server: BackgroundServer
    folder: Path
    host: str = "127.0.0.1"

    @property
    def exposed(self) -> bool:
        """Listening on an address other machines can reach (not loopback)."""
        return not is_loopback(self.host)

    @property
    def url(self) -> str:
        return self.server.base_url + "/"

    @property
    def running(self) -> bool:
        return self.server.running

    def stop(self) -> None:
        self.server.stop()


def serve(
    config: Config, *, host: str = "127.0.0.1", port: int = 8000, folder: str | Path | None = None
) -> RunningSite:
    """Serve the built site in `folder` (default: `[site] output_dir`) on `host:port`
    (port 0: any free port) with clean URLs and the site's 404 page; a host that is not
    loopback exposes the site to the network (`RunningSite.exposed`). Raises `ServeError`
    when there is no built site there or the port is taken."""
    from toolkit.site.serve import create_site_app, root_path_of

    if not host.strip():
        raise ServeError("the host to serve the site on is empty")
    site = Path(folder).resolve() if folder is not None else config.site.output_dir
    if not (site / "index.html").is_file():
        shown = config.relative(site)
        raise ServeError(f"{shown}/ holds no built site (no index.html); run `toolkit build` first")
    app = create_site_app(site, root_path=root_path_of(config.site.url))
    server = BackgroundServer(app, host, port, name="site server").start()
    return RunningSite(server, site, host)
