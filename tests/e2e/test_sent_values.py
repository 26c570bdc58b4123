"""Every value spliced into what is sent, or into the site's pages, is refused when it is
wrong, at configuration or by `check`, with one line and no traceback: `[site]
assets_base_url` and `url`, `GITHUB_SERVER_URL`, `[content] exclude`, a post's
`cover_image`."""

from __future__ import annotations

import pytest

POST = "---\ntitle: Hello\npublished: true\ncover_image: ./cover.png\n---\n![x](./a.png)\n"
CI = {"GITHUB_ACTIONS": "true", "GITHUB_REPOSITORY": "writer/blog", "GITHUB_SHA": "0" * 40}


def _project(make_project, site_lines: str = "", more: str = ""):
    project = make_project(f'[site]\ntitle = "T"\n{site_lines}{more}')
    project.write("content/hello.md", POST)
    (project.content / "cover.png").write_bytes(b"\x89PNG")
    (project.content / "a.png").write_bytes(b"\x89PNG")
    return project


@pytest.mark.parametrize(
    "value",
    [
        'https://cdn.example/x\\"onerror=\\"alert(1)',  # one quote: an attribute of its own
        "https://cdn.example/x\\n",
        "https://user:pass@cdn.example/blog",
        "javascript:alert(1)",
        "https://cdn.example/a b",
        "https://cdn.example/x)y",  # ends a Markdown image's target
        "https://cdn.example/%zz",
    ],
)
@pytest.mark.parametrize("key", ["assets_base_url", "url"])
def test_a_url_spliced_into_what_is_sent_is_refused_at_configuration(make_project, key, value):
    project = _project(make_project, f'{key} = "{value}"\n')
    for command in ("check", "build", "plan"):
        result = project.run(command)
        assert result.exit_code == 1, (command, result.output)
        errors = [line for line in result.output.splitlines() if line.startswith("Error:")]
        assert len(errors) == 1, result.output
        assert errors[0].startswith(f"Error: toolkit.toml: site.{key}: "), errors
        assert "Traceback" not in result.output


def test_an_http_url_of_plain_characters_is_taken(make_project):
    project = _project(make_project, 'assets_base_url = "https://cdn.example:8443/my-blog/a%20b"\n')
    assert project.run("check").exit_code == 0


@pytest.mark.parametrize(
    "server",
    [
        'https://ghe.example/"onerror="x',
        "https://ghe.example/path",
        "https://user:pass@ghe.example",
        "javascript:alert(1)",
        "https://ghe.example\n",
    ],
)
def test_github_server_url_must_be_an_origin(make_project, server):
    project = _project(make_project)
    (project.root / ".git").mkdir()  # the content folder is in a repository
    result = project.run("check", env={**CI, "GITHUB_SERVER_URL": server})
    assert result.exit_code == 1
    assert result.output.count("Error:") == 1, result.output
    assert "Error: GITHUB_SERVER_URL: must be an http(s) origin (https://host[:port])" in (
        result.output
    )
    good = project.run("check", env={**CI, "GITHUB_SERVER_URL": "https://ghe.example:8443/"})
    assert good.exit_code == 0, good.output


@pytest.mark.parametrize("pattern", ["[z-a]", "[a-Z]*.md", "[[:alpha:]]"])
def test_an_exclude_pattern_that_is_not_one_is_one_line_in_every_command(make_project, pattern):
    project = _project(make_project, more=f'\n[content]\nexclude = ["{pattern}"]\n')
    commands = [("check",), ("build",), ("plan",), ("pull",), ("new", "A title")]
    for command in [*commands, ("diff", "content/hello.md"), ("unpublish", "content/hello.md")]:
        result = project.run(*command)
        assert result.exit_code == 1, (command, result.output)
        assert "Traceback" not in result.output
        errors = [line for line in result.output.splitlines() if line.startswith("Error:")]
        assert errors == [
            f"Error: toolkit.toml: content.exclude: {pattern!r} is not a gitignore-style pattern"
            + (": bad character range " + pattern[1:4] if pattern[2] == "-" else "")
        ], (command, result.output)


@pytest.mark.e2e
@pytest.mark.parametrize("cover", ["javascript:alert(1)", "data:image/svg+xml,<svg/>", "ftp://x/y"])
def test_a_cover_image_that_is_no_url_nor_path_is_an_error_and_never_on_the_site(
    make_project, cover
):
    project = make_project('[site]\ntitle = "T"\nurl = "https://me.example"\n')
    project.post("bad", "Bad cover", "Body.\n", published=True, cover_image=cover)
    project.post(
        "good", "Good cover", "Body.\n", published=True, cover_image="https://i.example/c.png"
    )
    check = project.run("check")
    assert check.exit_code == 1
    assert "content/bad.md:4: cover_image: must be an http(s) URL or a path, not " in check.output
    project.run("build")
    site = project.root / "site"
    assert not (site / "bad").exists()
    good = (site / "good" / "index.html").read_text()
    assert '<meta property="og:image" content="https://i.example/c.png">' in good
    assert not any(cover.split(":")[0] + ":" in page.read_text() for page in site.rglob("*.html"))
