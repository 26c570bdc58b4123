"""SQLite state of the sandbox: one connection, one lock, explicit transactions.

One connection serves every request. Handlers run on the server's event loop thread,
so requests are already serialised; the lock makes the store safe for any other
thread too (the test helpers, the CLI) and keeps an in-memory database - which exists
only inside its connection - correct under concurrent requests.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from toolkit.sandbox.schema import DATA_TABLES, DDL, SCHEMA_VERSION


class StoreError(Exception):
    """The database file cannot be used (another schema version, not SQLite...)."""


class Store:
    def __init__(self, path: Path | None = None):
        self.path = path
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
        """Create the schema when missing and seed a new database.

        Returns True when the database was new (and has just been seeded), False when
        an existing file was reopened with its data as it was.
        """
        from toolkit.sandbox import seed as seed_module

        with self.lock:
            try:
                self.conn.executescript(DDL)
                row = self.conn.execute(
                    "SELECT value FROM meta WHERE key = 'schema_version'"
                ).fetchone()
            except sqlite3.DatabaseError as exc:
                raise StoreError(f"{self.path}: not a sandbox database ({exc})") from exc
            if row is not None:
                if row["value"] != SCHEMA_VERSION:
                    raise StoreError(
                        f"{self.path}: written by another sandbox version (schema "
                        f"{row['value']}, this one is {SCHEMA_VERSION}); delete it or use --memory"
                    )
                return False
            with self.transaction() as conn:
                seed_module.load(conn, content=seed)
                conn.execute(
                    "INSERT INTO meta (key, value) VALUES ('schema_version', ?), ('seed', ?)",
                    (SCHEMA_VERSION, "full" if seed else "accounts"),
                )
            return True

    def reset(self) -> None:
        """Back to the seed this database was created with, in one transaction."""
        from toolkit.sandbox import seed as seed_module

        with self.transaction() as conn:
            row = conn.execute("SELECT value FROM meta WHERE key = 'seed'").fetchone()
            content = row is None or row["value"] == "full"
            for table in DATA_TABLES:
                conn.execute(f"DELETE FROM {table}")  # noqa: S608 - fixed table names
            conn.execute("DELETE FROM sqlite_sequence")
            seed_module.load(conn, content=content)

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
