"""`pull` and `mirror` against a server that answers hostile data: names that try to
leave `content/`, front matter that tries to decide what only the writer may."""

from __future__ import annotations

import json
import re

import yaml

from tests.support.hostile import article, comment, files_under, run_log_files
from toolkit.content.fields import FOREM_KEYS


def escaping_slugs(tmp_path) -> list[str]:
    """Slugs that, taken as file names, lead out of the folder or hide in it."""
    return [
        "../../escape",
        "../../../../../../../../escape-deep",
        f"{tmp_path}/outside/absolute",  # an absolute path, still inside the test's folder
        "nul\x00byte",
        "control\x1b[31m\r\nchars",
        "..",
        ".hidden",
        "_reserved",
        "x" * 5000,
    ]


def is_plain_name(name: str) -> bool:
    return (
        "/" not in name
        and len(name.encode()) <= 120
        and name[:1] not in (".", "_")
        and all(c.isprintable() and not c.isspace() for c in name)
    )


def test_pull_writes_hostile_slugs_only_as_safe_names_in_content(site, hostile, tmp_path):
    # The title is taken by the first article, so every other one is named by its slug.
    hostile.articles = (
        [article(1, "Same title", "same-title-good")]
        + [
            article(index, "Same title", slug)
            for index, slug in enumerate(escaping_slugs(tmp_path), start=2)
        ]
        + [article(99, "A good one", "a-good-one-x1")]
    )
    before = files_under(tmp_path)

    result = site.run("pull", env=hostile.env)

    assert result.exit_code == 0, result.output
    new = files_under(tmp_path) - before
    project = site.root.relative_to(tmp_path).as_posix()
    own = {f"{project}/toolkit.lock", f"{project}/.toolkit/run.lock", *run_log_files(project)}
    # The bodies taken, kept as the base of a later `pull --merge`: named by their digest.
    own |= {f for f in new if re.fullmatch(rf"{project}/\.toolkit/sent/[0-9a-f]{{64}}\.md", f)}
    assert new - own == {
        f"{project}/{p.relative_to(site.root).as_posix()}" for p in site.content.iterdir()
    }
    names = sorted(p.name for p in site.content.iterdir())
    assert len(names) == len(hostile.articles)
    assert all(is_plain_name(name) and name.endswith(".md") for name in names), names
    # The good articles were written as usual.
    assert "same-title.md" in names and "a-good-one.md" in names
    assert "title: A good one" in (site.content / "a-good-one.md").read_text()
    lock = json.loads((site.root / "toolkit.lock").read_text())["posts"]
    assert sorted(e["article_id"] for e in lock.values()) == sorted(
        a["id"] for a in hostile.articles
    )


def test_pull_survives_fields_of_the_wrong_type(site, hostile):
    hostile.articles = [
        article(1, ["not", "a", "title"], {"not": "a slug"}, body_markdown=12),
        article(2, "Fine", "fine-x1"),
    ]
    result = site.run("pull", env=hostile.env)
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in site.content.iterdir()) == ["fine.md", "post.md"]
    assert "title: Fine" in (site.content / "fine.md").read_text()


def test_pulled_front_matter_keeps_only_the_keys_of_the_api(site, hostile):
    body = (
        "---\n"
        "title: Sneaky\n"
        "published: true\n"
        "description: Looks harmless\n"
        "tags: python\n"
        "premium: true\n"
        "slug: ../../evil\n"
        "organization_id: 5\n"
        "weird: 1\n"
        "---\n"
        "The body.\n"
    )
    hostile.articles = [article(7, "Sneaky", "sneaky-x1", body_markdown=body)]

    result = site.run("pull", env=hostile.env)

    assert result.exit_code == 0, result.output
    text = (site.content / "sneaky.md").read_text()
    meta = yaml.safe_load(text.split("---\n")[1])
    assert set(meta) <= set(FOREM_KEYS)
    assert {"premium", "slug", "organization_id", "weird"}.isdisjoint(meta)
    assert meta["title"] == "Sneaky" and meta["description"] == "Looks harmless"
    assert meta["tags"] == "python" and meta["published"] is True
    assert text.endswith("---\nThe body.\n")
    # The page is where the file name says, not where the remote wanted it.
    built = site.run("build", "--out", str(site.root / "out"))
    assert built.exit_code == 0, built.output
    assert (site.root / "out" / "sneaky" / "index.html").is_file()


def test_mirror_writes_comment_files_only_inside_its_folder(site, hostile, tmp_path):
    slugs = escaping_slugs(tmp_path)
    hostile.articles = [
        article(index, f"Post {index}", slug, comments_count=1)
        for index, slug in enumerate(slugs, start=1)
    ] + [article(50, "Good", "good-x1", comments_count=1)]
    hostile.comments = {a["id"]: [comment(f"c{a['id']}")] for a in hostile.articles}
    before = files_under(tmp_path)

    result = site.run("mirror", "comments", env=hostile.env)

    assert result.exit_code == 0, result.output
    folder = site.content / "_mirror" / "comments"
    new = files_under(tmp_path) - before - run_log_files(site.root.name)
    assert new == {p.relative_to(tmp_path).as_posix() for p in folder.iterdir()}
    names = sorted(p.name for p in folder.iterdir())
    assert len(names) == len(hostile.articles)  # one file each, none shared
    assert all(is_plain_name(name) and name.endswith(".json") for name in names), names
    good = json.loads((folder / "good-x1.json").read_text())
    assert good["comments"][0]["id_code"] == "c50"


def test_mirror_podcast_folder_is_a_safe_name(site, hostile, tmp_path):
    hostile.episodes = [
        {"id": 3, "title": "Episode", "path": "/pod/3", "podcast": {"title": "Pod", "slug": "pod"}}
    ]
    hostile.episode_comments = {3: [comment("e3")]}
    before = files_under(tmp_path)

    result = site.run("mirror", "comments", "--podcast", "../../../../pod", env=hostile.env)

    assert result.exit_code == 0, result.output
    new = files_under(tmp_path) - before - run_log_files(site.root.name)
    podcasts = site.content / "_mirror" / "podcasts"
    assert new == {(podcasts / "pod" / "3.json").relative_to(tmp_path).as_posix()}
