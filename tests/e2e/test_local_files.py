"""Hostile local files: symlinks leading out of the project, impossible dates, YAML bombs,
FIFOs, huge files. Each bad file gets its `path:line: message`; the others carry on.

The CLI runs in-process (`Project.run`); the inputs that used to hang have a timeout of
their own, shorter than the suite's, so that a hang fails the test quickly.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from click.testing import Result

SECRET = "sk-live-TOP-SECRET-0123456789"

GOOD = """---
title: {title}
published: true
date: 2024-01-0{day}
---
{body}
"""


def good_post(project, name: str, title: str, body: str = "Plain words.", day: int = 1) -> Path:
    return project.write(f"content/{name}.md", GOOD.format(title=title, body=body, day=day))


def site_bytes(project) -> bytes:
    """Every file under site/, concatenated: where a leak would show."""
    site = project.root / "site"
    return b"".join(p.read_bytes() for p in sorted(site.rglob("*")) if p.is_file())


def environ_marker() -> bytes:
    """The first entry of this process's /proc/self/environ, as a symlink would copy it."""
    data = Path("/proc/self/environ").read_bytes()
    return data.split(b"\0", 1)[0]


# -- 4. symlinks ----------------------------------------------------------------------


@pytest.fixture
def linked(project, tmp_path):
    """A project whose content/ and templates/ hold symlinks to secrets outside it."""
    outside = tmp_path / "outside"
    (outside / "folder").mkdir(parents=True)
    (outside / "secret.txt").write_text(SECRET)
    (outside / "folder" / "leak.txt").write_text(SECRET)
    (outside / "folder" / "leaked.md").write_text(
        GOOD.format(title="From a linked folder", body=SECRET, day=3)
    )
    (outside / "post.md").write_text(GOOD.format(title="Linked post", body=SECRET, day=4))
    (outside / "post.html").write_text(SECRET + " {{ page.title }}")
    good_post(project, "first", "First post")
    good_post(project, "second", "Second post", day=2)
    project.write(
        "drafts/shared.md", GOOD.format(title="Shared from inside", body="Inside.", day=5)
    )
    content = project.content
    (content / "env.txt").symlink_to("/proc/self/environ")
    (content / "secret.txt").symlink_to(outside / "secret.txt")
    (content / "linked").symlink_to(outside / "folder", target_is_directory=True)
    (content / "leaked.md").symlink_to(outside / "post.md")
    (content / "shared.md").symlink_to(project.root / "drafts" / "shared.md")
    (project.root / "templates" / "static").mkdir(parents=True)
    (project.root / "templates" / "static" / "leak.css").symlink_to(outside / "secret.txt")
    (project.root / "templates" / "post.html").symlink_to(outside / "post.html")
    return project


@pytest.mark.e2e
def test_build_follows_no_symlink_out_of_the_project(linked):
    result = linked.run("build")
    site = site_bytes(linked)
    assert SECRET.encode() not in site
    assert environ_marker() not in site
    assert not (linked.root / "site" / "env.txt").exists()
    for slug in ("first", "second", "shared"):  # a symlink inside the project is followed
        assert (linked.root / "site" / slug / "index.html").is_file()
    assert "Shared from inside" in (linked.root / "site" / "index.html").read_text()
    assert "Linked post" not in (linked.root / "site" / "index.html").read_text()
    assert result.exit_code == 0, result.output
    # Each kind of warning once; `-v` says every one.
    assert "warning: 5 files: symlink to a file outside the project, not followed" in (
        result.output
    )
    out = linked.run("build", "-v").output
    for path in (
        "content/env.txt",
        "content/secret.txt",
        "content/leaked.md",
        "templates/static/leak.css",
        "templates/post.html",
    ):
        assert f"{path}:1: warning: symlink to a file outside the project, not followed" in out
    assert "content/linked:1: warning: symlink to a folder outside the project, not followed" in out


