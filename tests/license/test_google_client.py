"""Google's own client library (`google-api-python-client`), built from the discovery
document the sandbox serves, reads both licence records from the sandbox unchanged, and
gets Google's errors as `HttpError`s."""

from __future__ import annotations

import json

import pytest

from tests.support.license_helpers import APP, LICENSED
from toolkit.tls import shared_context
from toolkit_sandbox.licensing import seed

discovery = pytest.importorskip("googleapiclient.discovery")
errors = pytest.importorskip("googleapiclient.errors")
credentials_module = pytest.importorskip("google.oauth2.credentials")


def service(licensing, token: str):
    """`build(...)` as a developer would call it, pointed at the sandbox's discovery URL."""
    return discovery.build(
        "appsmarket",
        "v2",
        discoveryServiceUrl=licensing.base_url + "/$discovery/rest?version={apiVersion}",
        static_discovery=False,
        cache_discovery=False,
        credentials=credentials_module.Credentials(token=token),
    )


def test_the_client_built_from_the_served_document_reads_both_records(licensing):
    with service(licensing, licensing.token()) as appsmarket:
        customer = (
            appsmarket.customerLicense().get(applicationId=APP, customerId=LICENSED).execute()
        )
        user = appsmarket.userLicense().get(applicationId=APP, userId=seed.ACTIVE_USER).execute()
    assert customer["kind"] == "appsmarket#customerLicense" and customer["state"] == "ACTIVE"
    assert customer["editions"][0]["seatCount"] == 25
    assert user["kind"] == "appsmarket#userLicense" and user["userId"] == seed.ACTIVE_USER
    assert user["enabled"] is True and user["state"] == "ACTIVE"
    routes = [(r["method"], r["route"], r["status"], r["caller"]) for r in licensing.requests()]
    assert routes == [
        ("GET", "/$discovery/rest", 200, None),
        ("GET", "/appsmarket/v2/customerLicense/{applicationId}/{customerId}", 200, "developer"),
        ("GET", "/appsmarket/v2/userLicense/{applicationId}/{userId}", 200, "developer"),
    ]


def test_build_from_document_takes_the_served_document(licensing):
    import httpx

    document = httpx.get(
        licensing.base_url + "/$discovery/rest?version=v2", verify=shared_context()
    ).json()
    credentials = credentials_module.Credentials(token=licensing.token())
    with discovery.build_from_document(json.dumps(document), credentials=credentials) as appsmarket:
        record = appsmarket.userLicense().get(applicationId=APP, userId=seed.EXPIRED_USER).execute()
    assert record["state"] == "EXPIRED"


@pytest.mark.parametrize(
    ("token", "customer", "status", "reason"),
    [
        ("no-scope", LICENSED, 403, "Request had insufficient authentication scopes."),
        ("other-developer", LICENSED, 403, "Not authorized to access the application ID"),
    ],
)
def test_errors_come_back_as_http_errors(licensing, token, customer, status, reason):
    with (
        service(licensing, licensing.token(token)) as appsmarket,
        pytest.raises(errors.HttpError) as failure,
    ):
        appsmarket.customerLicense().get(applicationId=APP, customerId=customer).execute()
    assert failure.value.status_code == status
    assert failure.value.reason == reason
    assert failure.value.error_details[0]["domain"] == "global"


def test_an_unknown_application_is_a_403(licensing):
    with (
        service(licensing, licensing.token()) as appsmarket,
        pytest.raises(errors.HttpError) as failure,
    ):
        appsmarket.userLicense().get(
            applicationId="899999999999", userId=seed.ACTIVE_USER
        ).execute()
    assert failure.value.status_code == 403
    assert failure.value.reason == "Not authorized to access the application ID"


def test_a_customer_that_never_installed_is_unlicensed_and_fields_selects(licensing):
    with service(licensing, licensing.token()) as appsmarket:
        never = (
            appsmarket.customerLicense()
            .get(applicationId=APP, customerId="nobody.example")
            .execute()
        )
        seatless = (
            appsmarket.userLicense().get(applicationId=APP, userId="zed@acme.example").execute()
        )
        partial = (
            appsmarket.customerLicense()
            .get(applicationId=APP, customerId=LICENSED, fields="state,editions/seatCount")
            .execute()
        )
    assert never == {
        "kind": "appsmarket#customerLicense",
        "applicationId": APP,
        "customerId": "nobody.example",
        "state": "UNLICENSED",
    }
    assert seatless["state"] == "UNLICENSED" and seatless["userId"] == "zed@acme.example"
    assert partial == {"state": "ACTIVE", "editions": [{"seatCount": 25}]}


def test_a_401_makes_the_client_try_to_refresh_its_token(licensing):
    """Google's client answers a 401 by refreshing the credentials; an access token alone
    cannot be refreshed, so the library says so."""
    exceptions = pytest.importorskip("google.auth.exceptions")
    with service(licensing, "ya29.bogus") as appsmarket, pytest.raises(exceptions.RefreshError):
        appsmarket.customerLicense().get(applicationId=APP, customerId=LICENSED).execute()
    assert [r["status"] for r in licensing.requests()][-1] == 401
