"""Nothing under the project is followed out of it (a posts folder, a state folder, the
lock's keys), and `unpublish` changes a post's own `published:` line however it is
written; against the real sandbox."""

from __future__ import annotations

import json

import pytest
from sync_helpers import SYNC_CONFIG, my_articles


def publish(site, env) -> dict:
    result = site.run("publish", "--json", env=env)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def published_by_title(sandbox) -> dict[str, bool]:
    return {a["title"]: a["published"] for a in my_articles(sandbox)}


@pytest.mark.parametrize(
    "written",
    [
        # issue 43, 7: a byte-order mark before the front matter
        "\ufeff---\r\ntitle: Unpublished\r\npublished: true\r\ntags: [testing]\r\n---\r\nText.\r\n",
        # issue 43, 17: a comment on the `published:` line
        "---\ntitle: Unpublished\npublished: true  # live since May, keep it\n---\nText.\n",
    ],
    ids=["bom", "comment"],
)
def test_unpublish_sets_the_posts_own_published_line_to_false_and_nothing_else(
    make_project, env, sandbox, written
):
    site = make_project(SYNC_CONFIG)
    post = site.content / "post.md"
    post.parent.mkdir(parents=True, exist_ok=True)
    post.write_bytes(written.encode("utf-8"))
    publish(site, env)
    assert published_by_title(sandbox)["Unpublished"] is True

    result = site.run("unpublish", "content/post.md", env=env)
    assert result.exit_code == 0, result.output
    assert "says `published: false` now" in result.output
    expected = written.replace("published: true", "published: false")
    assert post.read_bytes().decode("utf-8") == expected
    # The next publish leaves it a draft.
    publish(site, env)
    assert published_by_title(sandbox)["Unpublished"] is False
