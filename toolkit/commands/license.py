"""`license status` and `license notifications`: the licensing service's answers, asked
through `toolkit.license.status` and recorded in the run log.

The notifications' position is kept in `.toolkit/license-notifications.json` (one per
service and application: `toolkit.license.cursor`), so that the next call shows only
what is new; `from_start` lists them all again.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from toolkit.config import Config
from toolkit.license.cursor import NotificationCursor
from toolkit.license.gate import license_settings
from toolkit.license.status import (
    PAGE_SIZE,
    LicenseStatus,
    NotificationsResult,
    read_notifications,
    read_status,
)
from toolkit.runlog.run import recorded

if TYPE_CHECKING:  # pragma: no cover
    from toolkit.clients import Transport


def license_status(
    config: Config, *, user: str | None = None, transport: Transport | None = None
) -> LicenseStatus:
    """The customer's licence (and the user's), and what a premium build would do."""
    from toolkit.license.client import license_client

    with recorded(config, "license") as run:
        settings = license_settings(config, user=user)
        with license_client(config, transport=transport, on_request=run.request) as client:
            status = read_status(client, settings)
        run.event(
            "license",
            action="status",
            message=status.premium_refusal or "premium builds allowed",
            requests=status.requests,
        )
        return status


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
        cursor = NotificationCursor.load(config, settings.application_id)
        with license_client(config, transport=transport, on_request=run.request) as client:
            result = read_notifications(
                client,
                cursor,
                settings.application_id,
                from_start=from_start,
                page_size=page_size,
            )
        run.event(
            "license",
            action="notifications",
            items=len(result.notifications),
            requests=result.requests,
        )
        return result
