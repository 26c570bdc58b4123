"""The search index in parts, in the browser: the search page merges every part, and a
site built change by change finds what the same site built from nothing finds, in the
same order, with the same excerpts."""

from __future__ import annotations

from typing import Any

from toolkit.site import search

ANIMALS = ["quokka", "wombat", "numbat", "dingo", "echidna", "bilby", "possum", "koala"]
QUERIES = [
    "quokka",
    "wombat",
    "dingo",
    "koala",
    "possum bilby",
    "numbat echidna",
    "post",
    "wom",
    "nothingatall",
]


def body(i: int) -> str:
    words = [ANIMALS[(i * 3 + j) % len(ANIMALS)] for j in range(2 + i % 4)]
    return f"Notes on the {' and the '.join(words)}. " * (1 + i % 3) + "\n"


# What the search page shows once it has answered `query`: its status line and, for
# each post found, the link, the title and the excerpt. Read in one go, when the status
# names the query (the page sets both at once, and shows only its latest search) or
# says the index could not be loaded.
ANSWER = """query => {
    const FAILED = 'The search index could not be loaded.';
    const status = document.getElementById('search-status').textContent;
    if (!status.endsWith(`“${query}”.`) && status !== FAILED) return null;
    return [status, [...document.querySelectorAll('#search-results li')].map(
        (i) => [i.querySelector('a').getAttribute('href'), i.querySelector('a').textContent,
                i.querySelector('p').innerHTML])];
}"""


class SearchPage:
    """A site's search page, loaded once with the first query in its address (as a link
    or the 404 page asks), then asked each further query in its box, as a reader does:
    the index, merged from its parts once, answers every query."""

    def __init__(self, context: Any, url: str, first: str) -> None:
        self.page = context.new_page()
        self.page.goto(f"{url}search/?q={first}")
        self.first: str | None = first

    def ask(self, query: str) -> None:
        if query != self.first:
            self.page.fill("#search-query", query)
            self.page.press("#search-query", "Enter")
        self.first = None

    def answer(self, query: str) -> tuple[str, list[tuple[str, str, str]]]:
        status, found = self.page.wait_for_function(ANSWER, arg=query).json_value()
        return status, [tuple(item) for item in found]


def results(pages: list[SearchPage], query: str) -> list[tuple[str, list[tuple[str, str, str]]]]:
    """What each page shows for `query` (asked of all, then read: they search at once)."""
    for page in pages:
        page.ask(query)
    return [page.answer(query) for page in pages]


def test_an_incremental_index_finds_what_a_full_one_finds(make_project, monkeypatch, browser):
    from toolkit.commands.serve import serve
    from toolkit.config import load_config

    monkeypatch.setattr(search, "PART_PAGES", 2)  # 14 posts: 8 parts
    project = make_project()
    for i in range(14):
        project.post(
            f"p{i}", f"Post {i}", published=True, date=f"2024-01-{i + 1:02d}", body=body(i)
        )
    assert project.run("build").exit_code == 0
    # Changes, each built on the last: an edit, a new post, a removed post, a new title.
    project.post("p3", "Post 3", published=True, date="2024-01-04", body="A koala alone.\n")
    assert project.run("build").exit_code == 0
    project.post(
        "p14", "Post 14", published=True, date="2024-01-15", body="The quokka and the koala.\n"
    )
    assert project.run("build").exit_code == 0
    (project.content / "p5.md").unlink()
    assert project.run("build").exit_code == 0
    project.post("p7", "Seventh post", published=True, date="2024-01-08", body=body(7))
    assert project.run("build").exit_code == 0
    assert project.run("build", "--clean", "--out", str(project.root / "fresh")).exit_code == 0

    incremental = project.root / "site"
    parts = (incremental / "pagefind" / "parts.json").read_text(encoding="utf-8")
    assert parts.count("part-") >= 4  # the index really is in parts

    config = load_config(project.root / "toolkit.toml")
    sites = [
        serve(config, port=0, folder=folder) for folder in (incremental, project.root / "fresh")
    ]
    context = browser.new_context()
    try:
        pages = [SearchPage(context, site.url, QUERIES[0]) for site in sites]
        for query in QUERIES:
            seen = results(pages, query)
            assert seen[0] == seen[1], query
            # Every part is searched: each post that holds the word is found.
            words = query.split()
            if query in ANIMALS:
                expected = {
                    f"p{i}"
                    for i in range(15)
                    if i != 5 and i not in (3, 14, 7) and query in body(i)
                }
                expected |= {
                    slug
                    for slug, text in (
                        ("p3", "A koala alone."),
                        ("p14", "The quokka and the koala."),
                        ("p7", body(7)),
                    )
                    if query in text
                }
                found = {href.strip("/").rpartition("/")[2] for href, _, _ in seen[0][1]}
                assert found == expected, (query, seen[0])
            if words == ["nothingatall"]:
                assert seen[0][1] == [] and "No post found" in seen[0][0]
        assert any(title == "Seventh post" for _, title, _ in results(pages[:1], "bilby")[0][1])
    finally:
        context.close()
        for site in sites:
            site.stop()
