"""Interface C's webhooks: a job's own `webhook_url` and the account's webhooks
(`POST /v2/webhooks`), each told of a job's events once, signed as the real service
signs them: `CloudConvert-Signature` is the hex HMAC-SHA256 of the body with the signing
secret (the account's for a job's `webhook_url`, the webhook's own for an account
webhook). The body is `{"event", "job"}`. Deliveries run on threads of their own, once,
without retries; the sandbox calls loopback hosts only.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import secrets
import sqlite3
import threading
from typing import Any

from toolkit import tls
from toolkit_sandbox.archive import seed, serializers

log = logging.getLogger("toolkit_sandbox")
EVENTS = ("job.created", "job.finished", "job.failed")
TIMEOUT = 10.0  # seconds a webhook's receiver has to answer


def new_secret() -> str:
    return secrets.token_hex(20)


def webhook_json(row: sqlite3.Row, base: str) -> dict[str, Any]:
    """An account webhook as the API shows it (the Java SDK's `WebhookResponse`)."""
    return {
        "id": row["id"],
        "url": row["url"],
        "events": json.loads(row["events"]),
        "disabled": False,
        "failing": False,
        "signing_secret": row["signing_secret"],
        "created_at": serializers.iso(row["created_at"]),
        "updated_at": serializers.iso(row["created_at"]),
        "links": {"self": f"{base}/v2/webhooks/{row['id']}"},
    }


Delivery = tuple[str, str, bytes]  # (url, signing secret, body)


def deliveries(db: sqlite3.Connection, job: sqlite3.Row, event: str, base: str) -> list[Delivery]:
    """What to send for `event` of `job`: to its `webhook_url` (finished or failed only)
    and to each webhook of its account that asked for the event."""
    body = json.dumps({"event": event, "job": serializers.job_json(db, job, base)}).encode()
    found: list[Delivery] = []
    if job["webhook_url"] is not None and event != "job.created":
        found.append((str(job["webhook_url"]), seed.WEBHOOK_SECRET, body))
    for hook in db.execute(
        "SELECT url, events, signing_secret FROM archive_webhooks WHERE account_id = ? "
        "ORDER BY created_at, id",
        (job["account_id"],),
    ):
        if event in json.loads(hook["events"]):
            found.append((str(hook["url"]), str(hook["signing_secret"]), body))
    return found


def send(found: list[Delivery]) -> None:
    for url, secret, body in found:
        threading.Thread(
            target=_post, args=(url, secret, body), name="archive-webhook", daemon=True
        ).start()


def _post(url: str, secret: str, body: bytes) -> None:
    import httpx  # only the archive tasks that ask for a webhook need it

    signature = hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
    try:
        httpx.post(
            url,
            content=body,
            timeout=TIMEOUT,
            follow_redirects=False,
            headers={"Content-Type": "application/json", "CloudConvert-Signature": signature},
            verify=tls.shared_context(),
        )
    except httpx.HTTPError as exc:
        log.info("archive webhook to %s failed: %s", url.split("?")[0], type(exc).__name__)
