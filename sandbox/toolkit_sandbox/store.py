"""SQLite state of the sandbox: one connection, one lock, explicit transactions.

Every interface brings its own tables (`Interface.ddl`) and seed; the store creates and
seeds each, records each interface's schema version in `meta`, and resets each one's
tables. An interface added to the sandbox later is created and seeded in an existing
database file on its next start; an interface whose tables changed (another
`schema_version`) makes an old file refused with a clear message.

One connection serves every request. Handlers run on the server's event loop thread,
so requests are already serialised; the lock makes the store safe for any other
thread too (the test helpers, the CLI) and keeps an in-memory database - which exists
only inside its connection - correct under concurrent requests.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from toolkit_sandbox.protocols import Schema

META_DDL = """
CREATE TABLE IF NOT EXISTS meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
"""
# Before interfaces had a schema version each, the whole file had one.
LEGACY_VERSION_KEY = "schema_version"


class StoreError(Exception):
    """The database file cannot be used (another schema version, not SQLite...)."""


class Store:
    def __init__(self, path: Path | None = None, interfaces: Sequence[Schema] = ()):
        self.path = path
        self.interfaces = tuple(interfaces)
        if path is None:
            target = ":memory:"
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            target = str(path)
        # isolation_level=None: autocommit, transactions are explicit (BEGIN ... COMMIT).
        self.conn = sqlite3.connect(target, check_same_thread=False, isolation_level=None)
        self.conn.row_factory = sqlite3.Row
        self.lock = threading.RLock()
        try:
            if path is not None:
                # WAL + NORMAL: a committed write survives a crash of the process,
                # and a write costs no fsync of the main file.
                self.conn.execute("PRAGMA journal_mode=WAL")
                self.conn.execute("PRAGMA synchronous=NORMAL")
            self.conn.execute("PRAGMA foreign_keys=OFF")
        except sqlite3.DatabaseError as exc:
            self.conn.close()
            raise StoreError(f"{path}: not a sandbox database ({exc})") from exc

    # --- life cycle -----------------------------------------------------------------

    def open(self, seed: bool) -> bool:
        """Create and seed what is missing: every interface's tables on a new database,
        an interface's own when it is new to an existing file.

        Returns True when the database was new (and has just been seeded), False when
        an existing file was reopened with its data as it was.
        """
        with self.lock:
            try:
                self.conn.executescript(META_DDL)
                rows = dict(self.conn.execute("SELECT key, value FROM meta").fetchall())
            except sqlite3.DatabaseError as exc:
                raise StoreError(f"{self.path}: not a sandbox database ({exc})") from exc
            if LEGACY_VERSION_KEY in rows:
                self._refuse(f"schema {rows[LEGACY_VERSION_KEY]}")
            for interface in self.interfaces:
                found = rows.get(_version_key(interface))
                if found is not None and found != interface.schema_version:
                    self._refuse(
                        f"{interface.name} schema {found}, this one is {interface.schema_version}"
                    )
            new = not rows
            content = seed if new else rows.get("seed", "full") == "full"
            for interface in self.interfaces:  # CREATE ... IF NOT EXISTS: idempotent
                self.conn.executescript(interface.ddl)
            with self.transaction() as conn:
                if new:
                    conn.execute(
                        "INSERT INTO meta (key, value) VALUES ('seed', ?)",
                        ("full" if seed else "accounts",),
                    )
                for interface in self.interfaces:
                    if _version_key(interface) in rows:
                        continue
                    if interface.seed is not None:
                        interface.seed(conn, content)
                    conn.execute(
                        "INSERT INTO meta (key, value) VALUES (?, ?)",
                        (_version_key(interface), interface.schema_version),
                    )
            return new

    def _refuse(self, what: str) -> None:
        raise StoreError(
            f"{self.path}: written by another sandbox version ({what}); delete it or use --memory"
        )

    def reset(self) -> None:
        """Every interface back to the seed this database was created with, in one
        transaction."""
        with self.transaction() as conn:
            row = conn.execute("SELECT value FROM meta WHERE key = 'seed'").fetchone()
            content = row is None or row["value"] == "full"
            for interface in self.interfaces:
                for table in interface.tables:
                    conn.execute(f"DELETE FROM {table}")  # declared names
                if interface.tables:
                    marks = ", ".join("?" for _ in interface.tables)
                    if conn.execute(
                        "SELECT 1 FROM sqlite_master WHERE name = 'sqlite_sequence'"
                    ).fetchone():
                        conn.execute(
                            f"DELETE FROM sqlite_sequence WHERE name IN ({marks})", interface.tables
                        )
                if interface.seed is not None:
                    interface.seed(conn, content)

    def close(self) -> None:
        with self.lock:
            self.conn.close()

    # --- access ---------------------------------------------------------------------

    @contextmanager
    def read(self) -> Iterator[sqlite3.Connection]:
        with self.lock:
            yield self.conn

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """A write transaction: committed when the block ends, rolled back on error."""
        with self.lock:
            if self.conn.in_transaction:  # nested use joins the outer transaction
                yield self.conn
                return
            self.conn.execute("BEGIN IMMEDIATE")
            try:
                yield self.conn
            except BaseException:
                self.conn.execute("ROLLBACK")
                raise
            else:
                self.conn.execute("COMMIT")


def inserted_id(cursor: sqlite3.Cursor) -> int:
    """The rowid of the row an INSERT on `cursor` just added. (sqlite3 leaves `lastrowid`
    None only on a cursor that has inserted nothing yet.)"""
    rowid = cursor.lastrowid
    if rowid is None:
        raise RuntimeError("the statement inserted no row")
    return rowid


def _version_key(interface: Schema) -> str:
    return f"schema_version:{interface.name}"
