"""The payload a post sends: deterministic bytes, and each rewriting rule."""

from __future__ import annotations

import json
import string
from pathlib import Path

import yaml
from hypothesis import given
from hypothesis import strategies as st

from toolkit.config import load_config
from toolkit.content import images, load_posts, payload_for
from toolkit.content.fields import LINE_BREAK
from toolkit.content.payload import build_payload, canonical_json
from toolkit.content.post import Post, parse_post

CONFIG = """
[site]
title = "T"
url = "https://example.com/blog"
assets_base_url = "https://cdn.example.com/assets/"
"""


def payload_of(project, name="p"):
    config = load_config(project.root / "toolkit.toml", env={})
    posts, problems = load_posts(config)
    assert problems == []
    (post,) = [p for p in posts if p.stem == name]
    return payload_for(post, config)


def split_front_matter(body_markdown: str) -> tuple[dict, str]:
    _, front, body = body_markdown.split("---\n", 2)
    return yaml.safe_load(front), body


def test_same_post_same_bytes(make_project):
    project = make_project(CONFIG)
    project.write(
        "content/p.md", "---\ntitle: Hello\ntags: Python, Web\ndate: 2024-03-01\n---\nBody\n"
    )
    first = payload_of(project)
    second = payload_of(project)
    assert canonical_json(first.data) == canonical_json(second.data)
    assert first.digest == second.digest
    project.write(
        "content/p.md", "---\ntitle: Hello\ntags: Python, Web\ndate: 2024-03-01\n---\nBody!\n"
    )
    assert payload_of(project).digest != first.digest


def test_fields_and_front_matter_agree(make_project):
    project = make_project(CONFIG)
    project.write(
        "content/p.md",
        "---\ntitle: '  Hello: world  '\npublished: true\ntags: [Python, WEB, python]\n"
        "series: Intro\ndescription: About it\n---\nBody\n",
    )
    article = payload_of(project).article
    assert article["title"] == "Hello: world"
    assert article["published"] is True
    assert article["tags"] == ["python", "web"]
    assert article["series"] == "Intro"
    front, body = split_front_matter(article["body_markdown"])
    assert front["title"] == article["title"]
    assert front["published"] is True
    assert front["tags"] == "python, web"
    assert front["series"] == "Intro"
    assert front["description"] == "About it"
    assert body == "Body\n"
    assert set(article) == {"title", "published", "tags", "series", "body_markdown"}


def test_dates_are_quoted_strings(make_project):
    project = make_project(CONFIG)
    project.write(
        "content/p.md",
        "---\ntitle: T\ndate: 2024-03-01\nextra:\n  when: 2020-01-01 10:00:00\n---\nB\n",
    )
    body_markdown = payload_of(project).body_markdown
    assert "date: '2024-03-01'" in body_markdown
    assert "when: '2020-01-01T10:00:00'" in body_markdown
    # The API loads front matter without date classes: a plain YAML load must give strings.
    front, _ = split_front_matter(body_markdown)
    assert front["date"] == "2024-03-01"


def test_toolkit_keys_are_stripped_and_organization_id_is_a_field(make_project):
    project = make_project(CONFIG)
    project.write(
        "content/p.md", "---\ntitle: T\npremium: false\nslug: my-page\norganization_id: 7\n---\nB\n"
    )
    article = payload_of(project).article
    front, _ = split_front_matter(article["body_markdown"])
    assert not {"premium", "slug", "organization_id"} & set(front)
    assert article["organization_id"] == 7
    # [site] url alone is where the site is served, not a request for a canonical URL.
    assert "canonical_url" not in front


def test_the_site_is_the_canonical_home_only_when_the_config_says_so(make_project):
    project = make_project(CONFIG + '\n[forem]\ncanonical = "site"\n')
    project.write("content/p.md", "---\ntitle: T\nslug: my-page\n---\nB\n")
    payload = payload_of(project)
    front, _ = split_front_matter(payload.body_markdown)
    assert front["canonical_url"] == "https://example.com/blog/my-page/"
    assert payload.canonical_url == "https://example.com/blog/my-page/"
    project.write(
        "content/p.md", "---\ntitle: T\ncanonical_url: https://elsewhere.example/x\n---\nB\n"
    )
    front, _ = split_front_matter(payload_of(project).body_markdown)
    assert front["canonical_url"] == "https://elsewhere.example/x"  # the post's own wins


