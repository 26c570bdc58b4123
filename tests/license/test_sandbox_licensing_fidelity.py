"""Interface D against the published proto (`ccc.hosted.marketplace.v2`) and Google's
front end: query parameters bound by the field's proto name and JSON name too, the
notifications' `timestamp` an unsigned 64-bit integer, and the `google.rpc.ErrorInfo`
details of an authentication error."""

from __future__ import annotations

import pytest

from tests.support.license_helpers import APP, LICENSED
from toolkit_sandbox.licensing import seed

CUSTOMER = "/appsmarket/v2/customerLicense/{app}/{customer}"
NOTIFICATIONS = "/appsmarket/v2/licenseNotification/{app}"


@pytest.fixture
def api(licensing):
    with licensing.api(licensing.token()) as client:
        yield client


@pytest.mark.parametrize("name", ["max-results", "max_results", "maxResults"])
def test_the_page_size_binds_by_each_of_its_names(api, name):
    page = api.get(NOTIFICATIONS.format(app=APP), params={name: 3})
    assert page.status_code == 200, page.text
    assert [item["id"] for item in page.json()["notifications"]] == ["1", "2", "3"]
    bad = api.get(NOTIFICATIONS.format(app=APP), params={name: "x"})
    assert bad.json()["error"]["message"] == "Invalid value at 'max_results' (TYPE_UINT32), \"x\""


@pytest.mark.parametrize("name", ["start-token", "start_token", "startToken"])
def test_the_page_token_binds_by_each_of_its_names(api, name):
    path = NOTIFICATIONS.format(app=APP)
    first = api.get(path, params={"max-results": 2}).json()
    second = api.get(path, params={"max-results": 2, name: first["nextPageToken"]})
    assert [item["id"] for item in second.json()["notifications"]] == ["3", "4"]


def test_the_timestamp_is_an_unsigned_64_bit_integer(api):
    path = NOTIFICATIONS.format(app=APP)
    for value in ("-1", str(2**64)):
        refused = api.get(path, params={"timestamp": value})
        assert refused.status_code == 400
        assert refused.json()["error"]["message"] == (
            f"Invalid value at 'timestamp' (TYPE_UINT64), \"{value}\""
        )
    beyond = api.get(path, params={"timestamp": str(2**64 - 1)})
    assert beyond.status_code == 200 and "notifications" not in beyond.json()
    since = api.get(path, params={"timestamp": seed.base_ms(259)}).json()
    assert [item["id"] for item in since["notifications"]] == ["260"]


def error_info(response) -> dict:
    (info,) = response.json()["error"]["details"]
    assert info["@type"] == "type.googleapis.com/google.rpc.ErrorInfo"
    assert info["domain"] == "googleapis.com"
    assert info["metadata"]["service"] == "appsmarket.googleapis.com"
    return info


def test_authentication_errors_carry_googles_error_info(licensing):
    customer = CUSTOMER.format(app=APP, customer=LICENSED)
    with licensing.api(None) as anonymous:
        missing = anonymous.get(customer)
    assert missing.status_code == 401
    assert list(missing.json()["error"]) == ["code", "message", "errors", "status", "details"]
    info = error_info(missing)
    assert info["reason"] == "CREDENTIALS_MISSING"
    assert info["metadata"]["method"] == "ccc.hosted.marketplace.v2.CustomerLicenseService.Get"
    with licensing.api(licensing.token("expired")) as expired:
        answer = expired.get(NOTIFICATIONS.format(app=APP))
    assert answer.status_code == 401
    assert error_info(answer)["reason"] == "ACCESS_TOKEN_EXPIRED"
    assert error_info(answer)["metadata"]["method"] == (
        "ccc.hosted.marketplace.v2.LicenseNotificationService.List"
    )
    with licensing.api(licensing.token("no-scope")) as narrow:
        answer = narrow.get(f"/appsmarket/v2/userLicense/{APP}/{seed.ACTIVE_USER}")
    assert answer.status_code == 403  # its ErrorInfo left out (README: deviations)
    assert answer.json()["error"]["errors"][0]["reason"] == "insufficientPermissions"
    with licensing.api("ya29.unknown") as unknown:
        answer = unknown.get(customer)
    assert answer.status_code == 401 and "details" not in answer.json()["error"]


def test_fields_come_in_the_order_of_their_proto_numbers(api):
    """A proto's JSON printer writes a message's fields in the order of their numbers
    (`google/apps/market/v2/resources.proto`)."""
    customer = api.get(CUSTOMER.format(app=APP, customer=LICENSED)).json()
    assert list(customer) == ["kind", "state", "applicationId", "editions", "id", "customerId"]
    assert list(customer["editions"][0]) == ["editionId", "seatCount", "assignedSeats"]
    user = api.get(f"/appsmarket/v2/userLicense/{APP}/{seed.ACTIVE_USER}").json()
    assert list(user) == [
        "kind",
        "enabled",
        "state",
        "editionId",
        "customerId",
        "applicationId",
        "id",
        "userId",
    ]
    page = api.get(NOTIFICATIONS.format(app=APP), params={"max-results": 5}).json()
    assert list(page) == ["kind", "notifications", "nextPageToken"]
    first = page["notifications"][0]
    assert list(first)[:5] == ["id", "applicationId", "timestamp", "customerId", "kind"]
    (reassigned,) = next(n for n in page["notifications"] if "reassignments" in n)["reassignments"]
    assert list(reassigned) == ["kind", "userId", "type", "editionId"]
