"""Answers from outside are hostile: a licensing service (or something in its place) that
sends odd states, wrong types or no JSON at all still gets a one-line refusal, never a
traceback and never a premium build. The answers come from a transport passed in, the
seam every client has for this."""

from __future__ import annotations

import json
import ssl

import httpx
import pytest
from license_helpers import premium_config

from toolkit.config import load_config
from toolkit.errors import PremiumRefused
from toolkit.site.premium import PremiumGate

TOKEN = "ya29.hostile-test-token"


def gate_answering(project, body: bytes | str, status: int = 200,
                   content_type: str = "application/json") -> PremiumGate:
    def answer(request: httpx.Request) -> httpx.Response:
        assert request.headers["authorization"] == f"Bearer {TOKEN}"
        data = body.encode() if isinstance(body, str) else body
        return httpx.Response(status, content=data, headers={"content-type": content_type})

    config = load_config(project.root / "toolkit.toml",
                         env={"LICENSE_API_TOKEN": TOKEN,
                              "LICENSE_BASE_URL": "https://licensing.invalid"})
    return PremiumGate(config, transport=httpx.MockTransport(answer), sleep=lambda s: None)


@pytest.mark.parametrize(("body", "expected"), [
    (json.dumps({"state": "ACTIVE\n::error::owned"}),
     "premium build refused: customer acme.example licence is ACTIVE?::error::owned"),
    (json.dumps({"state": 1}), "premium build refused: customer acme.example licence is (none)"),
    (json.dumps({"state": "active"}),
     "premium build refused: customer acme.example licence is active"),
    (json.dumps({"state": "X" * 500}),
     "premium build refused: customer acme.example licence is " + "X" * 60),
    (json.dumps(["ACTIVE"]), "premium build refused: the licensing service's answer is not a "
                             "licence (GET /appsmarket/v2/customerLicense/812345678901/"
                             "acme.example: the answer is not a customer licence)"),
    ("<html>hello</html>", "premium build refused: the licensing service's answer is not a "
                           "licence (GET /appsmarket/v2/customerLicense/812345678901/"
                           "acme.example: the answer is not a customer licence)"),
])
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
    assert refused.value.message == ("premium build refused: LICENSE_API_TOKEN may not read "
                                     "the licences of application 812345678901: 403 Forbidden")
    assert refused.value.cause == "forbidden"


def test_a_user_licence_enabled_as_a_string_is_not_enabled(make_project):
    project = make_project(premium_config(extra='user_id = "ana@acme.example"'))

    def answer(request: httpx.Request) -> httpx.Response:
        if "/customerLicense/" in request.url.path:
            return httpx.Response(200, json={"state": "ACTIVE"})
        assert request.url.raw_path.endswith(b"/userLicense/812345678901/ana%40acme.example")
        return httpx.Response(200, json={"state": "ACTIVE", "enabled": "true"})

    config = load_config(project.root / "toolkit.toml", env={"LICENSE_API_TOKEN": TOKEN})
    gate = PremiumGate(config, transport=httpx.MockTransport(answer))
    with pytest.raises(PremiumRefused, match="ACTIVE but not enabled"):
        gate.check()


def test_the_plain_http_transport_trusts_no_authority():
    from toolkit.clients.license import plain_http_transport

    transport = plain_http_transport()
    context = transport._pool._ssl_context  # what a TLS connection would be verified with
    assert context.verify_mode == ssl.CERT_REQUIRED and context.check_hostname
    assert context.cert_store_stats()["x509_ca"] == 0
    transport.close()
