"""The demo site and the watch preview in Chromium.

The site at phone and desktop widths: no horizontal scrolling, no serious or critical
axe-core violation in either theme, nothing loaded from elsewhere, light pages, and the
reader features working (copy, theme toggle, search, contents, the 404 page). The watch
preview is in test_in_browser_preview.py.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

import pytest

WIDTHS = (390, 1280)
SERIOUS = ("serious", "critical")
# Rules about what a reader meets beyond colours and names: kept at any impact.
ALWAYS = (
    "heading-order",
    "page-has-heading-one",
    "landmark-one-main",
    "region",
    "scrollable-region-focusable",
)
BUDGET = 30 * 1024  # bytes of CSS and JavaScript a post may load before search is used
MIN_GAP = 16  # px between the content and the header above it, the footer below it
# The space between the header and the first thing in <main>, and between the last thing
# in <main> and the footer (their boxes, margins left out).
GAPS = """() => {
    const main = document.querySelector('main');
    const first = main.firstElementChild, last = main.lastElementChild;
    return [first.getBoundingClientRect().top
              - document.querySelector('.site-header').getBoundingClientRect().bottom,
            document.querySelector('.site-footer').getBoundingClientRect().top
              - last.getBoundingClientRect().bottom];
}"""


@pytest.fixture(scope="module")
def axe() -> Any:
    from axe_playwright_python.sync_playwright import Axe

    return Axe()


# The rules whose outcome a theme can change, on the same DOM at the same width: those
# that read colours. A theme sets colours (custom properties, `color-scheme`; style.css)
# and, in code blocks, Pygments' colours with the weight, slant or underline of some
# tokens (theme_files.py); only the toggle's aria-pressed follows it in the DOM ("true"
# or "false", both valid). Of axe-core's enabled rules (axe_playwright_python's
# axe.min.js, 4.12), those reading colours are color-contrast (whose large-text limit
# also reads the weight) and link-in-text-block. The weight of code can widen a code
# block, which scrollable-region-focusable would see, but every code block takes the
# focus (tabindex="0"), so it passes at any width; p-as-heading reads the weight of <p>,
# never of code. axe also reads row colours to tell a data table, but only for a table
# with no header cell, and every table of a post has them (<thead>, <th>).
COLOUR_RULES = ("color-contrast", "link-in-text-block")


# What the tests read of axe-core's results, taken in the page: each rule's id, impact
# and first nodes' selectors, by outcome. The whole results (every rule's description,
# help and tags, each node's HTML) are many times larger to send back and to parse.
OUTCOMES_READ = """results => Object.fromEntries(
    ["violations", "passes", "incomplete", "inapplicable"].map(kind => [kind, results[kind].map(
        rule => ({id: rule.id, impact: rule.impact,
                  nodes: rule.nodes.slice(0, 3).map(node => ({target: node.target}))}))]))"""


def run_axe(axe: Any, page: Any, rules: tuple[str, ...] | None = None) -> dict[str, Any]:
    """axe-core's results on `page`, of every rule or of `rules` alone. axe-core is put
    into the page once (`axe.run` would put it in again each time), unless `with_axe` put
    it into every page already."""
    if not page.evaluate("typeof window.axe === 'object'"):
        page.evaluate(axe.axe_script)
    options: dict[str, Any] = {"resultTypes": ["violations"]}
    if rules is not None:
        options["runOnly"] = {"type": "rule", "values": list(rules)}
    found: dict[str, Any] = page.evaluate(
        f"options => axe.run(document, options).then({OUTCOMES_READ})", options
    )
    return found


def counted(results: dict[str, Any]) -> list[str]:
    """The violations that count: serious or critical ones, and those of `ALWAYS`."""
    return [
        f"{v['id']} ({v['impact']}): {', '.join(str(n['target']) for n in v['nodes'][:3])}"
        for v in results["violations"]
        if v["impact"] in SERIOUS or v["id"] in ALWAYS
    ]


def violations(axe: Any, page: Any, rules: tuple[str, ...] | None = None) -> list[str]:
    """The violations that count on `page`, of every rule or of `rules` alone."""
    return counted(run_axe(axe, page, rules))


def outcomes(results: dict[str, Any]) -> dict[str, str]:
    """Each rule's outcome but those of `COLOUR_RULES`: violations, passes, incomplete
    (axe cannot tell) or inapplicable."""
    kinds = ("violations", "passes", "incomplete", "inapplicable")
    return {
        rule["id"]: kind
        for kind in kinds
        for rule in results[kind]
        if rule["id"] not in COLOUR_RULES
    }


def with_axe(browser_context: Any, axe: Any) -> Any:
    """`browser_context`, where every page starts with axe-core in it: its script (600 kB)
    is sent to the browser once, not once a page."""
    browser_context.add_init_script(script=axe.axe_script)
    return browser_context


@pytest.fixture
def context(browser) -> Iterator[Any]:
    made: list[Any] = []

    def open_context(**options: Any) -> Any:
        made.append(browser.new_context(**options))
        made[-1].set_default_timeout(10_000)
        return made[-1]

    yield open_context
    for context in made:
        context.close()


def test_every_page_fits_a_phone_and_loads_nothing_from_elsewhere(demo_site, context):
    """No page is wider than the window at 390 and 1280 px (code and tables scroll inside
    themselves), its content keeps clear of the header and the footer, and no page asks
    anything of another origin."""
    origin = urlsplit(demo_site.url).netloc
    too_wide, cramped, elsewhere = [], [], []
    # Each page loaded once, then laid out at each width (a resize, not a reload).
    page = context(viewport={"width": WIDTHS[0], "height": 900}).new_page()

    def request_made(request: Any) -> None:
        if urlsplit(request.url).netloc != origin:
            elsewhere.append(request.url)

    page.on("request", request_made)
    for kind, path in demo_site.pages().items():
        page.goto(demo_site.url + path)
        for width in WIDTHS:
            page.set_viewport_size({"width": width, "height": 900})
            scroll, window = page.evaluate(
                "[document.documentElement.scrollWidth, document.documentElement.clientWidth]"
            )
            if scroll > window:
                too_wide.append(f"{kind} at {width} px: {scroll} px wide")
            above, below = page.evaluate(GAPS)
            if above < MIN_GAP or below < MIN_GAP:
                cramped.append(
                    f"{kind} at {width} px: {above:.0f} px under the header, "
                    f"{below:.0f} px above the footer"
                )
    assert too_wide == []
    assert cramped == []
    assert elsewhere == []


# The longest browser test: beside the others, in a worker of its own; a hang, not a
# slow sweep on a loaded machine, is what its timeout is for.
@pytest.mark.xdist_group("browser-sweep")
@pytest.mark.timeout(600)
def test_no_serious_accessibility_violation_on_any_page(demo_site, context, axe):
    """Every page in the light and the dark scheme of the system (so colour contrast in
    both themes), at desktop width; a page of each layout at phone width too. Every rule
    in the light scheme; in the dark one, the rules a scheme can change (`COLOUR_RULES`)."""
    found = {}
    pages = demo_site.pages()
    phone_kinds = ("home", "guide: configuration", "guide: writing-posts", "404")
    # The premise of COLOUR_RULES, checked on the page with the most kinds of content
    # (code, tables, embeds): there, every rule runs in both schemes, and the others
    # come out the same in both.
    premise = "guide: writing-posts"
    seen: dict[str, dict[str, str]] = {}
    for width, kinds in ((1280, tuple(pages)), (390, phone_kinds)):
        viewport = {"width": width, "height": 900 if width > 390 else 800}
        page = with_axe(context(viewport=viewport), axe).new_page()
        for kind in kinds:
            page.goto(demo_site.url + pages[kind])
            # The system's scheme switched in place: the theme follows it in CSS alone.
            for scheme, rules in (("light", None), ("dark", COLOUR_RULES)):
                page.emulate_media(color_scheme=scheme)
                every = width > 390 and kind == premise
                results = run_axe(axe, page, None if every else rules)
                if every:
                    seen[scheme] = outcomes(results)
                if bad := counted(results):
                    found[f"{kind}, {scheme}" if width > 390 else f"{kind} at 390 px, {scheme}"] = (
                        bad
                    )
    assert found == {}
    assert seen["dark"] == seen["light"]


def test_the_theme_chosen_with_the_toggle_is_accessible_too(demo_site, context, axe):
    """The toggle's dark theme on a light system, and its light theme on a dark one: every
    rule for the first, the rules a theme can change (`COLOUR_RULES`) for the second, on
    the same pages."""
    found = {}
    for system, chosen, rules in (("light", "dark", None), ("dark", "light", COLOUR_RULES)):
        page = with_axe(context(color_scheme=system), axe).new_page()
        page.goto(demo_site.url)
        page.evaluate(f"localStorage.setItem('toolkit-theme', '{chosen}')")
        for kind in ("home", "guide: writing-posts", "pulled post with comments", "search"):
            page.goto(demo_site.url + demo_site.pages()[kind])
            assert page.evaluate("document.documentElement.dataset.theme") == chosen
            if bad := violations(axe, page, rules):
                found[f"{kind}, {chosen} on {system}"] = bad
    assert found == {}


def test_skip_link_and_visible_focus(demo_site, context):
    page = context().new_page()
    page.goto(demo_site.url + "configuration/")
    page.keyboard.press("Tab")
    focused = page.evaluate("""() => {
        const e = document.activeElement, box = e.getBoundingClientRect(), s = getComputedStyle(e);
        return {text: e.textContent, href: e.getAttribute('href'), top: box.top,
                outline: s.outlineStyle, width: parseFloat(s.outlineWidth)};
    }""")
    assert focused["text"] == "Skip to content" and focused["href"] == "#content"
    assert focused["top"] >= 0  # on screen once focused
    assert focused["outline"] != "none" and focused["width"] >= 2
    page.keyboard.press("Enter")
    assert page.evaluate("document.activeElement.id") == "content"
    # A code block takes the focus, and shows it.
    page.focus("pre")
    assert page.evaluate("getComputedStyle(document.activeElement).outlineStyle") != "none"


def test_copy_button_copies_the_code(demo_site, context):
    browser_context = context()
    browser_context.grant_permissions(
        ["clipboard-read", "clipboard-write"], origin=demo_site.url.rstrip("/")
    )
    page = browser_context.new_page()
    page.goto(demo_site.url + "configuration/")
    code = page.evaluate("document.querySelector('.code-block pre code').textContent")
    button = page.locator(".code-block .copy").first
    button.click()
    page.wait_for_function("document.querySelector('.code-block .copy').textContent === 'Copied'")
    assert page.evaluate("navigator.clipboard.readText()") == code.rstrip("\n")
    assert page.locator("[role=status]").text_content() == "Code copied to the clipboard"


def test_theme_follows_the_system_and_the_toggle_is_remembered(demo_site, context):
    def background(page: Any) -> str:
        return page.evaluate("getComputedStyle(document.body).backgroundColor")

    dark_system = context(color_scheme="dark").new_page()
    dark_system.goto(demo_site.url)
    assert background(dark_system) == "rgb(16, 20, 24)"

    page = context(color_scheme="light").new_page()
    page.goto(demo_site.url)
    assert background(page) == "rgb(255, 255, 255)"
    toggle = page.locator(".theme-toggle")
    assert toggle.get_attribute("aria-pressed") == "false"
    toggle.click()
    assert background(page) == "rgb(16, 20, 24)" and toggle.get_attribute("aria-pressed") == "true"
    page.reload()
    assert background(page) == "rgb(16, 20, 24)"
    page.goto(demo_site.url + "configuration/")  # another page remembers it too
    assert background(page) == "rgb(16, 20, 24)"
    assert page.locator(".theme-toggle").get_attribute("aria-pressed") == "true"
    page.locator(".theme-toggle").click()
    page.reload()
    assert background(page) == "rgb(255, 255, 255)"


def test_search_finds_a_word_from_a_post(demo_site, context):
    page = context().new_page()
    page.goto(demo_site.url + "search/")
    page.fill("#search-query", "coalesced")
    page.press("#search-query", "Enter")
    first = page.locator("#search-results li a").first
    first.wait_for()
    assert first.text_content() == "Watching while you write"
    assert "found for “coalesced”" in page.locator("#search-status").text_content()
    first.click()
    page.wait_for_url(demo_site.url + "watching/")
    # A search from the address bar, as a bookmark or the 404 page would make it.
    page.goto(demo_site.url + "search/?q=sandbox")
    page.locator("#search-results li").first.wait_for()
    assert page.locator("#search-results li").count() >= 2


def test_a_post_loads_under_30_kb_of_css_and_javascript(demo_site, context):
    page = context().new_page()
    sizes: dict[str, int] = {}

    def weigh(response: Any) -> None:
        if response.request.resource_type in ("stylesheet", "script"):
            sizes[urlsplit(response.url).path] = len(response.body())

    page.on("response", weigh)
    page.goto(demo_site.url + "writing-posts/", wait_until="networkidle")
    inline = page.evaluate(
        "[...document.querySelectorAll('script:not([src]), style')]"
        ".reduce((n, e) => n + e.textContent.length, 0)"
    )
    total = sum(sizes.values()) + inline
    print(f"\nCSS and JS of a post: {json.dumps(sizes)} + {inline} inline = {total} bytes")
    assert not any("pagefind" in path or "search" in path for path in sizes)
    assert total < BUDGET


def test_a_long_post_has_a_table_of_contents_that_leads_to_its_headings(demo_site, context):
    page = context(viewport={"width": 390, "height": 800}).new_page()
    page.goto(demo_site.url + "configuration/")
    page.locator(".toc summary").click()  # folded on a phone: the reader opens it
    links = page.locator(".toc a")
    assert links.count() >= 3
    target = links.nth(1).get_attribute("href")
    links.nth(1).click()
    page.wait_for_url(f"**/configuration/{target}")
    top = page.evaluate(f"document.getElementById('{target[1:]}').getBoundingClientRect().top")
    assert 0 <= top < 100


def test_the_404_page_is_styled_at_any_depth(demo_site, context):
    page = context().new_page()
    response = page.goto(demo_site.url + "a/missing/page/deep/down/")
    assert response.status == 404
    assert page.locator("h1").text_content() == "Page not found"
    # The theme's stylesheet applies: the content is in the 42rem column, not full width.
    assert page.evaluate("getComputedStyle(document.querySelector('main')).maxWidth") == "672px"
    # Its links lead from the site's root path (/toolkit/, that of [site] url), which the
    # local server answers as production does.
    page.locator("a", has_text="Go to the latest posts").click()
    page.wait_for_url(demo_site.url + "toolkit/")
    assert page.locator("h1").text_content() == "toolkit guide"


def test_serve_redirects_a_folder_to_its_page(demo_site, context):
    page = context().new_page()
    response = page.goto(demo_site.url + "getting-started")
    assert response.status == 200 and page.url == demo_site.url + "getting-started/"
    assert page.locator("h1").text_content() == "Getting started with toolkit"


# -- dev.to's Liquid tags, a phone's first screen, code bars, order and navigation ------

LIQUID_PAGE = "writing-posts/"  # the guide's page on Liquid tags renders every one
FRAMES = 6  # youtube, vimeo, codepen, codesandbox, stackblitz, jsfiddle
CARDS = 8  # embed (a web page), link, github, gist, twitter, x, user, tag
# Text of the post outside code: what a reader sees as the post's words.
PROSE = """() => {
    const copy = document.querySelector('.content').cloneNode(true);
    copy.querySelectorAll('pre, code').forEach((e) => e.remove());
    return copy.textContent;
}"""


def test_every_liquid_tag_renders_privately_at_both_widths(demo_site, context, axe):
    """The guide's example of every tag: cards and frames, nothing left as `{% ... %}`,
    nothing asked of another origin until a frame's button is pressed, then only that
    frame's service; the page fits both widths and passes axe."""
    origin = urlsplit(demo_site.url).netloc
    for width in WIDTHS:
        page = context(viewport={"width": width, "height": 900}).new_page()
        elsewhere: list[str] = []
        page.on(
            "request",
            lambda request, elsewhere=elsewhere: (
                urlsplit(request.url).netloc == origin or elsewhere.append(request.url)
            ),
        )
        # A frame's service answered here, never by the internet.
        page.route(
            "https://www.youtube-nocookie.com/**",
            lambda route: route.fulfill(
                status=200, content_type="text/html", body="<!doctype html><title>v</title>"
            ),
        )
        page.goto(demo_site.url + LIQUID_PAGE)
        assert page.locator(".content .embed-frame").count() == FRAMES
        assert page.locator(".content .embed-card").count() == CARDS
        assert page.locator(".embed-frame .embed-load").count() == FRAMES
        assert page.locator(".content details > summary").count() == 1
        assert "{%" not in page.evaluate(PROSE)
        boxes = page.locator(".content .task-list-item-checkbox")
        assert boxes.count() == 2 and boxes.nth(0).is_checked() and boxes.nth(0).is_disabled()
        scroll, window = page.evaluate(
            "[document.documentElement.scrollWidth, document.documentElement.clientWidth]"
        )
        assert scroll <= window
        assert violations(axe, page) == []
        assert page.locator(".content iframe").count() == 0 and elsewhere == []
        video = page.locator(".embed-frame", has_text="YouTube video dQw4w9WgXcQ")
        video.locator(".embed-load").click()
        frame = video.locator("iframe")
        frame.wait_for()
        assert frame.get_attribute("src") == "https://www.youtube-nocookie.com/embed/dQw4w9WgXcQ"
        assert frame.get_attribute("title") == "YouTube video dQw4w9WgXcQ"
        assert {urlsplit(url).netloc for url in elsewhere} <= {"www.youtube-nocookie.com"}


