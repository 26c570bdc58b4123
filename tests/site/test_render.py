"""What the site keeps of a post between builds (`render.post_info`)."""

from __future__ import annotations

from toolkit.content.post import load_post
from toolkit.site.render import post_info


def test_each_image_file_is_recorded_once_however_often_the_post_shows_it(tmp_path):
    content = tmp_path.resolve() / "content"
    (content / "images").mkdir(parents=True)
    (content / "images" / "a.png").write_bytes(b"png")
    path = content / "post.md"
    path.write_text(
        "---\ntitle: Shown often\ncover_image: images/a.png\n---\n"
        + "![a](images/a.png)\n\n" * 3
        + "![gone](images/gone.png)\n\n![gone again](images/gone.png)\n",
        encoding="utf-8",
    )
    info = post_info(load_post(path, "content/post.md"), None, content)
    assert info["images"] == [
        [str(content / "images" / "a.png"), True],
        [str(content / "images" / "gone.png"), False],
    ]
    assert info["cover_file"] == "images/a.png"
