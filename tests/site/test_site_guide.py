"""The project's own user guide (content/): it passes `toolkit check` and builds into a site
whose every internal link resolves, as `make site` does."""

from __future__ import annotations

import shutil
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

from tests.support.site_helpers import is_external, parse_page

# Every test here starts a process or opens a socket (tests/support/plugin.py).
pytestmark = pytest.mark.e2e

REPOSITORY = Path(__file__).resolve().parents[2]


def test_the_guide_checks_clean_and_builds_with_every_link_resolving(make_project):
    project = make_project((REPOSITORY / "toolkit.toml").read_text(encoding="utf-8"), name="guide")
    shutil.copytree(
        REPOSITORY / "content",
        project.content,
        dirs_exist_ok=True,
        ignore=shutil.ignore_patterns("_mirror"),
    )
    check = project.run("check", "--strict")
    assert check.exit_code == 0, check.output
    built = project.run("build")
    assert built.exit_code == 0, built.output
    out = project.root / "site"
    titles = {parse_page(page).meta.get("og:title", [""])[0] for page in out.glob("*/index.html")}
    assert {
        "Getting started with toolkit",
        "Publishing without duplicates",
        "The sandbox",
        "Watching while you write",
        "Writing posts and front matter",
        "Configuration and secrets",
    } <= titles
    for page in out.rglob("*.html"):
        for tag, url in parse_page(page).urls:
            if is_external(url) or url.startswith("#"):
                continue
            target = (page.parent / unquote(urlsplit(url).path)).resolve()
            if target.is_dir():
                target = target / "index.html"
            assert target.is_file(), f"{page.relative_to(out)}: <{tag}> {url}"
