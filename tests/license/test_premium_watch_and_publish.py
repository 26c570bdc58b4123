"""The gate over time (`toolkit watch --premium` asks again at most once a minute, and a
run asks once), and premium posts kept away from the publishing API and the public site
while premium builds happen beside them."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from tests.support.license_helpers import LICENSED
from toolkit.config import load_config
from toolkit.errors import PremiumRefused
from toolkit.license.gate import RECHECK_SECONDS, PremiumGate


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_the_gate_asks_once_per_run(premium_project, licensing):
    config = load_config(premium_project.root / "toolkit.toml", env=licensing.env())
    gate = PremiumGate(config)
    first = gate.check()
    licensing.set_customer(LICENSED, "UNLICENSED")
    assert gate.check() is first  # the run's answer stands
    assert gate.asked == 1 and len(licensing.requests()) == 1


def test_the_gate_asks_again_at_most_once_a_minute(premium_project, licensing):
    config = load_config(premium_project.root / "toolkit.toml", env=licensing.env())
    clock = Clock()
    gate = PremiumGate(config, max_age=RECHECK_SECONDS, clock=clock)
    gate.check()
    licensing.set_customer(LICENSED, "UNLICENSED")
    clock.now += RECHECK_SECONDS - 1
    gate.check()  # still the answer of a minute ago
    assert gate.asked == 1
    clock.now += 1
    with pytest.raises(PremiumRefused, match="licence is UNLICENSED"):
        gate.check()
    licensing.set_customer(LICENSED, "ACTIVE")
    with pytest.raises(PremiumRefused):  # a refusal is kept for a minute too
        gate.check()
    assert gate.asked == 2
    clock.now += RECHECK_SECONDS
    gate.check()
    assert gate.asked == 3 and len(licensing.requests()) == 3


class Reporter:
    """A WatchReporter whose events a test waits on."""

    def __init__(self) -> None:
        self.builds = 0
        self.trouble: list[str] = []
        self._news = threading.Condition()

    def built(self, report, changed, seconds) -> None:
        with self._news:
            self.builds += 1
            self._news.notify_all()

    def problems(self, new, fixed) -> None:
        pass

    def pushed(self, outcomes) -> None:
        pass

    def push_failed(self, message: str) -> None:
        pass

    def notice(self, message: str) -> None:
        pass

    def config_problem(self, message: str) -> None:
        with self._news:
            self.trouble.append(message)
            self._news.notify_all()

    def wait(self, condition) -> None:
        with self._news:
            assert self._news.wait_for(condition, timeout=20), (self.builds, self.trouble)


def test_watch_premium_previews_the_premium_site_and_asks_again_after_a_minute(
    premium_project, licensing
):
    from toolkit.commands.watch import watch

    config = load_config(premium_project.root / "toolkit.toml", env=licensing.env())
    clock = Clock()
    gate = PremiumGate(config, max_age=RECHECK_SECONDS, clock=clock)
    reporter = Reporter()
    session = watch(config, reporter, port=0, push=False, premium=True, gate=gate)
    preview = premium_project.root / ".toolkit" / "preview-premium"
    session.start()
    try:
        assert session.output_dir == preview
        assert "Premium words" in (preview / "paid" / "index.html").read_text()
        assert "PREMIUM FOOTER" in (preview / "paid" / "index.html").read_text()
        assert not (premium_project.root / ".toolkit" / "preview").exists()
        assert gate.asked == 1

        premium_project.post(
            "paid", "Members only", "Second words.\n", published=True, premium=True
        )
        reporter.wait(lambda: reporter.builds == 2)
        assert "Second words." in (preview / "paid" / "index.html").read_text()
        assert gate.asked == 1  # within the minute: no new question

        licensing.set_customer(LICENSED, "UNLICENSED")
        clock.now += RECHECK_SECONDS
        premium_project.post("paid", "Members only", "Third words.\n", published=True, premium=True)
        reporter.wait(lambda: reporter.trouble)
        assert reporter.trouble == [
            f"premium build refused: customer {LICENSED} licence is UNLICENSED"
        ]
        assert gate.asked == 2
        assert "Second words." in (preview / "paid" / "index.html").read_text()
    finally:
        session.stop()


def test_watch_premium_does_not_start_without_a_licence(premium_project, licensing):
    licensing.set_customer(LICENSED, "UNLICENSED")
    result = premium_project.run(
        "watch", "--premium", "--no-push", "--port", "0", env=licensing.env()
    )
    assert result.exit_code == 1
    assert (
        f"Error: premium build refused: customer {LICENSED} licence is UNLICENSED" in result.output
    )
    assert not (premium_project.root / ".toolkit" / "preview-premium").exists()


def site_text(folder: Path) -> str:
    return "\n".join(p.read_text(errors="replace") for p in folder.rglob("*") if p.is_file())


def test_premium_posts_reach_the_premium_site_only(premium_project, licensing, sandbox):
    env = {
        **licensing.env(),
        "FOREM_BASE_URL": sandbox.base_url,
        "FOREM_API_KEY": sandbox.demo_api_key,
    }
    assert premium_project.run("build", "--premium", env=env).exit_code == 0
    published = premium_project.run("publish", env=env)
    assert published.exit_code == 0, published.output
    assert (
        "premium post: never sent to the publishing API"
        in premium_project.run("plan", env=env).output
    )
    assert premium_project.run("build", env=env).exit_code == 0

    writes = [
        r
        for r in sandbox.requests(after=licensing.start)
        if r["interface"] == "forem" and r["method"] in ("POST", "PUT")
    ]
    assert len(writes) == 2  # the public post and the draft; never the premium post
    with sandbox.client() as client:
        mine = client.get("/api/articles/me/all", params={"per_page": 1000}).json()
    sent = [a for a in mine if a["title"] in ("Hello readers", "Not yet", "Members only")]
    assert sorted(a["title"] for a in sent) == ["Hello readers", "Not yet"]
    bodies = "\n".join(a["title"] + a["body_markdown"] for a in mine)
    assert "Members only" not in bodies and "Premium words" not in bodies

    premium_site = site_text(premium_project.root / "site-premium")
    public_site = site_text(premium_project.root / "site")
    assert "Premium words for licensed readers." in premium_site
    assert "Premium words" not in public_site and "Members only" not in public_site
