"""`toolkit demo` (what `make demo` runs): the whole pipeline offline, in `.toolkit/demo/`."""

from __future__ import annotations

import json
import re
import zipfile
from pathlib import Path

import pytest

REPOSITORY = Path(__file__).resolve().parents[2]
README = " ".join((REPOSITORY / "README.md").read_text(encoding="utf-8").split())


def readme_demo_numbers(readme: str) -> dict[str, int]:
    """What the README says `make demo` does, in numbers."""
    found = re.search(
        r"pulls the demo account's \*\*(?P<pulled>\d+)\*\* articles as posts, publishes the "
        r"\*\*(?P<guide>\d+)\*\* posts of this project's user guide \(`content/`: "
        r"(?P<created>\d+) created, the (?P<unchanged>\d+) pulled ones unchanged; .*? "
        r"builds a site of \*\*(?P<built>\d+)\*\* posts \((?P<drafts>\d+) stay off the "
        r"public site",
        readme,
    )
    assert found, "README.md: the paragraph on `make demo` lost its numbers"
    return {name: int(value) for name, value in found.groupdict().items()}


def demo_numbers(output: str) -> dict[str, int]:
    """The same numbers, from what the demo prints."""

    def number(pattern: str) -> int:
        found = re.search(pattern, output)
        assert found, f"{pattern!r} not in the demo's output:\n{output}"
        return int(found.group(1))

    pulled = number(r"pulled (\d+) article\(s\)")
    built = number(r"built (\d+) posts")
    guide = len(list((REPOSITORY / "content").glob("*.md")))
    return {
        "pulled": pulled,
        "guide": guide,
        "created": number(r"create\s+│\s+(\d+)"),
        "unchanged": number(r"unchanged\s+│\s+(\d+)"),
        "built": built,
        "drafts": pulled + guide - built,
    }


def test_demo_publishes_mirrors_and_builds_without_touching_the_project(demo_run):
    # The session's demo (tests/conftest.py), on a copy of this repository.
    project, result, before = demo_run.project, demo_run, demo_run.before
    assert result.exit_code == 0, result.output
    workdir = demo_run.workdir
    site = workdir / "site"
    archive = workdir / "site.zip"
    assert "The site as an archive: .toolkit/demo/site.zip (" in result.output
    with zipfile.ZipFile(archive) as bundle:
        names = set(bundle.namelist())
    built = {p.relative_to(site).as_posix() for p in site.rglob("*") if p.is_file()}
    assert names == built and "getting-started/index.html" in names
    assert f"{len(built)} entries, verified)" in result.output
    # The README tells what the demo prints.
    assert readme_demo_numbers(README) == demo_numbers(result.output)
    # It ends with the command that serves the site, and where to open it.
    assert (
        "toolkit serve --dir .toolkit/demo/site\nand open http://127.0.0.1:8000/" in result.output
    )
    assert "create" in result.output

    # The project itself is as it was: no lock for the real service, no mirror in content/.
    after = sorted(
        str(p.relative_to(project.root))
        for p in project.root.rglob("*")
        if ".toolkit" not in p.parts
    )
    assert after == before

    # The guide was published to the sandbox and the demo account's articles pulled.
    lock = json.loads((workdir / "toolkit.lock").read_text())["posts"]
    assert "content/getting-started.md" in lock and len(lock) > 8
    # The site shows the seeded comment threads and the reading list.
    threads = [
        json.loads(p.read_text()) for p in (workdir / "content/_mirror/comments").glob("*.json")
    ]
    commented = [t for t in threads if t["comments"]]
    assert commented
    first = commented[0]["comments"][0]
    slug = next(
        p.stem
        for p in (workdir / "content/_mirror/comments").glob("*.json")
        if json.loads(p.read_text()) == commented[0]
    )
    page = (site / slug / "index.html").read_text()
    assert first["user"]["name"] in page
    assert (site / "reading-list" / "index.html").is_file()
    assert (site / "getting-started" / "index.html").is_file()
    # The site links nothing to the sandbox, which is stopped by now: no comment author,
    # "Join the discussion" or reading-list link.
    started = re.search(r"sandbox running at (http://\S+)", result.output)
    assert started is not None, result.output
    sandbox_url = started[1]
    linking = sorted(
        p.relative_to(site).as_posix()
        for p in site.rglob("*.html")
        if f'href="{sandbox_url}' in p.read_text()
    )
    assert linking == []

    # Every step shipped its run log to the sandbox, which answered the demo's query.
    assert "The run log, asked on the sandbox's log stream:" in result.output
    answer = result.output.split("The run log, asked on the sandbox's log stream:", 1)[1]
    assert "slowest_route" in answer and "201" in answer
    # Each row's slowest route is one the demo's requests of that status really took
    # (which one is the slowest depends on the machine's load).
    rows = {
        cells[0]: cells[3]
        for line in answer.splitlines()
        if len(cells := [c.strip() for c in line.split("│")]) == 4
    }
    taken: dict[str, set[str]] = {}
    for line in (workdir / ".toolkit" / "events.jsonl").read_text().splitlines():
        event = json.loads(line)
        if event.get("event") == "request" and event.get("status") is not None:
            taken.setdefault(str(event["status"]), set()).add(event["route"])
    assert "/api/articles" in taken["201"]  # the guide's posts were created
    assert "201" in rows and rows["201"] in taken["201"], (rows, taken)
    assert all(route in taken[status] for status, route in rows.items()), (rows, taken)
    cursor = json.loads((workdir / ".toolkit" / "events.cursor.json").read_text())
    (mark,) = cursor["targets"].values()
    assert mark["shipped"] > 0 and mark["pending"] is None
    demo_runs = [
        json.loads(line)
        for line in (project.root / ".toolkit" / "events.jsonl").read_text().splitlines()
    ]
    assert [e["outcome"] for e in demo_runs if e.get("action") == "end"] == ["ok"]