def test_check_and_plan_read_no_post_through_a_symlink_out_of_the_project(linked, sandbox):
    result = linked.run("check")
    assert result.exit_code == 0, result.output
    assert "content/leaked.md:1: warning: symlink to a file outside the project" in result.output
    assert "content/linked:1: warning: symlink to a folder outside the project" in result.output
    assert SECRET not in result.output
    named = linked.run("check", "content/leaked.md")
    assert "content/leaked.md:1: warning: symlink to a file outside the project" in named.output
    assert SECRET not in named.output and "Linked post" not in named.output
    env = {"FOREM_BASE_URL": sandbox.base_url, "FOREM_API_KEY": sandbox.demo_api_key}
    plan = linked.run("plan", "--json", env=env)
    assert "content/first.md" in plan.output, plan.output
    assert "Linked post" not in plan.output and "leaked.md" not in plan.output
    assert SECRET not in plan.output


@pytest.mark.e2e
def test_an_image_outside_the_content_folder_is_neither_copied_nor_read(project, tmp_path):
    (tmp_path / "outside.png").write_text(SECRET)
    good_post(project, "first", "First post")
    (project.content / "images").mkdir()
    (project.content / "images" / "logo.png").symlink_to(tmp_path / "outside.png")
    project.write(
        "content/pic.md",
        "---\ntitle: Pictures\npublished: true\n---\n"
        "![logo](images/logo.png)\n\n![passwd](../../../../../../etc/passwd)\n",
    )
    result = project.run("build")
    assert SECRET.encode() not in site_bytes(project)
    assert result.exit_code == 1
    assert (
        "content/pic.md:5: image: images/logo.png is a symlink to a file outside the "
        "content folder, not followed"
    ) in result.output
    assert (
        "content/pic.md:7: image: ../../../../../../etc/passwd lies outside the content folder"
    ) in result.output
    assert "content/images/logo.png:1: warning: symlink to a file outside the project" in (
        result.output
    )
    assert (project.root / "site" / "first" / "index.html").is_file()
    assert SECRET.encode() not in site_bytes(project)
    assert b"root:x:0:0:" not in site_bytes(project)  # the first line of /etc/passwd


# -- 6. values YAML reads but Python cannot hold ----------------------------------------

BAD_DATE = "---\ntitle: Bad date\npublished: true\ndate: 2024-02-30\n---\nNever shown.\n"
BAD_DATE_PROBLEM = (
    "content/bad.md:4: front matter: 2024-02-30 is not a valid date (day is out of range for month)"
)


@pytest.fixture
def bad_date(project):
    good_post(project, "first", "First post")
    good_post(project, "second", "Second post", day=2)
    project.write("content/bad.md", BAD_DATE)
    return project


def test_check_reports_an_impossible_date_at_its_line(bad_date):
    result = bad_date.run("check")
    assert result.exit_code == 1
    assert BAD_DATE_PROBLEM in result.output.splitlines()
    assert "3 posts checked: 1 error" in result.output


@pytest.mark.e2e
def test_build_leaves_out_the_post_with_an_impossible_date_and_builds_the_others(bad_date):
    result = bad_date.run("build")
    assert result.exit_code == 1
    assert BAD_DATE_PROBLEM in result.output.splitlines()
    assert "built 2 posts" in result.output
    for slug in ("first", "second"):
        assert (bad_date.root / "site" / slug / "index.html").is_file()
    assert not (bad_date.root / "site" / "bad").exists()


def test_publish_sends_the_others_when_one_date_is_impossible(bad_date, sandbox):
    sandbox.reset()
    sandbox.reset_stats()
    env = {"FOREM_BASE_URL": sandbox.base_url, "FOREM_API_KEY": sandbox.demo_api_key}
    result = bad_date.run("publish", env=env)
    assert result.exit_code == 1
    assert "2024-02-30 is not a valid date" in result.output
    assert sandbox.count("POST", "/api/articles") == 2


