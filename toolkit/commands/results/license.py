"""The document of `toolkit license notifications`: how many there are, then the list."""

from __future__ import annotations

from typing import TYPE_CHECKING

from toolkit.commands.results import Document
from toolkit.license.records import LicenseNotification

if TYPE_CHECKING:  # pragma: no cover
    from toolkit.license.status import NotificationsResult


class NotificationsJson(Document):
    application_id: str
    count: int
    from_start: bool
    pages: int
    requests: int
    notice: str | None
    notifications: list[LicenseNotification]

    @classmethod
    def of(cls, result: NotificationsResult) -> NotificationsJson:
        return cls(
            application_id=result.application_id,
            count=len(result.notifications),
            from_start=result.from_start,
            pages=result.pages,
            requests=result.requests,
            notice=result.notice,
            notifications=result.notifications,
        )
