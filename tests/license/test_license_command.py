"""`toolkit license status|notifications` against the sandbox's licensing service: every
licence state as it is, the errors as one line each, and notifications paged completely
(no gap, no duplicate) with the position remembered so the next call shows only new
ones."""

from __future__ import annotations

import json

import pytest

from tests.support.license_helpers import APP, LICENSED, OTHER_APP, UNLICENSED, premium_config
from toolkit_sandbox.licensing import seed


def status(project, licensing, *args: str, env=None):
    result = project.run("license", "status", *args, "--json", env=env or licensing.env())
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_status_prints_the_customer_licence_and_the_verdict(make_project, licensing):
    project = make_project(premium_config())
    result = project.run("license", env=licensing.env())
    assert result.exit_code == 0, result.output
    assert result.output.splitlines()[:3] == [
        f"customer {LICENSED}: ACTIVE (application {APP})",
        "  edition default_edition: 4 of 25 seats assigned",
        "premium builds: allowed",
    ]
    document = status(project, licensing)
    assert document["customer"] == {
        "kind": "appsmarket#customerLicense",
        "id": f"{APP}-{LICENSED}",
        "applicationId": APP,
        "customerId": LICENSED,
        "state": "ACTIVE",
        "editions": [{"editionId": "default_edition", "seatCount": 25, "assignedSeats": 4}],
    }
    assert document["user"] is None and document["premium_allowed"] is True
    assert document["requests"] == 1


@pytest.mark.parametrize(
    ("user", "state", "enabled", "allowed"),
    [
        (seed.ACTIVE_USER, "ACTIVE", True, True),
        (seed.UNLICENSED_USER, "UNLICENSED", True, False),
        (seed.EXPIRED_USER, "EXPIRED", True, False),
        (seed.DISABLED_USER, "ACTIVE", False, False),
    ],
)
def test_status_with_a_user(make_project, licensing, user, state, enabled, allowed):
    project = make_project(premium_config())
    document = status(project, licensing, "--user", user)
    assert document["user"]["userId"] == user
    assert (document["user"]["state"], document["user"]["enabled"]) == (state, enabled)
    assert document["premium_allowed"] is allowed
    text = project.run("license", "status", "--user", user, env=licensing.env()).output
    assert f"user {user}: {state}, " in text
    assert ("premium builds: allowed" in text) is allowed


def test_status_of_an_unlicensed_customer_is_an_answer_not_a_failure(make_project, licensing):
    project = make_project(premium_config(customer=UNLICENSED))
    result = project.run("license", env=licensing.env())
    assert result.exit_code == 0, result.output
    assert f"customer {UNLICENSED}: UNLICENSED" in result.output
    assert f"premium builds: refused (customer {UNLICENSED} licence is UNLICENSED)" in result.output


def test_status_of_a_customer_that_never_installed_is_unlicensed(make_project, licensing):
    project = make_project(
        premium_config(customer="nobody.example", extra='user_id = "zed@nobody.example"')
    )
    document = status(project, licensing)
    assert document["customer"]["state"] == "UNLICENSED"
    assert document["customer"]["editions"] == []
    assert document["user"]["state"] == "UNLICENSED" and document["user"]["enabled"] is False
    assert document["premium_refusal"] == "customer nobody.example licence is UNLICENSED"


def test_status_takes_user_id_from_the_configuration(make_project, licensing):
    project = make_project(premium_config(extra=f'user_id = "{seed.EXPIRED_USER}"'))
    document = status(project, licensing)
    assert document["user"]["state"] == "EXPIRED"
    assert document["premium_refusal"] == f"user {seed.EXPIRED_USER} licence is EXPIRED"


@pytest.mark.parametrize(
    ("token", "app", "customer", "expected"),
    [
        (
            "ya29.bogus",
            APP,
            LICENSED,
            "Error: the licensing service did not accept LICENSE_API_TOKEN: 401 Request had "
            "invalid authentication credentials. Expected OAuth 2 access token, login cookie or "
            "other valid authentication credential. See…",
        ),
        (
            "no-scope",
            APP,
            LICENSED,
            f"Error: LICENSE_API_TOKEN may not read the licences of application {APP}: 403 Request "
            "had insufficient authentication scopes.",
        ),
        (
            "developer",
            OTHER_APP,
            LICENSED,
            f"Error: LICENSE_API_TOKEN may not read the licences of application {OTHER_APP}: 403 "
            "Not authorized to access the application ID",
        ),
        (
            "developer",
            "899999999999",
            LICENSED,
            "Error: LICENSE_API_TOKEN may not read the licences of application 899999999999: 403 "
            "Not authorized to access the application ID",
        ),
    ],
)
def test_status_errors_are_one_line_each(make_project, licensing, token, app, customer, expected):
    project = make_project(premium_config(customer=customer, app=app))
    secret = token if token.startswith("ya29.") else licensing.token(token)
    result = project.run("license", env=licensing.env(secret))
    assert result.exit_code == 1
    assert result.output.strip().splitlines() == [expected]
    assert secret not in result.output


