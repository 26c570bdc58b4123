"""Nothing under the project is followed out of it (a posts folder, a state folder, the
lock's keys), and `unpublish` changes a post's own `published:` line however it is
written; against the real sandbox."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.support.sync_helpers import SYNC_CONFIG, my_articles
from toolkit.cli import main


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


def init(folder: Path):
    with contextlib.chdir(folder):
        return CliRunner().invoke(main, ["init", "--no-workflow"], catch_exceptions=False)


def lock_keys(root: Path) -> list[str]:
    lock = root / "toolkit.lock"
    return sorted(json.loads(lock.read_text())["posts"]) if lock.exists() else []


DIARY = "---\ntitle: My private diary\npublished: true\ntags: [testing]\n---\nSecret.\n"


@pytest.mark.parametrize("named_by", ["known name", "dev-to-git.json"])
def test_a_posts_folder_linked_out_of_the_project_is_never_adopted_sent_or_written(
    make_project, env, sandbox, tmp_path_factory, named_by
):
    """issue 43, 2: `ln -s ../elsewhere/private posts` in a repository."""
    elsewhere = tmp_path_factory.mktemp("elsewhere")
    (elsewhere / "diary.md").write_text(DIARY)
    site = make_project(SYNC_CONFIG)
    root = site.root
    (root / "toolkit.toml").unlink()  # the repository as it comes, before toolkit init
    (root / "content").rmdir()
    (root / "posts").symlink_to(elsewhere)
    if named_by == "dev-to-git.json":
        (root / "dev-to-git.json").write_text(
            json.dumps([{"id": 1, "relativePathToArticle": "posts/diary.md"}])
        )
    result = init(root)
    assert result.exit_code == 0, result.output
    assert "adopted" not in result.output
    assert 'content_dir = "content"' in (root / "toolkit.toml").read_text()
    assert sorted(p.name for p in elsewhere.iterdir()) == ["diary.md"]  # nothing written there

    # Told to take its posts from there, every command refuses, naming the key.
    (root / "toolkit.toml").write_text(
        SYNC_CONFIG.replace("[site]", '[site]\ncontent_dir = "posts"')
    )
    for command in (["publish"], ["new", "Hello"], ["check"]):
        refused = site.run(*command, env=env)
        assert refused.exit_code != 0
        assert refused.output.startswith(
            "Error: toolkit.toml: site.content_dir: 'posts' leads out of the project "
            "through a symlink"
        ), refused.output
    assert sorted(p.name for p in elsewhere.iterdir()) == ["diary.md"]
    assert "My private diary" not in [a["title"] for a in my_articles(sandbox)]
    assert lock_keys(root) == []


def test_a_post_named_through_a_link_out_of_the_project_is_not_sent_nor_locked(
    make_project, env, sandbox, tmp_path_factory
):
    """issue 43, 2: a path through such a link, and one outside the project, named to
    publish: neither is sent, and toolkit.lock never holds an absolute path."""
    elsewhere = tmp_path_factory.mktemp("elsewhere")
    (elsewhere / "diary.md").write_text(DIARY)
    site = make_project(SYNC_CONFIG)
    site.post("mine", "Mine", published=True, tags=["testing"])
    (site.content / "linked").symlink_to(elsewhere)
    for named in ("content/linked/diary.md", str(elsewhere / "diary.md"), None):
        result = site.run("publish", *([named] if named else []), env=env)
        assert "Traceback" not in result.output
    assert "My private diary" not in [a["title"] for a in my_articles(sandbox)]
    assert lock_keys(site.root) == ["content/mine.md"]


def test_a_lock_naming_a_path_out_of_the_project_is_refused_in_one_line(make_project, env):
    """issue 43, 2: a committed toolkit.lock whose key climbs out of the project."""
    site = make_project(SYNC_CONFIG)
    site.post("mine", "Mine", published=True, tags=["testing"])
    publish(site, env)
    lock = json.loads((site.root / "toolkit.lock").read_text())
    entry = lock["posts"]["content/mine.md"]
    for key in ("../elsewhere/diary.md", "/etc/passwd"):
        lock["posts"] = {key: entry}
        (site.root / "toolkit.lock").write_text(json.dumps(lock))
        for command in ("plan", "pull"):
            result = site.run(command, env=env)
            assert result.exit_code != 0
            assert result.output == (
                f"Error: toolkit.lock: {key!r}: not a path in the project (toolkit.lock "
                "names each post by its path there); delete the entry, or the file, and "
                "publish again\n"
            )


@pytest.mark.parametrize(
    "link",
    [
        ".toolkit/sent",
        ".toolkit",
        ".toolkit/run.lock",
        ".toolkit/events.jsonl",
        ".toolkit/build",
        "content/_mirror",
        "content/_mirror/comments",
    ],
)
def test_a_state_folder_linked_out_of_the_project_is_never_written_through(
    make_project, env, sandbox, tmp_path_factory, link
):
    """issue 43, 5: a repository commits `.toolkit/sent` (or another of toolkit's own
    folders and files) as a symlink; publish, pull, mirror and build write bodies, drafts
    included, nowhere through it: each refuses in one line naming it."""
    elsewhere = tmp_path_factory.mktemp("elsewhere")
    (elsewhere / "keep.txt").write_text("the writer's own file\n")
    site = make_project(SYNC_CONFIG)
    site.post("live", "Live", "Live text.\n", published=True, tags=["testing"])
    site.post("draft", "Draft", "DRAFT TEXT\n", published=False, tags=["testing"])
    publish(site, env)
    before = {a["title"]: a["body_markdown"] for a in my_articles(sandbox)}
    target = elsewhere / "keep.txt" if link.endswith((".lock", ".jsonl")) else elsewhere
    path = site.root / link
    if path.is_dir():
        for child in sorted(path.rglob("*"), reverse=True):
            child.rmdir() if child.is_dir() and not child.is_symlink() else child.unlink()
        path.rmdir()
    path.unlink(missing_ok=True)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.symlink_to(target)
    (site.content / "live.md").write_text(
        (site.content / "live.md").read_text().replace("Live text.", "Changed text.")
    )
    for command in (["publish"], ["pull"], ["mirror", "comments"], ["build"], ["check"]):
        result = site.run(*command, env=env)
        assert result.exit_code != 0, (command, result.output)
        assert result.output == (
            f"Error: {link}: a symlink (to {str(target)!r}) where toolkit keeps its own "
            "files, which it never follows; remove the link\n"
        )
    assert sorted(p.name for p in elsewhere.iterdir()) == ["keep.txt"]
    assert (elsewhere / "keep.txt").read_text() == "the writer's own file\n"
    assert {a["title"]: a["body_markdown"] for a in my_articles(sandbox)} == before


def test_unpublish_of_a_path_through_a_link_out_of_the_project_is_refused(
    make_project, env, sandbox, tmp_path_factory
):
    """issue 43, 2: unpublish of a path through a link leading out of the project
    neither binds nor changes it, nor the article its title names."""
    elsewhere = tmp_path_factory.mktemp("elsewhere")
    site = make_project(SYNC_CONFIG)
    site.post("mine", "Mine", "My text.\n", published=True, tags=["testing"])
    publish(site, env)
    (site.root / "toolkit.lock").unlink()
    (site.content / "mine.md").rename(elsewhere / "mine.md")
    text = (elsewhere / "mine.md").read_text().replace("My text.", "PRIVATE NOTES")
    (elsewhere / "mine.md").write_text(text)
    (site.content / "linked").symlink_to(elsewhere)
    result = site.run("unpublish", "content/linked/mine.md", env=env)
    assert result.exit_code != 0, result.output
    assert result.output == (
        "Error: content/linked/mine.md: leads out of the project through a symlink; not followed\n"
    )
    assert (elsewhere / "mine.md").read_text() == text
    assert published_by_title(sandbox)["Mine"] is True
    assert lock_keys(site.root) == []
