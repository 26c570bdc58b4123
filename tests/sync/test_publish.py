"""`toolkit publish` and `toolkit plan` against the real sandbox over loopback."""

from __future__ import annotations

import json
import re
import time

import httpx
import pytest

from tests.support.hostile import article
from tests.support.sync_helpers import (
    SYNC_CONFIG,
    control,
    lock_entries,
    my_articles,
    titles,
    web_edit,
    writes,
)
from toolkit.tls import shared_context


def test_first_publish_then_nothing_to_do(site, env, sandbox):
    for i in range(25):
        site.post(
            f"post-{i:02}",
            f"Post number {i}",
            f"Body of post {i}.\n",
            published=i % 5 != 0,
            tags=["testing"],
        )
    sandbox.reset_stats()
    result = site.run("publish", env=env)
    assert result.exit_code == 0, result.output
    assert writes(sandbox) == {"POST 201": 25}
    assert 429 not in {row["status"] for row in sandbox.stats()}
    remote = {a["title"]: a for a in my_articles(sandbox)}
    assert all(f"Post number {i}" in remote for i in range(25))
    assert remote["Post number 0"]["published"] is False  # drafts stay drafts
    assert remote["Post number 1"]["published"] is True
    lock = json.loads((site.root / "toolkit.lock").read_text())
    assert len(lock["posts"]) == 25

    sandbox.reset_stats()
    again = site.run("publish", env=env)
    assert again.exit_code == 0, again.output
    assert writes(sandbox) == {}

    # Losing the lock costs a list read, never a duplicate or a needless write.
    (site.root / "toolkit.lock").unlink()
    sandbox.reset_stats()
    relocked = site.run("publish", env=env)
    assert relocked.exit_code == 0, relocked.output
    assert writes(sandbox) == {}
    assert json.loads((site.root / "toolkit.lock").read_text()) == lock
    assert sorted(titles(sandbox)).count("Post number 3") == 1


def test_a_first_publish_of_drafts_does_not_wait_on_the_create_window(make_project, env, sandbox):
    # The client believes in a 30 s window of 10 creates; 15 drafts still go out at once,
    # because Forem counts only published articles against the create limit.
    site = make_project(SYNC_CONFIG.replace("rate_window = 1", "rate_window = 30"))
    for i in range(15):
        site.post(f"draft-{i:02}", f"Draft number {i}", f"Body of draft {i}.\n")
    sandbox.reset_stats()
    result = site.run("publish", "--json", env=env)
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    assert document["waits"] == []
    assert writes(sandbox) == {"POST 201": 15}
    assert all(not a["published"] for a in my_articles(sandbox) if a["title"].startswith("Draft"))


def test_published_creates_still_wait_on_the_create_window(site, env, sandbox):
    for i in range(12):
        site.post(f"live-{i:02}", f"Live number {i}", f"Body of live post {i}.\n", published=True)
    sandbox.reset_stats()
    result = site.run("publish", "--json", env=env)
    assert result.exit_code == 0, result.output
    reasons = {wait["reason"] for wait in json.loads(result.stdout)["waits"]}
    assert "rate limit: 10 creates per 1 s" in reasons
    assert writes(sandbox) == {"POST 201": 12}


PAUSE = re.compile(
    r"^waiting \d+\.\d s, until \d\d:\d\d:\d\d "
    r"\(rate limit: 10 creates per 1 s\)$"
)


@pytest.mark.parametrize("verbosity", [(), ("-v",)])
def test_a_rate_limit_pause_is_said_once_what_it_waits_for_and_until_when(
    make_project, env, verbosity
):
    site = make_project(SYNC_CONFIG)
    for i in range(12):
        site.post(f"live-{i:02}", f"Live number {i}", f"Body of live post {i}.\n", published=True)
    result = site.run(*verbosity, "publish", env=env)
    assert result.exit_code == 0, result.output
    events = [
        json.loads(line)
        for line in (site.root / ".toolkit" / "events.jsonl").read_text().splitlines()
    ]
    waits = [e for e in events if e.get("event") == "wait"]
    assert waits  # 12 creates, 10 allowed per window
    said = [
        line.strip()
        for line in result.output.splitlines()
        if "rate limit: 10 creates per 1 s" in line
    ]
    if verbosity:  # the client's log line, once for each wait (not the reporter's too)
        assert len(said) == len(waits), result.output
    else:  # writes waiting side by side for one window are one pause, said once
        assert 1 <= len(said) <= len(waits), result.output
        assert all(PAUSE.match(line) for line in said), said


