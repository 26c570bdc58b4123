"""Where a post written for another generator finds its images, and the address each is
sent with (`toolkit.content.bodies.SourceBodies`)."""

from __future__ import annotations

from pathlib import Path

from toolkit.content.bodies import SourceBodies
from toolkit.content.post import load_post


def _project(tmp_path: Path) -> tuple[SourceBodies, Path]:
    content, static = tmp_path / "content", tmp_path / "static"
    (content / "2020" / "trip").mkdir(parents=True)
    (static / "images").mkdir(parents=True)
    post = content / "2020" / "trip" / "index.md"
    post.write_text("---\ntitle: Trip\n---\nText.\n", encoding="utf-8")
    bodies = SourceBodies(
        "hugo",
        content,
        static,
        site_url="https://example.org/blog",
        page_url=lambda _post: "https://example.org/blog/the-trip/",
    )
    return bodies, post


def test_a_percent_encoded_name_is_the_file_of_the_decoded_name_else_as_written(tmp_path):
    bodies, path = _project(tmp_path)
    post = load_post(path, "content/2020/trip/index.md")
    (path.parent / "my pic.png").write_bytes(b"\x89PNG")
    (path.parent / "raw%20name.png").write_bytes(b"\x89PNG")
    assert bodies.locate("my%20pic.png", post) == (path.parent / "my pic.png").resolve()
    assert bodies.locate("raw%20name.png", post) == (path.parent / "raw%20name.png").resolve()
    assert bodies.image_url("my%20pic.png", post) == (
        "https://example.org/blog/the-trip/my%20pic.png"
    )


def test_root_relative_is_the_static_folders_with_the_sites_path_taken_off(tmp_path):
    bodies, path = _project(tmp_path)
    post = load_post(path, "content/2020/trip/index.md")
    (tmp_path / "static" / "images" / "map.png").write_bytes(b"\x89PNG")
    for src in ("/images/map.png", "/blog/images/map.png"):
        assert bodies.image_url(src, post) == "https://example.org/blog/images/map.png"
    assert not bodies.locate("/images/gone.png", post).is_file()
    assert not bodies.locate("../../../static/images/map.png/../../../../etc/hosts", post).is_file()


def test_links_to_the_site_are_made_absolute_and_nothing_else(tmp_path):
    bodies, _ = _project(tmp_path)
    assert bodies.link_url("/about/") == "https://example.org/blog/about/"
    assert bodies.link_url("/blog/about/") == "https://example.org/blog/about/"
    for target in ("//cdn.example.org/x", "https://x.org/", "about/", "#part", "/a b"):
        assert bodies.link_url(target) is None
