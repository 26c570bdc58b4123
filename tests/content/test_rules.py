"""Each rule of `toolkit check`, with a failing example and its exact `path:line: message`."""

from __future__ import annotations

import os

import pytest


def check_lines(project, *paths):
    result = project.run("check", *paths)
    return result, [line for line in result.output.splitlines() if line.startswith("content/")]


@pytest.mark.parametrize(
    ("front", "expected"),
    [
        ("published: true\n", "content/p.md:1: title: missing; every post needs a title"),
        ("title: ''\n", "content/p.md:2: title: missing; every post needs a title"),
        ("title: [a]\n", "content/p.md:2: title: must be text (put it in quotes)"),
        (
            f"title: {'x' * 129}\n",
            "content/p.md:2: title: 129 characters; the API accepts at most 128",
        ),
        (
            "title: T\npublished: yes please\n",
            "content/p.md:3: published: must be true or false, not 'yes please'",
        ),
        (
            "title: T\ntags: a, b, c, d, e\n",
            "content/p.md:3: tags: 5 tags; the API accepts at most 4",
        ),
        (
            "title: T\ntags: [web-dev]\n",
            "content/p.md:3: tags: 'web-dev' must be letters and digits only (no hyphens or spaces)",
        ),
        (
            'title: T\ntags: ["two words"]\n',
            "content/p.md:3: tags: 'two words' must be letters and digits only (no hyphens or spaces)",
        ),
        (
            f"title: T\ntags: [{'a' * 31}]\n",
            f"content/p.md:3: tags: '{'a' * 31}' is longer than 30 characters",
        ),
        (
            "title: T\ntags: {a: 1}\n",
            "content/p.md:3: tags: must be a list or a comma-separated string",
        ),
        (
            "title: T\ncanonical_url: ftp://example.com/x\n",
            "content/p.md:3: canonical_url: must be an absolute http(s) URL, not 'ftp://example.com/x'",
        ),
        (
            "title: T\ndate: next tuesday\n",
            "content/p.md:3: date: not a date: 'next tuesday' (use YYYY-MM-DD or an ISO 8601 time)",
        ),
        (
            "title: T\npublished: true\ndate: 2999-01-01\n",
            "content/p.md:4: date: in the future; the API refuses a future publication date",
        ),
        (
            "title: T\nslug: Not A Slug\n",
            "content/p.md:3: slug: must be lower-case letters, digits and single hyphens",
        ),
        (
            "title: T\norganization_id: -3\n",
            "content/p.md:3: organization_id: must be a positive integer",
        ),
        (
            "title: T\npremium: maybe\n",
            "content/p.md:3: premium: must be true or false, not 'maybe'",
        ),
        (
            "title: T\ncover_image: pics/missing.png\n",
            "content/p.md:3: cover_image: pics/missing.png not found",
        ),
    ],
)
def test_front_matter_rules(project, front, expected):
    project.write("content/p.md", f"---\n{front}---\nBody.\n")
    result, lines = check_lines(project)
    assert result.exit_code == 1
    assert expected in lines


def test_yaml_error_at_its_line(project):
    project.write("content/p.md", "---\ntitle: T\ntags: a\n  oops: [\n---\nBody\n")
    result, lines = check_lines(project)
    assert result.exit_code == 1
    assert lines == [
        "content/p.md:4: front matter: invalid YAML: mapping values are not allowed in this context"
    ]


def test_unclosed_front_matter(project):
    project.write("content/p.md", "---\ntitle: T\nBody\n")
    _, lines = check_lines(project)
    assert lines == ["content/p.md:1: front matter: the opening --- has no closing ---"]


def test_front_matter_that_is_not_a_mapping(project):
    project.write("content/p.md", "---\n- a\n- b\n---\nBody\n")
    _, lines = check_lines(project)
    assert lines == ["content/p.md:2: front matter: must be a mapping of keys to values"]


def test_body_over_800_kb(project):
    project.write("content/p.md", "---\ntitle: T\n---\n" + "word " * 170_000)
    _, lines = check_lines(project)
    assert lines == ["content/p.md:1: body: 830 KB; the API accepts at most 800 KB"]


