"""`toolkit build --premium` behind the licence gate, against the sandbox's licensing
service over loopback: each licence state gives its outcome; every refusal (an inactive
licence, 401/403/404, no answer) is one line naming the cause and leaves the output
folder byte for byte as it was; premium posts reach the premium site only."""

from __future__ import annotations

import pytest

from tests.support.license_helpers import (
    APP,
    LICENSED,
    OTHER_APP,
    UNLICENSED,
    digest,
    premium_config,
    snapshot,
)

REFUSED = "Error: premium build refused: "


def error_lines(result) -> list[str]:
    return [line for line in result.output.splitlines() if line.startswith("Error:")]


@pytest.fixture
def built(premium_project, licensing):
    """The project after a first premium build (the licence was active then), and the
    snapshot of its premium folder."""
    result = premium_project.run("build", "--premium", env=licensing.env())
    assert result.exit_code == 0, result.output
    out = premium_project.root / "site-premium"
    before = snapshot(out)
    assert "paid/index.html" in before
    licensing.mark()
    return premium_project, out, before


def refused(project, licensing, out, before, env=None, *args: str) -> str:
    """Run a premium build that must be refused: exit 1, one error line, the folder as it
    was, though a post changed since (a build would have written its page). Returns that
    line."""
    project.post(
        "paid",
        "Members only",
        "Changed premium words.\n",
        published=True,
        premium=True,
        tags=["news"],
        date="2024-03-02",
    )
    result = project.run("build", "--premium", *args, env=env or licensing.env())
    assert result.exit_code == 1, result.output
    lines = error_lines(result)
    assert len(lines) == 1 and lines[0].startswith(REFUSED), result.output
    assert "Traceback" not in result.output and "built " not in result.output
    after = snapshot(out)
    assert digest(after) == digest(before)
    assert after == before
    return lines[0]


def test_an_active_licence_builds_premium_posts_and_overlay_into_their_own_folder(
    premium_project, licensing
):
    result = premium_project.run("build", "--premium", env=licensing.env())
    assert result.exit_code == 0, result.output
    assert f"licence: customer {LICENSED} ACTIVE (application {APP})" in result.output
    premium = premium_project.root / "site-premium"
    page = (premium / "paid" / "index.html").read_text()
    assert "Premium words for licensed readers." in page and "PREMIUM FOOTER" in page
    assert "PREMIUM FOOTER" in (premium / "hello" / "index.html").read_text()
    assert "Members only" in (premium / "index.html").read_text()
    assert not (premium / "later").exists()  # drafts stay out, as in any build
    assert not (premium_project.root / "site").exists()  # the public site is not touched

    public = premium_project.run("build")
    assert public.exit_code == 0, public.output
    site = premium_project.root / "site"
    assert (site / "hello" / "index.html").is_file() and not (site / "paid").exists()
    for path in site.rglob("*"):
        if path.is_file():
            text = path.read_bytes()
            assert b"Members only" not in text and b"Premium words" not in text, path
            assert b"PREMIUM FOOTER" not in text, path


def test_one_licence_request_per_run_and_none_for_a_public_build(premium_project, licensing):
    assert premium_project.run("build").exit_code == 0
    assert licensing.requests() == []
    assert premium_project.run("build", "--premium", env=licensing.env()).exit_code == 0
    again = premium_project.run("build", "--premium", env=licensing.env())
    assert again.exit_code == 0 and "0 files written" in again.output
    routes = [(r["route"], r["status"], r["caller"]) for r in licensing.requests()]
    assert (
        routes
        == [("/appsmarket/v2/customerLicense/{applicationId}/{customerId}", 200, "developer")] * 2
    )


@pytest.mark.parametrize("state", ["UNLICENSED"])
def test_a_customer_without_an_active_licence_is_refused(built, licensing, state):
    project, out, before = built
    licensing.set_customer(LICENSED, state)
    line = refused(project, licensing, out, before)
    assert line == f"{REFUSED}customer {LICENSED} licence is {state}"


