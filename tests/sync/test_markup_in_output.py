"""Titles, paths and messages that look like rich markup are printed as written: they
neither crash a command (`[/b]` closes nothing) nor restyle or hide its output."""

from __future__ import annotations

from pathlib import Path

from tests.support.hostile import article
from toolkit.cli.watch import ConsoleWatchReporter
from toolkit.site.builder import BuildReport
from toolkit.sync.engine import Outcome
from toolkit.sync.plan import Action, PostPlan

MARKUP_TITLES = ("[/b] broken", "[link=https://evil]x[/link]", "[red]styled[/red]")


def write_markup_posts(site) -> None:
    site.post("[red]x", MARKUP_TITLES[0], published=True)
    site.post("[bold]y[link=https:evil]", MARKUP_TITLES[1], published=True)
    site.post("plain", MARKUP_TITLES[2], published=True)


def test_plan_and_publish_print_markup_in_titles_and_paths_as_written(site, env):
    write_markup_posts(site)
    paths = ("content/[red]x.md", "content/[bold]y[link=https:evil].md")

    plan = site.run("plan", env=env)
    assert plan.exit_code == 0, plan.output
    for path in paths:
        assert f"→ create    public {path}  new post" in plan.output

    published = site.run("publish", "-v", env=env)
    assert published.exit_code == 0, published.output
    for path in paths:
        assert f"✓ create    public {path}  created article" in published.output

    again = site.run("plan", "-v", env=env)
    assert again.exit_code == 0, again.output
    for path in paths:
        assert f"→ unchanged public {path}  article" in again.output


def test_problems_holding_markup_are_printed_as_written(site, env):
    write_markup_posts(site)
    site.post("bad", "[/b] bad", published=True, tags=["[/b]", "[red]x"])

    plan = site.run("plan", env=env)

    assert plan.exit_code == 1
    assert "✗ error     public content/bad.md:4  tags: '[/b]' must be" in plan.output
    assert "content/bad.md:4: tags: '[red]x' must be" in plan.output
    assert "content/[red]x.md" in plan.output


def test_pull_and_mirror_print_remote_names_as_written(site, hostile):
    hostile.articles = [
        article(1, "Same", "same-x1"),
        article(2, "Same", "[red]remote[/red]", comments_count=0),
    ]
    hostile.episodes = [{"id": 3, "title": "[/b]", "path": "/p/3", "podcast": {}}]

    pulled = site.run("pull", env=hostile.env)
    assert pulled.exit_code == 0, pulled.output
    assert "created     content/[red]remote[-red].md (article 2)" in pulled.output

    mirrored = site.run("mirror", "comments", "--podcast", "[red]pod", env=hostile.env)
    assert mirrored.exit_code == 0, mirrored.output
    assert "created content/_mirror/podcasts/[red]pod/3.json" in mirrored.output
    assert "podcast [red]pod: 1 episode(s)" in mirrored.output


def test_watch_lines_print_markup_as_written(capsys):
    reporter = ConsoleWatchReporter(quiet=False, verbose=1)
    plan = PostPlan("content/[red]x.md", Action.UPDATE, "", title="[/b] broken")

    reporter.built(BuildReport(output_dir=Path("out"), written=["x"]), ["content/[/b].md"], 0.01)
    reporter.problems([], ["content/[red]x.md:1: title: '[/b]' is too long"])
    reporter.pushed([Outcome(plan, False, "[/b] refused [link=https://evil]x[/link]")])
    reporter.push_failed("POST /api/articles: 422 [/b]")
    reporter.config_problem("toolkit.toml: [red]site[/red]: unknown section")

    err = capsys.readouterr().err
    assert "rebuilt after content/[/b].md" in err
    assert "fixed: content/[red]x.md:1: title: '[/b]' is too long" in err
    assert "push failed content/[red]x.md: [/b] refused [link=https://evil]x[/link]" in err
    assert "push failed (POST /api/articles: 422 [/b]);" in err
    assert "toolkit.toml: [red]site[/red]: unknown section" in err
