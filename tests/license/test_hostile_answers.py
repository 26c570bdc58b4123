"""Answers from outside are hostile: a licensing service (or something in its place) that
sends odd states, wrong types or no JSON at all still gets a one-line refusal, never a
traceback and never a premium build. The answers come from a transport passed in, the
seam every client has for this."""

from __future__ import annotations

import json
import ssl

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.support.license_helpers import APP, LICENSED, premium_config
from toolkit.config import load_config
from toolkit.errors import PremiumRefused
from toolkit.license.gate import PremiumGate

TOKEN = "ya29.hostile-test-token"
USER = "ana@acme.example"


def about(**fields) -> str:
    """A customer licence answer about what the gate asks (`[license]` of
    premium_config()), with `fields` added."""
    return json.dumps(
        {
            "kind": "appsmarket#customerLicense",
            "applicationId": APP,
            "customerId": LICENSED,
            **fields,
        }
    )


def gate_answering(
    project, body: bytes | str, status: int = 200, content_type: str = "application/json"
) -> PremiumGate:
    def answer(request: httpx.Request) -> httpx.Response:
        assert request.headers["authorization"] == f"Bearer {TOKEN}"
        data = body.encode() if isinstance(body, str) else body
        return httpx.Response(status, content=data, headers={"content-type": content_type})

    config = load_config(
        project.root / "toolkit.toml",
        env={"LICENSE_API_TOKEN": TOKEN, "LICENSE_BASE_URL": "https://licensing.invalid"},
    )
    return PremiumGate(config, transport=httpx.MockTransport(answer), sleep=lambda s: None)


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (
            about(state="ACTIVE\n::error::owned"),
            "premium build refused: customer acme.example licence is ACTIVE?::error::owned",
        ),
        (about(state=1), "premium build refused: customer acme.example licence is (none)"),
        (about(state="active"), "premium build refused: customer acme.example licence is active"),
        (
            about(state="X" * 500),
            "premium build refused: customer acme.example licence is " + "X" * 60,
        ),
        (
            json.dumps(["ACTIVE"]),
            "premium build refused: the licensing service's answer is not a "
            "licence (GET /appsmarket/v2/customerLicense/812345678901/"
            "acme.example: the answer is not a customer licence)",
        ),
        (
            "<html>hello</html>",
            "premium build refused: the licensing service's answer is not a "
            "licence (GET /appsmarket/v2/customerLicense/812345678901/"
            "acme.example: the answer is not a customer licence)",
        ),
    ],
)
def test_odd_answers_refuse_in_one_line(make_project, body, expected):
    project = make_project(premium_config())
    with pytest.raises(PremiumRefused) as refused:
        gate_answering(project, body).check()
    assert refused.value.message == expected
    assert "\n" not in refused.value.message


def test_an_error_without_googles_body_still_names_its_status(make_project):
    project = make_project(premium_config())
    with pytest.raises(PremiumRefused) as refused:
        gate_answering(project, "<html>Forbidden</html>", 403, "text/html").check()
    assert refused.value.message == (
        "premium build refused: LICENSE_API_TOKEN may not read "
        "the licences of application 812345678901: 403 Forbidden"
    )
    assert refused.value.cause == "forbidden"


def test_a_user_licence_enabled_as_a_string_is_not_enabled(make_project):
    project = make_project(premium_config(extra='user_id = "ana@acme.example"'))

    def answer(request: httpx.Request) -> httpx.Response:
        if "/customerLicense/" in request.url.path:
            return httpx.Response(200, content=about(state="ACTIVE"))
        assert request.url.raw_path.endswith(b"/userLicense/812345678901/ana%40acme.example")
        return httpx.Response(
            200, json={"applicationId": APP, "userId": USER, "state": "ACTIVE", "enabled": "true"}
        )

    config = load_config(project.root / "toolkit.toml", env={"LICENSE_API_TOKEN": TOKEN})
    gate = PremiumGate(config, transport=httpx.MockTransport(answer))
    with pytest.raises(PremiumRefused, match="ACTIVE but not enabled"):
        gate.check()


def test_the_plain_http_transport_trusts_no_authority():
    from toolkit.license.client import plain_http_transport

    transport = plain_http_transport()
    context = transport.ssl_context  # what a TLS connection would be verified with
    assert context.verify_mode == ssl.CERT_REQUIRED and context.check_hostname
    assert context.cert_store_stats()["x509_ca"] == 0
    transport.close()


# -- an answer counts only when it is about what was asked ------------------------------

ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")
MISSING = object()


def same_id(key: str, value: object, asked: str) -> bool:
    """Whether `value` names what was asked, by the gate's rule."""
    if not isinstance(value, str):
        return False
    if key == "applicationId":
        return value == asked
    return value.translate(ASCII_LOWER) == asked.translate(ASCII_LOWER)


@st.composite
def misnamed(draw: st.DrawFn, /, asked: dict[str, str], **fields) -> dict:
    """An ACTIVE (and enabled) licence record of which at least one id is missing, is not
    a string, or names something other than what was asked."""
    record = {
        "kind": "appsmarket#customerLicense",
        "state": "ACTIVE",
        "enabled": True,
        **fields,
        **asked,
    }
    for key in draw(st.sets(st.sampled_from(sorted(asked)), min_size=1)):
        near = [asked[key] + suffix for suffix in ("x", " ", "\n", ".", "/")] + [
            " " + asked[key],
            "",
            "globex.example",
            "823456789012",
            "ben@acme.example",
            asked[key].upper() + "\u212a",
        ]
        value = draw(
            st.one_of(
                st.just(MISSING),
                st.none(),
                st.integers(),
                st.booleans(),
                st.lists(st.just(asked[key]), max_size=2),
                st.sampled_from(near),
                st.text(max_size=30),
            ).filter(lambda v, k=key: not same_id(k, v, asked[k]))  # type: ignore[arg-type]
        )
        if value is MISSING:
            del record[key]
        else:
            record[key] = value
    return record


