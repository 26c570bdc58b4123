"""`toolkit.lock` knows its server: a lock made against one publishing API (the sandbox)
is never read as another's (dev.to). Switching sandbox -> "real" -> sandbox makes no false
conflict and no duplicate, and each server's records survive the other's runs."""

from __future__ import annotations

import json

import pytest

from tests.support.forem_sandbox import ForemSandbox
from tests.support.sync_helpers import my_articles, writes
from toolkit.ledgerfile import server_key
from toolkit.sync.ledger import Ledger, LedgerEntry


@pytest.fixture
def real():
    """A second sandbox on another port: another server, with other article ids."""
    with ForemSandbox(db_path=None, rate_window=1.0) as server:
        yield server


def env_of(server) -> dict[str, str]:
    return {"FOREM_BASE_URL": server.base_url, "FOREM_API_KEY": server.demo_api_key}


def lock_of(site) -> dict:
    return json.loads((site.root / "toolkit.lock").read_text())


def test_switching_servers_makes_no_false_conflict_and_no_duplicate(site, env, sandbox, real):
    site.post("hello", "Hello servers", "Text.\n", published=True)
    site.post("draft", "A draft for servers", "Draft.\n", published=False)
    # 1. The sandbox.
    sandbox.reset_stats()
    first = site.run("publish", env=env)
    assert first.exit_code == 0, first.output
    assert writes(sandbox) == {"POST 201": 2}
    lock = lock_of(site)
    assert lock["server"] == sandbox.base_url
    sandbox_ids = {k: v["article_id"] for k, v in lock["posts"].items()}

    # 2. The "real" server: the sandbox's ids mean nothing there.
    plan = site.run("plan", env=env_of(real))
    assert plan.exit_code == 0, plan.output
    assert "conflict" not in plan.output and "deleted there" not in plan.output
    assert f"toolkit.lock has no record of {real.base_url} yet" in plan.stderr
    real.reset_stats()
    second = site.run("publish", env=env_of(real))
    assert second.exit_code == 0, second.output
    assert writes(real) == {"POST 201": 2}
    lock = lock_of(site)
    assert lock["server"] == real.base_url
    assert {
        k: v["article_id"] for k, v in lock["other_servers"][sandbox.base_url]["posts"].items()
    } == sandbox_ids  # the sandbox's records kept as they were
    real_ids = {k: v["article_id"] for k, v in lock["posts"].items()}
    assert {a["id"] for a in my_articles(real) if a["title"].endswith("servers")} == set(
        real_ids.values()
    )

    # 3. Back to the sandbox: its own records again; nothing to write.
    sandbox.reset_stats()
    third = site.run("publish", env=env)
    assert third.exit_code == 0, third.output
    assert writes(sandbox) == {}
    titles = [a["title"] for a in my_articles(sandbox)]
    assert titles.count("Hello servers") == 1 and titles.count("A draft for servers") == 1
    lock = lock_of(site)
    assert lock["server"] == sandbox.base_url
    assert {k: v["article_id"] for k, v in lock["posts"].items()} == sandbox_ids
    assert {
        k: v["article_id"] for k, v in lock["other_servers"][real.base_url]["posts"].items()
    } == real_ids

    # And "real" once more: nothing to write there either.
    real.reset_stats()
    fourth = site.run("publish", env=env_of(real))
    assert fourth.exit_code == 0, fourth.output
    assert writes(real) == {}


def test_a_lock_from_before_servers_were_recorded_is_this_servers(site, env, sandbox):
    site.post("hello", "Hello version one", "Text.\n", published=True)
    assert site.run("publish", env=env).exit_code == 0
    lock = lock_of(site)
    (site.root / "toolkit.lock").write_text(
        json.dumps({"version": 1, "posts": lock["posts"]}, sort_keys=True)
    )
    sandbox.reset_stats()
    again = site.run("publish", env=env)
    assert again.exit_code == 0, again.output
    assert writes(sandbox) == {}
    assert "no record" not in again.stderr
    assert lock_of(site)["server"] == sandbox.base_url


def test_the_lock_names_its_server_without_credentials(tmp_path):
    assert server_key("HTTPS://user:secret@Dev.To/") == "https://dev.to"
    lock = Ledger(tmp_path / "toolkit.lock", server="https://user:secret@dev.to")
    lock.record("content/a.md", LedgerEntry(1, None, "d", "d"))
    text = (tmp_path / "toolkit.lock").read_text()
    assert "secret" not in text and '"server": "https://dev.to"' in text
    # Another server's run keeps this section, untouched, beside its own.
    other = Ledger.load(tmp_path / "toolkit.lock", "http://127.0.0.1:8787")
    assert other.entries == {}
    other.record("content/a.md", LedgerEntry(7, None, "e", "e"))
    assert Ledger.load(tmp_path / "toolkit.lock", "https://dev.to").entries == {
        "content/a.md": LedgerEntry(1, None, "d", "d")
    }
    assert Ledger.load(tmp_path / "toolkit.lock", "http://127.0.0.1:8787/").entries == {
        "content/a.md": LedgerEntry(7, None, "e", "e")
    }