@pytest.mark.e2e
def test_one_bad_post_stops_no_build_worker(bad_date):
    """Worker processes report the post's problem like the parent does."""
    from toolkit.config import load_config
    from toolkit.site import SiteBuilder

    for day in range(3, 9):
        good_post(bad_date, f"more{day}", f"More {day}", day=day)
    builder = SiteBuilder(load_config(bad_date.root / "toolkit.toml", env={}), processes=2)
    builder.pool_threshold = 1
    report = builder.build()
    assert [str(p) for p in report.errors] == [BAD_DATE_PROBLEM]
    assert report.posts == 8


# -- 7. hostile sizes, shapes and kinds of file -----------------------------------------


def checked(project, *args: str, env: dict[str, str] | None = None) -> Result:
    result = project.run(*args, env=env)
    assert "Traceback" not in result.stderr, result.stderr
    return result


@pytest.mark.e2e
@pytest.mark.timeout(60)
def test_deep_nesting_is_refused_in_bounded_time(project):
    good_post(project, "first", "First post")
    project.write("content/open.md", "---\ntitle: Open\nx: " + "[" * 10_000 + "\n---\nx\n")
    project.write(
        "content/closed.md", "---\ntitle: Closed\nx: " + "[" * 10_000 + "]" * 10_000 + "\n---\nx\n"
    )
    for command in ("check", "build"):
        result = checked(project, command)
        assert result.exit_code == 1
        for name in ("open", "closed"):
            assert (
                f"content/{name}.md:3: front matter: nested more than 32 levels deep"
                in result.stdout
            ), result.stdout
    assert (project.root / "site" / "first" / "index.html").is_file()


@pytest.mark.parametrize(
    ("value", "tag"),
    [
        ("!!python/object/apply:os.system ['echo pwned']", "!!python/object/apply:os.system"),
        ("!!python/name:os.system", "!!python/name:os.system"),
        ("!!binary aGVsbG8=", "!!binary"),
        ("!!set {a, b}", "!!set"),
        ("!!omap [a: 1]", "!!omap"),
        ("!local thing", "!local"),
    ],
)
def test_explicit_tags_other_than_plain_scalars_are_refused(project, value, tag):
    good_post(project, "first", "First post")
    project.write("content/tagged.md", f"---\ntitle: Tagged\nextra: {value}\n---\nx\n")
    result = project.run("check")
    assert result.exit_code == 1
    assert (
        f"content/tagged.md:3: front matter: the tag {tag} is not allowed (only the plain "
        "scalar tags !!str, !!int, !!float, !!bool, !!null and !!timestamp are)"
    ) in result.output.splitlines()


@pytest.mark.e2e
def test_plain_scalar_tags_are_kept(project):
    project.write(
        "content/tagged.md",
        "---\ntitle: !!str 2024\npublished: !!bool 'true'\norganization_id: !!int '12'\n"
        "date: !!timestamp 2024-01-02\ndescription: !!null ''\n---\nx\n",
    )
    result = project.run("check")
    assert result.exit_code == 0, result.output
    assert "0 errors, 0 warnings" in result.output
    assert project.run("build").exit_code == 0
    assert "<title>2024" in (project.root / "site" / "tagged" / "index.html").read_text()


BILLION_LAUGHS = "".join(
    [
        "---\n",
        "title: Laughs\n",
        'a: &a ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]\n',
        *(
            f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join(['*' + chr(97 + i)] * 9)}]\n"
            for i in range(8)
        ),
        "---\n",
        "Laughing.\n",
    ]
)


