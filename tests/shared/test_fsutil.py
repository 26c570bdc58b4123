"""Names from outside made into safe file names, paths checked to stay in their folder, and
the one check that a file needs writing."""

from __future__ import annotations

import pytest

from toolkit.errors import ToolkitError, UnsafeNameError
from toolkit.fsutil import path_inside, safe_name, write_if_changed
from toolkit.site.manifest import OutputRecord
from toolkit.site.output import write_if_changed as write_output


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("hello-world-4k2j", "hello-world-4k2j"),
        ("über-café", "über-café"),
        ("../../x", "x"),
        ("/etc/passwd", "etc-passwd"),
        ("a\\b", "a-b"),
        ("nul\x00byte", "nul-byte"),
        ("esc\x1b[31m\r\nred", "esc-[31m-red"),
        ("right\u202eto-left", "right-to-left"),
        (".hidden", "hidden"),
        ("_reserved", "reserved"),
        ("  spaced out. ", "spaced-out"),
    ],
)
def test_safe_name_reduces_to_one_plain_name(text, expected):
    assert safe_name(text) == expected
    assert safe_name(expected) == expected


@pytest.mark.parametrize("text", ["", "..", ".", "/", "\x00", "._-", "con", "NUL.json", "lpt1", 7])
def test_safe_name_refuses_what_leaves_nothing_usable(text):
    with pytest.raises(UnsafeNameError) as caught:
        safe_name(text)
    assert isinstance(caught.value, ToolkitError)


def test_safe_name_is_bounded_in_bytes():
    assert len(safe_name("x" * 10_000).encode()) == 100
    assert len(safe_name("é" * 10_000, max_length=41).encode()) == 40  # never half a character
    assert len(safe_name("x" * 50, max_length=10)) == 10


def test_path_inside_accepts_a_plain_name(tmp_path):
    assert path_inside(tmp_path, "a.json") == tmp_path / "a.json"


@pytest.mark.parametrize("name", ["", ".", "..", "../a", "a/b", "/etc/x", "a\\b", "a\x00b"])
def test_path_inside_refuses_what_is_not_a_plain_name(tmp_path, name):
    with pytest.raises(UnsafeNameError):
        path_inside(tmp_path, name)


def test_path_inside_refuses_a_symlink_that_leads_out(tmp_path):
    folder = tmp_path / "folder"
    folder.mkdir()
    (folder / "link.json").symlink_to(tmp_path / "elsewhere.json")
    with pytest.raises(UnsafeNameError):
        path_inside(folder, "link.json")


@pytest.mark.parametrize("durable", [True, False])
def test_write_if_changed_writes_only_new_bytes(tmp_path, durable):
    path = tmp_path / "new" / "folder" / "file.json"
    assert write_if_changed(path, b"one", durable=durable) is True
    before = path.stat()
    assert write_if_changed(path, b"one", durable=durable) is False
    assert path.stat().st_mtime_ns == before.st_mtime_ns and path.stat().st_ino == before.st_ino
    assert write_if_changed(path, b"two!", durable=durable) is True
    assert path.read_bytes() == b"two!"
    assert [p.name for p in path.parent.iterdir()] == ["file.json"]  # no temporary file left


def test_the_site_writes_through_the_same_check(tmp_path):
    path = tmp_path / "index.html"
    path.write_bytes(b"<p>same</p>")  # from another run: no record of it
    digest, _, size, written = write_output(path, b"<p>same</p>", None, False)
    assert not written and size == 11
    record = OutputRecord(digest, digest, 0, 0)
    assert write_output(path, b"<p>other</p>", record, False).written is True
