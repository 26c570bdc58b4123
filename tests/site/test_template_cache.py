"""Templates are parsed and compiled once per process, keyed by their source: a second
project's build reuses the theme's, and an edited template is never served stale."""

from __future__ import annotations

import pytest

from toolkit.site import theme_files


@pytest.mark.e2e
def test_a_second_build_reuses_the_theme_and_an_edit_is_compiled_anew(make_project):
    first, second = make_project(name="first"), make_project(name="second")
    for project in (first, second):
        project.post("hello", "Hello", published=True)
    assert first.run("build").exit_code == 0
    parsed = theme_files._references.cache_info()
    assert second.run("build").exit_code == 0
    again = theme_files._references.cache_info()
    assert again.misses == parsed.misses  # nothing of the theme parsed again
    assert again.hits > parsed.hits

    templates = second.root / "templates"
    templates.mkdir(exist_ok=True)
    post = (theme_files.THEME_DIR / "post.html").read_text(encoding="utf-8")
    (templates / "post.html").write_text(
        post.replace("</article>", "<p>edited once</p></article>", 1), encoding="utf-8"
    )
    assert second.run("build").exit_code == 0
    page = (second.root / "site" / "hello" / "index.html").read_text(encoding="utf-8")
    assert "edited once" in page
    (templates / "post.html").write_text(
        post.replace("</article>", "<p>edited twice</p></article>", 1), encoding="utf-8"
    )
    assert second.run("build").exit_code == 0
    page = (second.root / "site" / "hello" / "index.html").read_text(encoding="utf-8")
    assert "edited twice" in page and "edited once" not in page


def test_the_highlight_cache_follows_no_symlink_planted_under_a_blocks_name(tmp_path):
    import hashlib

    from pygments.lexers import PythonLexer

    from toolkit.site.markdown import HighlightCache

    cache = HighlightCache(tmp_path / "highlight")
    cache.put("python", "print(1)", PythonLexer(), "<b>kept</b>")
    assert cache.get("python", "print(1)") == "<b>kept</b>"
    planted = tmp_path / "planted"
    html = b"<script>planted</script>"
    planted.write_bytes(hashlib.blake2b(html, digest_size=16).hexdigest().encode() + b"\n" + html)
    name = cache._path("python", "print(2)")
    name.symlink_to(planted)
    assert cache.get("python", "print(2)") is None
