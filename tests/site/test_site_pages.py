"""The built site: every link resolves, and each kind of page shows what it should."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

from tests.support.site_helpers import is_external, parse_page, read

ATOM = "{http://www.w3.org/2005/Atom}"
SITEMAP = "{http://www.sitemaps.org/schemas/sitemap/0.9}"


def build(project, *args):
    result = project.run("build", *args)
    return result, project.root / "site"


@pytest.mark.e2e
def test_every_internal_link_and_asset_resolves_to_a_file(site_project):
    result, out = build(site_project, "--drafts")
    assert result.exit_code == 0, result.output
    pages = sorted(out.rglob("*.html"))
    assert len(pages) > 10
    checked = 0
    for page in pages:
        links = parse_page(page)
        for tag, url in links.urls:
            if is_external(url) or url.startswith("#"):
                continue
            path = unquote(urlsplit(url).path)
            assert not path.startswith("/"), f"{page}: {url} is not relative"
            # The 404 page resolves from the site's root (its <base>), like every page there.
            target = (page.parent / path).resolve()
            if url.endswith("/") or target.is_dir():
                target = target / "index.html"
            assert target.is_file(), f"{page.relative_to(out)}: <{tag}> {url} -> {target}"
            checked += 1
    assert checked > 100


@pytest.mark.e2e
def test_the_theme_loads_nothing_from_outside(site_project):
    _, out = build(site_project)
    for page in out.rglob("*.html"):
        for tag, url in parse_page(page).urls:
            if tag in ("link", "img", "script") and is_external(url):
                # Only the canonical link may be absolute, and it is not loaded.
                assert tag == "link" and url.startswith("https://example.com/blog/"), (page, url)
    for sheet in (out / "static").glob("*.css"):
        assert not re.search(r"url\(|@import|https?://", sheet.read_text(encoding="utf-8"))


@pytest.mark.e2e
def test_index_is_paginated_newest_first_with_undated_posts_last(site_project):
    _, out = build(site_project)
    titles = []
    for page in ("index.html", "page/2/index.html", "page/3/index.html"):
        titles += re.findall(r'<h2><a href="[^"]+">([^<]+)</a></h2>', read(out, page))
    assert titles == ["News", "Usage", "Setup", "Introduction", "Notes without a date"]
    assert not (out / "page" / "4").exists()
    first, second = read(out, "index.html"), read(out, "page/2/index.html")
    assert 'href="./page/2/"' in first and "Newer" not in first
    assert 'href="../../"' in second and 'href="../../page/3/"' in second
    assert "Page 2 of 3" in second


@pytest.mark.e2e
def test_tag_pages_list_their_posts_and_are_paginated(site_project):
    _, out = build(site_project)
    python = read(out, "tags/python/index.html")
    assert "Setup" in python and "Introduction" in python and "News" not in python
    assert "2 posts" in python
    tools = read(out, "tags/tools/index.html")
    assert "Usage" in tools and "Setup" in tools
    tags = read(out, "tags/index.html")
    assert re.findall(r'href="../tags/(\w+)/"', tags) == ["news", "python", "tools"]
    # per_page = 2: three posts under one tag make two pages
    project = site_project
    project.post("more", "More tools", date="2024-01-04", tags=["tools"], published=True)
    build(project)
    assert (out / "tags" / "tools" / "page" / "2" / "index.html").is_file()
    assert "Page 2 of 2" in read(out, "tags/tools/page/2/index.html")


@pytest.mark.e2e
def test_series_navigation(site_project):
    _, out = build(site_project)
    setup = read(out, "setup/index.html")
    assert "Part 2 of 3 in the series <strong>Guide</strong>" in setup
    assert re.search(r'rel="prev" href="\.\./intro/">← Introduction', setup)
    assert re.search(r'rel="next" href="\.\./usage/">Usage →', setup)
    assert '<span aria-current="page">Setup</span>' in setup
    intro = read(out, "intro/index.html")
    assert "Part 1 of 3" in intro and 'rel="prev"' not in intro
    usage = read(out, "usage/index.html")
    assert "Part 3 of 3" in usage and 'rel="next"' not in usage


@pytest.mark.e2e
def test_post_page_has_absolute_canonical_and_open_graph(site_project):
    site_project.post(
        "elsewhere",
        "Cross-posted",
        date="2024-01-05",
        published=True,
        canonical_url="https://blog.example.org/original",
        description="Copied.",
    )
    _, out = build(site_project)
    intro = parse_page(out / "intro" / "index.html")
    assert intro.canonical == "https://example.com/blog/intro/"
    assert intro.meta["og:url"] == ["https://example.com/blog/intro/"]
    assert intro.meta["og:type"] == ["article"]
    assert intro.meta["og:title"] == ["Introduction"]
    assert intro.meta["og:image"] == ["https://example.com/blog/guide/img/shot.png"]
    assert intro.meta["article:published_time"] == ["2024-01-01T00:00:00+00:00"]
    assert intro.meta["og:description"] == ["First part, see the setup."]
    crossed = parse_page(out / "elsewhere" / "index.html")
    assert crossed.canonical == "https://blog.example.org/original"
    assert crossed.meta["og:description"] == ["Copied."]
    home = parse_page(out / "index.html")
    assert home.canonical == "https://example.com/blog/"
    assert home.meta["og:type"] == ["website"]


@pytest.mark.e2e
def test_canonical_url_matches_what_the_api_is_sent(site_project):
    from toolkit.config import load_config
    from toolkit.content import load_posts
    from toolkit.content.hosting import canonical_url

    _, out = build(site_project)
    config = load_config(site_project.root / "toolkit.toml")
    posts, _ = load_posts(config)
    for post in posts:
        page = out / post.slug / "index.html"
        if page.is_file():
            assert parse_page(page).canonical == canonical_url(post, config.site.url)


@pytest.mark.e2e
def test_post_body_markdown_features(site_project):
    _, out = build(site_project)
    intro = read(out, "intro/index.html")
    assert '<img src="../guide/img/shot.png" alt="A shot"' in intro
    assert '<img src="../logo.png" alt="Logo"' in intro
    assert '<img class="cover" src="../guide/img/shot.png"' in intro
    assert '<a href="../setup/#install">the setup</a>' in intro
    assert (
        '<h2 id="details">Details <a class="header-anchor" href="#details" aria-label="Link to this section">#</a></h2>'
        in intro
    )
    assert (
        '<pre class="highlight" tabindex="0"><code class="language-python"><span class="nb">print</span>'
        in intro
    )
    assert 'class="footnote-ref"' in intro and "The note." in intro
    setup = read(out, "setup/index.html")
    assert "<table>" in setup and "<s>2</s>" in setup
    assert '<a href="../intro/">intro</a>' in setup
    assert "1 min read" in setup
    assert (out / "guide" / "img" / "shot.png").is_file() and (out / "logo.png").is_file()


@pytest.mark.e2e
def test_reading_time_is_words_over_275(project):
    project.post("long", "Long read", published=True, body="word " * 551)
    build(project)
    assert "3 min read" in read(project.root / "site", "long/index.html")


@pytest.mark.e2e
def test_atom_feed(site_project):
    _, out = build(site_project)
    feed = ET.parse(out / "feed.xml").getroot()
    assert feed.tag == f"{ATOM}feed"
    assert feed.findtext(f"{ATOM}id") == "https://example.com/blog/"
    assert feed.findtext(f"{ATOM}updated") == "2024-02-01T00:00:00+00:00"
    self_link = [link for link in feed.findall(f"{ATOM}link") if link.get("rel") == "self"]
    assert self_link[0].get("href") == "https://example.com/blog/feed.xml"
    entries = feed.findall(f"{ATOM}entry")
    assert [e.findtext(f"{ATOM}title") for e in entries] == [
        "News",
        "Usage",
        "Setup",
        "Introduction",
        "Notes without a date",
    ]
    usage = entries[1]
    assert usage.findtext(f"{ATOM}id") == "https://example.com/blog/usage/"
    link = usage.find(f"{ATOM}link")
    assert link is not None and link.get("href") == "https://example.com/blog/usage/"
    assert usage.findtext(f"{ATOM}summary") == "How to use it."
    assert usage.findtext(f"{ATOM}published") == "2024-01-03T00:00:00+00:00"
    assert [c.get("term") for c in usage.findall(f"{ATOM}category")] == ["tools"]
    for entry in entries:
        assert entry.findtext(f"{ATOM}updated")


@pytest.mark.e2e
def test_sitemap(site_project):
    _, out = build(site_project, "--drafts")
    urls = {
        url.findtext(f"{SITEMAP}loc", ""): getattr(url.find(f"{SITEMAP}lastmod"), "text", None)
        for url in ET.parse(out / "sitemap.xml").getroot()
    }
    base = "https://example.com/blog/"
    assert urls[base] is None
    assert urls[base + "intro/"] == "2024-01-01T00:00:00+00:00"
    assert base + "notes/" in urls and base + "tags/python/" in urls and base + "tags/" in urls
    assert base + "draft/" not in urls  # drafts are previews, never announced
    assert base + "paid/" not in urls
    assert all(loc.startswith(base) for loc in urls)


@pytest.mark.e2e
def test_not_found_page(site_project):
    _, out = build(site_project)
    page = parse_page(out / "404.html")
    # The path of the site's root, not its URL: the page takes its styles and links from
    # whatever host shows it (the production site, `toolkit serve`, the watch preview).
    assert page.base == "/blog/"
    assert page.meta["robots"] == ["noindex"]
    assert ("link", "./static/style.css") in page.urls


@pytest.mark.e2e
def test_site_without_url_still_builds_with_relative_links(make_project):
    project = make_project('[site]\ntitle = "No URL"\n')
    project.post("hello", "Hello", published=True, date="2024-01-01")
    result, out = build(project)
    assert result.exit_code == 0, result.output
    hello = parse_page(out / "hello" / "index.html")
    assert hello.canonical is None and "og:url" not in hello.meta
    feed = ET.parse(out / "feed.xml").getroot()
    link = feed.find(f"{ATOM}entry/{ATOM}link")
    assert link is not None and link.get("href") == "hello/"
    assert parse_page(out / "404.html").base == "/"


@pytest.mark.e2e
def test_empty_site(project):
    result, out = build(project)
    assert result.exit_code == 0, result.output
    assert "No posts yet." in read(out, "index.html")
    assert ET.parse(out / "feed.xml").getroot().find(f"{ATOM}entry") is None


@pytest.mark.e2e
def test_theme_works_without_a_templates_folder_and_can_be_overridden(site_project):
    result, out = build(site_project)
    assert result.exit_code == 0
    assert not (site_project.root / "templates").exists()
    site_project.write("templates/partials/footer.html", "<footer>My own footer</footer>\n")
    site_project.write("templates/static/extra.css", "body { color: red; }\n")
    site_project.write("templates/static/style.css", "/* mine */\n")
    build(site_project)
    assert "My own footer" in read(out, "intro/index.html")
    assert read(out, "static/extra.css") == "body { color: red; }\n"
    assert read(out, "static/style.css") == "/* mine */\n"
    assert (out / "static" / "favicon.svg").is_file()  # the theme's, not overridden


def test_theme_files_ship_with_the_package():
    from toolkit.site.theme_files import PAGE_TEMPLATES, THEME_DIR, static_table

    for name in PAGE_TEMPLATES:
        assert (THEME_DIR / name).is_file(), name
    assert {"style.css", "favicon.svg"} <= set(static_table(Path("/nonexistent")))
