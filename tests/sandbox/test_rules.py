"""The small rules on their own: front matter reading, slugs, dates, reading time, seed."""

from __future__ import annotations

import datetime as dt
import random

import pytest

from toolkit_sandbox.forem import frontmatter, text
from toolkit_sandbox.forem.article_writes import parse_date, to_sentence
from toolkit_sandbox.forem.seed import _rows


def test_front_matter_is_split_from_the_content() -> None:
    parsed = frontmatter.parse("---\r\ntitle: A: B\r\ntags: a, b\r\n---\r\nBody\r\n")
    assert parsed.front_matter == {"title": "A: B", "tags": "a, b"}
    assert parsed.content == "Body\n"
    assert frontmatter.parse("No front matter").front_matter == {}
    assert frontmatter.parse("---\n---\nEmpty block").front_matter == {}
    assert frontmatter.parse("Text\n---\ntitle: late\n---\n").front_matter == {}


def test_fixes_the_api_applies_before_reading() -> None:
    fm = frontmatter.parse(
        '---\ntitle: Say "hi": now\ndescription: a: b\nPublished: true\ntags: #python #docs\n---\n'
    ).front_matter
    assert fm == {
        "title": 'Say "hi": now',
        "description": "a: b",
        "published": True,
        "tags": "python,docs",
    }
    assert (
        frontmatter.parse("---\ntitle: 'quoted: already'\n---\n").front_matter["title"]
        == "quoted: already"
    )


@pytest.mark.parametrize(
    ("block", "message"),
    [
        ("date: 2021-01-01", "Tried to load unspecified class: Date"),
        ("when: [2021-01-01T00:00:00Z]", "Tried to load unspecified class: Time"),
        ("- a\n- b", "front matter must be a YAML mapping"),
        ("a: [1, 2", "(<unknown>): "),
        ("a: &x 1\nb: *x", "Alias parsing was not enabled"),
    ],
)
def test_front_matter_errors(block: str, message: str) -> None:
    with pytest.raises(frontmatter.FrontMatterError) as caught:
        frontmatter.parse(f"---\n{block}\n---\nBody")
    assert str(caught.value).startswith(message)


def test_yaml_errors_carry_a_line_and_column() -> None:
    with pytest.raises(frontmatter.FrontMatterError, match=r"at line 2 column \d+"):
        frontmatter.parse("---\nok: 1\nbad: [x\n---\n")


def test_tag_names_and_presence() -> None:
    assert frontmatter.tag_names("Python, docs ,python") == ["python", "docs"]
    assert frontmatter.tag_names(["A", "b,c", 3]) == ["a", "b", "c", "3"]
    assert frontmatter.tag_names(None) == [] and frontmatter.tag_names(False) == []
    assert not frontmatter.present("  ") and not frontmatter.present([]) and frontmatter.present(0)


def test_slugs_and_id_codes() -> None:
    rng = random.Random(1)
    assert text.parameterize("Hello, World! Ça_va?") == "hello-world-cava"
    slug = text.slug_for("Hello World", rng)
    assert slug.startswith("hello-world-") and set(slug.rsplit("-", 1)[1]) <= set(
        "0123456789abcdefghijklmnop"
    )
    assert "-temp-slug-" in text.temp_slug_for("Draft", rng)
    for number in (0, 1, 25, 26, 40001, 123456789):
        assert text.from_base26(text.base26(number)) == number
    assert text.base26(40001) == "274d"
    assert text.from_base26("xyz") is None and text.from_base26("") is None


def test_dates() -> None:
    this_year = dt.date.today().year
    assert text.readable_date(f"{this_year}-08-01T10:00:00.000000Z") == "Aug  1"
    assert text.readable_date("2019-08-01T10:00:00.000000Z") == "Aug  1 '19"
    assert text.readable_date(None) is None
    assert text.iso("2019-08-01T10:00:00.123456Z") == "2019-08-01T10:00:00Z"
    assert text.listing_time("2021-04-07T08:29:42.000000Z") == "2021-04-07 08:29:42 UTC"
    assert text.joined_at("2017-01-01T00:00:00.000000Z") == "Jan 1, 2017"
    assert parse_date("2019-07-01T10:00+02:00") == dt.datetime(2019, 7, 1, 8, 0, tzinfo=dt.UTC)
    assert parse_date(20190701) == dt.datetime(2019, 7, 1, tzinfo=dt.UTC)
    assert parse_date("tomorrow") is None and parse_date("2019-13-45") is None


def test_reading_time_description_duration() -> None:
    assert text.reading_time("") == 0
    assert text.reading_time("one two") == 1
    assert text.reading_time(" ".join(["w"] * 551)) == 3
    long_html = "<p>" + "x" * 150 + "</p>"
    assert text.default_description(long_html, "A") == "x" * 100 + "..."
    assert text.default_description("<p>Tom &amp; Jerry</p>", "A") == "Tom & Jerry"
    assert text.duration_text(707) == "11:47" and text.duration_text(3723) == "1:02:03"


def test_sentences() -> None:
    assert to_sentence(["a"]) == "a"
    assert to_sentence(["a", "b"]) == "a and b"
    assert to_sentence(["a", "b", "c"]) == "a, b, and c"


def test_the_seed_is_deterministic() -> None:
    built = _rows(True)
    _rows.cache_clear()
    assert _rows(True) == built
    tables = {table for table, _, _ in built}
    assert {
        "users",
        "articles",
        "comments",
        "listings",
        "podcast_episodes",
        "reading_list",
        "user_follows",
        "tag_follows",
        "collections",
        "organizations",
    } <= tables