@pytest.mark.timeout(60)
def test_an_alias_bomb_is_refused_before_it_expands(project, sandbox):
    sandbox.reset()
    good_post(project, "first", "First post")
    project.write("content/laughs.md", BILLION_LAUGHS)
    problem = (
        "front matter: too large once its aliases are expanded (more than 256 K "
        "characters and values); use fewer aliases"
    )
    assert f"content/laughs.md:7: {problem}" in checked(project, "check").stdout.splitlines()
    env = {"FOREM_BASE_URL": sandbox.base_url, "FOREM_API_KEY": sandbox.demo_api_key}
    result = checked(project, "plan", "--json", env=env)
    assert result.exit_code == 1
    posts = {post["path"]: post for post in json.loads(result.stdout)["posts"]}
    assert posts["content/laughs.md"]["problems"] == [f"content/laughs.md:7: {problem}"]
    assert posts["content/first.md"]["action"] == "create"


@pytest.mark.e2e
def test_a_file_that_is_not_utf8_is_reported_and_skipped(project):
    good_post(project, "first", "First post")
    (project.content / "latin1.md").write_bytes("---\ntitle: Café\n---\nNaïve.\n".encode("latin-1"))
    for command in ("check", "build"):
        result = project.run(command)
        assert result.exit_code == 1
        assert "content/latin1.md:2: not valid UTF-8 text" in result.output.splitlines()
    assert (project.root / "site" / "first" / "index.html").is_file()


@pytest.mark.e2e
@pytest.mark.timeout(30)
def test_a_fifo_named_like_a_post_is_skipped_without_being_opened(project):
    good_post(project, "first", "First post")
    os.mkfifo(project.content / "pipe.md")
    (project.content / "zero.md").symlink_to("/dev/zero")
    for command in ("check", "build"):
        result = checked(project, command)
        assert result.exit_code == 0, result.stdout + result.stderr
        assert (
            "content/pipe.md:1: warning: not a regular file (a FIFO), skipped"
            in result.stdout.splitlines()
        )
        assert (
            "content/zero.md:1: warning: symlink to a file outside the project, not "
            "followed" in result.stdout.splitlines()
        )
    named = checked(project, "check", "content/pipe.md")
    assert "content/pipe.md:1: warning: not a regular file (a FIFO), skipped" in named.stdout
    assert (project.root / "site" / "first" / "index.html").is_file()


@pytest.mark.e2e
@pytest.mark.timeout(60)
def test_a_huge_post_is_refused_before_it_is_read(project):
    good_post(project, "first", "First post")
    with open(project.content / "huge.md", "wb") as handle:
        handle.write(b"---\ntitle: Huge\n---\n")
        handle.write(b"![a](images/a.png) and some words on a line\n" * 1_200_000)  # 50 MB
    for command in ("check", "build"):
        result = checked(project, command)
        assert result.exit_code == 1
        assert (
            "content/huge.md:1: the file is 50.4 MB; toolkit reads posts of at most 8 MB "
            "(and the API takes 800 KB)"
        ) in result.stdout.splitlines(), result.stdout
    assert (project.root / "site" / "first" / "index.html").is_file()


# The subject is the time a large post takes; the lines it runs are measured by the tests
# of small posts (`untraced`: tracing would double its time).
@pytest.mark.untraced
@pytest.mark.e2e
@pytest.mark.timeout(60)
def test_a_large_post_full_of_images_is_checked_in_linear_time(project):
    """Under the file cap but over the API's 800 KB: every image is still found, fast."""
    good_post(project, "first", "First post")
    (project.content / "images").mkdir()
    (project.content / "images" / "a.png").write_bytes(b"png")
    filler = (
        "Words and more words to fill the body of this post.\n" * 100_000
    )  # 5 MB, and 1.4 MB of images below
    images = "![a](images/a.png)\n" * 50_000 + "![" * 200_000
    project.write("content/large.md", f"---\ntitle: Large\npublished: true\n---\n{filler}{images}")
    for command in ("check", "build"):
        result = checked(project, command)
        assert result.exit_code == 1
        assert (
            "content/large.md:1: body: 6396 KB; the API accepts at most 800 KB"
            in result.stdout.splitlines()
        ), result.stdout
    # The site's bound too: the other posts are built, this one is left out.
    assert (project.root / "site" / "first" / "index.html").is_file()
    assert not (project.root / "site" / "large").exists()
