"""Where the last listing of the licence notifications stopped, so that the next one shows
only what is new: `.toolkit/license-notifications.json`, one position per service and
application (the service's address with any secret taken out, and the application id).

An unreadable file is no position (and a notice), so nothing is ever skipped; the
position is written only when it moved, and atomically.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from toolkit.config import Config
from toolkit.fsutil import atomic_write, stable_json
from toolkit.redact import redact_url

__all__ = ["CURSOR_FILE", "NotificationCursor"]

CURSOR_FILE = "license-notifications.json"


@dataclass
class NotificationCursor:
    path: Path
    key: str  # "<service address> <application id>"
    cursors: dict[str, str] = field(default_factory=dict)  # every saved position
    notice: str | None = None  # why the file was not read (the listing starts over)

    @classmethod
    def load(cls, config: Config, application_id: str) -> NotificationCursor:
        path = config.state_dir / CURSOR_FILE
        cursors, notice = _read_cursors(path)
        key = f"{redact_url(config.license.base_url)} {application_id}"
        return cls(path, key, cursors, notice)

    @property
    def position(self) -> str | None:
        """The token the next listing starts from; None: from the first notification."""
        return self.cursors.get(self.key)

    def advance(self, token: str | None) -> None:
        """Save `token` as the position, once every page up to it has been read."""
        if token and token != self.position:
            self.cursors[self.key] = token
            self.path.parent.mkdir(parents=True, exist_ok=True)
            atomic_write(self.path, stable_json({"cursors": self.cursors}))


def _read_cursors(path: Path) -> tuple[dict[str, str], str | None]:
    """The saved positions; an unreadable file is no position (and a notice)."""
    try:
        data = json.loads(path.read_bytes())
    except FileNotFoundError:
        return {}, None
    except (OSError, ValueError):
        return {}, f"{path.name} could not be read; listing from the first notification"
    cursors = data.get("cursors") if isinstance(data, dict) else None
    if not isinstance(cursors, dict):
        return {}, f"{path.name} is not a saved position; listing from the first notification"
    return {k: v for k, v in cursors.items() if isinstance(k, str) and isinstance(v, str)}, None