def test_missing_relative_image_in_body_at_its_line(project):
    (project.content / "img").mkdir()
    (project.content / "img" / "there.png").write_bytes(b"png")
    project.write(
        "content/p.md",
        "---\ntitle: T\n---\nIntro\n\n![ok](img/there.png)\n![gone](img/gone.png)\n"
        '<img src="img/also-gone.jpg">\n\n```\n![in code](not/checked.png)\n```\n'
        "![remote](https://example.com/x.png)\n",
    )
    _, lines = check_lines(project)
    assert lines == [
        # A post publish would send (a draft too): dev.to could not show the image.
        "content/p.md:6: image img/there.png is relative and nothing hosts it: "
        "set [site] assets_base_url, or publish from CI",
        "content/p.md:7: image: img/gone.png not found",
        "content/p.md:8: image: img/also-gone.jpg not found",
    ]


def test_same_title_in_two_posts_is_reported_on_both(project):
    project.post("a", "Same Title")
    project.post("b", "same title")
    _, lines = check_lines(project)
    assert lines == [
        "content/a.md:2: warning: title: also used by content/b.md (dev.to allows it; toolkit tells their articles apart by toolkit.lock)",
        "content/b.md:2: warning: title: also used by content/a.md (dev.to allows it; toolkit tells their articles apart by toolkit.lock)",
    ]


def test_uniqueness_is_checked_against_the_whole_folder_when_one_file_is_named(project):
    project.post("a", "Same")
    project.post("b", "Same")
    _, lines = check_lines(project, "content/a.md")
    assert lines == [
        "content/a.md:2: warning: title: also used by content/b.md (dev.to allows it; toolkit tells their articles apart by toolkit.lock)"
    ]


def test_same_canonical_url_in_two_posts(project):
    project.post("a", "A", canonical_url="https://example.com/x")
    project.post("b", "B", canonical_url="https://example.com/x")
    _, lines = check_lines(project)
    assert (
        "content/a.md:3: canonical_url: also used by content/b.md (the API requires canonical URLs to be unique)"
        in lines
    )


def test_unknown_key_is_a_warning_unless_strict(project):
    project.post("a", "A", colour="blue")
    result, lines = check_lines(project)
    assert result.exit_code == 0
    assert lines == [
        "content/a.md:3: warning: colour: unknown front matter key; the site and the API ignore it"
    ]
    assert project.run("check", "--strict").exit_code == 1


def test_good_posts_pass_and_underscore_files_are_not_posts(project):
    project.post("a", "A", tags=["python"], published=True, date="2024-01-02")
    project.write("content/_mirror/x.md", "not a post")
    project.write("content/_draft-notes.md", "not a post either")
    result = project.run("check")
    assert result.exit_code == 0, result.output
    assert "1 post checked: 0 errors, 0 warnings" in result.output


def test_every_problem_of_a_folder_of_broken_posts(project):
    project.write("content/one.md", "---\ntitle: T\ntags: [a-b, c]\n---\n")
    project.write("content/two.md", "no front matter at all\n")
    project.write("content/three.md", "---\ntitle: 'x\n---\n")
    result, lines = check_lines(project)
    assert result.exit_code == 1
    assert [line.split(":")[0] for line in lines] == [
        "content/one.md",
        "content/three.md",
        "content/two.md",
    ]
    assert "2 posts checked: 2 errors, 0 warnings, 1 note" in result.output
    assert (
        "content/two.md:1: note: not a post: no front matter (a --- block with a title) at "
        "its top; left out (add one to make it a post)"
    ) in lines


def test_missing_path_argument_is_a_clear_error(project):
    result = project.run("check", "content/nope.md")
    assert result.exit_code == 1
    assert "content/nope.md: no such file or folder" in result.output


def test_github_annotations(project):
    project.write("content/p.md", "---\ntitle: T\ntags: [a-b]\n---\n")
    result = project.run("check", env={"GITHUB_ACTIONS": "true"})
    assert (
        "::error file=content/p.md,line=3::tags: 'a-b' must be letters and digits only"
        in result.output
    )


# -- checking one post: the other posts' titles, slugs and canonical URLs are remembered by
# the file's stat (`toolkit.content.unique_index`), never at the cost of a wrong answer


