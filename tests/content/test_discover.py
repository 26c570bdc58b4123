"""Markdown files whose names keep them from being posts (`.MD`, `.markdown`) are said to
be left out by `toolkit check`, as a file without a front matter is; `.mdx` is not
Markdown that toolkit reads, and is not named."""

from __future__ import annotations

import json


def test_check_names_markdown_files_that_are_not_posts_by_their_name(project):
    front = "---\ntitle: {}\ntags: [testing]\n---\nText.\n"
    project.write("content/kept.md", front.format("Kept"))
    project.write("content/upper.MD", front.format("Upper"))
    project.write("content/deep/long.markdown", front.format("Long"))
    project.write("content/mixed.Markdown", front.format("Mixed"))
    project.write("content/other.mdx", front.format("Other"))
    project.write("content/_hidden.MD", front.format("Hidden"))
    result = project.run("check", "--json")
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    assert document["files"] == 1
    notes = {p["path"]: p["message"] for p in document["problems"] if p["severity"] == "note"}
    assert sorted(notes) == [
        "content/deep/long.markdown",
        "content/mixed.Markdown",
        "content/upper.MD",
    ]
    assert notes["content/upper.MD"] == (
        "not a post: posts are `.md` files; left out (rename it to 'upper.md' to make it a post)"
    )
    plain = project.run("check")
    assert "content/deep/long.markdown:1: note: not a post" in plain.output
