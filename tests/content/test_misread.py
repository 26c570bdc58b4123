"""Front matter that YAML reads otherwise than it was meant is an error at its line, with
the likely fix; front matter as the site generators write it never is."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from toolkit.content.misread import misread
from toolkit.content.post import parse_post


def check_lines(project):
    result = project.run("check")
    return result, [line for line in result.output.splitlines() if line.startswith("content/")]


MISREAD = {
    "a title cut by a stray quote is an error with the title quoted": (
        "content/qa.md",
        "---\n"
        "title: 'A Guide to Enhancing QA's Understanding of UX/UI: Tips and Insights'\n"
        "published: true\n"
        "---\nBody.\n",
        "content/qa.md:2: front matter: invalid YAML: did not find expected key; the ' after "
        "'Enhancing QA' ends the quoted value; quote it with double quotes: "
        'title: "A Guide to Enhancing QA\'s Understanding of UX/UI: Tips and Insights"',
    ),
    "a title cut over two lines names the line read as a key": (
        "content/qa.md",
        "---\n"
        "title: 'A Guide to Enhancing QA'\n"
        "s Understanding of UX/UI: Tips and Insights'\n"
        "published: false\n"
        "---\nBody.\n",
        "content/qa.md:3: front matter: 's Understanding of UX/UI' is read as a key (it holds "
        "spaces), so title (line 2) stops before this line; write the whole of title on one "
        'line, in double quotes (title: "..."), or, if this is a key, put it in quotes',
    ),
    "a key glued to text is an error and not an unknown key": (
        "content/cover.md",
        "---\n"
        "title: Components\n"
        "description: Learn how to build reusable\n"
        "components. cover_image: ./assets/cover.png\n"
        "tags: [web]\n"
        "---\nBody.\n",
        "content/cover.md:4: front matter: 'components. cover_image' is read as one key (it "
        "holds spaces): the text before cover_image continues description (line 3), and this "
        "cover_image is not read; put cover_image: at the start of a line of its own",
    ),
    "a key glued to text on the line of its value says to start a line": (
        "content/cover.md",
        "---\ntitle: Components\n"
        "description: Learn how to build components. cover_image: ./assets/cover.png\n"
        "---\nBody.\n",
        "content/cover.md:3: front matter: invalid YAML: mapping values are not allowed in "
        "this context; cover_image: is glued to the text before it: put cover_image: at the "
        "start of a line of its own",
    ),
    "a quote left open over other keys is an error at its line": (
        "content/open.md",
        "---\ntitle: 'Hello\ndescription: it is fine'\ntags: [a]\n---\nBody.\n",
        "content/open.md:2: front matter: title: the ' opened here closes only on line 3, so "
        "description is read as part of its text; close the quote on this line (a ' inside "
        "is written '')",
    ),
    "a quote closed too early says so at the line it opened": (
        "content/open.md",
        "---\ntitle: T\ndescription: 'it's open\n---\nBody.\n",
        "content/open.md:3: front matter: invalid YAML: did not find expected key (in the "
        "block mapping started on line 2); the ' after 'it' ends the quoted value; a ' inside "
        "'...' is written ''",
    ),
}


@pytest.mark.parametrize(("path", "text", "line"), MISREAD.values(), ids=list(MISREAD))
def test_a_misread_front_matter_is_one_error_at_its_line_with_the_fix(project, path, text, line):
    project.write(path, text)
    result, lines = check_lines(project)
    assert result.exit_code == 1
    assert lines == [line]


def test_a_quote_never_closed_says_so_at_the_line_it_opened(project):
    project.write("content/open.md", "---\ntitle: T\ndescription: 'never closed\n---\nBody.\n")
    result, lines = check_lines(project)
    assert result.exit_code == 1
    assert len(lines) == 1 and lines[0].endswith(
        "(in the quoted scalar started on line 3); that quote is never closed "
        "(inside '...', a ' is written '')"
    )


def test_a_post_with_a_misread_front_matter_is_not_published(project, sandbox):
    sandbox.reset()
    env = {"FOREM_BASE_URL": sandbox.base_url, "FOREM_API_KEY": sandbox.demo_api_key}
    project.write(
        "content/cover.md",
        "---\ntitle: Glued cover\npublished: true\ndescription: text\n"
        "more. cover_image: ./c.png\n---\nBody.\n",
    )
    result = project.run("publish", env=env)
    assert result.exit_code == 1
    assert "content/cover.md:5  front matter: 'more. cover_image' is read as one key" in (
        result.output
    )
    with sandbox.client() as api:
        mine = api.get("/api/articles/me/all", params={"per_page": 1000}).json()
    assert [a["title"] for a in mine if a["title"] == "Glued cover"] == []


GENERATORS = {
    # Hugo
    "hugo.md": """---