def test_the_readme_check_of_the_demo_numbers_can_fail():
    wrong = README.replace("a site of **16** posts", "a site of **14** posts")
    assert readme_demo_numbers(wrong)["built"] == 14 != readme_demo_numbers(README)["built"]


def test_the_readme_says_where_the_command_is_after_make_install():
    """`make install` puts toolkit in .venv/bin/, not on PATH: the README says so, and the
    commands it gives for a first look run from there."""
    assert (
        "`make install` (which every target runs) puts the `toolkit` command in `.venv/bin/`"
        in README
    )
    assert ".venv/bin/toolkit serve --dir .toolkit/demo/site" in README
    assert "source .venv/bin/activate" in README
    makefile = (REPOSITORY / "Makefile").read_text(encoding="utf-8")
    assert "VENV   := .venv" in makefile and "$(BIN)/python -m pip install" in makefile
    assert 'toolkit = "toolkit.__main__:run"' in (REPOSITORY / "pyproject.toml").read_text()


@pytest.mark.e2e
def test_the_demo_copies_no_post_through_a_link_out_of_the_project(make_project, tmp_path_factory):
    """issue 43, 2: the demo's copy of the posts in `.toolkit/demo/` leaves out what a
    symlink leads to outside the project, as the project's own walk does."""
    elsewhere = tmp_path_factory.mktemp("elsewhere")
    (elsewhere / "leak.md").write_text(
        "---\ntitle: Private leak\npublished: true\ntags: [x]\n---\nPRIVATE\n"
    )
    project = make_project()
    project.post("hello", "Hello there", published=True, tags=["x"])
    (project.content / "leak.md").symlink_to(elsewhere / "leak.md")
    (project.content / "linked").symlink_to(elsewhere)
    result = project.run("demo")
    assert result.exit_code == 0, result.output
    copied = project.root / ".toolkit" / "demo" / "content"
    assert (copied / "hello.md").is_file()
    assert not (copied / "leak.md").exists() and not (copied / "linked").exists()
    assert not any(
        "PRIVATE" in path.read_text(errors="replace")
        for path in (project.root / ".toolkit" / "demo").rglob("*")
        if path.is_file()
    )
