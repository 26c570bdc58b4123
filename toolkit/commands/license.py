"""`license status` and `license notifications`: the licensing service's answers.

`license_status` reads the customer's licence of `[license] application_id` /
`customer_id` and, when a user is given (`user`, else `[license] user_id`), that user's
licence, and says whether a premium build would run now and why not. Licence states
that refuse a premium build are answers, not failures; a request the service refuses or
cannot answer raises `LicenseError` naming why.

`license_notifications` pages through the (deprecated) licence notifications and
remembers where it stopped, in `.toolkit/license-notifications.json` (one position per
service and application), so that the next call shows only what is new; `from_start`
lists them all again. The position is saved only once every page has been read: a run
that fails half-way shows nothing and leaves the position where it was, so nothing is
ever skipped.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from toolkit.config import Config
from toolkit.errors import ApiError, LicenseError
from toolkit.license.cursor import NotificationCursor
from toolkit.license.gate import customer_refusal, explain, license_settings, user_refusal
from toolkit.license.records import CustomerLicense, LicenseNotification, UserLicense
from toolkit.runlog.run import recorded

if TYPE_CHECKING:  # pragma: no cover
    from toolkit.clients import Transport

PAGE_SIZE = 100


@dataclass(frozen=True)
class LicenseStatus:
    application_id: str
    customer: CustomerLicense
    user: UserLicense | None
    premium_allowed: bool  # premium_refusal is None
    premium_refusal: str | None  # why a premium build would be refused now; None: it runs
    requests: int


def license_status(
    config: Config, *, user: str | None = None, transport: Transport | None = None
) -> LicenseStatus:
    """The customer's licence (and the user's), and what a premium build would do."""
    from toolkit.license.client import license_client

    with recorded(config, "license") as run:
        settings = license_settings(config, user=user)
        app = settings.application_id
        with license_client(config, transport=transport, on_request=run.request) as client:
            subject = f"customer {settings.customer_id}"
            try:
                customer = client.customer_license(app, settings.customer_id)
                user_license = None
                if settings.user_id:
                    subject = f"user {settings.user_id}"
                    user_license = client.user_license(app, settings.user_id)
            except ApiError as exc:
                raise explain(exc, subject, app, client.requests_made) from None
            refusal = customer_refusal(customer, settings.customer_id)
            if refusal is None and user_license is not None and settings.user_id:
                refusal = user_refusal(user_license, settings.user_id)
            run.event(
                "license",
                action="status",
                message=refusal or "premium builds allowed",
                requests=client.requests_made,
            )
            return LicenseStatus(
                app, customer, user_license, refusal is None, refusal, client.requests_made
            )


@dataclass
class NotificationsResult:
    application_id: str
    notifications: list[LicenseNotification] = field(default_factory=list)
    from_start: bool = True  # listed from the first notification (no saved position)
    pages: int = 0
    requests: int = 0
    notice: str | None = None  # something the user should know (an unreadable position)


def license_notifications(
    config: Config,
    *,
    from_start: bool = False,
    page_size: int = PAGE_SIZE,
    transport: Transport | None = None,
) -> NotificationsResult:
    """The licence notifications since the last call (all of them with `from_start`, or
    on the first call), every page, oldest first; the position is saved at the end."""
    from toolkit.license.client import license_client

    with recorded(config, "license") as run:
        settings = license_settings(config, customer=False)
        app = settings.application_id
        cursor = NotificationCursor.load(config, app)
        start = None if from_start else cursor.position
        with license_client(config, transport=transport, on_request=run.request) as client:
            try:
                read = client.read_notifications(app, start_token=start, max_results=page_size)
            except ApiError as exc:
                raise explain(exc, "the notifications", app, client.requests_made) from None
            requests = client.requests_made
        cursor.advance(read.next_token)
        result = NotificationsResult(
            app,
            read.notifications,
            from_start=start is None,
            pages=read.pages,
            requests=requests,
            notice=cursor.notice,
        )
        run.event(
            "license",
            action="notifications",
            items=len(result.notifications),
            requests=result.requests,
        )
        return result


__all__ = [
    "LicenseError",
    "LicenseStatus",
    "NotificationsResult",
    "license_notifications",
    "license_status",
]