def test_local_edit_is_an_update_even_after_a_title_change(site, env, sandbox):
    site.post(
        "guide",
        "The guide",
        "Version one.\n",
        published=True,
        canonical_url="https://example.com/blog/the-guide/",
    )
    assert site.run("publish", env=env).exit_code == 0
    site.post(
        "guide",
        "The guide",
        "Version two.\n",
        published=True,
        canonical_url="https://example.com/blog/the-guide/",
    )
    sandbox.reset_stats()
    result = site.run("publish", env=env)
    assert result.exit_code == 0, result.output
    assert writes(sandbox) == {"PUT 200": 1}

    # New title and no lock: canonical_url still says which article it is.
    (site.root / "toolkit.lock").unlink()
    site.post(
        "guide",
        "The renamed guide",
        "Version three.\n",
        published=True,
        canonical_url="https://example.com/blog/the-guide/",
    )
    sandbox.reset_stats()
    result = site.run("publish", env=env)
    assert result.exit_code == 0, result.output
    assert writes(sandbox) == {"PUT 200": 1}
    assert "The guide" not in titles(sandbox)
    assert titles(sandbox).count("The renamed guide") == 1


def test_remote_edit_is_a_conflict_and_force_overwrites_it(site, env, sandbox):
    site.post("edited", "Edited on the web", "Local text.\n", published=True)
    assert site.run("publish", env=env).exit_code == 0
    lock = json.loads((site.root / "toolkit.lock").read_text())
    article_id = lock["posts"]["content/edited.md"]["article_id"]
    web_edit(
        sandbox, article_id, "---\ntitle: Edited on the web\npublished: true\n---\nWeb text.\n"
    )

    plan = site.run("plan", env=env)
    assert plan.exit_code == 1
    assert "conflict" in plan.output and "content/edited.md" in plan.output

    sandbox.reset_stats()
    result = site.run("publish", env=env)
    assert result.exit_code == 1
    assert "edited on the website" in result.output
    assert writes(sandbox) == {}

    forced = site.run("publish", "--force", env=env)
    assert forced.exit_code == 0, forced.output
    assert writes(sandbox) == {"PUT 200": 1}
    body = httpx.get(
        f"{sandbox.base_url}/api/articles/{article_id}", verify=shared_context()
    ).json()["body_markdown"]
    assert "Local text." in body
    assert site.run("publish", env=env).exit_code == 0


def test_dropped_connection_after_a_committed_create_makes_no_duplicate(site, env, sandbox):
    site.post("fragile", "A fragile create", "Body.\n", published=True)
    sandbox.fault("POST", "/api/articles", drop_after_commit=True)
    sandbox.reset_stats()
    result = site.run("publish", env=env)
    assert result.exit_code == 0, result.output
    assert titles(sandbox).count("A fragile create") == 1
    assert writes(sandbox).get("POST 201", 0) <= 1
    # And the next run neither creates nor updates.
    sandbox.reset_stats()
    assert site.run("publish", env=env).exit_code == 0
    assert writes(sandbox) == {}
    assert titles(sandbox).count("A fragile create") == 1


def test_injected_429_is_waited_out(site, env, sandbox):
    site.post("limited", "Rate limited", "One.\n", published=True)
    assert site.run("publish", env=env).exit_code == 0
    site.post("limited", "Rate limited", "Two.\n", published=True)
    sandbox.fault("PUT", "/api/articles/{id}", status=429)
    sandbox.reset_stats()
    started = time.monotonic()
    result = site.run("publish", "-v", env=env)
    elapsed = time.monotonic() - started
    assert result.exit_code == 0, result.output
    assert writes(sandbox) == {"PUT 429": 1, "PUT 200": 1}
    assert "rate limited" in result.output
    assert elapsed >= 1.0  # the injected 429 says Retry-After: 1 at the least


def test_injected_500s_are_retried(site, env, sandbox):
    site.post("flaky", "Flaky server", "One.\n", published=True)
    assert site.run("publish", env=env).exit_code == 0
    site.post("flaky", "Flaky server", "Two.\n", published=True)
    sandbox.fault("PUT", "/api/articles/{id}", count=2, status=500)
    sandbox.reset_stats()
    result = site.run("publish", env=env)
    assert result.exit_code == 0, result.output
    assert writes(sandbox) == {"PUT 500": 2, "PUT 200": 1}


