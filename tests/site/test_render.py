"""What the site keeps of a post between builds (`render.post_info`)."""

from __future__ import annotations

from toolkit.content.post import load_post
from toolkit.site.render import post_info


def test_each_image_file_is_recorded_once_however_often_the_post_shows_it(tmp_path):
    """Named relative, root-relative (`/images/...`) and percent-encoded, as the cover and
    in the body, one file is one record; a missing file is recorded as missing, once."""
    content = tmp_path.resolve() / "content"
    (content / "images").mkdir(parents=True)
    (content / "images" / "a b.png").write_bytes(b"png")
    # A Hugo page bundle: the post is the folder's index.md, its images beside it.
    bundle = content / "posts" / "bundle"
    bundle.mkdir(parents=True)
    (bundle / "shot.png").write_bytes(b"png")
    path = bundle / "index.md"
    path.write_text(
        "---\ntitle: Shown often\ncover_image: ../../images/a%20b.png\n---\n"
        + "![a](../../images/a%20b.png)\n\n" * 3
        + "![root](/images/a%20b.png)\n\n![shot](shot.png)\n\n![shot again](./shot.png)\n\n"
        + "![gone](gone.png)\n\n![gone again](gone.png)\n",
        encoding="utf-8",
    )
    info = post_info(load_post(path, "content/posts/bundle/index.md"), None, content)
    assert info["images"] == [
        [str(content / "images" / "a b.png"), True],
        [str(bundle / "shot.png"), True],
        [str(bundle / "gone.png"), False],
    ]
    assert info["cover_file"] == "images/a b.png"