def test_an_empty_description_is_left_out_never_null(make_project):
    project = make_project(CONFIG)
    for written in ("description:", "description: ''", "description: '   '", "description: ~"):
        project.write("content/p.md", f"---\ntitle: T\n{written}\n---\nB\n")
        body_markdown = payload_of(project).body_markdown
        front, _ = split_front_matter(body_markdown)
        assert "description" not in front, written
        assert "null" not in body_markdown, written
    project.write("content/p.md", "---\ntitle: T\ndescription: Kept\n---\nB\n")
    front, _ = split_front_matter(payload_of(project).body_markdown)
    assert front["description"] == "Kept"


def test_canonical_url_is_kept_when_given_and_absent_without_site_url(make_project):
    project = make_project(CONFIG)
    project.write(
        "content/p.md", "---\ntitle: T\ncanonical_url: https://elsewhere.example/x\n---\nB\n"
    )
    front, _ = split_front_matter(payload_of(project).body_markdown)
    assert front["canonical_url"] == "https://elsewhere.example/x"
    bare = make_project("[site]\ntitle = 'T'\n", name="bare")
    bare.write("content/p.md", "---\ntitle: T\n---\nB\n")
    front, _ = split_front_matter(payload_of(bare).body_markdown)
    assert "canonical_url" not in front


def test_relative_images_become_absolute(make_project):
    project = make_project(CONFIG)
    (project.content / "posts" / "img").mkdir(parents=True)
    (project.content / "posts" / "img" / "a b.png").write_bytes(b"x")
    (project.content / "cover.jpg").write_bytes(b"x")
    project.write(
        "content/posts/p.md",
        "---\ntitle: T\ncover_image: ../cover.jpg\n---\n"
        '![A](img/a%20b.png) and ![R][ref] and <img src="/cover.jpg" alt="">\n'
        "![remote](https://example.org/x.png)\n\n[ref]: img/a%20b.png\n\n"
        "```\n![code](img/a%20b.png)\n```\n",
    )
    body_markdown = payload_of(project).body_markdown
    front, body = split_front_matter(body_markdown)
    assert front["cover_image"] == "https://cdn.example.com/assets/cover.jpg"
    assert "![A](https://cdn.example.com/assets/posts/img/a%20b.png)" in body
    assert "[ref]: https://cdn.example.com/assets/posts/img/a%20b.png" in body
    assert '<img src="https://cdn.example.com/assets/cover.jpg"' in body
    assert "![remote](https://example.org/x.png)" in body
    assert "```\n![code](img/a%20b.png)\n```" in body  # code shows the source as written


def test_payload_is_plain_json(make_project):
    project = make_project(CONFIG)
    project.write("content/p.md", "---\ntitle: Ünïcode — ok\n---\nB\n")
    data = json.loads(canonical_json(payload_of(project).data))
    assert data["article"]["title"] == "Ünïcode — ok"


def test_front_matter_sent_has_no_yaml_anchors(make_project):
    project = make_project(CONFIG)
    project.write(
        "content/p.md", "---\ntitle: Hello\nlinks: &l [a, b]\nmore_links: *l\n---\nBody\n"
    )
    body = payload_of(project).body_markdown
    assert "&" not in body and "*" not in body, body
    front, _ = split_front_matter(body)
    assert front["links"] == front["more_links"] == ["a", "b"]


# -- properties: what is sent, for any post -------------------------------------------------

CONTENT = Path("/nonexistent-project/content")
NAME = st.text(alphabet=string.ascii_letters + string.digits + "-_ ", min_size=1, max_size=12)
RELATIVE = st.builds(
    lambda prefix, parts, ext: prefix + "/".join(parts) + ext,
    st.sampled_from(["", "./", "/"]),
    st.lists(NAME.map(lambda n: n.strip() or "x"), min_size=1, max_size=3),
    st.sampled_from([".png", ".jpg", ".svg"]),
).map(lambda src: src.replace(" ", "%20"))
IMAGE = st.one_of(
    RELATIVE.map(lambda src: f"![alt]({src})"),
    RELATIVE.map(lambda src: f'<img src="{src}" alt="">'),
    RELATIVE.map(lambda src: f"![ref][r]\n\n[r]: {src}"),
    st.just("![remote](https://example.org/a.png)"),
)
PROSE = st.text(alphabet=string.ascii_letters + " .,\n", max_size=40)


