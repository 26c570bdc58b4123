"""Interface D in the sandbox, as Google's service answers: the records' shapes, Google's
error body for 400/401/403/404 and for injected faults, the notification pages, the
discovery document with its roots rewritten, and the control API."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.license_helpers import APP, LICENSED, OTHER_APP, UNLICENSED
from toolkit_sandbox.licensing import seed

CUSTOMER = "/appsmarket/v2/customerLicense/{app}/{customer}"
USER = "/appsmarket/v2/userLicense/{app}/{user}"
NOTIFICATIONS = "/appsmarket/v2/licenseNotification/{app}"
REFERENCE = Path(seed.__file__).resolve().parent / "appsmarket-v2.json"


@pytest.fixture
def api(licensing):
    with licensing.api(licensing.token()) as client:
        yield client


def google_error(response, status: int, name: str) -> dict:
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("application/json")
    body = response.json()
    assert set(body) == {"error"}
    error = body["error"]
    assert error["code"] == status and error["status"] == name
    assert isinstance(error["message"], str) and error["message"]
    assert error["errors"] and error["errors"][0]["domain"] == "global"
    return error


def test_customer_licence_records(api):
    active = api.get(CUSTOMER.format(app=APP, customer=LICENSED)).json()
    assert active == {
        "kind": "appsmarket#customerLicense",
        "id": f"{APP}-{LICENSED}",
        "applicationId": APP,
        "customerId": LICENSED,
        "state": "ACTIVE",
        "editions": [{"editionId": "default_edition", "seatCount": 25, "assignedSeats": 4}],
    }
    unlicensed = api.get(CUSTOMER.format(app=APP, customer=UNLICENSED)).json()
    assert unlicensed["state"] == "UNLICENSED" and "editions" not in unlicensed  # empty: out


@pytest.mark.parametrize(
    ("user", "state", "enabled"),
    [
        (seed.ACTIVE_USER, "ACTIVE", True),
        (seed.UNLICENSED_USER, "UNLICENSED", True),
        (seed.EXPIRED_USER, "EXPIRED", True),
        (seed.DISABLED_USER, "ACTIVE", False),
    ],
)
def test_user_licence_records(api, user, state, enabled):
    record = api.get(USER.format(app=APP, user=user)).json()
    assert record == {
        "kind": "appsmarket#userLicense",
        "id": f"{APP}-{user}",
        "applicationId": APP,
        "customerId": LICENSED,
        "userId": user,
        "enabled": enabled,
        "state": state,
        "editionId": "default_edition",
    }


def test_401_without_a_token_and_with_an_unknown_one(licensing):
    with licensing.api(None) as anonymous:
        response = anonymous.get(CUSTOMER.format(app=APP, customer=LICENSED))
    error = google_error(response, 401, "UNAUTHENTICATED")
    assert error["message"].startswith("Request is missing required authentication credential.")
    assert error["errors"][0]["reason"] == "required"
    assert response.headers["www-authenticate"] == 'Bearer realm="https://accounts.google.com/"'
    for token in ("ya29.unknown", licensing.token("expired")):
        with licensing.api(token) as client:
            response = client.get(CUSTOMER.format(app=APP, customer=LICENSED))
        error = google_error(response, 401, "UNAUTHENTICATED")
        assert error["message"].startswith("Request had invalid authentication credentials.")
        assert error["errors"][0]["reason"] == "authError"
        assert 'error="invalid_token"' in response.headers["www-authenticate"]
    with licensing.api(None) as anonymous:
        malformed = anonymous.get(
            CUSTOMER.format(app=APP, customer=LICENSED), headers={"Authorization": "Basic abc"}
        )
    google_error(malformed, 401, "UNAUTHENTICATED")


def test_403_without_the_scope_and_for_an_application_not_owned(licensing, api):
    with licensing.api(licensing.token("no-scope")) as client:
        response = client.get(CUSTOMER.format(app=APP, customer=LICENSED))
    error = google_error(response, 403, "PERMISSION_DENIED")
    assert error["message"] == "Request had insufficient authentication scopes."
    assert error["errors"][0]["reason"] == "insufficientPermissions"
    assert 'error="insufficient_scope"' in response.headers["www-authenticate"]
    response = api.get(CUSTOMER.format(app=OTHER_APP, customer=LICENSED))
    assert google_error(response, 403, "PERMISSION_DENIED")["errors"][0]["reason"] == "forbidden"


def test_a_customer_that_never_installed_and_a_user_without_a_seat_are_unlicensed(api):
    customer = api.get(CUSTOMER.format(app=APP, customer="nobody.example"))
    assert customer.status_code == 200
    assert customer.json() == {
        "kind": "appsmarket#customerLicense",
        "applicationId": APP,
        "customerId": "nobody.example",
        "state": "UNLICENSED",
    }
    in_a_licensed_domain = api.get(USER.format(app=APP, user="zed@acme.example"))
    assert in_a_licensed_domain.status_code == 200
    assert in_a_licensed_domain.json() == {
        "kind": "appsmarket#userLicense",
        "applicationId": APP,
        "customerId": LICENSED,
        "userId": "zed@acme.example",
        "enabled": True,
        "state": "UNLICENSED",
    }
    elsewhere = api.get(USER.format(app=APP, user="zed@nobody.example")).json()
    assert (elsewhere["state"], elsewhere["enabled"]) == ("UNLICENSED", False)


def test_403_for_an_application_that_does_not_exist(api):
    for path in (
        CUSTOMER.format(app="899999999999", customer=LICENSED),
        USER.format(app="899999999999", user=seed.ACTIVE_USER),
        NOTIFICATIONS.format(app="899999999999"),
    ):
        error = google_error(api.get(path), 403, "PERMISSION_DENIED")
        assert error["message"] == "Not authorized to access the application ID"


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("GET", "/appsmarket/v2/somethingElse"),
        ("GET", "/appsmarket/v1/customerLicense/a/b"),
        ("GET", f"/appsmarket/v2/customerLicense/{APP}"),
        ("GET", "/appsmarket"),
        ("POST", CUSTOMER.format(app=APP, customer=LICENSED)),
        ("DELETE", USER.format(app=APP, user=seed.ACTIVE_USER)),
        ("GET", "/appsmarket/v2/<script>"),
    ],
)
def test_a_path_or_method_the_api_lacks_is_googles_html_404(licensing, method, path):
    with licensing.api(None) as anonymous:  # before any credential is looked at
        response = anonymous.request(method, path)
    assert response.status_code == 404
    assert response.headers["content-type"] == "text/html; charset=UTF-8"
    assert "<title>Error 404 (Not Found)!!1</title>" in response.text
    assert "<script>" not in response.text
    shown = path.replace("<", "&lt;").replace(">", "&gt;")
    assert f"The requested URL <code>{shown}</code> was not found on this server." in (
        response.text
    )


def test_400_for_bad_parameters(api):
    path = NOTIFICATIONS.format(app=APP)
    for params, message in (
        ({"max-results": "ten"}, "Invalid value at 'max_results' (TYPE_UINT32), \"ten\""),
        ({"max-results": "-1"}, "Invalid value at 'max_results' (TYPE_UINT32), \"-1\""),
        ({"timestamp": "yesterday"}, "Invalid value at 'timestamp' (TYPE_UINT64), \"yesterday\""),
        ({"start-token": "not-a-token"}, "Invalid page token."),
        (
            {"max_result": "5"},
            'Invalid JSON payload received. Unknown name "max_result": '
            "Cannot bind query parameter. Field 'max_result' could not be "
            "found in request message.",
        ),
        ({"alt": "xml"}, None),
    ):
        error = google_error(api.get(path, params=params), 400, "INVALID_ARGUMENT")
        if message is not None:
            assert error["message"] == message
    customer = CUSTOMER.format(app=APP, customer=LICENSED)
    google_error(api.get(customer, params={"max-results": "5"}), 400, "INVALID_ARGUMENT")
    # Google's own query parameters are taken by every method.
    assert (
        api.get(
            customer, params={"alt": "json", "prettyPrint": "false", "quotaUser": "x"}
        ).status_code
        == 200
    )


def test_a_page_token_of_another_application_is_refused(licensing, api):
    first = api.get(NOTIFICATIONS.format(app=APP), params={"max-results": 2}).json()
    with licensing.api(licensing.token("other-developer")) as other:
        response = other.get(
            NOTIFICATIONS.format(app=OTHER_APP), params={"start-token": first["nextPageToken"]}
        )
    google_error(response, 400, "INVALID_ARGUMENT")


def test_notification_pages(api):
    path = NOTIFICATIONS.format(app=APP)
    page = api.get(path).json()
    assert page["kind"] == "appsmarket#licenseNotificationList"
    assert len(page["notifications"]) == 100  # the default page
    first = page["notifications"][0]
    assert first == {  # the lists with nothing in them are left out
        "kind": "appsmarket#licenseNotification",
        "id": "1",
        "applicationId": APP,
        "customerId": "customer-01.example",
        "timestamp": str(seed.base_ms(0)),
        "provisions": [
            {
                "kind": "appsmarket#provisionNotification",
                "editionId": "default_edition",
                "seatCount": "5",
            }
        ],
    }
    seen, token, pages = [], None, 0
    while True:
        params = {"max-results": 120, **({"start-token": token} if token else {})}
        page = api.get(path, params=params).json()
        pages += 1
        if "notifications" not in page:
            assert page == {"kind": "appsmarket#licenseNotificationList", "nextPageToken": ""}
            break
        seen += [item["id"] for item in page["notifications"]]
        token = page["nextPageToken"]
    assert seen == [str(i) for i in range(1, seed.SEEDED_NOTIFICATIONS + 1)] and pages == 4
    since = api.get(path, params={"timestamp": seed.base_ms(250)}).json()
    assert [item["id"] for item in since["notifications"]] == [str(i) for i in range(251, 261)]


def test_an_application_without_notifications_answers_as_googles_guide_shows(licensing):
    with licensing.api(licensing.token("other-developer")) as other:
        everything = other.get(NOTIFICATIONS.format(app=OTHER_APP)).json()
        assert len(everything["notifications"]) == seed.OTHER_NOTIFICATIONS
        later = other.get(
            NOTIFICATIONS.format(app=OTHER_APP), params={"timestamp": seed.base_ms(10_000)}
        )
    assert later.status_code == 200
    assert later.json() == {"kind": "appsmarket#licenseNotificationList", "nextPageToken": ""}


def test_notification_items_have_the_kinds_of_googles_reference(api):
    page = api.get(NOTIFICATIONS.format(app=APP), params={"max-results": 10}).json()
    kinds = {
        name: {item["kind"] for n in page["notifications"] for item in n.get(name, [])}
        for name in ("provisions", "expiries", "reassignments", "deletes")
    }
    assert kinds == {
        "provisions": {"appsmarket#provisionNotification"},
        "expiries": {"appsmarket#expiryNotification"},
        "reassignments": {"appsmarket#reassignmentNotification"},
        "deletes": {"appsmarket#deleteNotification"},
    }


@pytest.mark.parametrize(
    ("path", "selector", "expected"),
    [
        (CUSTOMER, "state", {"state": "ACTIVE"}),
        (
            CUSTOMER,
            "customerId,editions/seatCount",
            {"customerId": LICENSED, "editions": [{"seatCount": 25}]},
        ),
        (
            CUSTOMER,
            "editions(editionId,assignedSeats),kind",
            {
                "kind": "appsmarket#customerLicense",
                "editions": [{"editionId": "default_edition", "assignedSeats": 4}],
            },
        ),
        (USER, "enabled,state", {"enabled": True, "state": "ACTIVE"}),
        (
            NOTIFICATIONS,
            "notifications(id,provisions/seatCount),nextPageToken",
            {
                "notifications": [
                    {"id": "1", "provisions": [{"seatCount": "5"}]},
                    {"id": "2", "provisions": [{"seatCount": "6"}]},
                ],
                "nextPageToken": "ODEyMzQ1Njc4OTAxOjI",
            },
        ),
        (NOTIFICATIONS, "notifications/reassignments/*", {"notifications": [{}, {}]}),
        (
            NOTIFICATIONS,
            "notifications/provisions(kind),notifications/id",
            {
                "notifications": [
                    {"id": "1", "provisions": [{"kind": "appsmarket#provisionNotification"}]},
                    {"id": "2", "provisions": [{"kind": "appsmarket#provisionNotification"}]},
                ]
            },
        ),
        (CUSTOMER, "*", None),
        (CUSTOMER, "", None),
    ],
)
def test_fields_gives_a_partial_response(api, path, selector, expected):
    url = path.format(app=APP, customer=LICENSED, user=seed.ACTIVE_USER)
    full = api.get(url, params={"max-results": 2} if path == NOTIFICATIONS else {}).json()
    params = {"fields": selector, **({"max-results": 2} if path == NOTIFICATIONS else {})}
    response = api.get(url, params=params)
    assert response.status_code == 200, response.text
    assert response.json() == (full if expected is None else expected)


@pytest.mark.parametrize(
    ("selector", "named"),
    [
        ("nope", "nope"),
        ("state/inner", "state/inner"),
        ("editions/nope", "editions/nope"),
        ("state,", "state,"),
        ("editions(seatCount", "editions"),
        ("a)b", "a)b"),
        (",", ","),
    ],
)
def test_fields_naming_nothing_the_method_answers_is_a_400(api, selector, named):
    response = api.get(CUSTOMER.format(app=APP, customer=LICENSED), params={"fields": selector})
    error = google_error(response, 400, "INVALID_ARGUMENT")
    assert error["message"] == f"Invalid field selection {named}"
    assert error["errors"][0]["location"] == "fields"


def test_a_page_holds_at_most_500(licensing, api):
    licensing.add_notifications(300)
    page = api.get(NOTIFICATIONS.format(app=APP), params={"max-results": 100000}).json()
    assert len(page["notifications"]) == 500


def test_faults_answer_in_googles_body(licensing, api):
    licensing.sandbox.fault(
        "GET",
        CUSTOMER.replace("{app}", "{applicationId}").replace("{customer}", "{customerId}"),
        status=503,
    )
    error = google_error(api.get(CUSTOMER.format(app=APP, customer=LICENSED)), 503, "UNAVAILABLE")
    assert error["errors"][0]["reason"] == "backendError"
    assert api.get(CUSTOMER.format(app=APP, customer=LICENSED)).status_code == 200


def test_the_outage_switch(licensing, api):
    licensing.outage(500)
    google_error(api.get(CUSTOMER.format(app=APP, customer=LICENSED)), 500, "INTERNAL")
    assert licensing.control("GET", "/outage") == {"status": 500, "delay_ms": 0}
    licensing.sandbox.reset()  # a reset ends it
    assert api.get(CUSTOMER.format(app=APP, customer=LICENSED)).status_code == 200
    with pytest.raises(Exception, match="422"):
        licensing.outage(200)


def test_the_discovery_document_is_googles_with_the_roots_rewritten(licensing):
    with licensing.api(None) as anonymous:
        served = anonymous.get("/$discovery/rest", params={"version": "v2"}).json()
        assert anonymous.get("/$discovery/rest", params={"version": "v1"}).status_code == 404
    reference = json.loads(REFERENCE.read_text())
    root = licensing.base_url + "/"
    assert served["rootUrl"] == served["mtlsRootUrl"] == served["baseUrl"] == root
    rest = {k: v for k, v in served.items() if k not in ("rootUrl", "mtlsRootUrl", "baseUrl")}
    assert rest == {
        k: v for k, v in reference.items() if k not in ("rootUrl", "mtlsRootUrl", "baseUrl")
    }
    assert reference["rootUrl"] == "https://appsmarket.googleapis.com/"


def test_control_sets_licences_and_adds_notifications(licensing, api):
    record = licensing.set_customer(
        "newco.example", "ACTIVE", editions=[{"editionId": "team", "seatCount": 3}]
    )
    assert record["state"] == "ACTIVE" and record["editions"] == [
        {"editionId": "team", "seatCount": 3, "assignedSeats": 0}
    ]
    assert api.get(CUSTOMER.format(app=APP, customer="newco.example")).json() == record
    user = licensing.set_user("zoe@newco.example", customer_id="newco.example", state="EXPIRED")
    assert (user["state"], user["enabled"]) == ("EXPIRED", True)
    assert licensing.set_user("zoe@newco.example", enabled=False)["state"] == "EXPIRED"
    added = licensing.control(
        "POST",
        "/notifications",
        {
            "customer_id": "newco.example",
            "timestamp": 1_800_000_000_000,
            "provisions": [{"kind": "appsmarket#provision", "seatCount": "3"}],
        },
    )
    assert added["id"] == str(seed.SEEDED_NOTIFICATIONS + seed.OTHER_NOTIFICATIONS + 1)
    assert added["timestamp"] == "1800000000000" and "expiries" not in added
    everything = licensing.control("GET", "/licenses")
    assert {c["customerId"] for c in everything["customers"]} >= {"newco.example", LICENSED}
    for bad in (
        {"customer_id": "x", "state": "MAYBE"},
        {"state": "ACTIVE"},
        {"customer_id": "a/b", "state": "ACTIVE"},
        {"customer_id": "x", "state": "ACTIVE", "application_id": "1"},
    ):
        response = licensing.http.post("/__sandbox/licensing/customers", json=bad)
        assert response.status_code == 422, bad
    index = licensing.http.get("/__sandbox").json()
    assert index["interfaces"]["licensing"]["prefixes"] == ["/appsmarket", "/$discovery"]
    assert "POST /__sandbox/licensing/customers" in index["endpoints"]


def test_requests_are_recorded_with_the_tokens_label_never_the_token(licensing, api):
    api.get(CUSTOMER.format(app=APP, customer=LICENSED))
    with licensing.api(None) as anonymous:
        anonymous.get(CUSTOMER.format(app=APP, customer=LICENSED))
    records = licensing.requests()
    assert [(r["caller"], r["status"]) for r in records] == [("developer", 200), (None, 401)]
    assert licensing.token() not in json.dumps(records)


def test_a_reset_restores_the_seed(licensing, api):
    licensing.set_customer(LICENSED, "UNLICENSED")
    licensing.add_notifications(5)
    licensing.sandbox.reset()
    assert api.get(CUSTOMER.format(app=APP, customer=LICENSED)).json()["state"] == "ACTIVE"
    page = api.get(NOTIFICATIONS.format(app=APP), params={"max-results": 500}).json()
    assert len(page["notifications"]) == seed.SEEDED_NOTIFICATIONS