def test_katex_is_laid_out_as_mathml_and_every_heading_has_an_anchor(demo_site, context, axe):
    """The guide's formulas are MathML that Chromium lays out (a block formula no wider
    than the page, an inline one inside its line), with no script of their own; every
    heading of a post's body has an id, and a permalink leads to it. At both widths."""
    for width in WIDTHS:
        page = context(viewport={"width": width, "height": 900}).new_page()
        page.goto(demo_site.url + LIQUID_PAGE)
        block = page.locator(".content .math-display math")
        inline = page.locator(".content p > math")
        assert block.count() == 1 and inline.count() == 1
        for formula in (block, inline):
            box = formula.bounding_box()
            assert box is not None and box["width"] > 0 and box["height"] > 0
            assert box["x"] >= 0 and box["x"] + box["width"] <= width
        assert page.evaluate("getComputedStyle(document.querySelector('.content math')).display")
        assert violations(axe, page) == []
        headings = page.locator(".content :is(h1, h2, h3, h4, h5, h6)")
        assert headings.count() >= 3
        assert page.locator(".content :is(h1, h2, h3, h4, h5, h6):not([id])").count() == 0
        last = headings.nth(headings.count() - 1)
        anchor = last.get_attribute("id")
        last.locator(".header-anchor").focus()
        last.locator(".header-anchor").press("Enter")
        page.wait_for_url(f"**/{LIQUID_PAGE}#{anchor}")


