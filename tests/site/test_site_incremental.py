"""Incremental and deterministic builds: only what changed is written, always the same bytes."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from tests.support.site_helpers import changed, read, snapshot
from toolkit.config import load_config
from toolkit.site import SiteBuilder

LISTINGS_OF_NEWS = {"index.html", "tags/news/index.html", "feed.xml"}


def builder(project, **options) -> SiteBuilder:
    return SiteBuilder(load_config(project.root / "toolkit.toml"), **options)


def tree_bytes(folder: Path) -> dict[str, bytes]:
    return {
        p.relative_to(folder).as_posix(): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


@pytest.mark.e2e
def test_two_clean_builds_in_different_folders_are_identical(site_project):
    first = builder(site_project, drafts=True, out=site_project.root / "one").build(clean=True)
    second = builder(site_project, drafts=True, out=site_project.root / "two").build(clean=True)
    assert first.ok and second.ok
    one, two = tree_bytes(site_project.root / "one"), tree_bytes(site_project.root / "two")
    assert one.keys() == two.keys() and len(one) > 20
    assert one == two


@pytest.mark.e2e
def test_parallel_build_gives_the_same_bytes_as_in_process(site_project, tmp_path):
    """The forked workers (used for big builds) against the in-process path. They run in a
    fresh interpreter, so that the fork never copies a thread of the test session."""
    script = tmp_path / "parallel.py"
    script.write_text(
        textwrap.dedent(f"""
        import sys
        from toolkit.config import load_config
        from toolkit.site import SiteBuilder
        config = load_config({str(site_project.root / "toolkit.toml")!r})
        builder = SiteBuilder(config, drafts=True, out=sys.argv[1], processes=2)
        builder.pool_threshold = 1  # fork whatever the size
        report = builder.build()
        assert report.ok and report.written, report
    """),
        encoding="utf-8",
    )

    def forked() -> None:
        done = subprocess.run(
            [sys.executable, str(script), str(site_project.root / "forked")],
            capture_output=True,
            text=True,
            cwd=site_project.root,
            timeout=120,
        )
        assert done.returncode == 0, done.stderr

    in_process = site_project.root / "in-process"
    forked()
    builder(site_project, drafts=True, out=in_process, processes=1).build()
    assert tree_bytes(site_project.root / "forked") == tree_bytes(in_process)

    # Unchanged sources whose pages must be redone (a template changed): their bodies are
    # rendered in a second round, in the workers too.
    theme = Path(__file__).resolve().parents[2] / "templates" / "post.html"
    site_project.write(
        "templates/post.html",
        theme.read_text(encoding="utf-8").replace(
            '<article class="post" data-pagefind-body>',
            '<article class="post" data-pagefind-body><!-- x -->',
        ),
    )
    forked()
    builder(site_project, drafts=True, out=in_process, processes=1).build()
    assert tree_bytes(site_project.root / "forked") == tree_bytes(in_process)
    assert "<!-- x -->" in read(in_process, "intro/index.html")


@pytest.mark.e2e
def test_a_build_with_nothing_to_do_writes_nothing(site_project):
    out = site_project.root / "site"
    site_project.run("build")
    before = snapshot(out)
    result = site_project.run("build")
    assert result.exit_code == 0
    assert "0 files written" in result.output and "0 removed" in result.output
    assert snapshot(out) == before
    # Touched, not changed: still nothing.
    post = site_project.content / "news.md"
    os.utime(post, ns=(time.time_ns(), time.time_ns()))
    site_project.run("build")
    assert snapshot(out) == before


@pytest.mark.e2e
def test_an_edited_post_rewrites_its_page_and_the_listings_that_show_it(site_project):
    out = site_project.root / "site"
    site_project.run("build")
    before = snapshot(out)
    site_project.post(
        "news",
        "News",
        date="2024-02-01",
        published=True,
        tags=["news"],
        body="Different news, so a different summary.\n",
    )
    result = site_project.run("build")
    assert result.exit_code == 0
    assert changed(before, snapshot(out)) == {"news/index.html"} | LISTINGS_OF_NEWS
    assert "Different news" in read(out, "news/index.html")

    # A new date moves it in the sitemap too (the only thing the sitemap says of a post).
    before = snapshot(out)
    site_project.post(
        "news",
        "News",
        date="2024-02-02",
        published=True,
        tags=["news"],
        body="Different news, so a different summary.\n",
    )
    site_project.run("build")
    assert changed(before, snapshot(out)) == ({"news/index.html", "sitemap.xml"} | LISTINGS_OF_NEWS)


def _rewrite_keeping_stat(path: Path, old: str, new: str) -> None:
    """Change `path`'s bytes but not its size or modification time, as a second save within
    the same tick of a coarse clock does."""
    assert len(old) == len(new)
    st = path.stat()
    path.write_text(path.read_text(encoding="utf-8").replace(old, new), encoding="utf-8")
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert (path.stat().st_size, path.stat().st_mtime_ns) == (st.st_size, st.st_mtime_ns)


@pytest.mark.e2e
def test_an_edit_that_keeps_the_stat_of_a_just_saved_file_is_seen(site_project):
    out = site_project.root / "site"
    site_project.post(
        "news", "News", date="2024-02-01", published=True, tags=["news"], body="The first words.\n"
    )
    site_project.run("build")
    _rewrite_keeping_stat(site_project.content / "news.md", "first", "other")
    site_project.run("build")
    assert "The other words." in read(out, "news/index.html")

    theme = Path(__file__).resolve().parents[2] / "templates" / "post.html"
    site_project.write(
        "templates/post.html",
        theme.read_text(encoding="utf-8").replace(
            '<article class="post"', '<article class="post aaaa"'
        ),
    )
    site_project.run("build")
    assert 'class="post aaaa"' in read(out, "news/index.html")
    _rewrite_keeping_stat(site_project.root / "templates/post.html", "aaaa", "bbbb")
    site_project.run("build")
    assert 'class="post bbbb"' in read(out, "news/index.html")


@pytest.mark.e2e
def test_a_file_saved_well_before_the_last_build_is_judged_by_its_stat(site_project):
    """The no-change path reads no post: an old file whose stat is as recorded is taken
    as it was (its bytes are not even read)."""
    out = site_project.root / "site"
    post = site_project.post(
        "news", "News", date="2024-02-01", published=True, tags=["news"], body="The first words.\n"
    )
    st = post.stat()
    old = st.st_mtime_ns - 60 * 1_000_000_000
    os.utime(post, ns=(st.st_atime_ns, old))
    site_project.run("build")
    _rewrite_keeping_stat(post, "first", "other")
    site_project.run("build")
    assert "The first words." in read(out, "news/index.html")


@pytest.mark.e2e
def test_an_edit_that_listings_do_not_show_rewrites_only_the_page(site_project):
    out = site_project.root / "site"
    site_project.run("build")
    before = snapshot(out)
    path = site_project.content / "guide" / "usage.md"  # has a description: no excerpt shown
    path.write_text(path.read_text(encoding="utf-8") + "\nMore text.\n", encoding="utf-8")
    site_project.run("build")
    assert changed(before, snapshot(out)) == {"usage/index.html"}


@pytest.mark.e2e
def test_a_series_title_change_rewrites_the_other_parts(site_project):
    out = site_project.root / "site"
    site_project.run("build")
    before = snapshot(out)
    site_project.post(
        "guide/usage",
        "Using it",
        date="2024-01-03",
        tags=["tools"],
        published=True,
        series="Guide",
        description="How to use it.",
        body="Use it.\n",
    )
    site_project.run("build")
    written = changed(before, snapshot(out))
    assert {"usage/index.html", "setup/index.html", "intro/index.html"} <= written
    # The post next to it in time names it in its previous/next links; the others stay.
    assert "news/index.html" in written and "notes/index.html" not in written
    assert "Using it →" in read(out, "setup/index.html")


@pytest.mark.e2e
def test_a_template_edit_rerenders_the_pages_that_use_it(site_project):
    out = site_project.root / "site"
    site_project.run("build")
    before = snapshot(out)
    theme = Path(__file__).resolve().parents[2] / "templates" / "post.html"
    site_project.write(
        "templates/post.html",
        theme.read_text(encoding="utf-8").replace(
            '<article class="post"', '<article class="post mine"'
        ),
    )
    site_project.run("build")
    written = changed(before, snapshot(out))
    posts = {f"{slug}/index.html" for slug in ("intro", "setup", "usage", "news", "notes")}
    assert written == posts
    assert 'class="post mine"' in read(out, "news/index.html")

    # A partial only listings use: the listings, not the posts.
    before = snapshot(out)
    site_project.write(
        "templates/partials/pagination.html",
        '<nav class="pagination">{{ pagination.number }}</nav>\n',
    )
    site_project.run("build")
    written = changed(before, snapshot(out))
    assert "index.html" in written and "tags/python/index.html" in written
    assert not written & posts
    assert "feed.xml" not in written and "sitemap.xml" not in written


@pytest.mark.e2e
def test_a_removed_post_disappears_with_its_folder(site_project):
    out = site_project.root / "site"
    site_project.run("build")
    assert (out / "news" / "index.html").is_file()
    (site_project.content / "news.md").unlink()
    result = site_project.run("build")
    assert result.exit_code == 0
    assert "news/index.html" not in {p.relative_to(out).as_posix() for p in out.rglob("*")}
    assert not (out / "news").exists()
    assert not (out / "tags" / "news").exists()  # its only tag went with it
    assert "News" not in read(out, "index.html")


@pytest.mark.e2e
def test_files_we_did_not_write_are_left_alone(site_project):
    out = site_project.root / "site"
    site_project.run("build")
    (out / "CNAME").write_text("example.com\n", encoding="utf-8")
    (site_project.content / "news.md").unlink()
    site_project.run("build", "--clean")
    assert (out / "CNAME").is_file()


@pytest.mark.e2e
def test_an_output_file_changed_or_removed_by_hand_is_written_again(site_project):
    out = site_project.root / "site"
    site_project.run("build")
    (out / "news" / "index.html").unlink()
    (out / "static" / "style.css").write_text("broken", encoding="utf-8")
    (out / "feed.xml").write_text("oops", encoding="utf-8")
    before = snapshot(out)
    site_project.run("build")
    assert changed(before, snapshot(out)) == {"news/index.html", "static/style.css", "feed.xml"}
    assert "Fresh news." in read(out, "news/index.html")


@pytest.mark.e2e
def test_clean_writes_everything_again(site_project):
    out = site_project.root / "site"
    site_project.run("build")
    before = snapshot(out)
    result = site_project.run("build", "--clean")
    assert result.exit_code == 0
    assert changed(before, snapshot(out)) == set(before)


@pytest.mark.e2e
def test_a_lost_manifest_rewrites_nothing_that_is_the_same(site_project):
    out = site_project.root / "site"
    site_project.run("build")
    before = snapshot(out)
    for manifest in (site_project.root / ".toolkit" / "build").glob("*.json"):
        manifest.unlink()
    site_project.run("build")
    assert changed(before, snapshot(out)) <= {
        "static/style.css",
        "static/favicon.svg",
        "static/site.js",
        "static/search.js",
        "guide/img/shot.png",
        "logo.png",
    }


@pytest.mark.e2e
def test_the_manifest_lives_in_the_state_folder_not_in_the_output(site_project):
    site_project.run("build")
    site_project.run("build", "--drafts")
    manifests = list((site_project.root / ".toolkit" / "build").glob("*.json"))
    assert len(manifests) == 2  # one per output folder and set of flags
    site = site_project.root / "site"
    # The search index has JSON files of its own: Pagefind's entry and the list of parts.
    assert sorted(p.relative_to(site).as_posix() for p in site.rglob("*.json")) == [
        "pagefind/pagefind-entry.json",
        "pagefind/parts.json",
    ]


@pytest.mark.e2e
def test_the_builder_object_can_be_called_again_and_again(site_project):
    site = builder(site_project)
    first = site.build()
    assert first.ok and len(first.written) >= 20
    second = site.build()
    assert second.written == [] and second.removed == []
    assert set(second.unchanged) == set(first.written)
    site_project.post(
        "news",
        "News",
        date="2024-02-01",
        published=True,
        tags=["news"],
        body="Edited while watching.\n",
    )
    third = site.build()
    assert set(third.written) == {"news/index.html"} | LISTINGS_OF_NEWS
    (site_project.content / "notes.md").unlink()
    fourth = site.build()
    assert "notes/index.html" in fourth.removed
    # A new builder reading the manifest agrees with the warm one.
    assert builder(site_project).build().written == []


@pytest.mark.e2e
def test_progress_is_reported(site_project):
    calls = []
    builder(site_project).build(progress=lambda total, done: calls.append((total, done)))
    assert calls and calls[-1][0] == calls[-1][1] > 0
    assert all(done <= total for total, done in calls)


def test_a_manifest_saved_again_keeps_the_records_it_loaded_and_the_changed_ones(tmp_path):
    # Saving takes the text of each record unchanged since the load from the file itself.
    from toolkit.site.manifest import Manifest, PostRecord

    path = tmp_path / "manifest.json"
    keys = ["a.md", 'odd ":[ name.md', "z\\.md"]
    first = Manifest(content_key="k")
    first.posts = {
        key: PostRecord([i, 1], f"d{i}", None, [], f'An "excerpt"\n{i}}}}}', [])
        for i, key in enumerate(keys)
    }
    first.save(path)
    loaded = Manifest.load(path, "k")
    loaded.posts[keys[1]] = PostRecord([9, 9], "new", None, [], None, ["a.md"])
    loaded.posts["b.md"] = PostRecord([5, 5], "added", None, [], "B", [])
    del loaded.posts[keys[0]]
    loaded.save(path)
    again = Manifest.load(path, "k")
    assert {key: record.to_json() for key, record in again.posts.items()} == {
        keys[1]: [[9, 9], "new", None, [], None, ["a.md"], ""],
        keys[2]: [[2, 1], "d2", None, [], 'An "excerpt"\n2}}', [], ""],
        "b.md": [[5, 5], "added", None, [], "B", [], ""],
    }
    again.save(path)
    assert Manifest.load(path, "k").posts.keys() == again.posts.keys()


def code_block(page: str) -> str:
    return page.split("<pre", 1)[1].split("</pre>", 1)[0]


@pytest.mark.e2e
def test_code_highlighted_for_a_few_posts_is_kept_and_a_damaged_copy_is_not_taken(project):
    # A post edited and built again takes its unchanged code from the last build's
    # highlighting; a copy cut short is highlighted again, and the page stays the same.
    code = "```python\ndef area(r):\n    return 3.14 * r ** 2  # a circle\n```\n"
    path = project.post(
        "shapes", "Shapes", published=True, date="2024-01-01", body=f"About circles.\n\n{code}"
    )
    assert project.run("build").exit_code == 0
    page = project.root / "site" / "shapes" / "index.html"
    first = page.read_text(encoding="utf-8")
    assert '<span class="k">def</span>' in first
    (kept,) = (project.root / ".toolkit" / "build" / "highlight").iterdir()
    for damage in (lambda data: data[:-12], lambda data: data.replace(b"def", b"fed")):
        kept.write_bytes(damage(kept.read_bytes()))
        path.write_text(path.read_text(encoding="utf-8") + "\nMore.\n", encoding="utf-8")
        assert project.run("build").exit_code == 0
        again = page.read_text(encoding="utf-8")
        assert code_block(again) == code_block(first)


@pytest.mark.e2e
def test_a_build_that_finds_all_as_it_was_reports_what_the_last_one_found(site_project):
    """A build that finds the posts, settings, templates and pages as the last build left
    them does not work the site out again (`replay.replay`), and reports the same: the
    posts on the site, the drafts left out, every problem of a post."""
    site_project.post("broken", "Broken", published=True, body="![gone](missing.png)\n")
    site_project.post("twin", "News", date="2024-03-01", published=True)  # a title used twice
    first = builder(site_project).build()
    assert first.errors and first.drafts_left_out == 1
    again = builder(site_project).build()  # a new builder: from the manifest file
    assert "plan, as the last build's" in again.timings
    assert "plan, as the last build's" not in first.timings
    assert again.written == [] and again.removed == []
    assert sorted(again.unchanged) == sorted(first.written)
    assert again.problems == first.problems
    assert (again.posts, again.drafts_left_out) == (first.posts, first.drafts_left_out)
    # The same through the command: the same lines, the same exit code.
    assert site_project.run("build").output == site_project.run("build").output


@pytest.mark.e2e
def test_anything_the_plan_depends_on_makes_the_next_build_work_it_out_again(site_project):
    out = site_project.root / "site"
    site_project.run("build")
    assert "plan, as the last build's" in builder(site_project).build().timings
    # A page removed behind our back: written again, with the rest of the plan.
    (out / "tags" / "news" / "index.html").unlink()
    report = builder(site_project).build()
    assert "plan, as the last build's" not in report.timings
    assert report.written == ["tags/news/index.html"]
    # A setting: every page that shows it is written again.
    config = site_project.root / "toolkit.toml"
    config.write_text(
        config.read_text(encoding="utf-8").replace('author = "Ada"', 'author = "Someone Else"'),
        encoding="utf-8",
    )
    report = builder(site_project).build()
    assert "plan, as the last build's" not in report.timings
    assert "index.html" in report.written and "feed.xml" in report.written
    # Comments mirrored for a post: its page shows them.
    comments = site_project.content / "_mirror" / "comments"
    comments.mkdir(parents=True, exist_ok=True)
    (comments / "news.json").write_text("[]", encoding="utf-8")
    report = builder(site_project).build()
    assert "plan, as the last build's" not in report.timings
    assert "plan, as the last build's" in builder(site_project).build().timings


@pytest.mark.e2e
def test_an_edit_of_a_body_alone_rewrites_its_page_from_the_last_plan(site_project):
    """A post whose body alone changed (the same front matter, problems and summary) gets
    its page's key again; every other page is kept as the last build's plan left it, and
    the site is the one a build from nothing makes."""
    site = site_project.root / "site"
    site_project.run("build")
    before = snapshot(site)
    site_project.post(
        "news",
        "News",
        date="2024-02-01",
        published=True,
        tags=["news"],
        body="Fresh news.\n\nA second paragraph, which no listing shows.\n",
    )
    report = builder(site_project).build()
    assert "plan, as the last build's" in report.timings
    assert report.written == ["news/index.html"] and report.problems == []
    assert changed(before, snapshot(site)) == {"news/index.html"}
    assert "A second paragraph" in read(site, "news/index.html")
    # The same bytes as a build that works everything out.
    builder(site_project, out=site_project.root / "fresh").build()
    fresh = tree_bytes(site_project.root / "fresh")
    assert {name: data for name, data in tree_bytes(site).items() if name in fresh} == fresh


@pytest.mark.e2e
def test_a_post_in_place_of_a_removed_one_is_worked_out_in_full(site_project):
    site = site_project.root / "site"
    site_project.run("build")
    (site_project.content / "news.md").unlink()
    site_project.post("fresh", "Fresher", date="2024-02-01", published=True, tags=["news"])
    report = builder(site_project).build()
    assert "plan, as the last build's" not in report.timings
    assert "news/index.html" in report.removed and "fresh/index.html" in report.written
    assert "Fresher" in read(site, "index.html") and "Fresher" in read(site, "feed.xml")


@pytest.mark.e2e
def test_with_whole_posts_in_the_feed_an_edit_of_a_body_rewrites_the_feed(site_project):
    config = site_project.root / "toolkit.toml"
    config.write_text(config.read_text(encoding="utf-8") + "feed_full_content = true\n")
    site = site_project.root / "site"
    site_project.run("build")
    site_project.post(
        "news",
        "News",
        date="2024-02-01",
        published=True,
        tags=["news"],
        body="Fresh news.\n\nA second paragraph, in the feed.\n",
    )
    report = builder(site_project).build()
    assert set(report.written) == {"news/index.html", "feed.xml"}
    assert "A second paragraph" in read(site, "feed.xml")


@pytest.mark.e2e
def test_the_command_leaves_its_objects_to_the_end_of_the_process(site_project):
    """`toolkit` (the console script's `run`) collects cycles rarely while a command that
    ends runs, and freezes what it holds once it is done, so that Python's collection on
    the way out does not go over it all again; the output is written all the same. A
    command that serves until stopped keeps Python's thresholds. (Fresh interpreters.)"""
    site_project.run("build")

    def at_exit(*args: str) -> tuple[list[str], subprocess.CompletedProcess[str]]:
        script = (
            "import atexit, gc, sys\n"
            "atexit.register(lambda: print(gc.get_freeze_count() > 0, gc.get_threshold()))\n"
            f"sys.argv = ['toolkit', '--config', {str(site_project.root / 'toolkit.toml')!r},"
            f" *{list(args)!r}]\n"
            "from toolkit.__main__ import run\n"
            "run()\n"
        )
        done = subprocess.run(
            [sys.executable, "-c", script],
            capture_output=True,
            text=True,
            cwd=site_project.root,
            timeout=60,
        )
        return done.stdout.strip().splitlines(), done

    lines, done = at_exit("build")
    assert done.returncode == 0, done.stderr
    assert lines == ["True (100000, 50, 100)"]
    assert "0 files written" in done.stderr
    lines, done = at_exit("serve", "--help")
    assert done.returncode == 0, done.stderr
    assert lines[-1] == "True (700, 10, 10)"


@pytest.mark.e2e
def test_a_post_dated_in_the_future_says_so_in_its_record_and_is_checked_on_every_build(
    site_project,
):
    # Whether it is on the site depends on the clock: its record carries its date
    # (`shown_from`), which every build reads to check it again; not its message.
    import json

    from toolkit.site.manifest import PostRecord
    from toolkit.site.siteplan import needs_check

    (site_project.content / "later.md").write_text(
        "---\ntitle: Later on\npublished: true\ndate: 2999-01-01\ntags: news\n---\nNot yet.\n",
        encoding="utf-8",
    )
    site = builder(site_project)
    for _ in range(2):  # the build that reads it, and a build where nothing changed
        report = site.build()
        assert [p.message for p in report.errors if p.path.endswith("later.md")] == [
            "date: in the future; the API refuses a future publication date"
        ]
        assert (report.output_dir / "index.html").is_file()
        assert not (report.output_dir / "later-on").exists()
    saved = json.loads(site.manifest_path.read_text(encoding="utf-8"))["posts"]
    later = next(v for k, v in saved.items() if k.endswith("later.md"))
    assert later[7].startswith("2999-01-01")
    assert needs_check(PostRecord.from_json(later))
    others = [v for k, v in saved.items() if not k.endswith("later.md")]
    assert others and all(len(v) == 7 for v in others)  # the others' records as before
    assert not any(needs_check(PostRecord.from_json(v)) for v in others)