def test_a_bad_post_is_reported_and_the_others_publish(site, env, sandbox):
    site.post("good", "Good post", published=True)
    site.write(
        "content/bad.md", "---\ntitle: Bad post\ntags: [one, two, three, four, five]\n---\nx\n"
    )
    sandbox.reset_stats()
    result = site.run("publish", env=env)
    assert result.exit_code == 1
    assert "content/bad.md" in result.output and "at most 4" in result.output
    assert writes(sandbox) == {"POST 201": 1}
    assert "Good post" in titles(sandbox) and "Bad post" not in titles(sandbox)


def test_an_api_refusal_names_the_post_and_keeps_the_rest(site, env, sandbox):
    # Canonical URLs are unique across the whole service: another account already uses
    # this one, which no local check can know. The API answers 422 for that post only.
    other = next(
        a["username"]
        for a in sandbox.accounts()
        if a["role"] == "user" and a["api_key"] != sandbox.demo_api_key
    )
    taken = "https://example.com/blog/taken/"
    control(
        sandbox,
        "POST",
        "/articles",
        username=other,
        articles=[
            {
                "title": "Someone else's",
                "published": True,
                "body_markdown": f"---\ntitle: Someone else's\ncanonical_url: {taken}\n---\nx\n",
            }
        ],
    )
    site.post("one", "First of two", published=True)
    site.post("clash", "Clashing canonical", "x\n", published=True, canonical_url=taken)
    site.post("two", "Second of two", published=True)
    result = site.run("publish", env=env)
    assert result.exit_code == 1
    assert "content/clash.md" in result.output and "422" in result.output
    assert "First of two" in titles(sandbox) and "Second of two" in titles(sandbox)
    assert "Clashing canonical" not in titles(sandbox)
    lock = json.loads((site.root / "toolkit.lock").read_text())
    assert sorted(lock["posts"]) == ["content/one.md", "content/two.md"]


def test_dry_run_and_plan_write_nothing(site, env, sandbox):
    site.post("new", "Brand new", published=True)
    sandbox.reset_stats()
    for args in (["publish", "--dry-run"], ["plan"]):
        result = site.run(*args, env=env)
        assert result.exit_code == 0, result.output
        assert "create" in result.output
    assert writes(sandbox) == {}
    assert not (site.root / "toolkit.lock").exists()


def test_json_output_is_one_document(site, env, sandbox):
    site.post("a", "Json A", published=True)
    site.write("content/b.md", "---\ntitle: Json B\ntags: [bad-tag]\n---\n")
    result = site.run("publish", "--json", env=env)
    assert result.exit_code == 1
    document = json.loads(result.stdout)
    assert document["dry_run"] is False and document["published_allowed"] is True
    assert document["summary"]["create"] == 1
    assert document["summary"]["error"] == 1
    by_path = {p["path"]: p for p in document["posts"]}
    assert by_path["content/a.md"]["ok"] is True and by_path["content/a.md"]["article_id"]
    assert by_path["content/b.md"]["problems"][0].startswith("content/b.md:3: tags:")


def test_premium_posts_are_never_sent(site, env, sandbox):
    site.post("secret", "Premium only", published=True, premium=True)
    sandbox.reset_stats()
    result = site.run("publish", env=env)
    assert result.exit_code == 0, result.output
    assert writes(sandbox) == {}
    assert "Premium only" not in titles(sandbox)


def test_missing_key_says_how_to_set_it(site, sandbox):
    result = site.run("publish", env={"FOREM_BASE_URL": sandbox.base_url, "FOREM_API_KEY": ""})
    assert result.exit_code == 1
    assert "FOREM_API_KEY is not set" in result.output and "toolkit demo" in result.output


def test_wrong_key_is_one_clear_line(site, sandbox):
    site.post("a", "A post", published=True)
    result = site.run(
        "publish", env={"FOREM_BASE_URL": sandbox.base_url, "FOREM_API_KEY": "wrong-key-123"}
    )
    assert result.exit_code == 1
    assert "401" in result.output and "unauthorized" in result.output
    assert "Traceback" not in result.output and "wrong-key-123" not in result.output


