"""What `toolkit export` checks before it keeps an archive, and which files it sends."""

from __future__ import annotations

import hashlib
import io
import json
import os
import tarfile
import warnings
import zipfile

import pytest

from toolkit.errors import BrokenDownload
from toolkit.export.verify import Sent, unsafe, verify


def sent(**files: bytes) -> dict[str, Sent]:
    return {
        name.replace("__", "/"): Sent(len(data), hashlib.sha256(data).hexdigest())
        for name, data in files.items()
    }


SENT = sent(**{"index.html": b"12345", "posts__a__index.html": b"abc"})


def make_zip(path, entries: dict[str, bytes]) -> None:
    with zipfile.ZipFile(path, "w") as archive:
        for name, data in entries.items():
            archive.writestr(name, data)


def test_the_files_sent_pass(tmp_path):
    make_zip(
        tmp_path / "a.zip", {"index.html": b"12345", "posts/": b"", "posts/a/index.html": b"abc"}
    )
    assert verify(tmp_path / "a.zip", "zip", SENT) == 2


@pytest.mark.parametrize(
    ("entries", "problem"),
    [
        ({"index.html": b"12345"}, "1 missing ('posts/a/index.html')"),
        (
            {"index.html": b"12345", "posts/a/index.html": b"abc", "extra.txt": b""},
            "1 not sent ('extra.txt')",
        ),
        ({"index.html": b"1234", "posts/a/index.html": b"abc"}, "differ in size"),
        ({"index.html": b"12345", "posts/a/index.html": b"abc", "../evil": b""}, "unsafe entry"),
        ({"index.html": b"12345", "posts/a/index.html": b"abc", "/etc/cron.d/x": b""}, "unsafe"),
        ({"index.html": b"12345", "posts/a/index.html": b"abc", "C:/x": b""}, "unsafe"),
        ({"index.html": b"12345", "posts/a/index.html": b"abc", "other/": b""}, "folders"),
    ],
)
def test_an_archive_that_is_not_the_files_sent_is_refused(tmp_path, entries, problem):
    make_zip(tmp_path / "a.zip", entries)
    with pytest.raises(BrokenDownload) as caught:
        verify(tmp_path / "a.zip", "zip", SENT)
    assert problem in caught.value.message