CUSTOMER_ASKED = {"applicationId": APP, "customerId": LICENSED}
USER_ASKED = {"applicationId": APP, "userId": USER}
PROPERTY = settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


def config_of(project):
    return load_config(
        project.root / "toolkit.toml",
        env={"LICENSE_API_TOKEN": TOKEN, "LICENSE_BASE_URL": "https://licensing.invalid"},
    )


@pytest.fixture
def customer_config(make_project):
    """The configuration of a premium project (read only: shared by every example)."""
    return config_of(make_project(premium_config()))


@pytest.fixture
def user_config(make_project):
    return config_of(make_project(premium_config(extra=f'user_id = "{USER}"')))


def refusal_of(config, customer: dict, user: dict | None = None) -> PremiumRefused:
    def answer(request: httpx.Request) -> httpx.Response:
        record = customer if "/customerLicense/" in request.url.path else user
        assert record is not None
        return httpx.Response(200, json=record)

    with pytest.raises(PremiumRefused) as refused:
        PremiumGate(config, transport=httpx.MockTransport(answer), sleep=lambda s: None).check()
    return refused.value


@PROPERTY
@given(record=misnamed(CUSTOMER_ASKED, editions=[]))
def test_an_active_customer_licence_about_anyone_else_is_refused(customer_config, record):
    refused = refusal_of(customer_config, record)
    assert refused.cause == "answer" and "\n" not in refused.message
    assert refused.message.startswith(
        "premium build refused: the licensing service's answer is not a licence (GET "
        f"/appsmarket/v2/customerLicense/{APP}/{LICENSED}: the answer "
    )
    assert ("names no " in refused.message) or (" is about " in refused.message)


@PROPERTY
@given(record=misnamed(USER_ASKED, customerId=LICENSED))
def test_an_active_user_licence_about_anyone_else_is_refused(user_config, record):
    customer = {"state": "ACTIVE", **CUSTOMER_ASKED}
    refused = refusal_of(user_config, customer, record)
    assert refused.cause == "answer" and "\n" not in refused.message
    assert refused.message.startswith(
        "premium build refused: the licensing service's answer is not a licence (GET "
        f"/appsmarket/v2/userLicense/{APP}/ana%40acme.example: the answer "
    )


def test_ids_differing_in_ascii_case_only_name_the_same_customer_and_user(make_project):
    project = make_project(premium_config(extra='user_id = "Ana@Acme.example"'))

    def answer(request: httpx.Request) -> httpx.Response:
        if "/customerLicense/" in request.url.path:
            return httpx.Response(
                200, json={"applicationId": APP, "customerId": "ACME.Example", "state": "ACTIVE"}
            )
        return httpx.Response(
            200,
            json={
                "applicationId": APP,
                "userId": "ana@acme.EXAMPLE",
                "state": "ACTIVE",
                "enabled": True,
            },
        )

    config = load_config(project.root / "toolkit.toml", env={"LICENSE_API_TOKEN": TOKEN})
    check = PremiumGate(config, transport=httpx.MockTransport(answer)).check()
    assert check.customer.active and check.user is not None and check.user.active


# -- Google's JSON shapes: empty lists left out, an empty page token ----------------------


def client_answering(*pages: dict):
    from toolkit.license.client import LicenseClient

    answers = iter(pages)
    return LicenseClient(
        "https://licensing.invalid",
        transport=httpx.MockTransport(lambda request: httpx.Response(200, json=next(answers))),
    )


@pytest.mark.parametrize(
    "page",
    [
        {"kind": "appsmarket#licenseNotificationList", "nextPageToken": ""},
        {"kind": "appsmarket#licenseNotificationList"},
        {"notifications": [], "nextPageToken": None},
        {"notifications": None, "nextPageToken": 7},
        {"notifications": {"id": "1"}, "nextPageToken": ["x"]},
        {},
    ],
)
def test_an_empty_notification_page_in_any_shape_ends_the_list_and_keeps_the_position(page):
    with client_answering(page) as client:
        run = client.read_notifications(APP, start_token="kept")
    assert (run.notifications, run.next_token, run.pages) == ([], "kept", 1)


def test_notifications_without_their_empty_lists_read_as_empty():
    first = {
        "kind": "appsmarket#licenseNotificationList",
        "nextPageToken": "t1",
        "notifications": [
            {
                "kind": "appsmarket#licenseNotification",
                "id": "1",
                "applicationId": APP,
                "customerId": LICENSED,
                "timestamp": "1641318266998",
                "provisions": [
                    {
                        "kind": "appsmarket#provisionNotification",
                        "editionId": "default_edition",
                        "seatCount": "1",
                    }
                ],
            }
        ],
    }
    with client_answering(
        first, {"kind": "appsmarket#licenseNotificationList", "nextPageToken": ""}
    ) as client:
        run = client.read_notifications(APP)
    assert run.pages == 2 and run.next_token == "t1"
    [notification] = run.notifications
    assert notification.expiries == notification.reassignments == notification.deletes == ()
    assert notification.events() == ["provisioned 1 seat"]
    assert notification.timestamp_ms == 1641318266998


def test_a_licence_without_its_empty_editions_reads_as_none():
    with client_answering(
        {
            "kind": "appsmarket#customerLicense",
            "applicationId": APP,
            "customerId": LICENSED,
            "state": "UNLICENSED",
        }
    ) as client:
        record = client.customer_license(APP, LICENSED)
    assert record.editions == () and not record.active and record.id == ""
