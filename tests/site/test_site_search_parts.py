"""The search index in parts: a changed post re-indexes its part only, and the index of a
site built change by change is the index of the same site built from nothing."""

from __future__ import annotations

import json
import shutil

import pytest

from tests.support.site_helpers import changed, read, snapshot
from toolkit.site import search

ANIMALS = ["quokka", "wombat", "numbat", "dingo", "echidna", "bilby", "possum"]


def build(project, *args):
    result = project.run("build", *args)
    assert result.exit_code == 0, result.output
    assert "warning" not in result.output, result.output
    return project.root / "site"


def index_files(folder):
    return {
        p.relative_to(folder).as_posix(): p.read_bytes()
        for p in (folder / "pagefind").rglob("*")
        if p.is_file()
    }


def write_posts(project, count):
    for i in range(count):
        words = " ".join(ANIMALS[j % len(ANIMALS)] for j in range(i, i + 3))
        project.post(
            f"p{i}",
            f"Post {i}",
            published=True,
            date=f"2024-01-{i + 1:02d}",
            body=f"About the {words}.\n",
        )


def parts_of(out):
    return json.loads(read(out, "pagefind/parts.json"))["parts"]


@pytest.mark.e2e
def test_a_small_site_has_one_part_as_before(project):
    write_posts(project, 3)
    out = build(project)
    assert parts_of(out) == []
    assert not any(p.name.startswith("part-") for p in (out / "pagefind").iterdir())
    entry = json.loads(read(out, "pagefind/pagefind-entry.json"))
    assert entry["languages"]["en"]["page_count"] == 3
    assert (out / "pagefind" / "pagefind.js").is_file()


@pytest.mark.e2e
def test_a_changed_post_reindexes_its_part_only_and_matches_a_clean_build(project, monkeypatch):
    monkeypatch.setattr(search, "PART_PAGES", 2)  # 9 posts: 8 parts
    write_posts(project, 9)
    out = build(project)
    count = search.part_count(9)
    assert count == 8
    parts = {page: search.part_of(page, count) for page in (f"p{i}/index.html" for i in range(9))}
    present = sorted(set(parts.values()))
    assert parts_of(out) == [f"{search.part_folder(i)}/" for i in present if i]
    total = 0
    for i in present:
        entry = json.loads(
            read(
                out,
                f"pagefind/{search.part_folder(i)}/pagefind-entry.json"
                if i
                else "pagefind/pagefind-entry.json",
            )
        )
        total += entry["languages"]["en"]["page_count"]
        assert entry["languages"]["en"]["page_count"] == list(parts.values()).count(i)
    assert total == 9  # every post once
    # Only part 0 carries Pagefind's scripts.
    assert not any(
        (out / "pagefind" / search.part_folder(i) / "pagefind.js").exists() for i in present if i
    )

    # One post's body changes: only its part's files change.
    before = snapshot(out, search=True)
    project.post("p4", "Post 4", published=True, date="2024-01-05", body="Now a koala.\n")
    build(project)
    touched = {
        name for name in changed(before, snapshot(out, search=True)) if name.startswith("pagefind/")
    }
    folder = search.part_folder(parts["p4/index.html"])
    assert touched
    if folder:
        assert all(name.startswith(f"pagefind/{folder}/") for name in touched), touched
    else:
        assert not any(name.startswith("pagefind/part-") for name in touched), touched

    # Built change by change or from nothing: the same index, byte for byte.
    fresh = project.root / "fresh"
    assert project.run("build", "--clean", "--out", str(fresh)).exit_code == 0
    assert index_files(out) == index_files(fresh)

    # A post removed and two added (11 posts: 8 parts still), then down to 3 (one part).
    (project.content / "p0.md").unlink()
    project.post("p9", "Post 9", published=True, date="2024-01-10", body="A koala.\n")
    project.post("p10", "Post 10", published=True, date="2024-01-11", body="A bilby.\n")
    project.post("p11", "Post 11", published=True, date="2024-01-12", body="A dingo.\n")
    build(project)
    build(project, "--clean", "--out", str(fresh))
    assert index_files(out) == index_files(fresh)
    for i in range(3, 12):
        (project.content / f"p{i}.md").unlink(missing_ok=True)
    build(project)
    assert parts_of(out) == []
    assert not any(name.startswith("pagefind/part-") for name in index_files(out))
    build(project, "--clean", "--out", str(fresh))
    assert index_files(out) == index_files(fresh)


