"""`plan` says why a post would be updated: toolkit.toml changed what is sent, the front
matter changed (which keys), or the body changed; not "the post changed" for a change
of settings alone."""

from __future__ import annotations

import json

CONFIG = """
[site]
title = "Reasons site"
url = "https://example.com/blog"
assets_base_url = "{assets}"

[forem]
rate_window = 1
"""


def reason_of(site, env, key: str = "content/hello.md") -> tuple[str, str]:
    result = site.run("plan", "--json", env=env)
    assert result.exit_code == 0, result.output
    (post,) = [p for p in json.loads(result.stdout)["posts"] if p["path"] == key]
    return post["action"], post["message"]


def project(make_project, assets: str):
    site = make_project(CONFIG.format(assets=assets))
    (site.content / "img").mkdir()
    (site.content / "img" / "shot.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    site.post(
        "hello",
        "Hello reasons",
        "Look:\n\n![a shot](img/shot.png)\n\nMore text.\n",
        published=True,
        tags=["python"],
        cover_image="img/shot.png",
    )
    return site


def test_a_toolkit_toml_change_is_named_as_settings(make_project, env):
    site = project(make_project, "https://cdn.example/one")
    assert site.run("publish", env=env).exit_code == 0
    assert reason_of(site, env)[0] == "unchanged"
    config = (site.root / "toolkit.toml").read_text()
    (site.root / "toolkit.toml").write_text(config.replace("/one", "/two"))
    action, reason = reason_of(site, env)
    assert action == "update"
    assert reason.endswith(": toolkit.toml changed what is sent (cover_image, image URLs)")
    assert "post changed" not in reason and "body" not in reason


def test_a_front_matter_edit_names_its_keys_and_a_body_edit_says_body(make_project, env):
    site = project(make_project, "https://cdn.example/one")
    assert site.run("publish", env=env).exit_code == 0
    site.post(
        "hello",
        "Hello reasons",
        "Look:\n\n![a shot](img/shot.png)\n\nMore text.\n",
        published=True,
        tags=["python", "testing"],
        cover_image="img/shot.png",
    )
    action, reason = reason_of(site, env)
    assert action == "update" and reason.endswith(": the front matter changed (tags)")
    site.post(
        "hello",
        "Hello reasons",
        "Look:\n\n![a shot](img/shot.png)\n\nOther text.\n",
        published=True,
        tags=["python"],
        cover_image="img/shot.png",
    )
    action, reason = reason_of(site, env)
    assert action == "update" and reason.endswith(": the body changed")


def test_a_renamed_image_is_a_body_edit_not_a_setting(make_project, env):
    site = project(make_project, "https://cdn.example/one")
    assert site.run("publish", env=env).exit_code == 0
    (site.content / "img" / "other.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    site.post(
        "hello",
        "Hello reasons",
        "Look:\n\n![a shot](img/other.png)\n\nMore text.\n",
        published=True,
        tags=["python"],
        cover_image="img/shot.png",
    )
    action, reason = reason_of(site, env)
    assert action == "update" and reason.endswith(": the body changed")


def test_the_same_values_written_otherwise_are_toolkits_template(tmp_path):
    from toolkit.content.post import parse_post
    from toolkit.sync.plan import what_changed

    text = "---\ntitle: A\npublished: true\ntags: x\n---\nText.\n"
    post = parse_post(tmp_path / "a.md", "content/a.md", text)
    before = "---\npublished: true\ntitle: A\ntags: x\n---\nText.\n"
    assert what_changed(post, text, before) == (
        "toolkit's template of the article changed (the same front matter, written otherwise)"
    )
    unreadable = "---\nnot: [yaml\n---\nText.\n"  # what was sent cannot be compared
    assert what_changed(post, text, unreadable) == "the post changed since the last publish"


def test_an_empty_description_left_out_is_toolkits_template(tmp_path):
    from toolkit.content.post import parse_post
    from toolkit.sync.plan import what_changed

    post = parse_post(tmp_path / "a.md", "content/a.md", "---\ntitle: A\ndescription:\n---\nT.\n")
    before = "---\ntitle: A\ndescription: null\n---\nT.\n"  # what an older toolkit sent
    now = "---\ntitle: A\n---\nT.\n"
    assert what_changed(post, now, before).startswith("toolkit's template of the article")
    given = "---\ntitle: A\ndescription: Now said\n---\nT.\n"
    assert what_changed(post, given, before) == "the front matter changed (description)"


def test_an_article_written_on_the_website_is_not_said_to_have_changed_keys(
    make_project, env, sandbox
):
    # An article written in the website's editor: its text holds no front matter.
    made = sandbox.control(
        "POST",
        "/forem/articles",
        {
            "username": "demo",
            "articles": [
                {"title": "Hello reasons", "body_markdown": "Old text.\n", "published": True}
            ],
        },
    )
    site = make_project(CONFIG.format(assets="https://cdn.example/one"))
    site.post("hello", "Hello reasons", "New text.\n", published=True, id=made["ids"][0])
    action, reason = reason_of(site, env)
    assert action == "update"
    assert reason.endswith(
        "differs from the post (the article's text on the website has no front matter; "
        "the body changed)"
    ), reason
