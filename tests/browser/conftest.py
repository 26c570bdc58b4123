"""The browser tests: the built demo site and the watch preview in headless Chromium,
driven by Playwright, checked with axe-core.

Chromium is the system's (Playwright cannot download a browser here), found on PATH or
named by `TOOLKIT_CHROMIUM`: Chromium's headless shell first (Debian's
`chromium-headless-shell`, what Playwright itself runs headless tests in; the same Blink
as the browser without its window's layers, it takes a fifth less processor time on
these tests), else the browser (`chromium`). Without it the tests skip
with one line that says how to enable them, unless `TOOLKIT_BROWSER_TESTS=required`
(set by CI's `.ci/run`), which makes them fail instead: CI never passes by skipping them.

The browser tests run in one xdist worker, one after the other; one browser per test
module; one demo site per session, served by `toolkit serve`'s app.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

REPOSITORY = Path(__file__).resolve().parents[2]
REQUIRED = "TOOLKIT_BROWSER_TESTS"  # "required": fail instead of skipping
BROWSERS = (
    "chromium-headless-shell",
    "chromium",
    "chromium-browser",
    "google-chrome",
    "google-chrome-stable",
)
# Headless, and none of Chromium's own connections (updates, sync, field trials): without
# them a sandboxed machine refuses its connections many at a time.
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
HOW_TO_ENABLE = (
    "browser tests need Chromium and Playwright: apt-get install chromium-headless-shell "
    "(or set TOOLKIT_CHROMIUM=/path/to/chrome) and pip install -e '.[dev]'"
)


def chromium_path() -> str | None:
    named = os.environ.get("TOOLKIT_CHROMIUM")
    if named:
        return named if os.access(named, os.X_OK) else None
    return next((found for name in BROWSERS if (found := shutil.which(name))), None)


def missing() -> str | None:
    """What the browser tests lack here, or None."""
    import importlib.util

    if importlib.util.find_spec("playwright") is None:
        return "Playwright is not installed"
    if chromium_path() is None:
        return "no Chromium was found"
    return None


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist reads the groups
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The browser tests run one after the other in one pytest-xdist worker (`--dist
    loadgroup`): Playwright's sync API keeps an asyncio loop running in the worker's main
    thread while a browser is open, where no other test can then start one of its own.
    A long test may name a group of its own (`@pytest.mark.xdist_group`) to run beside
    the others, in another worker.

    Without a browser, and where they are not required, the browser tests are marked
    skipped before they start: pytest then reports them in one line, with how to enable
    them. Where they are required (CI), they run and fail."""
    here = Path(__file__).parent
    ours = [item for item in items if here in item.path.parents]
    for item in ours:
        if item.get_closest_marker("xdist_group") is None:  # a group of its own stays
            item.add_marker(pytest.mark.xdist_group("browser"))
    # The tests without the demo site first (those of a module without it before the
    # others, so each module still opens one browser): they run while the first test
    # that needs it, in the other worker, waits for the session's demo.
    with_demo = {item.path for item in ours if "demo_site" in getattr(item, "fixturenames", ())}
    slots = [i for i, item in enumerate(items) if here in item.path.parents]
    ordered = sorted(
        ours,
        key=lambda item: (
            "demo_site" in getattr(item, "fixturenames", ()),
            item.path in with_demo,
        ),
    )
    for slot, item in zip(slots, ordered, strict=True):
        items[slot] = item
    if os.environ.get(REQUIRED) == "required" or missing() is None:
        return
    for item in ours:
        item.add_marker(pytest.mark.skip(reason=HOW_TO_ENABLE))


def unavailable(reason: str) -> None:
    """Skip, or fail where the browser tests are required (CI)."""
    if os.environ.get(REQUIRED) == "required":
        pytest.fail(f"{REQUIRED}=required, but {reason}: {HOW_TO_ENABLE}", pytrace=False)
    pytest.skip(HOW_TO_ENABLE)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """Chromium, for the tests of one module (then closed, with Playwright's loop)."""
    reason = missing()
    if reason is not None:
        unavailable(reason)
    from playwright.sync_api import sync_playwright

    executable = chromium_path()
    assert executable is not None
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
        try:
            yield launched
        finally:
            launched.close()


@dataclass
class DemoSite:
    url: str  # the root of the served site, ending in /
    folder: Path  # the built site
    guide: list[str]  # the slugs of the user guide's pages (content/*.md)

    def pages(self) -> dict[str, str]:
        """One address of each kind of page, and every page of the user guide."""
        pulled = "docs-as-code-the-short-version/"  # a pulled post, with comments
        kinds = {
            "home": "",
            "archive page 2": "page/2/",
            "tags": "tags/",
            "tag": "tags/toolkit/",
            "reading list": "reading-list/",
            "search": "search/",
            "404": "no/such/page/",
            "pulled post with comments": pulled,
        }
        for kind, path in kinds.items():
            assert path in ("", "no/such/page/") or (self.folder / path / "index.html").is_file(), (
                kind
            )
        return {**kinds, **{f"guide: {slug}": f"{slug}/" for slug in self.guide}}


@pytest.fixture(scope="session")
def demo_site(demo_run: Any) -> Iterator[DemoSite]:
    """`toolkit demo` on a copy of this repository (the session's, tests/conftest.py),
    served by `toolkit serve`."""
    from toolkit.commands.serve import serve
    from toolkit.config import load_config

    assert demo_run.exit_code == 0, demo_run.output
    root = demo_run.project.root
    folder = demo_run.workdir / "site"
    running = serve(load_config(root / "toolkit.toml"), port=0, folder=folder)
    guide = sorted(p.stem for p in (REPOSITORY / "content").glob("*.md"))
    try:
        yield DemoSite(running.url, folder, guide)
    finally:
        running.stop()