def test_status_of_an_answer_about_another_customer_is_an_error(make_project, licensing):
    project = make_project(premium_config())
    licensing.misroute(customerId="globex.example")
    result = project.run("license", env=licensing.env())
    assert result.exit_code == 1
    assert result.output.strip().splitlines() == [
        "Error: the licensing service's answer is not a licence (GET /appsmarket/v2/"
        f"customerLicense/{APP}/{LICENSED}: the answer is about customerId globex.example, "
        f"not {LICENSED})"
    ]


def test_misplaced_options_are_usage_errors(make_project, licensing):
    project = make_project(premium_config())
    assert project.run("license", "status", "--all", env=licensing.env()).exit_code == 2
    assert (
        project.run("license", "notifications", "--user", "a@b.c", env=licensing.env()).exit_code
        == 2
    )
    assert project.run("license", "status", "--user", " ", env=licensing.env()).exit_code == 2
    assert licensing.requests() == []


# -- notifications ---------------------------------------------------------------------


def notifications(project, licensing, *args: str) -> dict:
    result = project.run("license", "notifications", "--json", *args, env=licensing.env())
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def ids(document: dict) -> list[int]:
    return [int(item["id"]) for item in document["notifications"]]


def test_every_notification_once_then_only_new_ones(make_project, licensing):
    project = make_project(premium_config())
    first = notifications(project, licensing)
    assert first["count"] == seed.SEEDED_NOTIFICATIONS > 250
    assert ids(first) == list(range(1, seed.SEEDED_NOTIFICATIONS + 1))  # no gap, no duplicate
    assert {item["applicationId"] for item in first["notifications"]} == {APP}
    assert first["pages"] >= 3 and first["from_start"] is True
    assert first["requests"] == first["pages"]

    second = notifications(project, licensing)
    assert second["count"] == 0 and second["from_start"] is False

    added = licensing.add_notifications(3)
    licensing.add_notifications(2, application_id=OTHER_APP)  # another application's
    third = notifications(project, licensing)
    assert [item["id"] for item in third["notifications"]] == added
    assert notifications(project, licensing)["count"] == 0

    everything = notifications(project, licensing, "--all")
    assert ids(everything) == list(range(1, seed.SEEDED_NOTIFICATIONS + 1)) + [
        int(i) for i in added
    ]


def test_a_failed_call_loses_nothing(make_project, licensing):
    project = make_project(premium_config())
    notifications(project, licensing)
    added = licensing.add_notifications(250)  # more than two pages' worth of new ones
    licensing.sandbox.fault(
        "GET", "/appsmarket/v2/licenseNotification/{applicationId}", count=3, status=503
    )
    failed = project.run("license", "notifications", env=licensing.env())
    assert failed.exit_code == 1
    assert failed.output.strip() == (
        "Error: the licensing service failed: 503 The service is currently unavailable. (3 tries)"
    )
    again = notifications(project, licensing)
    assert [item["id"] for item in again["notifications"]] == added


def test_a_failure_half_way_saves_no_position(make_project, licensing):
    """The service goes down after the first page: the call fails, and the next one
    lists from where the last successful call ended, the first page included."""
    import httpx

    from toolkit.clients.bounds import DeadlineTransport
    from toolkit.commands.license import license_notifications
    from toolkit.config import load_config
    from toolkit.errors import LicenseError
    from toolkit.tls import shared_context

    class OutageAfterFirstPage(DeadlineTransport):
        def __init__(self) -> None:
            super().__init__(shared_context())
            self.pages = 0

        def handle_request(self, request: httpx.Request) -> httpx.Response:
            response = super().handle_request(request)
            self.pages += 1
            if self.pages == 1:
                licensing.outage(503)  # the real service fails from the second page on
            return response

    project = make_project(premium_config())
    config = load_config(project.root / "toolkit.toml", env=licensing.env())
    with pytest.raises(LicenseError) as failure:
        license_notifications(config, page_size=50, transport=OutageAfterFirstPage())
    assert failure.value.cause == "service"
    assert not (project.root / ".toolkit" / "license-notifications.json").exists()
    licensing.outage(None)
    result = license_notifications(config, page_size=50)
    assert [int(n.id) for n in result.notifications] == list(
        range(1, seed.SEEDED_NOTIFICATIONS + 1)
    )


