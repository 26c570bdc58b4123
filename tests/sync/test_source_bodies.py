"""Blogs kept with Hugo, Jekyll and Astro published with the real CLI against the real
sandbox: the bodies stored hold none of the generator's syntax outside code (no shortcode,
no `{{ site.* }}`, no MDX import) and no relative or root-relative image."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.support.sync_helpers import my_articles
from toolkit.content import images
from toolkit.content.liquid import prose as masked

BLOGS = Path(__file__).resolve().parents[1] / "support" / "blogs"
ID_KEYS = re.compile(r"^(devtoId|devto_id|dev_to|devtoPublished):.*\n", re.MULTILINE)

CONFIGS = {
    "hugo": """
        [site]
        content_dir = "content"
        [source]
        generator = "hugo"
        url = "https://hugo.example.org"
        """,
    "jekyll": """
        [site]
        content_dir = "_posts"
        [source]
        generator = "jekyll"
        url = "https://jekyll.example.org/blog"
        permalink = "/:year-:month-:day-:title/"
        timezone = "America/New_York"
        """,
    "astro": """
        [site]
        content_dir = "src/content/articles"
        [source]
        generator = "astro"
        url = "https://astro.example.org"
        """,
}


def _blog(make_project, generator: str):
    """A copy of the fixture blog, its old tool's id lines left out (its articles are
    made; the lines below them move up by one)."""
    blog = make_project(name=generator)
    root = blog.root
    shutil.rmtree(root / "content")
    shutil.copytree(BLOGS / generator, root, dirs_exist_ok=True)
    for path in root.rglob("*.md*"):
        path.write_text(ID_KEYS.sub("", path.read_text(encoding="utf-8")), encoding="utf-8")
    config = "\n".join(line.strip() for line in CONFIGS[generator].splitlines())
    (root / "toolkit.toml").write_text(config + "\n[forem]\nrate_window = 1\n", encoding="utf-8")
    return blog


@pytest.mark.parametrize("generator", ["hugo", "jekyll", "astro"])
def test_published_bodies_hold_no_generator_syntax_and_no_relative_image(
    generator, make_project, env, sandbox
):
    blog = _blog(make_project, generator)
    before = {a["id"] for a in my_articles(sandbox)}
    result = blog.run("publish", env=env)
    assert result.exit_code == 0, result.output
    stored = [a for a in my_articles(sandbox) if a["id"] not in before]
    assert len(stored) >= 3, result.output
    for article in stored:
        body = article["body_markdown"].split("---\n", 2)[2]
        prose = masked(body)
        for marker in ("{{<", "{{%", "{{ site.", "{{site.", ".Site.BaseURL"):
            assert marker not in prose, (article["title"], body)
        assert not re.search(r"^(import|export) ", prose, re.MULTILINE), body
        relative = [r.src for r in images.find_images(body) if images.is_relative(r.src)]
        assert relative == [], (article["title"], body)
        cover = article.get("cover_image")
        assert cover is None or not images.is_relative(cover)


def test_hugo_bundle_sent_as_dev_to_reads_it(make_project, env, sandbox):
    blog = _blog(make_project, "hugo")
    assert blog.run("publish", env=env).exit_code in (0, 1)
    bodies = {a["title"]: a["body_markdown"] for a in my_articles(sandbox)}
    body = bodies["First steps with GitHub Copilot"]
    assert "{% youtube 30a0WrfaS2A %}" in body
    assert "{% twitter 1233140530017644544 %}" in body
    page = "https://hugo.example.org/first-steps-with-copilot/"
    assert f"![the set-up]({page}diagram.png)" in body
    assert f"![screen shot]({page}screen%20shot.png)" in body
    # The code block shows the shortcode as written.
    assert "```go-html-template\n{{< youtube 30a0WrfaS2A >}}\n```" in body


def test_jekyll_post_sent_with_its_site_images_fence_and_links(make_project, env, sandbox):
    blog = _blog(make_project, "jekyll")
    blog.run("publish", env=env)
    bodies = {a["title"]: a["body_markdown"] for a in my_articles(sandbox)}
    body = bodies["Midnight release"]
    assert "![the board](https://jekyll.example.org/blog/assets/2020/06/board.png)" in body
    assert "```csharp\nservices.AddScoped<IClock, SystemClock>();\n```" in body
    assert "[the earlier post](https://jekyll.example.org/blog/2010-05-01-hello-world/)" in body


def test_links_to_the_writers_site_are_sent_absolute(make_project, env, sandbox):
    blog = _blog(make_project, "jekyll")
    post = blog.root / "_posts" / "2021-02-01-offset-dates.md"
    text = post.read_text(encoding="utf-8")
    post.write_text(
        text + "\n[About]({{ site.baseurl }}/about/) and [home](/) and `[c](/code/)`.\n",
        encoding="utf-8",
    )
    blog.run("publish", env=env)
    body = next(a["body_markdown"] for a in my_articles(sandbox) if "offset-dates" in a["slug"])
    assert "[About](https://jekyll.example.org/blog/about/)" in body
    assert "[home](https://jekyll.example.org/blog/)" in body
    assert "`[c](/code/)`" in body


def test_check_names_the_unknown_shortcode_and_component_and_still_sends(make_project):
    hugo = _blog(make_project, "hugo")
    check = hugo.run("check")
    assert (
        "content/2026/undated-bundle/index.md:11: warning: {{< unknowncode >}}: a shortcode "
        "dev.to has no equivalent for" in check.output
    )
    astro = _blog(make_project, "astro")
    check = astro.run("check")
    assert (
        "src/content/articles/using-mdx.mdx:14: warning: <Callout>: a component dev.to has "
        "no equivalent for" in check.output
    )
    assert check.exit_code == 0, check.output


def test_a_missing_static_image_is_a_check_error(make_project):
    blog = _blog(make_project, "astro")
    (blog.root / "public" / "images" / "photo.jpg").unlink()
    check = blog.run("check")
    assert check.exit_code == 1
    assert "src/content/articles/first-post.md:11: image: '/images/photo.jpg' not found" in (
        check.output
    ), check.output


SHA = "0123456789abcdef0123456789abcdef01234567"
CI = {
    "GITHUB_ACTIONS": "true",
    "GITHUB_SERVER_URL": "https://github.com",
    "GITHUB_REPOSITORY": "writer/blog",
    "GITHUB_SHA": SHA,
}


def test_in_ci_images_are_the_pushed_commits_files(make_project, env, sandbox):
    blog = _blog(make_project, "hugo")
    subprocess.run(["git", "init", "-q", str(blog.root)], check=True)
    result = blog.run("publish", env={**env, **CI})
    assert result.exit_code == 0, result.output
    raw = f"https://raw.githubusercontent.com/writer/blog/{SHA}/"
    bodies = {a["title"]: a["body_markdown"] for a in my_articles(sandbox)}
    first = bodies["First steps with GitHub Copilot"]
    assert f"![the set-up]({raw}content/2020/first-steps/diagram.png)" in first
    assert f"![screen shot]({raw}content/2020/first-steps/screen%20shot.png)" in first
    old = next(body for title, body in bodies.items() if "/static/images/logo.png" in body)
    assert f"{raw}static/images/logo.png" in old


def test_with_nothing_to_host_them_root_relative_images_hold_the_post_back(make_project):
    blog = _blog(make_project, "astro")
    toml = blog.root / "toolkit.toml"
    toml.write_text(
        toml.read_text(encoding="utf-8").replace('url = "https://astro.example.org"\n', ""),
        encoding="utf-8",
    )
    (blog.root / "src/content/articles/first-post.md").write_text(
        "---\ntitle: Out\n---\n![a](../../../../outside.png)\n![b](/images/photo.jpg)\n",
        encoding="utf-8",
    )
    (blog.root.parent / "outside.png").write_bytes(b"\x89PNG")
    check = blog.run("check")
    assert check.exit_code == 1
    lines = [line for line in check.output.splitlines() if "first-post.md" in line]
    assert lines == [
        "src/content/articles/first-post.md:4: image: '../../../../outside.png' lies outside the "
        "project (not followed)",
        "src/content/articles/first-post.md:5: image '/images/photo.jpg' is relative and "
        "nothing hosts it: set [source] url, or set [site] assets_base_url, or publish from CI",
    ]


def test_a_file_beside_a_post_that_is_no_bundle_is_not_under_its_page(make_project):
    blog = _blog(make_project, "hugo")
    (blog.root / "content/2019/near.png").write_bytes(b"\x89PNG")
    post = blog.root / "content/2019/old-post.md"
    post.write_text(post.read_text(encoding="utf-8") + "\n![n](near.png)\n", encoding="utf-8")
    check = blog.run("check", "content/2019/old-post.md")
    assert check.exit_code == 1
    assert (
        "content/2019/old-post.md:12: image 'near.png' is relative and nothing hosts it: your "
        "site serves a bundle's and the static folder's files, not this one; set [site] "
        "assets_base_url, or publish from CI"
    ) in check.output


def test_astros_assets_beside_the_content_are_the_pushed_commits_files(make_project, env, sandbox):
    # Astro's blog keeps the images it optimises in src/assets/, named from the post's
    # folder: the writer's site serves them under names of its own, the commit as they are.
    blog = _blog(make_project, "astro")
    (blog.root / "src/assets").mkdir()
    (blog.root / "src/assets/hero.png").write_bytes(b"\x89PNG")
    (blog.root / "src/content/articles/hero.md").write_text(
        "---\ntitle: Hero\npubDate: 2024-05-01\nheroImage: ../../assets/hero.png\n---\n"
        "![inline](../../assets/hero.png)\n",
        encoding="utf-8",
    )
    check = blog.run("check", "src/content/articles/hero.md")
    assert check.exit_code == 1
    assert (
        "src/content/articles/hero.md:4: heroImage '../../assets/hero.png' is relative and "
        "nothing hosts it: a file outside the content and static folders is served only by "
        "the pushed commit; publish from CI, or move it into public/"
    ) in check.output, check.output
    subprocess.run(["git", "init", "-q", str(blog.root)], check=True)
    result = blog.run("publish", env={**env, **CI})
    assert result.exit_code == 0, result.output
    raw = f"https://raw.githubusercontent.com/writer/blog/{SHA}/src/assets/hero.png"
    (article,) = [a for a in my_articles(sandbox) if a["title"] == "Hero"]
    assert article["cover_image"] == raw
    assert f"![inline]({raw})" in article["body_markdown"]


def test_a_hugo_ref_to_a_page_that_is_no_post_links_its_page(make_project, env, sandbox):
    blog = make_project(
        '[site]\ncontent_dir = "content/posts"\n[source]\ngenerator = "hugo"\n'
        'url = "https://hugo.example.org"\n[forem]\nrate_window = 1\n',
        name="pages",
    )
    blog.write("content/about.md", "---\ntitle: About\n---\nMe.\n")
    blog.write(
        "content/posts/hello.md",
        '---\ntitle: Hello\ndate: 2024-01-01\n---\nSee [me]({{< ref "about" >}}) and '
        '[gone]({{< ref "../../secret" >}}).\n',
    )
    result = blog.run("publish", env=env)
    assert result.exit_code == 0, result.output
    (article,) = [a for a in my_articles(sandbox) if a["title"] == "Hello"]
    assert "[me](https://hugo.example.org/about/)" in article["body_markdown"]
    assert "https://hugo.example.org/../" not in article["body_markdown"]
