"""`[forem] organization`: articles published into the organisation, for a member; an
article outside it moved in; `plan` says so. Against the real sandbox."""

from __future__ import annotations

import json

import httpx
import pytest

from tests.support.sync_helpers import SYNC_CONFIG, api_get
from toolkit.tls import shared_context

V1 = "application/vnd.forem.api-v1+json"


@pytest.mark.parametrize("ref", ['"acme"', "1"])
def test_a_members_articles_go_into_the_organisation_and_plan_says_so(site, env, sandbox, ref):
    site.post("first", "First into acme", "Hello.\n", published=True)
    assert site.run("publish", env=env).exit_code == 0
    lock = json.loads(site.root.joinpath("toolkit.lock").read_text())
    article_id = lock["posts"]["content/first.md"]["article_id"]
    assert "organization" not in api_get(sandbox, f"/api/articles/{article_id}")
    assert "account" not in lock["posts"]["content/first.md"]  # one account: as before
    site.root.joinpath("toolkit.toml").write_text(
        SYNC_CONFIG + f"organization = {ref}\n", encoding="utf-8"
    )
    site.post("second", "Second into acme", "Hello again.\n", published=True)

    plan = site.run("plan", env=env)
    assert plan.exit_code == 0, plan.output
    assert f"article {article_id}: moves it into the organisation acme" in plan.output
    assert "new post, into the organisation acme" in plan.output

    published = site.run("publish", "--json", env=env)
    assert published.exit_code == 0, published.output
    document = json.loads(published.stdout)
    assert "missing_keys" not in document and "writer" not in document["posts"][0]
    for post in document["posts"]:
        article = api_get(sandbox, f"/api/articles/{post['article_id']}")
        assert article["organization"]["username"] == "acme"
    again = site.run("plan", env=env)
    assert "moves it into" not in again.output and "update" not in again.output


def test_an_article_already_in_an_organisation_stays_there_without_the_key(site, env, sandbox):
    site.root.joinpath("toolkit.toml").write_text(
        SYNC_CONFIG + 'organization = "acme"\n', encoding="utf-8"
    )
    site.post("kept", "Kept in acme", "Hello.\n", published=True)
    assert site.run("publish", env=env).exit_code == 0
    site.root.joinpath("toolkit.toml").write_text(SYNC_CONFIG, encoding="utf-8")
    site.post("kept", "Kept in acme", "Hello, edited.\n", published=True)

    assert site.run("publish", env=env).exit_code == 0

    lock = json.loads(site.root.joinpath("toolkit.lock").read_text())
    article = api_get(sandbox, f"/api/articles/{lock['posts']['content/kept.md']['article_id']}")
    assert "Hello, edited." in article["body_markdown"]
    assert article["organization"]["username"] == "acme"


def test_an_unknown_organisation_is_one_error_line(site, env, sandbox):
    site.root.joinpath("toolkit.toml").write_text(
        SYNC_CONFIG + 'organization = "nobody-here"\n', encoding="utf-8"
    )
    site.post("first", "First", "Hello.\n", published=True)

    result = site.run("plan", env=env)

    assert result.exit_code == 1
    assert "Traceback" not in result.output
    assert (
        "toolkit.toml: forem.organization: no organisation 'nobody-here' on http" in result.output
    )


def test_the_sandbox_gives_an_organisations_id_in_version_1_only(sandbox):
    def get(path: str, **headers: str) -> httpx.Response:
        return httpx.get(f"{sandbox.base_url}{path}", headers=headers, verify=shared_context())

    v0 = get("/api/organizations/acme").json()
    assert "id" not in v0 and v0["username"] == "acme"
    v1 = get("/api/organizations/acme", accept=V1).json()
    assert v1["id"] == 1 and v1["username"] == "acme"
    assert get("/api/organizations/1", accept=V1).json()["username"] == "acme"
    assert get("/api/organizations/1").status_code == 404
    missing = get("/api/organizations/nobody", accept=V1)
    assert missing.status_code == 404 and missing.json() == {"error": "not found", "status": 404}