def test_notifications_page_completely_with_small_pages(make_project, licensing):
    from toolkit.commands.license import license_notifications
    from toolkit.config import load_config

    project = make_project(premium_config())
    config = load_config(project.root / "toolkit.toml", env=licensing.env())
    result = license_notifications(config, page_size=7)
    assert [int(n.id) for n in result.notifications] == list(
        range(1, seed.SEEDED_NOTIFICATIONS + 1)
    )
    assert result.pages == seed.SEEDED_NOTIFICATIONS // 7 + 2  # full pages, the rest, an empty one
    sizes = {r["path"] for r in licensing.requests()}
    assert sizes == {f"/appsmarket/v2/licenseNotification/{APP}"}
    assert license_notifications(config, page_size=7).notifications == []


def test_notifications_in_words(make_project, licensing):
    project = make_project(premium_config())
    result = project.run("license", "notifications", env=licensing.env())
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert len(lines) == seed.SEEDED_NOTIFICATIONS
    assert lines[0] == "1  2024-05-01 09:00:00Z  customer-01.example: provisioned 5 seats"
    assert lines[2] == (
        "3  2024-05-01 11:00:00Z  customer-03.example: unassigned user02@customer-03.example"
    )
    assert "licence expired" in lines[3] and "application deleted" in lines[4]
    assert f"{seed.SEEDED_NOTIFICATIONS} notifications of application {APP}" in result.stderr


def test_an_unreadable_position_lists_from_the_start(make_project, licensing):
    project = make_project(premium_config())
    (project.root / ".toolkit").mkdir()
    (project.root / ".toolkit" / "license-notifications.json").write_text("{not json")
    result = project.run("license", "notifications", "--json", env=licensing.env())
    assert result.exit_code == 0
    document = json.loads(result.stdout)
    assert document["count"] == seed.SEEDED_NOTIFICATIONS
    assert "could not be read" in document["notice"]
    assert notifications(project, licensing)["count"] == 0  # the position is saved again


def test_notifications_need_no_customer(make_project, licensing):
    project = make_project(f'[license]\napplication_id = "{APP}"\n')
    assert notifications(project, licensing)["count"] == seed.SEEDED_NOTIFICATIONS


def test_status_ends_within_its_timeout_when_the_service_holds_its_answer(make_project, licensing):
    """`[license] timeout` bounds the whole command, retries included, as it bounds the
    premium gate: a held answer gives one try that uses the time up, not three."""
    project = make_project(premium_config(extra="timeout = 0.5"))
    route = "/appsmarket/v2/customerLicense/{applicationId}/{customerId}"
    fault = licensing.sandbox.fault("GET", route, count=3, delay_ms=60_000, until_released=True)
    try:
        result = project.run("license", "status", env=licensing.env())
        left = [f["count"] for f in licensing.sandbox.control("GET", "/faults")["faults"]]
    finally:
        licensing.sandbox.release(fault)
    assert result.exit_code == 1
    (line,) = [line for line in result.output.splitlines() if line.startswith("Error: ")]
    assert "read timeout" in line and "tries" not in line
    assert left == [2]  # one request held, the other two holds never taken


def test_a_rate_limit_is_said_in_the_services_whole_words(make_project, licensing):
    """Google's 429 message holds "e.g.": it is shown whole, not cut at its first period."""
    project = make_project(premium_config())
    route = "/appsmarket/v2/customerLicense/{applicationId}/{customerId}"
    # Retry-After: 0, as the message, not the wait, is the subject: three tries at once.
    licensing.sandbox.fault("GET", route, count=3, status=429, retry_after=0)
    result = project.run("license", "status", env=licensing.env())
    assert result.exit_code == 1
    (line,) = [line for line in result.output.splitlines() if line.startswith("Error: ")]
    assert line == (
        "Error: the licensing service failed: 429 Resource has been exhausted "
        "(e.g. check quota). (3 tries)"
    )