def test_a_phones_first_screen_shows_the_post(demo_site, context):
    """At 390 x 844 the series box says "Part n of m" with its list folded, the contents
    start folded, and the post's first paragraph starts on the first screen; a wide
    screen unfolds both."""
    phone = context(viewport={"width": 390, "height": 844}).new_page()
    for path in ("configuration/", "writing-posts/", "getting-started/", "the-site/"):
        phone.goto(demo_site.url + path)
        summary = phone.locator(".series summary")
        assert summary.text_content().startswith("Part ")
        assert " of 1" in summary.text_content()  # the guide has 10 to 19 parts
        assert not phone.evaluate("document.querySelector('.series details').open")
        if phone.locator(".toc").count():
            assert not phone.evaluate("document.querySelector('.toc').open")
        top = phone.evaluate("document.querySelector('.content > p').getBoundingClientRect().top")
        print(f"\n{path} at 390 x 844: the first paragraph starts at {top:.0f} px")
        assert 0 < top < 844 - 40, f"{path}: the first paragraph starts at {top:.0f} px"
    desktop = context(viewport={"width": 1280, "height": 900}).new_page()
    desktop.goto(demo_site.url + "configuration/")
    assert desktop.evaluate("document.querySelector('.series details').open")
    assert desktop.evaluate("document.querySelector('.toc').open")


