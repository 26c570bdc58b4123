"""The authorization screen: where the writer lets an assistant in, or not.

`/authorize` (the SDK's handler, then `ToolkitAuthProvider.authorize`) parks the request
and sends the browser here, `GET /consent?request=<id>`: the page names the client, where
the answer goes back to, and the scopes asked for, each a checkbox (`publish` unticked
unless the writer ticks it). Approving takes the operator secret
(`TOOLKIT_MCP_OPERATOR_SECRET`, from the server's environment): whoever can reach the
server but does not know it cannot let a client in. The answer is a redirect to the
client's registered redirect URI, with a code or with `error=access_denied`.

Guessing the secret is bounded per request and in all, and nobody but the writer can
keep the writer out:

- `ATTEMPTS_PER_REQUEST` wrong answers end an authorization request (the client is told
  access_denied); each request is the writer's own (its id is in the writer's browser
  only), so someone else's guesses never use up the writer's attempts;
- at most `GUESSES_IN_ALL` wrong secrets are compared within `GUESS_WINDOW` seconds, from
  every client and every address together. Once they are spent, a secret is compared only
  together with a one-time code the server shows in its own terminal (`announce`, once per
  code): whoever sees the server's terminal (the writer, who started it) still gets in
  with the right secret and the code; whoever does not can test no more secrets until the
  window has room again, and a wrong code ends the request it was given for. The code is
  random (`CODE_LENGTH` characters of `CODE_ALPHABET`, some 59 bits), used once, and
  compared in constant time.

No lock-out keyed by client or by address remains: those were what let a local process
make the writer's own right secret answer 429. The secret is compared as a SHA-256 digest
in constant time, never logged, never put in an event or an error; the code is never put
in an event either (only in the terminal line).
"""

from __future__ import annotations

import hashlib
import hmac
import html
import logging
import secrets
from collections import deque
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

from mcp.server.auth.provider import construct_redirect_uri
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response

from toolkit.config import Secret
from toolkit.mcp import scopes as scope_names
from toolkit.mcp.auth import ToolkitAuthProvider
from toolkit.mcp.store import PendingRecord

log = logging.getLogger("toolkit.mcp")

ATTEMPTS_PER_REQUEST = 3  # wrong answers (secret or code) that end a request
GUESSES_IN_ALL = 10  # wrong secrets compared within the window, from everyone together
GUESS_WINDOW = 3600.0
CODE_ALPHABET = "23456789ABCDEFGHJKMNPQRSTUVWXYZ"  # no 0/O, 1/I/L: read off a terminal
CODE_LENGTH = 12
MIN_SECRET_LENGTH = 12
MIN_SECRET_DISTINCT = 6  # different characters: "aaaaaaaaaaaa" or "123412341234" is no secret

PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Authorize {client} · toolkit</title>
<style>
body {{ font: 16px/1.5 system-ui, sans-serif; max-width: 34rem; margin: 3rem auto; padding: 0 1rem; }}
.note {{ color: #555; font-size: .9rem; }} .error {{ color: #b00020; font-weight: 600; }}
label {{ display: block; margin: .4rem 0; }} input[type=password] {{ width: 100%; padding: .4rem; }}
button {{ padding: .5rem 1.2rem; margin: 1rem .5rem 0 0; }}
</style></head>
<body>
<h1>Authorize an assistant</h1>
<p><strong>{client}</strong> asks to use toolkit on <strong>{project}</strong>.</p>
<p class="note">Client id {client_id}; the answer goes back to {redirect}.</p>
{message}
<form method="post" action="/consent">
<input type="hidden" name="request" value="{request}">
<fieldset><legend>It may</legend>
{scopes}
</fieldset>
<label>Operator secret (TOOLKIT_MCP_OPERATOR_SECRET of the server)
<input type="password" name="secret" autocomplete="off" autofocus></label>
{code}
<button type="submit" name="decision" value="approve">Approve</button>
<button type="submit" name="decision" value="deny">Deny</button>
</form>
<p class="note">Revoke it at any time: <code>toolkit mcp revoke {client_id}</code>.</p>
</body></html>
"""

CODE_FIELD = """<p class="note">Too many wrong secrets were tried lately: the server's terminal
shows a one-time code; type it here as well.</p>
<label>One-time code (shown in the server's terminal)
<input type="text" name="code" autocomplete="off" spellcheck="false"></label>"""

NOTICE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>toolkit</title></head>
<body style="font: 16px/1.5 system-ui, sans-serif; max-width: 34rem; margin: 3rem auto">
<h1>{title}</h1><p>{text}</p></body></html>
"""


def _digest(value: str) -> bytes:
    return hashlib.sha256(value.encode("utf-8")).digest()


def secret_problem(secret: Secret | None) -> str | None:
    """Why the HTTP transport cannot start with this operator secret, if it cannot."""
    if secret is None:
        return (
            "TOOLKIT_MCP_OPERATOR_SECRET is not set: the HTTP transport needs it for its "
            "authorization screen (set it in the environment or in .env)"
        )
    value = secret.reveal()
    if len(value) < MIN_SECRET_LENGTH:
        return f"TOOLKIT_MCP_OPERATOR_SECRET: must be at least {MIN_SECRET_LENGTH} characters long"
    if len(set(value)) < MIN_SECRET_DISTINCT:
        return (
            f"TOOLKIT_MCP_OPERATOR_SECRET: too easy to guess (fewer than "
            f"{MIN_SECRET_DISTINCT} different characters); use a passphrase of a few "
            "words, or `python -c 'import secrets; print(secrets.token_urlsafe())'`"
        )
    return None


class ConsentScreen:
    """`GET` and `POST /consent` for `provider`, approving with `operator_secret`."""

    def __init__(
        self,
        provider: ToolkitAuthProvider,
        operator_secret: Secret,
        project: str,
        announce: Callable[[str], None] | None = None,
    ):
        self.provider = provider
        self.store = provider.store
        self._secret = _digest(operator_secret.reveal())
        self.project = project
        self._announce = announce or (lambda line: log.warning("%s", line))
        self._guesses: deque[float] = deque()  # when each wrong secret was compared
        self._code: bytes | None = None  # digest of the one-time code in force, if any

    # -- answers ----------------------------------------------------------------------------

    def _headers(self, redirect_uri: str | None = None) -> dict[str, str]:
        target = ""
        if redirect_uri:
            parts = urlsplit(redirect_uri)
            target = f" {parts.scheme}://{parts.netloc}"
        return {
            "Cache-Control": "no-store",
            "X-Frame-Options": "DENY",
            "Referrer-Policy": "no-referrer",
            "X-Content-Type-Options": "nosniff",
            # The form posts here and is answered with a redirect to the client.
            "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'; "
            f"form-action 'self'{target}; frame-ancestors 'none'",
        }

    def _notice(self, title: str, text: str, status: int) -> Response:
        return HTMLResponse(
            NOTICE.format(title=html.escape(title), text=html.escape(text)),
            status_code=status,
            headers=self._headers(),
        )

    def _page(
        self,
        request_id: str,
        pending: PendingRecord,
        status: int = 200,
        message: str = "",
        ticked: list[str] | None = None,
    ) -> Response:
        client = self.store.client(pending.client_id)
        name = client.name if client is not None else "An unknown client"
        redirect = pending.params["redirect_uri"]
        requested: list[str] = pending.params["scopes"]
        ticked = (
            ticked if ticked is not None else [s for s in requested if s in scope_names.DEFAULT]
        )
        boxes = "\n".join(
            f'<label><input type="checkbox" name="scope" value="{html.escape(s)}"'
            f"{' checked' if s in ticked else ''}> <strong>{html.escape(s)}</strong>: "
            f"{html.escape(scope_names.SCOPES.get(s, ''))}</label>"
            for s in requested
        )
        body = PAGE.format(
            client=html.escape(name),
            project=html.escape(self.project),
            client_id=html.escape(pending.client_id),
            redirect=html.escape(redirect),
            request=html.escape(request_id),
            scopes=boxes,
            message=f'<p class="error">{html.escape(message)}</p>' if message else "",
            code=CODE_FIELD if self._spent() else "",
        )
        return HTMLResponse(body, status_code=status, headers=self._headers(redirect))

    def _back(self, pending: PendingRecord, **params: str | None) -> Response:
        """The browser sent back to the client with the answer."""
        target = construct_redirect_uri(
            pending.params["redirect_uri"], state=pending.params.get("state"), **params
        )
        return RedirectResponse(target, status_code=302, headers={"Cache-Control": "no-store"})

    # -- the screen ------------------------------------------------------------------------

    async def handle(self, request: Request) -> Response:
        if request.method == "GET":
            request_id = request.query_params.get("request", "")
            pending = self.store.pending(request_id) if request_id else None
            if pending is None:
                return self._gone()
            return self._page(request_id, pending)
        media = request.headers.get("content-type", "").split(";")[0].strip().lower()
        if media != "application/x-www-form-urlencoded":
            return self._notice("Bad request", "The form was not sent as a form.", 400)
        form = await request.form()
        request_id = _text(form.get("request"))
        pending = self.store.pending(request_id) if request_id else None
        if pending is None:
            return self._gone()
        decision = _text(form.get("decision"))
        if decision == "deny":
            return self._deny(request_id, pending)
        if decision != "approve":
            return self._page(request_id, pending, 400, "Choose Approve or Deny.")
        return self._approve(
            request_id,
            pending,
            _text(form.get("secret")),
            [_text(s) for s in form.getlist("scope")],
            _text(form.get("code")),
        )

    def _gone(self) -> Response:
        return self._notice(
            "This authorization request is over",
            "It expired or was answered already. Start again from the assistant.",
            400,
        )

    def _deny(self, request_id: str, pending: PendingRecord) -> Response:
        self.store.drop_pending(request_id)
        self.provider.event(
            "consent",
            "denied",
            client_id=pending.client_id,
            scopes=pending.params["scopes"],
            detail="denied by the writer",
        )
        return self._back(
            pending, error="access_denied", error_description="the writer denied the authorization"
        )

    def _spent(self) -> bool:
        """Whether the wrong secrets allowed within the window are all used: a secret is
        then compared only with the one-time code shown in the server's terminal."""
        now = self.store.clock()
        while self._guesses and self._guesses[0] <= now - GUESS_WINDOW:
            self._guesses.popleft()
        if len(self._guesses) < GUESSES_IN_ALL:
            self._code = None  # room again: the code in force, if any, is over
            return False
        if self._code is None:
            code = "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))
            self._code = _digest(code)
            shown = "-".join(code[i : i + 4] for i in range(0, CODE_LENGTH, 4))
            self._announce(
                f"toolkit mcp: {GUESSES_IN_ALL} wrong operator secrets within "
                f"{GUESS_WINDOW / 60:g} minutes; the authorization screen now also asks for "
                f"this one-time code: {shown}"
            )
        return True

    def _code_matches(self, code: str) -> bool:
        if self._code is None:
            return False
        typed = "".join(ch for ch in code.upper() if ch.isalnum())
        return hmac.compare_digest(_digest(typed), self._code)

    def _wrong(
        self, request_id: str, pending: PendingRecord, chosen: list[str], what: str, status: int
    ) -> Response:
        """A wrong answer (`what`): the request's attempts counted, ended at the last."""
        client_id = pending.client_id
        requested: list[str] = pending.params["scopes"]
        attempts = self.store.pending_failed(request_id)
        self.provider.event(
            "consent",
            "denied",
            client_id=client_id,
            status=status,
            detail=f"{what} (attempt {attempts})",
        )
        if attempts >= ATTEMPTS_PER_REQUEST:
            self.store.drop_pending(request_id)
            return self._back(
                pending,
                error="access_denied",
                error_description="too many wrong answers on the authorization screen",
            )
        message = {
            "no one-time code": "Too many wrong secrets were tried lately: type the one-time "
            "code shown in the server's terminal as well.",
            "wrong one-time code": "That is not the one-time code shown in the server's terminal.",
        }.get(what, "That is not the operator secret.")
        return self._page(
            request_id, pending, status, message, ticked=[s for s in chosen if s in requested]
        )

    def _approve(
        self, request_id: str, pending: PendingRecord, secret: str, chosen: list[str], code: str
    ) -> Response:
        client_id = pending.client_id
        requested: list[str] = pending.params["scopes"]
        if self._spent():
            if not code.strip():
                return self._wrong(request_id, pending, chosen, "no one-time code", 429)
            if not self._code_matches(code):
                return self._wrong(request_id, pending, chosen, "wrong one-time code", 403)
            self._code = None  # used: the next one is shown when it is needed
        if not hmac.compare_digest(_digest(secret), self._secret):
            self._guesses.append(self.store.clock())
            return self._wrong(request_id, pending, chosen, "wrong operator secret", 403)
        scopes = [s for s in requested if s in chosen]
        if not scopes:
            return self._page(request_id, pending, 400, "Tick at least one scope.", ticked=[])
        if self.store.client(client_id) is None or not self.store.drop_pending(request_id):
            return self._gone()  # revoked meanwhile, or answered in another tab
        params: dict[str, Any] = pending.params
        code = self.store.add_code(
            client_id,
            scopes,
            params["redirect_uri"],
            bool(params["redirect_uri_provided_explicitly"]),
            params["code_challenge"],
            params.get("resource"),
            self.provider.policy.code_ttl,
        )
        self.provider.event(
            "consent", "ok", client_id=client_id, scopes=scopes, detail="approved by the writer"
        )
        return self._back(pending, code=code)


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""
