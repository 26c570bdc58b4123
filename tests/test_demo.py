"""`toolkit demo` (what `make demo` runs): the whole pipeline offline, in `.toolkit/demo/`."""

from __future__ import annotations

import json
import shutil
import zipfile
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parent.parent


def test_demo_publishes_mirrors_and_builds_without_touching_the_project(make_project):
    project = make_project((REPOSITORY / "toolkit.toml").read_text(encoding="utf-8"), name="demo")
    shutil.copytree(REPOSITORY / "content", project.content, dirs_exist_ok=True,
                    ignore=shutil.ignore_patterns("_mirror"))
    before = sorted(p.relative_to(project.root) for p in project.root.rglob("*"))

    result = project.run("demo")
    assert result.exit_code == 0, result.output
    workdir = project.root / ".toolkit" / "demo"
    site = workdir / "site"
    assert f"The site: {site / 'index.html'}" in result.output
    archive = workdir / "site.zip"
    assert f"The site as an archive: {archive} (" in result.output
    with zipfile.ZipFile(archive) as bundle:
        names = set(bundle.namelist())
    built = {p.relative_to(site).as_posix() for p in site.rglob("*") if p.is_file()}
    assert names == built and "getting-started/index.html" in names
    assert f"{len(built)} entries, verified)" in result.output
    assert "create" in result.output

    # The project itself is as it was: no lock for the real service, no mirror in content/.
    after = sorted(p.relative_to(project.root) for p in project.root.rglob("*")
                   if ".toolkit" not in p.parts)
    assert after == before

    # The guide was published to the sandbox and the demo account's articles pulled.
    lock = json.loads((workdir / "toolkit.lock").read_text())["posts"]
    assert "content/getting-started.md" in lock and len(lock) > 8
    # The site shows the seeded comment threads and the reading list.
    threads = [json.loads(p.read_text()) for p in (workdir / "content/_mirror/comments").glob("*.json")]
    commented = [t for t in threads if t["comments"]]
    assert commented
    first = commented[0]["comments"][0]
    slug = next(p.stem for p in (workdir / "content/_mirror/comments").glob("*.json")
                if json.loads(p.read_text()) == commented[0])
    page = (site / slug / "index.html").read_text()
    assert first["user"]["name"] in page
    assert (site / "reading-list" / "index.html").is_file()
    assert (site / "getting-started" / "index.html").is_file()

    # Every step shipped its run log to the sandbox, which answered the demo's query.
    assert "The run log, asked on the sandbox's log stream:" in result.output
    answer = result.output.split("The run log, asked on the sandbox's log stream:", 1)[1]
    assert "slowest_route" in answer and "/api/articles" in answer and "201" in answer
    cursor = json.loads((workdir / ".toolkit" / "events.cursor.json").read_text())
    (mark,) = cursor["targets"].values()
    assert mark["shipped"] > 0 and mark["pending"] is None
    demo_runs = [json.loads(line) for line in
                 (project.root / ".toolkit" / "events.jsonl").read_text().splitlines()]
    assert [e["outcome"] for e in demo_runs if e.get("action") == "end"] == ["ok"]