title: "Hugo: a post"
date: 2024-03-05T10:20:30+01:00
lastmod: 2024-03-06
draft: false
tags:
  - hugo
  - web
categories: [notes]
aliases: ["/old/url/"]
weight: 10
summary: >-
  A folded summary that runs
  over two lines.
params:
  author: Jane
---
Body.
""",
    # Jekyll
    "jekyll.md": """---
layout: post
title:  "Welcome to Jekyll!"
date:   2015-11-17 16:16:01 -0600
categories: jekyll update
permalink: /blog/:year/:title/
excerpt_separator: <!--more-->
author:
  name: Jane Doe
  twitter: jane
---
Body.
""",
    # Astro
    "astro.md": """---
title: 'Astro, with a quote: it''s fine'
description: 'Lorem ipsum dolor sit amet'
pubDate: 'Jul 08 2022'
updatedDate: 2022-07-09T00:00:00.000Z
heroImage: '/blog-placeholder-3.jpg'
devtoId: 1234
canonical_url: https://example.com/astro/
og:image: /og.png
"reading time": 5
---
Body.
""",
}


def test_front_matter_of_the_site_generators_is_never_an_error(project):
    for name, text in GENERATORS.items():
        project.write(f"content/{name}", text)
    result, lines = check_lines(project)
    assert result.exit_code == 0, result.output
    assert lines  # their own keys are warnings
    assert all(": warning: " in line for line in lines)
    assert any("'reading time'" in line or "reading time:" in line for line in lines)
    assert f"{len(GENERATORS)} posts checked: 0 errors" in result.output  # each read whole
    assert {line.split(":", 1)[0] for line in lines} == {f"content/{name}" for name in GENERATORS}


offsets = st.integers(-12 * 60, 14 * 60).map(lambda m: dt.timezone(dt.timedelta(minutes=m)))
identifiers = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,15}", fullmatch=True)
values = st.recursive(
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(),
        st.text(max_size=120),
        st.dates(),
        st.datetimes(timezones=st.one_of(st.none(), offsets)),
    ),
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(identifiers, inner, max_size=3)
    ),
    max_leaves=8,
)


@settings(max_examples=100, deadline=None, database=None)
@given(
    st.dictionaries(identifiers, values, min_size=1, max_size=6),
    st.sampled_from([20, 40, 80]),
    st.sampled_from([None, "'", '"']),
)
def test_keys_written_as_keys_are_never_misread(front, width, style):
    """Whatever values, however a YAML writer wraps or quotes them, a front matter whose
    keys are written the way keys are written is read as written."""
    text = yaml.safe_dump(front, width=width, default_style=style, allow_unicode=True)
    post = parse_post(Path("/p/post.md"), "content/post.md", f"---\n{text}---\nBody.\n")
    assert misread(post) == []


@pytest.mark.parametrize(
    ("key", "misread_as_text"),
    [
        ("two words", True),
        ("ends.", True),
        ("QA's", True),
        ("however,", True),
        ("heroImage", False),
        ("og:image", False),
        ("devto_id", False),
        ("x-default", False),
        ("params.author", False),
        ("2024", False),
    ],
)
def test_which_plain_keys_read_as_text(key, misread_as_text):
    text = f"---\ntitle: T\n{key}: value\n---\nBody.\n"
    problems = misread(parse_post(Path("/p/post.md"), "content/post.md", text))
    assert [p.line for p in problems] == ([3] if misread_as_text else [])