def _age(path, seconds=60):
    """Give `path` a modification time `seconds` ago, as a file edited earlier has."""
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns - seconds * 1_000_000_000))


def test_an_edit_to_another_post_is_seen_by_the_next_check_of_one_post(project):
    project.post("a", "Alpha")
    other = project.post("b", "Alpha")
    _, lines = check_lines(project, "content/a.md")
    assert lines == [
        "content/a.md:2: warning: title: also used by content/b.md (dev.to allows it; toolkit tells their articles apart by toolkit.lock)"
    ]
    assert (project.root / ".toolkit" / "known-posts.json").is_file()

    # An edit within the same tick of the clock, keeping the size: the stat is the same.
    st = other.stat()
    other.write_text(other.read_text().replace("Alpha", "Bravo"))
    os.utime(other, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert other.stat().st_mtime_ns == st.st_mtime_ns and other.stat().st_size == st.st_size
    _, lines = check_lines(project, "content/a.md")
    assert lines == []

    other.write_text(other.read_text().replace("Bravo", "Alpha"))
    _age(other)
    _, lines = check_lines(project, "content/a.md")
    assert lines == [
        "content/a.md:2: warning: title: also used by content/b.md (dev.to allows it; toolkit tells their articles apart by toolkit.lock)"
    ]


def test_a_known_post_is_not_parsed_again_while_its_stat_is_the_same(project):
    project.post("a", "Alpha")
    other = project.post("b", "Alpha")
    _age(other)
    check_lines(project, "content/a.md")
    check_lines(project, "content/a.md")  # the cache is now older than every file

    # The same bytes count and the same time: what the cache has is what is used.
    st = other.stat()
    other.write_text(other.read_text().replace("Alpha", "Bravo"))
    os.utime(other, ns=(st.st_atime_ns, st.st_mtime_ns))
    _, lines = check_lines(project, "content/a.md")
    assert lines == [
        "content/a.md:2: warning: title: also used by content/b.md (dev.to allows it; toolkit tells their articles apart by toolkit.lock)"
    ]

    os.utime(other, ns=(st.st_atime_ns, st.st_mtime_ns + 1))  # touched: read again
    _, lines = check_lines(project, "content/a.md")
    assert lines == []


@pytest.mark.parametrize(
    "cache",
    [
        b"not json",
        b'{"version": 1, "saved": 0, "posts": []}',
        b'{"version": 1, "saved": 99999999999999999999, "posts": {"content/b.md": '
        b'{"stat": STAT, "post": ["content/b.md", 5, null, null]}}}',
        b'{"version": 1, "saved": 99999999999999999999, "posts": {"content/b.md": '
        b'{"stat": STAT, "post": ["content/b.md", "Alpha"]}}}',
        b'{"version": 1, "saved": 99999999999999999999, "posts": {"content/b.md": "x"}}',
    ],
)
def test_a_damaged_or_foreign_cache_is_ignored(project, cache):
    project.post("a", "Alpha")
    other = project.post("b", "Alpha")
    _age(other)
    st = other.stat()
    stat = f"[{st.st_size}, {st.st_mtime_ns}, {st.st_ino}]".encode()
    (project.root / ".toolkit").mkdir(exist_ok=True)
    (project.root / ".toolkit" / "known-posts.json").write_bytes(cache.replace(b"STAT", stat))
    result, lines = check_lines(project, "content/a.md")
    assert result.exit_code == 0
    assert lines == [
        "content/a.md:2: warning: title: also used by content/b.md (dev.to allows it; toolkit tells their articles apart by toolkit.lock)"
    ]


def test_a_value_many_posts_share_names_three_and_counts_the_others(project):
    for name in ("a", "b", "c", "d", "e", "f"):
        project.write(f"content/{name}/post.md", "---\ntitle: T " + name + "\n---\nBody\n")
    _, lines = check_lines(project)
    assert lines[0] == (
        "content/a/post.md:1: slug: also used by content/b/post.md, content/c/post.md, "
        "content/d/post.md and 2 other post(s) (each post needs its own page: rename one, "
        "or give it a `slug:`)"
    )
    assert len(lines) == 6