def test_no_copy_button_covers_code(demo_site, context):
    """The copy button sits in a bar above its block, with the language's name: at both
    widths, on every block of a page with long lines, it overlaps no part of the code."""
    for width in WIDTHS:
        browser_context = context(viewport={"width": width, "height": 900})
        browser_context.grant_permissions(
            ["clipboard-read", "clipboard-write"], origin=demo_site.url.rstrip("/")
        )
        page = browser_context.new_page()
        for path in ("configuration/", "getting-started/", "the-run-log/"):
            page.goto(demo_site.url + path)
            overlaps = page.evaluate("""() => [...document.querySelectorAll('.code-block')]
                .map((block) => {
                    const a = block.querySelector('.copy').getBoundingClientRect();
                    const b = block.querySelector('pre').getBoundingClientRect();
                    return a.right > b.left && a.left < b.right
                        && a.bottom > b.top && a.top < b.bottom;
                })""")
            assert overlaps and not any(overlaps), f"{path} at {width} px"
        page.goto(demo_site.url + "getting-started/")
        assert page.locator(".code-block .code-language").first.text_content() == "sh"


def test_a_pinned_post_is_first_on_the_home_page(demo_site, context):
    page = context().new_page()
    page.goto(demo_site.url)
    first = page.locator(".post-list > li").first
    assert first.locator("h2 a").text_content() == "Getting started with toolkit"
    assert first.locator(".badge").text_content() == "Pinned"