def test_a_seeded_unlicensed_customer_is_refused_before_anything_exists(make_project, licensing):
    project = make_project(premium_config(customer=UNLICENSED))
    project.post("paid", "Members only", published=True, premium=True)
    result = project.run("build", "--premium", env=licensing.env())
    assert result.exit_code == 1
    assert error_lines(result) == [f"{REFUSED}customer {UNLICENSED} licence is UNLICENSED"]
    assert not (project.root / "site-premium").exists()
    # Not even the build's manifest: only the run log, which records the refusal.
    state = project.root / ".toolkit"
    assert sorted(p.name for p in state.iterdir()) == ["events.jsonl", "events.lock"]
    assert "PremiumRefused" in (state / "events.jsonl").read_text()


USER_CASES = [
    # (user, fields set through the control API, refusal or None)
    ("ana@acme.example", {}, None),
    ("ben@acme.example", {}, "user ben@acme.example licence is UNLICENSED"),
    ("cy@acme.example", {}, "user cy@acme.example licence is EXPIRED"),
    (
        "dee@acme.example",
        {},
        "user dee@acme.example licence is ACTIVE but not enabled (the "
        "domain administrator has not enabled the application)",
    ),
    ("ana@acme.example", {"state": "EXPIRED"}, "user ana@acme.example licence is EXPIRED"),
    (
        "ana@acme.example",
        {"enabled": False},
        "user ana@acme.example licence is ACTIVE but "
        "not enabled (the domain administrator has not "
        "enabled the application)",
    ),
]


@pytest.mark.parametrize(("user", "fields", "refusal"), USER_CASES)
def test_each_user_licence_state_gives_its_outcome(make_project, licensing, user, fields, refusal):
    project = make_project(premium_config(extra=f'user_id = "{user}"'))
    project.post("paid", "Members only", published=True, premium=True)
    if fields:
        licensing.set_user(user, **fields)
    result = project.run("build", "--premium", env=licensing.env())
    routes = [r["route"].split("/")[3] for r in licensing.requests()]
    assert routes == ["customerLicense", "userLicense"]  # the customer first, then the user
    if refusal is None:
        assert result.exit_code == 0, result.output
        assert f"user {user} ACTIVE and enabled" in result.output
        assert (project.root / "site-premium" / "paid" / "index.html").is_file()
    else:
        assert result.exit_code == 1
        assert error_lines(result) == [REFUSED + refusal]
        assert not (project.root / "site-premium").exists()


def test_an_unlicensed_customer_is_refused_without_asking_about_the_user(make_project, licensing):
    project = make_project(
        premium_config(customer=UNLICENSED, extra='user_id = "ana@acme.example"')
    )
    result = project.run("build", "--premium", env=licensing.env())
    assert error_lines(result) == [f"{REFUSED}customer {UNLICENSED} licence is UNLICENSED"]
    assert [r["route"].split("/")[3] for r in licensing.requests()] == ["customerLicense"]


def test_a_licence_given_back_lets_the_next_build_run(built, licensing):
    project, out, before = built
    licensing.set_customer(LICENSED, "UNLICENSED")
    refused(project, licensing, out, before)
    licensing.set_customer(LICENSED, "ACTIVE")
    project.post(
        "paid",
        "Members only",
        "New premium words.\n",
        published=True,
        premium=True,
        tags=["news"],
        date="2024-03-02",
    )
    result = project.run("build", "--premium", env=licensing.env())
    assert result.exit_code == 0, result.output
    assert "New premium words." in (out / "paid" / "index.html").read_text()


# -- an answer about someone else -------------------------------------------------------

CUSTOMER_PATH = f"/appsmarket/v2/customerLicense/{APP}/{LICENSED}"
NOT_A_LICENCE = f"{REFUSED}the licensing service's answer is not a licence (GET "


@pytest.mark.parametrize(
    ("ids", "why"),
    [
        ({"customerId": "globex.example"}, f"is about customerId globex.example, not {LICENSED}"),
        ({"applicationId": OTHER_APP}, f"is about applicationId {OTHER_APP}, not {APP}"),
        ({"customerId": None}, f"names no customerId (asked about {LICENSED})"),
        (
            {"applicationId": None, "customerId": None},
            f"names no applicationId (asked about {APP})",
        ),
    ],
)
def test_an_active_answer_about_another_customer_or_application_is_refused(
    built, licensing, ids, why
):
    project, out, before = built
    licensing.misroute(**ids)
    line = refused(project, licensing, out, before)
    assert line == f"{NOT_A_LICENCE}{CUSTOMER_PATH}: the answer {why})"


