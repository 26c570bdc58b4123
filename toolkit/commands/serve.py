"""`serve`: the built site on a local web server, as a static host would serve it."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from toolkit.config import Config
from toolkit.errors import ServeError
from toolkit.serving.static import root_path_of, start_site

if TYPE_CHECKING:  # pragma: no cover
    from toolkit.serving.static import RunningSite


def serve(
    config: Config, *, host: str = "127.0.0.1", port: int = 8000, folder: str | Path | None = None
) -> RunningSite:
    """Serve the built site in `folder` (default: `[site] output_dir`) on `host:port`
    (port 0: any free port) with clean URLs and the site's 404 page; a host that is not
    loopback exposes the site to the network (`RunningSite.exposed`). Raises `ServeError`
    when there is no built site there or the port is taken."""

    if not host.strip():
        raise ServeError("the host to serve the site on is empty")
    site = Path(folder).resolve() if folder is not None else config.site.output_dir
    if not (site / "index.html").is_file():
        shown = config.relative(site)
        raise ServeError(f"{shown}/ holds no built site (no index.html); run `toolkit build` first")
    return start_site(site, host, port, root_path=root_path_of(config.site.url))
