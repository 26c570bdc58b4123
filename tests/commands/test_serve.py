"""`toolkit serve`: the built site on a local server, as a static host serves it; and the
demo site, crawled through it: every link a reader can follow leads to a page."""

from __future__ import annotations

import re
import signal
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import urljoin, urlsplit

import httpx
import pytest

from tests.support.running_cli import RunningCli, start_toolkit
from tests.support.xdist_groups import WAITING
from toolkit.commands.serve import serve
from toolkit.config import load_config
from toolkit.tls import shared_context

pytestmark = WAITING

REPOSITORY = Path(__file__).resolve().parents[2]


class Links(HTMLParser):
    """The URLs a page makes the browser load or lets a reader follow, and its <base>."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.base: str | None = None
        self.urls: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attributes = dict(attrs)
        if tag == "base":
            self.base = attributes.get("href")
        elif tag in ("a", "link") and attributes.get("href"):
            if attributes.get("rel") != "canonical":  # the production address, by design
                self.urls.append(attributes["href"] or "")
        elif tag in ("img", "script") and attributes.get("src"):
            self.urls.append(attributes["src"] or "")


def links_of(page_url: str, html: str) -> list[str]:
    parser = Links()
    parser.feed(html)
    base = urljoin(page_url, parser.base) if parser.base else page_url
    return [urljoin(base, url).split("#", 1)[0] for url in parser.urls]


@pytest.fixture(scope="module")
def demo_site(demo_run) -> Iterator[tuple[str, Path]]:
    """The demo (`make demo`) of a copy of this repository (the session's, in
    tests/conftest.py), served by `toolkit serve`."""
    assert demo_run.exit_code == 0, demo_run.output
    root = demo_run.project.root
    config = load_config(root / "toolkit.toml")
    running = serve(config, port=0, folder=demo_run.workdir / "site")
    try:
        yield running.url, root
    finally:
        running.stop()


def test_every_link_of_the_demo_site_leads_to_a_page(demo_site):
    """A crawl from the home page and from a missing address (the 404 page): every link
    and asset on the site's own origin answers 200, a folder link with its index page."""
    start, _ = demo_site
    origin = urlsplit(start).netloc
    seen: set[str] = set()
    queue = [start, start + "no/such/page/"]
    pages = 0
    with httpx.Client(timeout=10, verify=shared_context()) as client:
        while queue:
            url = queue.pop()
            if url in seen:
                continue
            seen.add(url)
            response = client.get(url)
            if url.endswith("no/such/page/"):
                assert response.status_code == 404 and "Page not found" in response.text
            else:
                assert response.status_code == 200, f"{url}: {response.status_code}"
            if not response.headers["content-type"].startswith("text/html"):
                continue
            pages += 1
            assert "Index of" not in response.text  # never a folder listing
            for link in links_of(url, response.text):
                if urlsplit(link).netloc == origin and link not in seen:
                    queue.append(link)
    assert pages > 30  # the guide, the pulled posts, tags, pages, reading list, search, 404


def test_clean_urls_the_real_404_and_the_sites_root_path(demo_site):
    start, _ = demo_site
    with httpx.Client(base_url=start.rstrip("/"), timeout=10, verify=shared_context()) as client:
        assert client.get("/getting-started/").status_code == 200
        moved = client.get("/getting-started")
        assert moved.status_code == 301 and moved.headers["location"] == "./getting-started/"
        assert client.get("/getting-started", follow_redirects=True).url.path == "/getting-started/"
        assert (
            client.get("/toolkit/getting-started", follow_redirects=True).url.path
            == "/toolkit/getting-started/"
        )
        missing = client.get("/getting-started/nope/deeper/")
        assert missing.status_code == 404 and "Page not found" in missing.text
        # The 404 page's base is the path of [site] url (/toolkit/): the server answers
        # there too, so its styles load locally as they do in production.
        assert '<base href="/toolkit/">' in missing.text
        page = f"{start}getting-started/nope/deeper/"
        assert all(
            urlsplit(link).netloc == urlsplit(start).netloc for link in links_of(page, missing.text)
        ), "the 404 page leads elsewhere"
        style = client.get("/toolkit/static/style.css")
        assert style.status_code == 200 and style.content == client.get("/static/style.css").content
        assert client.get("/toolkit/getting-started/").status_code == 200
        assert client.head("/").status_code == 200


@pytest.mark.e2e
def test_a_folder_redirect_stays_on_the_site_and_keeps_its_name(tmp_path):
    """`//name` must not become a link to the host `name`, nor `/a%3Fb` lose `b` to the
    query: the redirect to the folder's slash is relative, its name quoted."""
    from toolkit.serving import BackgroundServer
    from toolkit.serving.static import create_site_app

    for name in ("tags", "a?b", "x:y"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "index.html").write_text(f"<p>{name}</p>", encoding="utf-8")
    with (
        BackgroundServer(create_site_app(tmp_path)) as server,
        httpx.Client(timeout=10, verify=shared_context()) as client,
    ):
        origin = server.base_url
        for asked, name in (("//tags", "tags"), ("/a%3Fb", "a?b"), ("/x:y", "x:y")):
            moved = client.get(origin + asked)
            assert moved.status_code == 301, asked
            target = urljoin(origin + asked, moved.headers["location"])
            assert urlsplit(target).netloc == urlsplit(origin).netloc, (asked, target)
            landed = client.get(target)
            assert landed.status_code == 200 and f"<p>{name}</p>" in landed.text, asked


def test_serve_refuses_a_folder_with_no_built_site(project):
    result = project.run("serve", "--port", "0")
    assert result.exit_code == 1
    assert "site/ holds no built site (no index.html); run `toolkit build` first" in result.output


@pytest.mark.e2e
def test_serve_runs_until_ctrl_c(project):
    project.post("hello", "Hello", published=True, date="2024-01-01")
    assert project.run("build").exit_code == 0
    process = start_toolkit(project, "serve", "--port", "0", merged=True)
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        found = re.search(r"Serving site/ at (http://127\.0\.0\.1:\d+/) \(Ctrl-C to stop\)", line)
        assert found, line
        assert "Hello" in httpx.get(found.group(1) + "hello/", verify=shared_context()).text
        process.send_signal(signal.SIGINT)
        assert process.wait(timeout=10) == 0
    finally:
        if process.poll() is None:
            process.kill()
        process.wait()
        if process.stdout is not None:
            process.stdout.close()


@pytest.mark.e2e
def test_serve_on_a_host_that_is_not_loopback_says_it_exposes_the_site(project):
    project.post("hello", "Hello", published=True, date="2024-01-01")
    assert project.run("build").exit_code == 0
    with RunningCli("serve", "--host", "0.0.0.0", "--port", "0", cwd=project.root) as running:
        served = running.until(lambda: running.stdout[0] if running.stdout else None)
        found = re.search(r"Serving site/ at (http://\S+:(\d+)/) ", served)
        assert found
        warning = running.until(lambda: running.stderr[0] if running.stderr else None)
        assert warning == (
            "Warning: 0.0.0.0 is not a loopback address: the site is exposed to every "
            f"machine that can reach this one on port {found.group(2)}"
        )
        assert "Hello" in httpx.get(found.group(1) + "hello/", verify=shared_context()).text
    assert running.code == 0
