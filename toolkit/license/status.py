"""What `license status` and `license notifications` read from the licensing service, over
a client the command made.

`read_status` reads the customer's licence and, when a user is given, that user's
licence, and says whether a premium build would run now and why not (the gate's own
words). Licence states that refuse a premium build are answers, not failures; a request
the service refuses or cannot answer raises `LicenseError` naming why.

`read_notifications` pages through the (deprecated) licence notifications from where the
last listing stopped (`cursor`), or from the first with `from_start`, and saves the new
position only once every page has been read: a run that fails half-way leaves the
position where it was, so nothing is ever skipped.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from toolkit.errors import ApiError
from toolkit.license.cursor import NotificationCursor
from toolkit.license.gate import LicenseSettings, customer_refusal, explain, user_refusal
from toolkit.license.records import CustomerLicense, LicenseNotification, UserLicense

if TYPE_CHECKING:  # pragma: no cover
    from toolkit.license.client import LicenseClient

PAGE_SIZE = 100


@dataclass(frozen=True)
class LicenseStatus:
    application_id: str
    customer: CustomerLicense
    user: UserLicense | None
    premium_allowed: bool  # premium_refusal is None
    premium_refusal: str | None  # why a premium build would be refused now; None: it runs
    requests: int


def read_status(client: LicenseClient, settings: LicenseSettings) -> LicenseStatus:
    """The customer's licence (and the user's, when `settings` names one), and what a
    premium build would do."""
    app = settings.application_id
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


def read_notifications(
    client: LicenseClient,
    cursor: NotificationCursor,
    application_id: str,
    *,
    from_start: bool = False,
    page_size: int = PAGE_SIZE,
) -> NotificationsResult:
    """The notifications since `cursor`'s position (all of them with `from_start`, or when
    none is saved), every page, oldest first; the new position is saved at the end."""
    start = None if from_start else cursor.position
    try:
        read = client.read_notifications(application_id, start_token=start, max_results=page_size)
    except ApiError as exc:
        raise explain(exc, "the notifications", application_id, client.requests_made) from None
    cursor.advance(read.next_token)
    return NotificationsResult(
        application_id,
        read.notifications,
        from_start=start is None,
        pages=read.pages,
        requests=client.requests_made,
        notice=cursor.notice,
    )