def test_a_damaged_or_cut_archive_is_refused(tmp_path):
    make_zip(tmp_path / "a.zip", {"index.html": b"12345", "posts/a/index.html": b"abc"})
    data = (tmp_path / "a.zip").read_bytes()
    (tmp_path / "cut.zip").write_bytes(data[: len(data) // 2])
    with pytest.raises(BrokenDownload, match="does not open"):
        verify(tmp_path / "cut.zip", "zip", SENT)
    damaged = bytearray(data)
    damaged[damaged.index(b"12345")] ^= 0xFF  # a stored entry's byte: its CRC no longer holds
    (tmp_path / "bad.zip").write_bytes(bytes(damaged))
    with pytest.raises(BrokenDownload, match="damaged"):
        verify(tmp_path / "bad.zip", "zip", SENT)


def test_a_tar_with_a_link_or_cut_short_is_refused(tmp_path):
    with tarfile.open(tmp_path / "a.tar.gz", "w:gz") as archive:
        for name, data in {"index.html": b"12345", "posts/a/index.html": b"abc"}.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
        link = tarfile.TarInfo("posts/a/link")
        link.type, link.linkname = tarfile.SYMTYPE, "/etc/passwd"
        archive.addfile(link)
    with pytest.raises(BrokenDownload, match="not a file"):
        verify(tmp_path / "a.tar.gz", "tar.gz", SENT)
    data = (tmp_path / "a.tar.gz").read_bytes()
    (tmp_path / "cut.tar.gz").write_bytes(data[:40])
    with pytest.raises(BrokenDownload, match="does not open"):
        verify(tmp_path / "cut.tar.gz", "tar.gz", SENT)


def corrupt(path, data: bytes) -> None:
    """Flip the first byte of `data` where it is stored, uncompressed, in the archive at
    `path`: reading that entry through would fail its CRC (the 'damaged' error)."""
    damaged = bytearray(path.read_bytes())
    damaged[damaged.index(data)] ^= 0xFF
    path.write_bytes(bytes(damaged))


# Each listing is wrong in one way, and its first entry's bytes are damaged: the message
# is about the listing, so no entry was read before the listing was judged.
WRONG_LISTINGS = [
    ([("posts/a/index.html", b"abc"), ("extra.txt", b"")], "1 not sent ('extra.txt')"),
    ([], "1 missing ('posts/a/index.html')"),
    ([("posts/a/index.html", b"abcd")], "differ in size from the files sent: 'posts/a/index.html'"),
    ([("posts/a/index.html", b"abc"), ("../evil", b"")], "unsafe entry name: '../evil'"),
    ([("posts/a/index.html", b"abc"), ("other/", b"")], "no file sent is in: 'other/'"),
    (
        [("posts/a/index.html", b"abc"), ("posts/a/index.html", b"abc")],
        "more than once: 'posts/a/index.html'",
    ),
]


@pytest.mark.parametrize(("rest", "problem"), WRONG_LISTINGS)
def test_a_zip_whose_listing_is_wrong_is_refused_before_an_entry_is_read(tmp_path, rest, problem):
    path = tmp_path / "a.zip"
    with zipfile.ZipFile(path, "w") as bundle, warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # the duplicate name
        for name, data in [("index.html", b"12345"), *rest]:
            bundle.writestr(name, data)
    corrupt(path, b"12345")
    with pytest.raises(BrokenDownload) as caught:
        verify(path, "zip", SENT)
    assert problem in caught.value.message
    assert "damaged" not in caught.value.message


@pytest.mark.parametrize(
    ("rest", "problem"), [case for case in WRONG_LISTINGS if "unsafe" not in case[1]]
)  # py7zr writes no unsafe name
def test_a_7z_whose_listing_is_wrong_is_refused_before_an_entry_is_read(tmp_path, rest, problem):
    py7zr = pytest.importorskip("py7zr")
    path = tmp_path / "a.7z"
    with py7zr.SevenZipFile(path, "w", filters=[{"id": py7zr.FILTER_COPY}]) as bundle:
        for name, data in [("index.html", b"12345"), *rest]:
            if name.endswith("/"):
                (tmp_path / "folder").mkdir()
                bundle.write(tmp_path / "folder", name.rstrip("/"))
            else:
                bundle.writestr(data, name)
    corrupt(path, b"12345")
    with pytest.raises(BrokenDownload) as caught:
        verify(path, "7z", SENT)
    assert problem in caught.value.message
    assert "does not open" not in caught.value.message


@pytest.mark.parametrize(
    ("first", "problem"),
    [
        ("extra.txt", "it holds 'extra.txt', which was not sent"),
        ("index.html", "differ in size from the files sent: 'index.html'"),
    ],
)
def test_a_tar_member_not_as_sent_ends_the_check_before_its_bytes_are_read(
    tmp_path, first, problem
):
    """The first member is not as sent and the stream is cut inside its bytes: reading
    them would fail ('does not open'), so the message shows they were not read."""
    data = os.urandom(256 * 1024)  # does not compress: the cut falls inside these bytes
    with tarfile.open(tmp_path / "a.tar.gz", "w:gz") as bundle:
        info = tarfile.TarInfo(first)
        info.size = len(data)
        bundle.addfile(info, io.BytesIO(data))
    whole = (tmp_path / "a.tar.gz").read_bytes()
    (tmp_path / "cut.tar.gz").write_bytes(whole[: len(whole) // 2])
    with pytest.raises(BrokenDownload) as caught:
        verify(tmp_path / "cut.tar.gz", "tar.gz", SENT)
    assert problem in caught.value.message


def test_a_tar_holding_a_sent_file_twice_is_refused_at_the_second(tmp_path):
    with tarfile.open(tmp_path / "a.tar", "w") as bundle:
        for name, data in [("index.html", b"12345"), ("index.html", b"12345")]:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            bundle.addfile(info, io.BytesIO(data))
    with pytest.raises(BrokenDownload, match="more than once: 'index.html'"):
        verify(tmp_path / "a.tar", "tar", SENT)


def test_a_rar_is_checked_for_its_signature(tmp_path):
    (tmp_path / "a.rar").write_bytes(b"Rar!\x1a\x07\x01\x00" + bytes(20))
    assert verify(tmp_path / "a.rar", "rar", SENT) == 2
    (tmp_path / "b.rar").write_bytes(b"PK\x03\x04")
    with pytest.raises(BrokenDownload, match="not a RAR"):
        verify(tmp_path / "b.rar", "rar", SENT)


def test_unsafe_names():
    for name in ("", "/a", "\\a", "a\\b", "../a", "a/../b", "a//b", "./a", "C:a", "a\x00b"):
        assert unsafe(name), name
    for name in ("a", "a/b", "a/", "caf\u00e9/index.html", "a..b"):
        assert not unsafe(name), name


def test_files_that_cannot_be_exported_faithfully_are_left_out_with_why(
    archive, exportable, tmp_path
):
    site = exportable.root / "site"
    outside = tmp_path / "secret.txt"
    outside.write_text("not the project's")
    (site / "leak.txt").symlink_to(outside)
    (site / "inside.txt").symlink_to(site / "feed.xml")
    (site / "loop").symlink_to(site)
    os.mkfifo(site / "pipe")
    (site / "bad\x01name.html").write_text("x")
    result = exportable.run("export", "--json", env=archive.env)
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["skipped"] == [
        {"path": "loop", "reason": "a symlinked folder is not followed"},
        {
            "path": "bad\x01name.html",
            "reason": "its name holds a control character, a backslash or a double quote",
        },
        {"path": "leak.txt", "reason": "a symlink that leads outside the project is not followed"},
        {"path": "pipe", "reason": "not a regular file"},
    ]
    with zipfile.ZipFile(exportable.root / "site.zip") as bundle:
        assert bundle.read("inside.txt") == (site / "feed.xml").read_bytes()
        assert "leak.txt" not in bundle.namelist()
    text = exportable.run("export", env=archive.env)
    assert "leak.txt: left out: a symlink that leads outside the project" in text.stderr
