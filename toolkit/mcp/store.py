"""The authorization server's state in SQLite (`.toolkit/mcp.db`): clients, authorization
requests waiting on the screen, codes, grants and tokens. It survives a restart.

Nothing secret is stored as it is: client secrets, authorization codes, request ids and
tokens are all random strings of 256 bits made here, kept as their SHA-256 (a hash that
cannot be turned back, and for values that random no slow hash is needed). Whoever reads
the file learns which clients exist and which scopes they hold, and nothing to log in with.

A *grant* is one authorization: what an authorization code (or a client_credentials
request) started, with every token issued from it since. Revoking a grant revokes all of
them at once; that is what a reused authorization code or a reused refresh token does,
and what revoking a client does to each of its grants.

Every change is one SQLite transaction, and the ones that must happen once (using a code,
rotating a refresh token) are a single `UPDATE ... WHERE used_at IS NULL`, so two requests
racing with the same code or refresh token cannot both win. Time comes from `clock`, so
tests can move it forward.
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
import sqlite3
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

Clock = Callable[[], float]

DB_NAME = "mcp.db"
UNUSED_CLIENTS_KEPT = 100  # registrations that never got a token; the oldest go first

SCHEMA = """
CREATE TABLE IF NOT EXISTS clients (
    client_id TEXT PRIMARY KEY,
    secret_hash TEXT,
    info TEXT NOT NULL,
    name TEXT NOT NULL,
    origin TEXT NOT NULL,
    created_at REAL NOT NULL,
    last_grant_at REAL,
    revoked_at REAL
);
CREATE TABLE IF NOT EXISTS pending (
    id_hash TEXT PRIMARY KEY,
    client_id TEXT NOT NULL,
    params TEXT NOT NULL,
    expires_at REAL NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS codes (
    code_hash TEXT PRIMARY KEY,
    client_id TEXT NOT NULL,
    scopes TEXT NOT NULL,
    redirect_uri TEXT NOT NULL,
    redirect_explicit INTEGER NOT NULL,
    challenge TEXT NOT NULL,
    resource TEXT,
    expires_at REAL NOT NULL,
    used_at REAL,
    grant_id TEXT
);
CREATE TABLE IF NOT EXISTS grants (
    grant_id TEXT PRIMARY KEY,
    client_id TEXT NOT NULL,
    scopes TEXT NOT NULL,
    kind TEXT NOT NULL,
    created_at REAL NOT NULL,
    revoked_at REAL,
    reason TEXT
);
CREATE TABLE IF NOT EXISTS tokens (
    token_hash TEXT PRIMARY KEY,
    kind TEXT NOT NULL,
    grant_id TEXT NOT NULL,
    client_id TEXT NOT NULL,
    scopes TEXT NOT NULL,
    resource TEXT,
    created_at REAL NOT NULL,
    expires_at REAL NOT NULL,
    used_at REAL
);
CREATE INDEX IF NOT EXISTS tokens_grant ON tokens (grant_id);
CREATE INDEX IF NOT EXISTS tokens_expiry ON tokens (expires_at);
CREATE INDEX IF NOT EXISTS grants_client ON grants (client_id);
"""

ACCESS = "access"
REFRESH = "refresh"


def digest(value: str) -> str:
    return hashlib.sha256(value.encode("utf-8")).hexdigest()


def new_secret(prefix: str) -> str:
    """A random string of 256 bits; the prefix says what it is (and lets secret scanners
    find one pasted where it should not be)."""
    return f"{prefix}_{secrets.token_urlsafe(32)}"


@dataclass(frozen=True)
class ClientRecord:
    client_id: str
    info: dict[str, Any]  # RFC 7591 metadata as registered, without the secret
    secret_hash: str | None
    name: str
    origin: str  # "registered" (RFC 7591) or "operator" (toolkit mcp add-client)
    created_at: float
    last_grant_at: float | None
    revoked_at: float | None
    active_grants: int = 0
    scopes_granted: tuple[str, ...] = ()


@dataclass(frozen=True)
class PendingRecord:
    client_id: str
    params: dict[str, Any]
    attempts: int


@dataclass(frozen=True)
class CodeRecord:
    client_id: str
    scopes: tuple[str, ...]
    redirect_uri: str
    redirect_explicit: bool
    challenge: str
    resource: str | None
    expires_at: float
    used: bool
    grant_id: str | None


@dataclass(frozen=True)
class TokenRecord:
    kind: str
    grant_id: str
    client_id: str
    scopes: tuple[str, ...]
    resource: str | None
    expires_at: float
    used: bool
    revoked: bool  # its grant or its client was revoked


@dataclass(frozen=True)
class Issued:
    access_token: str
    access_expires_at: float
    refresh_token: str | None


class AuthStore:
    """The tables above, behind one connection guarded by a lock (the server calls it from
    its event loop and worker threads; `toolkit mcp revoke` from another process)."""

    def __init__(self, path: Path | None, clock: Clock):
        self.path = path
        self.clock = clock
        self._mutex = threading.Lock()
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
            # Created readable by its owner only, before SQLite opens it.
            os.close(os.open(path, os.O_RDWR | os.O_CREAT, 0o600))
        self._db = sqlite3.connect(
            ":memory:" if path is None else str(path),
            check_same_thread=False,
            isolation_level=None,
            timeout=10,
        )
        self._db.row_factory = sqlite3.Row
        if path is not None:
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.executescript(SCHEMA)

    def close(self) -> None:
        with self._mutex:
            self._db.close()

    @contextmanager
    def _tx(self) -> Iterator[sqlite3.Connection]:
        with self._mutex:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                yield self._db
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")

    # -- clients ---------------------------------------------------------------------------

    def add_client(
        self, client_id: str, info: dict[str, Any], secret: str | None, *, name: str, origin: str
    ) -> None:
        now = self.clock()
        with self._tx() as db:
            db.execute(
                "INSERT INTO clients (client_id, secret_hash, info, name, origin, "
                "created_at) VALUES (?, ?, ?, ?, ?, ?)",
                (
                    client_id,
                    digest(secret) if secret else None,
                    json.dumps(info),
                    name,
                    origin,
                    now,
                ),
            )
            # Anyone may register: registrations that never led to a grant are kept up to a
            # bound, so that a flood of them cannot fill the disk. One with an authorization
            # request waiting on the screen (bounded in number) is never evicted: a flood of
            # registrations cannot push out the writer's own client during consent.
            db.execute("DELETE FROM pending WHERE expires_at < ?", (now,))
            db.execute(
                "DELETE FROM clients WHERE client_id IN (SELECT client_id FROM clients "
                "WHERE origin = 'registered' AND last_grant_at IS NULL AND client_id "
                "NOT IN (SELECT client_id FROM pending) "
                "ORDER BY created_at DESC LIMIT -1 OFFSET ?)",
                (UNUSED_CLIENTS_KEPT,),
            )

    def client(self, client_id: str, *, revoked: bool = False) -> ClientRecord | None:
        """The client, unless it was revoked (`revoked=True` returns it anyway)."""
        with self._mutex:
            row = self._db.execute(
                "SELECT * FROM clients WHERE client_id = ?", (client_id,)
            ).fetchone()
        if row is None or (row["revoked_at"] is not None and not revoked):
            return None
        return self._client(row)

    @staticmethod
    def _client(row: sqlite3.Row, grants: int = 0, scopes: tuple[str, ...] = ()) -> ClientRecord:
        return ClientRecord(
            row["client_id"],
            json.loads(row["info"]),
            row["secret_hash"],
            row["name"],
            row["origin"],
            row["created_at"],
            row["last_grant_at"],
            row["revoked_at"],
            grants,
            scopes,
        )

    def clients(self) -> list[ClientRecord]:
        """Every client, the oldest first, with its live grants and the scopes they hold."""
        now = self.clock()
        with self._mutex:
            rows = self._db.execute(
                "SELECT * FROM clients ORDER BY created_at, client_id"
            ).fetchall()
            live = self._db.execute(
                "SELECT g.client_id, g.scopes FROM grants g WHERE g.revoked_at IS NULL AND "
                "EXISTS (SELECT 1 FROM tokens t WHERE t.grant_id = g.grant_id AND "
                "t.expires_at > ? AND t.used_at IS NULL)",
                (now,),
            ).fetchall()
        grants: dict[str, list[str]] = {}
        for row in live:
            grants.setdefault(row["client_id"], []).extend(row["scopes"].split())
        return [
            self._client(
                row,
                len([g for g in live if g["client_id"] == row["client_id"]]),
                tuple(dict.fromkeys(grants.get(row["client_id"], []))),
            )
            for row in rows
        ]

    def revoke_client(self, client_id: str) -> bool:
        """Revoke the client and every grant it holds; False when there is no such client
        (or it was revoked already)."""
        now = self.clock()
        with self._tx() as db:
            done = db.execute(
                "UPDATE clients SET revoked_at = ? WHERE client_id = ? AND revoked_at IS NULL",
                (now, client_id),
            ).rowcount
            db.execute(
                "UPDATE grants SET revoked_at = ?, reason = 'client revoked' WHERE "
                "client_id = ? AND revoked_at IS NULL",
                (now, client_id),
            )
            db.execute("DELETE FROM pending WHERE client_id = ?", (client_id,))
        return bool(done)

    # -- authorization requests waiting on the screen -------------------------------------

    def add_pending(self, client_id: str, params: dict[str, Any], ttl: float) -> str:
        request_id = new_secret("req")
        now = self.clock()
        with self._tx() as db:
            db.execute("DELETE FROM pending WHERE expires_at < ?", (now,))
            db.execute(
                "INSERT INTO pending (id_hash, client_id, params, expires_at) VALUES (?, ?, ?, ?)",
                (digest(request_id), client_id, json.dumps(params), now + ttl),
            )
        return request_id

    def pending_counts(self, client_id: str) -> tuple[int, int]:
        """Authorization requests waiting on the screen: the client's, and all of them."""
        with self._mutex:
            row = self._db.execute(
                "SELECT COUNT(*) AS n, COALESCE(SUM(client_id = ?), 0) AS mine FROM pending "
                "WHERE expires_at >= ?",
                (client_id, self.clock()),
            ).fetchone()
        return int(row["mine"]), int(row["n"])

    def pending(self, request_id: str) -> PendingRecord | None:
        with self._mutex:
            row = self._db.execute(
                "SELECT * FROM pending WHERE id_hash = ? AND expires_at >= ?",
                (digest(request_id), self.clock()),
            ).fetchone()
        if row is None:
            return None
        return PendingRecord(row["client_id"], json.loads(row["params"]), row["attempts"])

    def pending_failed(self, request_id: str) -> int:
        """Count one wrong operator secret against the request; the count so far."""
        with self._tx() as db:
            db.execute(
                "UPDATE pending SET attempts = attempts + 1 WHERE id_hash = ?",
                (digest(request_id),),
            )
            row = db.execute(
                "SELECT attempts FROM pending WHERE id_hash = ?", (digest(request_id),)
            ).fetchone()
        return int(row["attempts"]) if row else 0

    def drop_pending(self, request_id: str) -> bool:
        """Remove the request; False when it was not there (answered already)."""
        with self._tx() as db:
            return bool(
                db.execute("DELETE FROM pending WHERE id_hash = ?", (digest(request_id),)).rowcount
            )

    # -- authorization codes ------------------------------------------------------------------

    def add_code(
        self,
        client_id: str,
        scopes: list[str],
        redirect_uri: str,
        redirect_explicit: bool,
        challenge: str,
        resource: str | None,
        ttl: float,
    ) -> str:
        code = new_secret("code")
        with self._tx() as db:
            db.execute(
                "INSERT INTO codes (code_hash, client_id, scopes, redirect_uri, "
                "redirect_explicit, challenge, resource, expires_at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    digest(code),
                    client_id,
                    " ".join(scopes),
                    redirect_uri,
                    int(redirect_explicit),
                    challenge,
                    resource,
                    self.clock() + ttl,
                ),
            )
        return code

    def code(self, code: str) -> CodeRecord | None:
        with self._mutex:
            row = self._db.execute(
                "SELECT * FROM codes WHERE code_hash = ?", (digest(code),)
            ).fetchone()
        if row is None:
            return None
        return CodeRecord(
            row["client_id"],
            tuple(row["scopes"].split()),
            row["redirect_uri"],
            bool(row["redirect_explicit"]),
            row["challenge"],
            row["resource"],
            row["expires_at"],
            row["used_at"] is not None,
            row["grant_id"],
        )

    def redeem_code(self, code: str, grant_id: str) -> bool:
        """Mark the code used by `grant_id`; False when it had been used already."""
        with self._tx() as db:
            return bool(
                db.execute(
                    "UPDATE codes SET used_at = ?, grant_id = ? WHERE "
                    "code_hash = ? AND used_at IS NULL",
                    (self.clock(), grant_id, digest(code)),
                ).rowcount
            )

    # -- grants and tokens --------------------------------------------------------------------

    def add_grant(self, client_id: str, scopes: list[str], kind: str) -> str:
        grant_id = secrets.token_hex(16)
        now = self.clock()
        with self._tx() as db:
            db.execute(
                "INSERT INTO grants (grant_id, client_id, scopes, kind, created_at) "
                "VALUES (?, ?, ?, ?, ?)",
                (grant_id, client_id, " ".join(scopes), kind, now),
            )
            db.execute("UPDATE clients SET last_grant_at = ? WHERE client_id = ?", (now, client_id))
        return grant_id

    def issue(
        self,
        grant_id: str,
        client_id: str,
        scopes: list[str],
        resource: str | None,
        *,
        access_ttl: float,
        refresh_ttl: float | None,
        refresh_scopes: list[str] | None = None,
    ) -> Issued:
        """A new access token (and refresh token with `refresh_scopes`, by default the same,
        unless `refresh_ttl` is None) of the grant; its earlier access tokens stop working
        (one live access token per grant). Expired rows are cleared on the way."""
        access = new_secret("tka")
        refresh = new_secret("tkr") if refresh_ttl is not None else None
        now = self.clock()
        rows = [
            (
                digest(access),
                ACCESS,
                grant_id,
                client_id,
                " ".join(scopes),
                resource,
                now,
                now + access_ttl,
            )
        ]
        if refresh is not None and refresh_ttl is not None:
            rows.append(
                (
                    digest(refresh),
                    REFRESH,
                    grant_id,
                    client_id,
                    " ".join(refresh_scopes or scopes),
                    resource,
                    now,
                    now + refresh_ttl,
                )
            )
        with self._tx() as db:
            db.execute("DELETE FROM tokens WHERE grant_id = ? AND kind = ?", (grant_id, ACCESS))
            db.executemany(
                "INSERT INTO tokens (token_hash, kind, grant_id, client_id, scopes, "
                "resource, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                rows,
            )
            self._purge(db, now)
        return Issued(access, now + access_ttl, refresh)

    @staticmethod
    def _purge(db: sqlite3.Connection, now: float) -> None:
        """Forget what can no longer be used: expired tokens, codes expired a day ago (a
        reuse after that finds nothing to revoke anyway), and grants left with no token."""
        db.execute("DELETE FROM tokens WHERE expires_at < ?", (now,))
        db.execute("DELETE FROM codes WHERE expires_at < ?", (now - 86400,))
        db.execute(
            "DELETE FROM grants WHERE created_at < ? AND NOT EXISTS (SELECT 1 FROM "
            "tokens t WHERE t.grant_id = grants.grant_id) AND NOT EXISTS (SELECT 1 "
            "FROM codes c WHERE c.grant_id = grants.grant_id)",
            (now - 86400,),
        )

    def token(self, token: str, kind: str) -> TokenRecord | None:
        """The token of that kind, whether used, expired or revoked (the caller decides)."""
        with self._mutex:
            row = self._db.execute(
                "SELECT t.*, (g.revoked_at IS NOT NULL OR c.revoked_at IS NOT NULL "
                "OR c.client_id IS NULL) AS revoked FROM tokens t "
                "JOIN grants g ON g.grant_id = t.grant_id "
                "LEFT JOIN clients c ON c.client_id = t.client_id "
                "WHERE t.token_hash = ? AND t.kind = ?",
                (digest(token), kind),
            ).fetchone()
        if row is None:
            return None
        return TokenRecord(
            row["kind"],
            row["grant_id"],
            row["client_id"],
            tuple(row["scopes"].split()),
            row["resource"],
            row["expires_at"],
            row["used_at"] is not None,
            bool(row["revoked"]),
        )

    def rotate(self, refresh_token: str) -> bool:
        """Mark the refresh token used; False when it had been used already."""
        with self._tx() as db:
            return bool(
                db.execute(
                    "UPDATE tokens SET used_at = ? WHERE token_hash = ? AND "
                    "kind = ? AND used_at IS NULL",
                    (self.clock(), digest(refresh_token), REFRESH),
                ).rowcount
            )

    def revoke_grant(self, grant_id: str, reason: str) -> None:
        with self._tx() as db:
            db.execute(
                "UPDATE grants SET revoked_at = ?, reason = ? WHERE grant_id = ? AND "
                "revoked_at IS NULL",
                (self.clock(), reason, grant_id),
            )

    def grant_live(self, grant_id: str) -> bool:
        """Whether the grant still works: neither it nor its client is revoked, and it
        holds a token that has not expired (an access token, or an unused refresh token)."""
        with self._mutex:
            row = self._db.execute(
                "SELECT 1 FROM grants g JOIN clients c ON c.client_id = g.client_id "
                "WHERE g.grant_id = ? AND g.revoked_at IS NULL AND c.revoked_at IS NULL AND "
                "EXISTS (SELECT 1 FROM tokens t WHERE t.grant_id = g.grant_id AND "
                "t.expires_at > ? AND t.used_at IS NULL)",
                (grant_id, self.clock()),
            ).fetchone()
        return row is not None

    def grant_revoked(self, grant_id: str) -> bool:
        with self._mutex:
            row = self._db.execute(
                "SELECT revoked_at FROM grants WHERE grant_id = ?", (grant_id,)
            ).fetchone()
        return row is None or row["revoked_at"] is not None
