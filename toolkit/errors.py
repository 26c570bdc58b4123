"""Exceptions the core raises; the CLI shows them as one line and exits 1.

The hierarchy::

    ToolkitError                  (a click.ClickException: message + exit code 1)
    ├── ConfigError               toolkit.toml or the environment is invalid; lists every problem
    ├── ContentError              a post or a content folder cannot be used
    ├── BuildError                the site cannot be built (templates, output folder)
    ├── SyncError                 the sync engine refused to go on (ambiguous identity, bad lock)
    └── ApiError                  a remote interface failed; carries `request` and `response`
        ├── TransportError        no response at all: connection refused, reset, timed out
        └── HTTPStatusError       a response with an error status
            ├── Unauthorized      401 / 403: the key is missing, wrong or not allowed
            ├── NotFound          404
            ├── PaymentRequired   402: not enough listing credits
            ├── Unprocessable     422: the API refused the content (message says why)
            ├── RateLimited       429: `retry_after` seconds to wait
            └── ServerError       5xx

Only the CLI imports click otherwise; this module subclasses `click.ClickException`
so that an error the core raises is shown without a traceback wherever it surfaces.
Messages never contain secrets: requests are described by method and path only.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:  # pragma: no cover
    import httpx


class ToolkitError(click.ClickException):
    """Root of every expected failure."""

    exit_code = 1


class ConfigError(ToolkitError):
    """One or more configuration problems, each `toolkit.toml: key: problem`."""

    def __init__(self, problems: list[str]):
        self.problems = list(problems)
        super().__init__("\n".join(self.problems))

    def show(self, file=None) -> None:
        for problem in self.problems:
            click.echo(f"Error: {problem}", err=True)


class ContentError(ToolkitError):
    pass


class BuildError(ToolkitError):
    pass


class SyncError(ToolkitError):
    pass


class ApiError(ToolkitError):
    """A remote call failed. `request`/`response` are kept for callers that need them."""

    def __init__(
        self,
        message: str,
        *,
        request: httpx.Request | None = None,
        response: httpx.Response | None = None,
    ):
        super().__init__(message)
        self.request = request
        self.response = response

    @property
    def status(self) -> int | None:
        return self.response.status_code if self.response is not None else None


class TransportError(ApiError):
    """No response. `maybe_sent` is False only when the request certainly never reached
    the server (the connection was never made), so even a create can be sent again."""

    def __init__(self, message: str, *, maybe_sent: bool = True, **kwargs):
        super().__init__(message, **kwargs)
        self.maybe_sent = maybe_sent


class HTTPStatusError(ApiError):
    pass


class Unauthorized(HTTPStatusError):
    pass


class NotFound(HTTPStatusError):
    pass


class PaymentRequired(HTTPStatusError):
    pass


class Unprocessable(HTTPStatusError):
    pass


class RateLimited(HTTPStatusError):
    def __init__(self, message: str, *, retry_after: float, **kwargs):
        super().__init__(message, **kwargs)
        self.retry_after = retry_after


class ServerError(HTTPStatusError):
    pass
