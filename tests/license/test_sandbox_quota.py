"""The licensing sandbox's quota: what it answers, and that every difference from Google's
answer is a row of the sandbox README's table, with its reason."""

from __future__ import annotations

from pathlib import Path

import toolkit_sandbox
from tests.support.license_helpers import APP, LICENSED

README = Path(toolkit_sandbox.__file__).parent / "README.md"
ROUTE = "/appsmarket/v2/customerLicense/{applicationId}/{customerId}"


def _licensing_rows() -> dict[str, str]:
    text = README.read_text(encoding="utf-8")
    section = text.split("### Behaviour, compared with the real service", 1)[1]
    section = section.split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| ")]
    return {row.split(" | ")[0].removeprefix("| "): row for row in rows}


def test_no_request_is_refused_for_a_quota_and_an_injected_429_is_as_the_readme_says(licensing):
    with licensing.api(licensing.token()) as api:
        path = f"/appsmarket/v2/customerLicense/{APP}/{LICENSED}"
        assert all(api.get(path).status_code == 200 for _ in range(300))  # none counted
        licensing.sandbox.fault("GET", ROUTE, count=1, status=429, retry_after=3)
        answer = api.get(path)
    assert answer.status_code == 429
    assert answer.headers["Retry-After"] == "3"
    error = answer.json()["error"]
    assert error["status"] == "RESOURCE_EXHAUSTED"
    assert error["message"] == "Resource has been exhausted (e.g. check quota)."
    assert [item["reason"] for item in error["errors"]] == ["rateLimitExceeded"]
    assert "details" not in error


def test_the_readme_writes_each_difference_of_the_quota_with_its_reason():
    rows = _licensing_rows()
    quota = next(row for name, row in rows.items() if name.startswith("quota"))
    body = rows["the body of that 429"]
    retry = rows["`Retry-After` on a 429"]
    for row in (quota, body, retry):
        assert "| deviation: " in row
    assert "none counted" in quota and "429 `RESOURCE_EXHAUSTED`" in quota
    assert "RATE_LIMIT_EXCEEDED" in body and "Quota exceeded for quota metric" in body
    assert "carries none" in retry
