"""Serving a built site locally, the way a static host serves it: `toolkit serve`
(`start_site`, a `RunningSite` to stop), and the watch preview on top of it
(`toolkit.watch.preview`).

- Clean URLs: `/post/` is `post/index.html`; `/post` redirects to `/post/`, so the
  page's relative links resolve as they will in production.
- A missing page gets the site's own 404 page, with status 404.
- The site answers at `/` and also under the path of its root on its real host (the
  path of `[site] url`, e.g. `/blog/`): the 404 page, shown at any depth, takes its styles
  and links from that path (its `<base>`), and they resolve here too.
- Nothing outside the output folder is ever served: a path whose file, or a symlink on
  the way, leads outside is a 404; a malformed path (NUL, other control characters,
  backslashes, overlong) is a 400.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote, urlsplit

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import (
    FileResponse,
    HTMLResponse,
    PlainTextResponse,
    RedirectResponse,
    Response,
)
from starlette.routing import BaseRoute, Route

from toolkit.serving import BackgroundServer, is_loopback

# No page of a built site has a control character or a backslash in its path, nor a path
# this long: such a request is malformed (400), whatever the file system would say.
_MALFORMED = re.compile(r"[\x00-\x1f\x7f\\]")
MAX_PATH = 1024
NO_STORE = {"Cache-Control": "no-store"}  # a local server: always the latest build

HtmlHook = Callable[[str], str]  # every HTML page on its way out (the preview's script)
PageHook = Callable[[], str | None]  # an HTML page to show instead, or None
# Folders of the site made only when asked for: the top folder's name, and what makes it
# (run in a worker thread, before the file is looked up).
OnDemand = Mapping[str, Callable[[], None]]


class BadPath(ValueError):
    """A URL path that no file of the site can have."""


def _inside(root: Path, path: Path) -> Path | None:
    """`path` with every symlink resolved, if that is inside `root` (and exists)."""
    resolved = path.resolve()
    return resolved if resolved == root or root in resolved.parents else None


def resolve(root: Path, url_path: str) -> Path | None:
    """The regular file a URL path names inside `root` (a folder's `index.html`), or None
    when there is none, or when it or any symlink on the way leads outside `root`.
    Raises `BadPath` for a path with a NUL, another control character or a backslash,
    or longer than `MAX_PATH`."""
    return lookup(root, url_path)[0]


def lookup(root: Path, url_path: str) -> tuple[Path | None, bool]:
    """`resolve`, and whether the path named a folder (the file is its `index.html`)."""
    if len(url_path) > MAX_PATH or _MALFORMED.search(url_path):
        raise BadPath(url_path[:80])
    try:
        candidate = _inside(root, root / url_path.lstrip("/"))
        folder = candidate is not None and candidate.is_dir()
        if candidate is not None and folder:
            candidate = _inside(root, candidate / "index.html")
        return (candidate if candidate is not None and candidate.is_file() else None), folder
    except (OSError, ValueError, RuntimeError):  # a name too long, a loop of symlinks, ...
        return None, False


def read_html(path: Path) -> str | None:
    """A page's text; bytes that are not UTF-8 are replaced rather than failing the page."""
    try:
        return path.read_bytes().decode("utf-8", errors="replace")
    except OSError:
        return None


def root_path_of(site_url: str | None) -> str:
    """The path of the site's root on its host: `/blog/` for https://example.com/blog."""
    return (urlsplit(site_url).path.rstrip("/") if site_url else "") + "/"


def create_site_app(
    output_dir: Path,
    *,
    root_path: str = "/",
    html: HtmlHook | None = None,
    instead_of_pages: PageHook | None = None,
    instead_of_not_found: PageHook | None = None,
    on_demand: OnDemand | None = None,
    routes: Sequence[BaseRoute] = (),
) -> Starlette:
    """The app serving `output_dir`. `html` rewrites every HTML page sent;
    `instead_of_pages` (when it returns a page) answers every request for a page with it,
    status 500; `instead_of_not_found` (when it returns a page) answers a missing page
    with it instead of the site's 404 page; `on_demand` makes a folder when a file of it is
    asked for; `routes` come before the site's files."""
    root = output_dir.resolve()
    alias = root_path if root_path != "/" else ""

    def page_response(text: str, status: int = 200) -> Response:
        return HTMLResponse(html(text) if html else text, status_code=status, headers=NO_STORE)

    def not_found() -> Response:
        if instead_of_not_found is not None and (text := instead_of_not_found()) is not None:
            return page_response(text, 404)
        page = resolve(root, "/404.html")
        text = read_html(page) if page is not None else None
        if text is None:
            return PlainTextResponse("not found", status_code=404)
        return page_response(text, 404)

    def under_alias(path: str) -> str | None:
        """`path` as it is under the site's root path (`/blog/x` -> `/x`), or None."""
        return "/" + path[len(alias) :] if alias and (path + "/").startswith(alias) else None

    async def make_on_demand(raw: str) -> None:
        folder = (under_alias(raw) or raw).lstrip("/").partition("/")[0]
        if on_demand and folder in on_demand:
            await run_in_threadpool(on_demand[folder])

    def find(path: str) -> tuple[Path | None, bool]:
        """`lookup` of `path`, also under the site's root path."""
        found, folder = lookup(root, path)
        if found is None and (aliased := under_alias(path)) is not None:
            found, folder = lookup(root, aliased)
        return found, folder

    async def page(request: Request) -> Response:
        # The decoded path as the server received it: `request.url.path` goes through
        # urlsplit, which silently drops newlines and tabs.
        raw: str = request.scope["path"]
        if on_demand:
            await make_on_demand(raw)
        try:
            found, folder = find(raw)
        except BadPath:
            return PlainTextResponse("bad request", status_code=400)
        is_page = found is None or found.suffix == ".html"
        if is_page and instead_of_pages is not None and (text := instead_of_pages()) is not None:
            return page_response(text, 500)
        if found is None:
            return not_found()
        if folder and not raw.endswith("/"):
            # `/post` -> `/post/`: the page's relative links need the slash. The target is
            # relative (`./post/`), its name quoted: a path like `//host` or `/a%3Fb` can
            # neither lead to another host nor lose part of itself to the query.
            query = request.scope.get("query_string", b"").decode("latin-1")
            target = "./" + quote(raw.rpartition("/")[2], safe="") + "/"
            return RedirectResponse(
                target + (f"?{query}" if query else ""), status_code=301, headers=NO_STORE
            )
        if found.suffix == ".html":
            text = read_html(found)
            if text is None:  # removed or replaced by a rebuild since
                return not_found()
            return page_response(text)
        return FileResponse(found, headers=NO_STORE)

    return Starlette(
        routes=[
            *routes,
            Route("/{path:path}", page, methods=["GET", "HEAD"]),
        ]
    )


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


def start_site(folder: Path, host: str, port: int, *, root_path: str = "/") -> RunningSite:
    """`create_site_app(folder)` served on `host:port` (port 0: any free port) until
    stopped. Raises `ServeError` when the port is taken."""
    app = create_site_app(folder, root_path=root_path)
    return RunningSite(BackgroundServer(app, host, port, name="site server").start(), folder, host)
