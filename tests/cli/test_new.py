"""`toolkit new TITLE`: a draft with valid front matter under content/, its path printed."""

from __future__ import annotations

import datetime as dt

import yaml


def front_matter(path):
    text = path.read_text(encoding="utf-8")
    return yaml.safe_load(text.split("---\n")[1])


def test_new_writes_a_draft_that_check_accepts_and_prints_its_path(project):
    result = project.run("new", "Part 1: Setup", "--tags", "python, tooling")
    assert result.exit_code == 0, result.output
    assert result.stdout == "content/part-1-setup.md\n"  # the path alone on stdout
    path = project.content / "part-1-setup.md"
    meta = front_matter(path)
    assert meta == {
        "title": "Part 1: Setup",
        "published": False,
        "date": dt.date.today().isoformat(),
        "tags": ["python", "tooling"],
    }
    check = project.run("check", "content/part-1-setup.md")
    assert check.exit_code == 0, check.output
    assert "0 errors, 0 warnings" in check.output


def test_new_never_overwrites_a_file_and_refuses_a_title_in_use(project):
    project.write("content/hello-world.md", "---\ntitle: Something else\n---\nMine.\n")
    result = project.run("new", "Hello, world!")
    assert result.exit_code == 0, result.output
    assert result.stdout == "content/hello-world-2.md\n"
    assert "Mine." in (project.content / "hello-world.md").read_text()
    again = project.run("new", "hello, WORLD!")
    assert again.exit_code == 1
    assert (
        "Error: content/hello-world-2.md has the title 'hello, WORLD!' already; titles "
        "are unique per account"
    ) in again.output
    assert sorted(p.name for p in project.content.iterdir()) == [
        "hello-world-2.md",
        "hello-world.md",
    ]


def test_new_refuses_what_the_api_would(project):
    long = project.run("new", "x" * 129)
    assert long.exit_code == 1 and "the API accepts at most 128" in long.output
    tags = project.run("new", "Tagged", "--tags", "a-b")
    assert tags.exit_code == 1 and "tags: 'a-b' must be letters and digits" in tags.output
    empty = project.run("new", "  ")
    assert empty.exit_code == 1 and "Error: the title is empty" in empty.output
    assert list(project.content.iterdir()) == []


def test_new_avoids_a_slug_another_post_has_and_makes_the_content_folder(project):
    # The slug comes from the file's name: content/2023/hello-world.md has `hello-world`.
    project.write("content/2023/hello-world.md", "---\ntitle: Last year's\n---\nOld.\n")
    result = project.run("new", "Hello, world")
    assert result.exit_code == 0, result.output
    assert result.stdout == "content/hello-world-2.md\n"
    check = project.run("check")
    assert check.exit_code == 0, check.output
    assert "0 errors" in check.output

    project.content.joinpath("2023", "hello-world.md").unlink()
    project.content.joinpath("2023").rmdir()
    project.content.joinpath("hello-world-2.md").unlink()
    project.content.rmdir()  # a project with no content folder yet
    first = project.run("new", "First post")
    assert first.exit_code == 0, first.output
    assert (project.content / "first-post.md").is_file()