def test_an_active_answer_about_another_user_is_refused(make_project, licensing):
    project = make_project(premium_config(extra='user_id = "ana@acme.example"'))
    project.post("paid", "Members only", published=True, premium=True)
    licensing.misroute(userId="erin@globex.example")
    result = project.run("build", "--premium", env=licensing.env())
    assert result.exit_code == 1
    assert error_lines(result) == [
        f"{NOT_A_LICENCE}/appsmarket/v2/userLicense/{APP}/ana%40acme.example: the answer is "
        "about userId erin@globex.example, not ana@acme.example)"
    ]
    assert not (project.root / "site-premium").exists()


# -- what the service answers instead of a licence -----------------------------------------


def test_401_an_unknown_token(built, licensing):
    project, out, before = built
    line = refused(project, licensing, out, before, licensing.env("ya29.not-a-real-token"))
    assert line == (
        f"{REFUSED}the licensing service did not accept LICENSE_API_TOKEN: "
        "401 Request had invalid authentication credentials. Expected OAuth 2 access token, "
        "login cookie or other valid authentication credential. See…"
    )


def test_401_an_expired_token(built, licensing):
    project, out, before = built
    line = refused(project, licensing, out, before, licensing.env(licensing.token("expired")))
    assert "did not accept LICENSE_API_TOKEN: 401" in line


def test_403_a_token_without_the_licence_scope(built, licensing):
    project, out, before = built
    line = refused(project, licensing, out, before, licensing.env(licensing.token("no-scope")))
    assert line == (
        f"{REFUSED}LICENSE_API_TOKEN may not read the licences of application "
        f"{APP}: 403 Request had insufficient authentication scopes."
    )


def test_403_an_application_the_token_does_not_own(make_project, licensing):
    project = make_project(premium_config(app=OTHER_APP))
    result = project.run("build", "--premium", env=licensing.env())
    assert error_lines(result) == [
        f"{REFUSED}LICENSE_API_TOKEN may not read the licences of application {OTHER_APP}: "
        "403 Not authorized to access the application ID"
    ]
    assert not (project.root / "site-premium").exists()


def test_a_customer_that_never_installed_is_unlicensed(built, licensing):
    project, out, before = built
    project.write("toolkit.toml", premium_config(customer="nobody.example"))
    line = refused(project, licensing, out, before)
    assert line == f"{REFUSED}customer nobody.example licence is UNLICENSED"


def test_403_an_application_that_does_not_exist(make_project, licensing):
    project = make_project(premium_config(app="899999999999"))
    result = project.run("build", "--premium", env=licensing.env())
    assert error_lines(result) == [
        f"{REFUSED}LICENSE_API_TOKEN may not read the licences of application 899999999999: "
        "403 Not authorized to access the application ID"
    ]


def test_a_user_without_a_seat_is_unlicensed(make_project, licensing):
    project = make_project(premium_config(extra='user_id = "zed@acme.example"'))
    result = project.run("build", "--premium", env=licensing.env())
    assert error_lines(result) == [f"{REFUSED}user zed@acme.example licence is UNLICENSED"]


def test_a_base_url_that_is_not_the_services_root_gets_googles_html_404(built, licensing):
    project, out, before = built
    env = {**licensing.env(), "LICENSE_BASE_URL": licensing.base_url + "/appsmarket/v2"}
    line = refused(project, licensing, out, before, env)
    assert line == (
        f"{REFUSED}the licensing service has no method for the licence of "
        f"customer {LICENSED}: 404 Not Found (is [license] base_url, or "
        "LICENSE_BASE_URL, the service's root?)"
    )
    assert [r["status"] for r in licensing.requests()] == [404]


# -- no answer: the gate fails closed ---------------------------------------------------


def test_an_unreachable_service_refuses_the_build(built, licensing):
    import socket

    project, out, before = built
    with socket.socket() as unused:  # a port nothing listens on
        unused.bind(("127.0.0.1", 0))
        port = unused.getsockname()[1]
    env = {**licensing.env(), "LICENSE_BASE_URL": f"http://127.0.0.1:{port}"}
    line = refused(project, licensing, out, before, env)
    assert line.startswith(f"{REFUSED}the licensing service could not be reached: ")
    assert f"127.0.0.1:{port}" in line and line.endswith("(3 tries)")