@pytest.mark.e2e
def test_a_build_with_nothing_to_do_runs_no_indexing(project, monkeypatch):
    monkeypatch.setattr(search, "PART_PAGES", 2)
    write_posts(project, 5)
    out = build(project)
    runs = []

    class Counted(search._Indexer):
        def __init__(self, binary, output_dir, work_dir, parts):
            runs.append(sorted(parts))
            super().__init__(binary, output_dir, work_dir, parts)

    monkeypatch.setattr(search, "_Indexer", Counted)
    before = snapshot(out, search=True)
    build(project)
    assert runs == [] and changed(before, snapshot(out, search=True)) == set()
    # A part whose files were removed behind the build's back is made again, alone.
    count = search.part_count(5)
    part = max(search.part_of(f"p{i}/index.html", count) for i in range(5))
    assert part > 0
    (out / "pagefind" / search.part_folder(part) / "pagefind-entry.json").unlink()
    build(project)
    assert runs == [[part]]
    assert (out / "pagefind" / search.part_folder(part) / "pagefind-entry.json").is_file()


@pytest.mark.parametrize(
    "pages, parts", [(0, 1), (40, 1), (41, 2), (1000, 32), (5000, 128), (100000, 128)]
)
def test_the_number_of_parts_grows_with_the_site(pages, parts):
    assert search.part_count(pages) == parts


@pytest.mark.e2e
def test_builds_with_other_flags_into_one_folder_keep_its_index_true(project, monkeypatch):
    """The index's record is the output folder's: a build with --drafts, one without, then
    one with again index what each has, as one from nothing would."""
    monkeypatch.setattr(search, "PART_PAGES", 2)
    write_posts(project, 5)
    # A draft sharing its part with a post: that part differs from one build to the other.
    count = search.part_count(6)
    taken = {search.part_of(f"p{i}/index.html", count) for i in range(5)}
    name = next(
        f"wip{n}" for n in range(100) if search.part_of(f"wip{n}/index.html", count) in taken
    )
    project.post(
        name,
        "Work in progress",
        published=False,
        date="2024-02-01",
        body="A draft about the platypus.\n",
    )
    out = build(project, "--drafts")
    build(project)
    build(project, "--drafts")
    fresh = project.root / "fresh"
    build(project, "--drafts", "--clean", "--out", str(fresh))
    assert index_files(out) == index_files(fresh)
    build(project)
    build(project, "--clean", "--out", str(fresh))
    assert index_files(out) == index_files(fresh)


@pytest.mark.e2e
def test_a_symlink_in_place_of_a_part_is_replaced_not_written_through(
    project, monkeypatch, tmp_path
):
    monkeypatch.setattr(search, "PART_PAGES", 2)
    write_posts(project, 5)
    out = build(project)
    count = search.part_count(5)
    part = search.part_of("p1/index.html", count)
    assert part > 0  # a part of its own folder
    folder = out / "pagefind" / search.part_folder(part)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "mine.txt").write_text("mine", encoding="utf-8")
    shutil.rmtree(folder)
    folder.symlink_to(elsewhere, target_is_directory=True)
    project.post("p1", "Post 1", published=True, date="2024-01-02", body="A koala now.\n")
    build(project)
    assert [p.name for p in elsewhere.iterdir()] == ["mine.txt"]
    assert not folder.is_symlink() and (folder / "pagefind-entry.json").is_file()


@pytest.mark.e2e
def test_a_build_failing_after_pagefind_started_leaves_no_index_work_behind(project):
    # Pagefind starts once the pages are written, before the manifest is saved: a save
    # that fails stops it and removes its temporary folder.
    write_posts(project, 3)
    build(project)
    state = project.root / ".toolkit" / "build"
    (manifest,) = [p for p in state.glob("*.json") if p.is_file()]
    manifest.unlink()
    (manifest / "in-the-way").mkdir(parents=True)  # the save's rename cannot replace it
    (project.content / "p1.md").write_text(
        (project.content / "p1.md").read_text(encoding="utf-8") + "\nA numbat.\n", encoding="utf-8"
    )
    result = project.run("build")
    assert result.exit_code == 1, result.output
    assert str(manifest.name) in result.output
    assert not [p.name for p in state.iterdir() if p.name.startswith("search-")]
