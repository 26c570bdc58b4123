"""Exceptions the core raises; the CLI shows each as one line (`Error: ...`) and exits 1.

The hierarchy (every class is defined here; `SandboxError` is raised by the sandbox, a
distribution of its own, `toolkit_sandbox`, which imports it from here)::

    ToolkitError                  root of every expected failure; `message` says what went wrong
    ├── ConfigError               toolkit.toml or the environment is invalid; `problems`, one per line
    ├── ContentError              a post or a content folder cannot be used
    ├── InitError                 `toolkit init` cannot start a project in that folder
    ├── BuildError                the site cannot be built (templates, output folder)
    ├── SyncError                 the sync refused to go on (an unusable toolkit.lock or run lock)
    │   └── RunLockBusy           another toolkit run held .toolkit/run.lock too long
    ├── UnsafeNameError           a name from outside cannot become a file name inside its folder
    ├── ServeError                a local server (preview, serve, sandbox) cannot start or listen there
    ├── RunLogError               the local run log cannot be queried: a bad query or time range
    ├── AuthorizationError        the MCP server refused: a tool outside the token's scopes, a client
    ├── SandboxError              the sandbox cannot start (port, host, database) or is not installed
    ├── LicenseError              the licensing service refused or could not answer; `cause`
    │   └── PremiumRefused        a premium build may not run: the licence is not active, or unknown
    ├── ExportError               an export left no archive to trust at its output path
    │   ├── TaskFailed            a task of the archive job ended in error; `code` is the service's
    │   ├── ExportTimeout         the archive job did not finish before the client's deadline
    │   └── BrokenDownload        the download is incomplete, or not the archive of the files sent
    └── ApiError                  a remote interface failed; carries `request` and `response`
        ├── NoAnswerError         no response at all: connection refused, reset, timed out
        └── StatusError           a response with an error status
            ├── Unauthorized      401 / 403: the key is missing, wrong or not allowed
            ├── NotFound          404
            ├── PaymentRequired   402: not enough listing credits
            ├── Unprocessable     422: the API refused the content (message says why)
            ├── RateLimited       429: `retry_after` seconds to wait
            └── ServerError       5xx: the remote server failed

Exceptions that never leave the module that raises them are not part of it: `PostError`
(a post that cannot be parsed; becomes a `path:line: message` problem), `MirrorError`
(an unreadable mirror file; the site goes on without it), a watch push's `Cancelled`,
and the sandbox's internal ones.

This module imports nothing but the standard library: the core never imports click, and
`toolkit.cli` turns a `ToolkitError` into `Error: <message>` on stderr and exit code 1.
Messages never contain secrets: requests are described by method and path only, and URLs
go through `toolkit.redact.redact_url`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    import httpx


class ToolkitError(Exception):
    """Root of every expected failure."""

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return self.message

    @property
    def lines(self) -> list[str]:
        """The message as the CLI shows it, one `Error: ` line each."""
        return [self.message]


class ConfigError(ToolkitError):
    """One or more configuration problems, each `toolkit.toml: key: problem`."""

    def __init__(self, problems: list[str]):
        self.problems = list(problems)
        super().__init__("\n".join(self.problems))

    @property
    def lines(self) -> list[str]:
        return list(self.problems)


class ContentError(ToolkitError):
    pass


class InitError(ToolkitError):
    """`toolkit init` cannot start a project in that folder (not a folder, cannot write)."""


class BuildError(ToolkitError):
    pass


class SyncError(ToolkitError):
    pass


class RunLockBusy(SyncError):
    """Another toolkit run held the run lock for longer than this one would wait (the
    message names the holder)."""


class UnsafeNameError(ToolkitError):
    """A name from outside (a remote slug, an option) leaves nothing usable as a file name,
    or a path built from it would lead out of its folder."""


class ServeError(ToolkitError):
    """A local server could not start (a busy port, a bad or non-loopback address)."""


class SandboxError(ToolkitError):
    """The sandbox cannot start: a busy port, a remote host without permission, a bad DB, or
    the sandbox (the distribution `toolkit-sandbox`) is not installed."""


class LicenseError(ToolkitError):
    """The licensing service refused a request or could not answer it. `cause` names why
    in one word: `token` (401), `forbidden` (403), `unknown` (404), `unreachable` (no
    answer), `service` (5xx, 429), `answer` (not a licence), `request` (another 4xx)."""

    def __init__(self, message: str, cause: str):
        super().__init__(message)
        self.cause = cause


class PremiumRefused(LicenseError):
    """A premium build may not run, and wrote nothing: the customer's (or the user's)
    licence is not active (`cause` `inactive`), or the licensing service did not say it
    is (the causes of `LicenseError`): a premium build fails closed."""


class RunLogError(ToolkitError):
    """`toolkit logs --local` (or a time range) failed: the SQL or the times are wrong, or
    the run log cannot be read. Messages read like the log service's own."""


class AuthorizationError(ToolkitError):
    """The MCP server's authorization refused something: a tool call outside the scopes
    granted, an unknown client to revoke."""


class ExportError(ToolkitError):
    pass


class TaskFailed(ExportError):
    """A task ended in `error`: `code` and the message are the service's own."""

    def __init__(self, message: str, code: str | None):
        super().__init__(message)
        self.code = code


class ExportTimeout(ExportError):
    pass


class BrokenDownload(ExportError):
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


class NoAnswerError(ApiError):
    """No response. `maybe_sent` is False only when the request certainly never reached
    the server (the connection was never made), so even a create can be sent again.
    `reason` says why in words (`read timeout`, `connect error`); `timed_out` is True when
    a request given a time of its own ran out of it (no answer yet, rather than a failure)."""

    def __init__(
        self,
        message: str,
        *,
        maybe_sent: bool = True,
        request: httpx.Request | None = None,
        reason: str = "",
        timed_out: bool = False,
    ):
        super().__init__(message, request=request)
        self.maybe_sent = maybe_sent
        self.reason = reason
        self.timed_out = timed_out


class StatusError(ApiError):
    pass


class Unauthorized(StatusError):
    pass


class NotFound(StatusError):
    pass


class PaymentRequired(StatusError):
    pass


class Unprocessable(StatusError):
    pass


class RateLimited(StatusError):
    def __init__(
        self,
        message: str,
        *,
        retry_after: float,
        request: httpx.Request | None = None,
        response: httpx.Response | None = None,
    ):
        super().__init__(message, request=request, response=response)
        self.retry_after = retry_after


class ServerError(StatusError):
    pass
