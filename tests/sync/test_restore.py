"""A remote version written back in the writer's form (`toolkit/sync/restore.py`), over
front matter and bodies of every style a writer uses (hypothesis)."""

from __future__ import annotations

import textwrap

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toolkit.clients.forem_models import Article
from toolkit.config import load_config
from toolkit.content import payload_for
from toolkit.content.post import parse_post
from toolkit.sync.restore import Names, writer_form

CONFIG = """
[site]
title = "T"
url = "https://example.com/blog"
assets_base_url = "https://cdn.example.com/assets/"
"""
NAMES = Names("local", "website")


@pytest.fixture(scope="module")
def config(tmp_path_factory):
    root = tmp_path_factory.mktemp("restore")
    (root / "content").mkdir()
    (root / "toolkit.toml").write_text(textwrap.dedent(CONFIG))
    return load_config(root / "toolkit.toml", env={})


titles = st.sampled_from(
    ["title: Plain title\n", "title: 'Quoted: yes'\n", 'title: "Double, quoted"\n']
)
tag_styles = st.sampled_from(
    [
        "",
        "tags: [python, web]\n",
        "tags:\n  - python\n  - web\n",
        "tags:\n- python\n- web\n",
        "tags: python, web\n",
        "tags: [Python]  # capitals are lowered when sent\n",
    ]
)
others = st.lists(
    st.sampled_from(
        [
            "# a comment of the writer\n",
            "date: 2024-03-01\n",
            "description: 'It''s short'\n",
            "published: true\n",
            "published: false\n",
            "cover_image: ./img/cover.png\n",
            "series: Notes\n",
            "premium: false\n",
            "slug: my-own-slug\n",
            "\n",
        ]
    ),
    max_size=5,
    unique=True,
).filter(lambda keys: not ("published: true\n" in keys and "published: false\n" in keys))
body_lines = st.lists(
    st.sampled_from(
        [
            "Some text.\n",
            "\n",
            "# A heading\n",
            "![a picture](img/a.png)\n",
            '![up](../img/b.png "title")\n',
            '<img src="img/c.png" alt="c">\n',
            "[a link](https://example.org)\n",
            "```python\nprint('![x](img/in-code.png)')\n```\n",
            "Text with trailing spaces.  \n",
        ]
    ),
    max_size=10,
)


def article_for(body_markdown: str, published: bool) -> Article:
    return Article.from_json(
        {
            "id": 7,
            "title": "t",
            "slug": "t",
            "path": "/u/t",
            "tag_list": [],
            "published": published,
            "body_markdown": body_markdown,
        }
    )


def post_of(config, front: str, body: str):
    path = config.site.content_dir / "notes" / "post.md"
    return parse_post(path, "content/notes/post.md", f"---\n{front}---\n{body}")


def from_website(config, post, theirs: str | None = None, *, published: bool | None = None):
    """`post` written back when the website holds `theirs` (default: what was sent) and
    the lock's base is what was sent, the website's side preferred."""
    sent = payload_for(post, config).body_markdown
    theirs = sent if theirs is None else theirs
    return writer_form(
        post,
        sent=sent,
        base=sent,
        theirs=theirs,
        article=article_for(theirs, post.published if published is None else published),
        prefer_theirs=True,
        names=NAMES,
    )


@settings(max_examples=150, deadline=None)
@given(titles, tag_styles, others, body_lines)
def test_the_website_holding_what_was_sent_gives_the_file_back_byte_for_byte(
    config, title, tags, other, body
):
    post = post_of(config, title + tags + "".join(other), "".join(body))
    merged = from_website(config, post)
    assert (merged.text, merged.conflicts) == (post.source, 0)


@settings(max_examples=150, deadline=None)
@given(
    titles, tag_styles, others, body_lines, st.sampled_from(["Edited.\n", "![new](img/a.png)\n"])
)
def test_a_line_edited_on_the_website_is_the_only_change(config, title, tags, other, body, edit):
    # An image the post already shows, edited into another line on the website: written
    # back as the writer writes it.
    text = "![a picture](img/a.png)\n" + "".join(body) + "The last line.\n"
    post = post_of(config, title + tags + "".join(other), text)
    sent = payload_for(post, config).body_markdown
    theirs = sent.replace(
        "The last line.\n",
        edit.replace("img/a.png", "https://cdn.example.com/assets/notes/img/a.png"),
    )
    merged = from_website(config, post, theirs)
    assert merged.text == post.source.replace("The last line.\n", edit)


def test_a_title_changed_on_the_website_keeps_the_writer_s_quotes_and_comment(config):
    post = post_of(config, "title: 'Old: one'  # why\ntags:\n  - a\n", "Body.\n")
    sent = payload_for(post, config).body_markdown
    theirs = sent.replace("title: 'Old: one'", "title: 'New: two'").replace("tags: a", "tags: a, b")
    merged = from_website(config, post, theirs, published=False)
    assert merged.text == "---\ntitle: 'New: two'  # why\ntags:\n  - a\n  - b\n---\nBody.\n"


@settings(max_examples=100, deadline=None)
@given(titles, tag_styles, others, body_lines)
def test_edits_of_both_sides_apart_are_both_kept(config, title, tags, other, body):
    front = title + tags + "".join(other)
    text = "The first line.\n\nMiddle.\n" + "".join(body) + "\nThe last line.\n"
    original = post_of(config, front, text)
    base = payload_for(original, config).body_markdown
    local = post_of(config, front, text.replace("The first line.", "Mine."))
    theirs = base.replace("The last line.", "Theirs.")
    merged = writer_form(
        local,
        sent=payload_for(local, config).body_markdown,
        base=base,
        theirs=theirs,
        article=article_for(theirs, local.published),
        prefer_theirs=False,
        names=NAMES,
    )
    assert merged.conflicts == 0
    assert merged.text == local.source.replace("The last line.", "Theirs.")


def test_the_website_cannot_set_toolkit_s_own_keys(config):
    post = post_of(config, "title: Mine\nslug: mine\n", "Body.\n")
    sent = payload_for(post, config).body_markdown
    theirs = sent.replace(
        "title: Mine\n", "title: Mine\npremium: true\nslug: ../../x\npinned: true\n"
    )
    merged = from_website(config, post, theirs.replace("Body.", "Body, edited."), published=False)
    assert merged.text == "---\ntitle: Mine\nslug: mine\n---\nBody, edited.\n"
