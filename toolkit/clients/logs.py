"""Client of the log-stream service (interface E, Parseable): ingest and SQL queries.

`POST /api/v1/ingest` takes a JSON array of events for the stream named in `X-P-Stream`
(created on first ingest; `Content-Type: application/json`, which Parseable requires);
`POST /api/v1/query` runs SQL (DataFusion's dialect) within a time range. Both use Basic
auth, added by `BasicSecretAuth` as each request leaves, from the `Secret`s of the
configuration. The query body is `{query, startTime, endTime}`: both times are required
by the service, and the SQL's `FROM` names the stream (an unquoted name is folded to
lower case there, so the toolkit's own queries quote it: `shipping.quoted`). It asks for
`?fields=true` so the columns come in their order; a plain array of records (older
servers, or without the parameter) is read too. A query is a read: a 502, 503 or 504
(a gateway, a service briefly down) is retried, a bounded number of times, within the
request's deadline; its 500 (`Execution Error`) is the query's own and answers the same
every time, so it is not.
"""

from __future__ import annotations

import base64
from collections.abc import Generator
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

import httpx

from toolkit.clients.base import TRANSIENT, ApiClient, RequestListener, RetryPolicy
from toolkit.clients.responses import json_body
from toolkit.config import Secret
from toolkit.errors import ApiError

INGEST = "/api/v1/ingest"
QUERY = "/api/v1/query"
STREAMS = "/api/v1/logstream"


class BasicSecretAuth(httpx.Auth):
    """HTTP Basic auth whose user and password are revealed only into the outgoing request."""

    def __init__(self, username: Secret, password: Secret):
        self._username = username
        self._password = password

    def auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        pair = f"{self._username.reveal()}:{self._password.reveal()}".encode()
        request.headers["Authorization"] = "Basic " + base64.b64encode(pair).decode("ascii")
        yield request


@dataclass
class QueryAnswer:
    """The columns of a query's answer, in order, and its records (every column present,
    None where the service sent no value)."""

    fields: list[str] = field(default_factory=list)
    records: list[dict[str, Any]] = field(default_factory=list)


def answer_of(data: Any, where: str) -> QueryAnswer:
    """A query's JSON answer, `{"fields", "records"}` or a plain array of records."""
    if isinstance(data, dict) and isinstance(data.get("records"), list):
        fields = [str(name) for name in data.get("fields") or [] if isinstance(name, str)]
        rows = data["records"]
    elif isinstance(data, list):
        fields, rows = [], data
    else:
        raise ApiError(f"{where}: the answer is neither a list of records nor {{fields, records}}")
    if not all(isinstance(row, dict) for row in rows):
        raise ApiError(f"{where}: a record of the answer is not a JSON object")
    known = set(fields)
    for row in rows:  # columns the service did not list (or a plain array): first seen
        for name in row:
            if name not in known:
                known.add(name)
                fields.append(name)
    return QueryAnswer(fields, [{name: row.get(name) for name in fields} for row in rows])


class LogsClient(ApiClient):
    def __init__(
        self,
        base_url: str,
        username: Secret,
        password: Secret,
        *,
        on_request: RequestListener | None = None,
        retry: RetryPolicy | None = None,
        timeout: float | None = None,
        transport: httpx.BaseTransport | None = None,
    ):
        super().__init__(
            base_url,
            auth=BasicSecretAuth(username, password),
            transport=transport,
            retry=retry,
            timeout=timeout,
            on_request=on_request,
        )

    def ingest(self, stream: str, events: bytes) -> None:
        """Send a JSON array of events (already encoded) to `stream`. Not retried once it
        may have reached the service: the shipper checks before sending it again."""
        self.send(
            "POST",
            INGEST,
            content=events,
            idempotent=False,
            headers={"X-P-Stream": stream, "Content-Type": "application/json"},
        )

    def query(self, sql: str, start: str, end: str) -> QueryAnswer:
        """Run `sql` between `start` and `end` (RFC 3339, or `end` "now" with `start` a
        duration such as "10m"; the service truncates both to the minute). Its own error
        (a 400, or the 500 of a query that fails while running) is raised at once; a
        502, 503 or 504 is retried."""
        body: dict[str, Any] = {"query": sql, "startTime": start, "endTime": end}
        response = self.send(
            "POST", QUERY, params={"fields": "true"}, json=body, retry_server_errors=TRANSIENT
        )
        return answer_of(json_body(response), f"POST {QUERY}")

    def streams(self) -> list[str]:
        """The names of the streams."""
        data = self.get_json(STREAMS)
        return sorted(
            str(item["name"])
            for item in data or []
            if isinstance(item, dict) and isinstance(item.get("name"), str)
        )

    def schema(self, stream: str) -> dict[str, Any]:
        """A stream's schema as the service describes it (`{"fields": [...]}`)."""
        data = self.get_json(
            f"{STREAMS}/{quote(stream, safe='')}/schema", route=f"{STREAMS}/{{name}}/schema"
        )
        if not isinstance(data, dict):
            raise ApiError(f"GET {STREAMS}/{{name}}/schema: the answer is not a JSON object")
        return data