def _post(meta: dict, body: str) -> Post:
    text = "---\n" + yaml.safe_dump(meta, sort_keys=False) + "---\n" + body
    return parse_post(CONTENT / "posts" / "p.md", "content/posts/p.md", text)


@given(
    st.lists(st.tuples(PROSE, IMAGE), max_size=5),
    st.one_of(st.none(), RELATIVE),
    st.booleans(),
)
def test_with_a_host_no_image_sent_is_relative_and_without_one_nothing_is_rewritten(
    parts, cover, published
):
    body = "".join(f"{prose}\n\n{image}\n\n" for prose, image in parts)
    meta = {"title": "T", "published": published}
    if cover is not None:
        meta["cover_image"] = cover
    post = _post(meta, body)
    hosted = build_payload(post, CONTENT, assets_base_url="https://cdn.example/c")
    sent_front, sent_body = split_front_matter(hosted.body_markdown)
    relative = [r.src for r in images.find_images(sent_body) if images.is_relative(r.src)]
    assert relative == []
    if cover is not None:
        assert sent_front["cover_image"].startswith("https://cdn.example/c/")
    bare = build_payload(post, CONTENT)
    assert split_front_matter(bare.body_markdown)[1] == post.body  # as written
    assert "canonical_url" not in split_front_matter(bare.body_markdown)[0]


@given(
    st.one_of(st.none(), st.text(alphabet=" \t", max_size=4), st.text(max_size=40)),
    st.one_of(st.none(), st.just("https://me.example/blog")),
    st.one_of(st.none(), st.just("https://a.example/own")),
)
def test_description_and_canonical_url_are_sent_only_when_they_say_something(
    description, home, own
):
    meta: dict = {"title": "T", "description": description}
    if own is not None:
        meta["canonical_url"] = own
    post = _post(meta, "Body.\n")
    payload = build_payload(post, CONTENT, canonical_home=home)
    front, _ = split_front_matter(payload.body_markdown)
    said = isinstance(description, str) and description.strip()
    assert ("description" in front) == bool(said)
    if said:  # on one line: Forem's front-matter fixer breaks a YAML block
        sent = front["description"]
        if LINE_BREAK.search(description) is None:
            assert sent == description
        assert sent.split() == description.split() and LINE_BREAK.search(sent) is None
    assert front.get("canonical_url") == (own or (f"{home}/p/" if home else None))
    assert payload.canonical_url == front.get("canonical_url")
    assert build_payload(post, CONTENT, canonical_home=home).digest == payload.digest


def test_the_pushed_commit_hosts_images_on_github_and_on_an_enterprise_server(make_project):
    from toolkit.content.hosting import image_host

    project = make_project("[site]\ntitle = 'T'\n", name="repo/docs/blog")
    (project.root.parent.parent / ".git").mkdir()  # the repository's root, two folders up
    config = load_config(project.root / "toolkit.toml", env={})
    ci = {"GITHUB_ACTIONS": "true", "GITHUB_REPOSITORY": "me/site", "GITHUB_SHA": "abc123"}
    assert image_host(config, ci).base_url == (
        "https://raw.githubusercontent.com/me/site/abc123/docs/blog/content"
    )
    enterprise = {**ci, "GITHUB_SERVER_URL": "https://git.example.com/"}
    assert image_host(config, enterprise).base_url == (
        "https://git.example.com/me/site/raw/abc123/docs/blog/content"
    )
    # Not in CI, or CI without the commit: nothing hosts them.
    assert image_host(config, {**ci, "GITHUB_ACTIONS": "false"}).base_url is None
    assert image_host(config, {**ci, "GITHUB_SHA": ""}).base_url is None
    # Without a .git folder, GITHUB_WORKSPACE says where the repository is.
    (project.root.parent.parent / ".git").rmdir()
    workspace = {**ci, "GITHUB_WORKSPACE": str(project.root.parent)}
    assert image_host(config, workspace).base_url == (
        "https://raw.githubusercontent.com/me/site/abc123/blog/content"
    )