def test_a_failing_service_is_retried_a_bounded_number_of_times_then_refuses(built, licensing):
    project, out, before = built
    licensing.outage(503)
    line = refused(project, licensing, out, before)
    assert line == (
        f"{REFUSED}the licensing service failed: 503 The service is currently "
        "unavailable. (3 tries)"
    )
    assert [r["status"] for r in licensing.requests()] == [503, 503, 503]


def test_one_failure_is_retried_and_the_build_goes_on(built, licensing):
    project, out, _ = built
    licensing.sandbox.fault(
        "GET", "/appsmarket/v2/customerLicense/{applicationId}/{customerId}", status=500
    )
    result = project.run("build", "--premium", env=licensing.env())
    assert result.exit_code == 0, result.output
    assert [r["status"] for r in licensing.requests()] == [500, 200]


def test_a_slow_service_times_out_and_refuses_the_build(built, licensing):
    project, out, before = built
    project.write("toolkit.toml", premium_config(extra="timeout = 0.2"))
    # Every try held until the build has ended: however slow the machine, no answer
    # comes within the timeout (and none is left in flight for the next test).
    route = "/appsmarket/v2/customerLicense/{applicationId}/{customerId}"
    held = licensing.sandbox.fault("GET", route, count=3, delay_ms=60_000, until_released=True)
    try:
        line = refused(project, licensing, out, before)
    finally:
        licensing.sandbox.release(held)
    assert line.startswith(f"{REFUSED}the licensing service could not be reached: read timeout")
    # One overall deadline for the gate: a try that used it up leaves no time for another.
    assert "tries" not in line


# -- settings, secrets, folders ------------------------------------------------------------


def test_missing_settings_name_the_key(make_project, licensing):
    project = make_project('[site]\ntitle = "T"\n\n[license]\ncustomer_id = "acme.example"\n')
    result = project.run("build", "--premium", env=licensing.env())
    assert result.exit_code == 1
    assert error_lines(result) == [
        "Error: toolkit.toml: license.application_id: not set; the licensing service is asked "
        'about it (add `application_id = "..."` under [license])'
    ]
    assert licensing.requests() == [] and not (project.root / "site-premium").exists()


def test_a_missing_token_names_the_variable(premium_project, licensing):
    result = premium_project.run(
        "build", "--premium", env={"LICENSE_BASE_URL": licensing.base_url, "LICENSE_API_TOKEN": ""}
    )
    assert result.exit_code == 1
    assert error_lines(result)[0].startswith("Error: LICENSE_API_TOKEN is not set: ")
    assert licensing.requests() == []


def test_the_token_never_shows(premium_project, licensing):
    token = licensing.token()
    ok = premium_project.run("-vv", "build", "--premium", env=licensing.env())
    licensing.set_customer(LICENSED, "UNLICENSED")
    no = premium_project.run("-vv", "build", "--premium", env=licensing.env())
    licensing.outage(500)
    failed = premium_project.run("-vv", "build", "--premium", env=licensing.env())
    for result in (ok, no, failed):
        assert token not in result.output
    assert ok.exit_code == 0 and no.exit_code == 1 and failed.exit_code == 1
    config = premium_project.run("config", env=licensing.env())
    assert token not in config.output


@pytest.mark.parametrize("out", ["site", "site/premium", "."])
def test_a_premium_build_never_writes_into_the_public_folder(premium_project, licensing, out):
    result = premium_project.run("build", "--premium", "--out", out, env=licensing.env())
    assert result.exit_code == 1
    assert "a premium build never writes into, inside or around the public site's folder" in (
        result.output
    )
    assert licensing.requests() == []  # refused before the service is asked
    assert not (premium_project.root / "site").exists()


def test_premium_output_dir_is_the_premium_builds_folder(make_project, licensing):
    project = make_project(
        premium_config().replace(
            'url = "https://example.com/blog"',
            'url = "https://example.com/blog"\npremium_output_dir = "members"',
        )
    )
    project.post("paid", "Members only", published=True, premium=True)
    result = project.run("build", "--premium", env=licensing.env())
    assert result.exit_code == 0, result.output
    assert (project.root / "members" / "paid" / "index.html").is_file()
    assert "→ members/" in result.output