def test_slash_goes_to_search_and_excerpts_leave_out_permalinks(demo_site, context):
    page = context().new_page()
    page.goto(demo_site.url + "configuration/")
    page.keyboard.press("/")
    page.wait_for_url(demo_site.url + "search/#search-query")
    page.wait_for_function("document.activeElement.id === 'search-query'")
    page.keyboard.type("Images")
    page.keyboard.press("Enter")
    results = page.locator("#search-results li p")
    results.first.wait_for()
    excerpts = [results.nth(i).text_content() for i in range(results.count())]
    # A heading's text, and what follows it, with no `#` of its permalink between them.
    assert any("Images Put images" in text for text in excerpts), excerpts
    assert not any("Images #" in text for text in excerpts), excerpts
    page.locator("h1").click()  # away from the box: "/" comes back to it
    page.keyboard.press("/")
    assert page.evaluate("document.activeElement.id") == "search-query"


def test_print_leaves_out_the_toggle_and_the_series(demo_site, context):
    page = context().new_page()
    page.goto(demo_site.url + "configuration/")
    page.emulate_media(media="print")
    hidden = page.evaluate("""() => ['.theme-toggle', '.series', '.toc', '.series-nav.bottom']
        .map((s) => getComputedStyle(document.querySelector(s)).display)""")
    assert hidden == ["none"] * 4