def test_api_key_appears_nowhere(site, env, sandbox):
    site.post("a", "Secret keeper", published=True)
    site.write("content/b.md", "---\ntitle: Broken\ntags: [x-y]\n---\n")
    outputs = [
        site.run("publish", "-vv", env=env),
        site.run("plan", "--json", env=env),
        site.run("publish", "--json", env=env),
    ]
    key = env["FOREM_API_KEY"]
    for result in outputs:
        assert key not in result.output
    for path in [site.root / "toolkit.lock", *(site.root / ".toolkit").rglob("*")]:
        if path.is_file():
            assert key not in path.read_text(errors="replace")


def test_github_annotations_for_failures(site, env, sandbox):
    site.write("content/b.md", "---\ntitle: Broken\ntags: [x-y]\n---\n")
    result = site.run("publish", env={**env, "GITHUB_ACTIONS": "true"})
    assert result.exit_code == 1
    assert "::error file=content/b.md,line=3::tags: 'x-y'" in result.output


# -- identity: which article a post is ------------------------------------------------------


def test_two_remote_articles_with_the_post_title_are_refused(site, hostile):
    # The sandbox, like Forem, keeps one account from holding two articles with the same
    # title and body; a server may still list two with one title (and other bodies).
    hostile.articles = [
        article(7, "Twin title", "twin-a", "The first twin.\n"),
        article(9, "Twin title", "twin-b", "The second twin.\n", published=False),
    ]
    site.post("twin", "Twin title", "Local text.\n", published=True)
    site.post("other", "Not a twin", published=True)
    refusal = "2 remote articles have this title (ids 7, 9)"

    plan = site.run("plan", env=hostile.env)
    assert plan.exit_code == 1
    assert f"error     public content/twin.md:2  {refusal}" in plan.output

    result = site.run("publish", env=hostile.env)
    assert result.exit_code == 1
    assert f"content/twin.md:2  {refusal}; add `id: N` (the right one)" in result.output
    assert result.output.count(refusal) == 1  # once: the summary does not repeat it
    assert [(method, sent["title"]) for method, sent in hostile.writes] == [("POST", "Not a twin")]
    assert sorted(lock_entries(site)) == ["content/other.md"]


def test_an_article_deleted_on_the_website_is_created_again_only_with_recreate(site, env, sandbox):
    site.post("gone", "Deleted on the web", "Text.\n", published=True)
    assert site.run("publish", env=env).exit_code == 0
    deleted = lock_entries(site)["content/gone.md"]["article_id"]
    sandbox.reset()  # the website has the seeded articles only: this one is gone
    assert "Deleted on the web" not in titles(sandbox)
    reason = (
        f"article {deleted} (from toolkit.lock) is no longer on the website (deleted "
        "there?); `toolkit publish --recreate` creates it again"
    )

    plan = site.run("plan", env=env)
    assert plan.exit_code == 1
    assert f"conflict  public content/gone.md  {reason}" in plan.output

    sandbox.reset_stats()
    for args in (["publish"], ["publish", "--force"]):  # --force is about website edits
        refused = site.run(*args, env=env)
        assert refused.exit_code == 1 and reason in refused.output, args
    assert writes(sandbox) == {}

    recreated = site.run("publish", "--recreate", "-v", env=env)
    assert recreated.exit_code == 0, recreated.output
    assert writes(sandbox) == {"POST 201": 1}
    (article,) = [a for a in my_articles(sandbox) if a["title"] == "Deleted on the web"]
    assert lock_entries(site)["content/gone.md"]["article_id"] == article["id"]
    sandbox.reset_stats()
    assert site.run("publish", env=env).exit_code == 0
    assert writes(sandbox) == {}


@pytest.mark.parametrize(("status", "attempts"), [(500, 3), (422, 1)])
def test_a_failed_create_is_created_by_the_next_publish(site, env, sandbox, status, attempts):
    site.post("late", "Created late", published=True)
    sandbox.fault("POST", "/api/articles", count=10, status=status)
    sandbox.reset_stats()
    failed = site.run("publish", env=env)
    assert failed.exit_code == 1
    assert f"content/late.md  create failed: POST /api/articles: {status}" in failed.output
    assert writes(sandbox) == {f"POST {status}": attempts}  # a 5xx: re-read the list, then again
    assert "Created late" not in titles(sandbox)
    assert "content/late.md" not in lock_entries(site)

    sandbox.clear_faults()
    sandbox.reset_stats()
    again = site.run("publish", env=env)
    assert again.exit_code == 0, again.output
    assert writes(sandbox) == {"POST 201": 1}
    assert titles(sandbox).count("Created late") == 1
