"""SQLite access: connections, transactions and schema migrations.

One connection per request (see ``get_db`` in ``routers/__init__.py``) and one per job run.
SQLite in WAL mode lets the API keep reading while a job writes.
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from stockroom.schema import MIGRATIONS

log = logging.getLogger(__name__)

BUSY_TIMEOUT_SECONDS = 5.0


def connect(path: Path | str) -> sqlite3.Connection:
    """Open the database with the pragmas every connection needs."""
    conn = sqlite3.connect(
        str(path),
        timeout=BUSY_TIMEOUT_SECONDS,
        isolation_level=None,  # we issue BEGIN/COMMIT ourselves
        check_same_thread=False,
    )
    conn.row_factory = sqlite3.Row
    conn.execute("PRAGMA foreign_keys = ON")
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA synchronous = NORMAL")
    return conn


@contextmanager
def transaction(conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """BEGIN IMMEDIATE ... COMMIT, or ROLLBACK on any exception.

    IMMEDIATE takes the write lock up front, so two reservations for the last unit of an
    item cannot both read "1 available" and both succeed.
    """
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield conn
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    else:
        conn.execute("COMMIT")


def schema_version(conn: sqlite3.Connection) -> int:
    return int(conn.execute("PRAGMA user_version").fetchone()[0])


def migrate(conn: sqlite3.Connection) -> int:
    """Apply pending migrations in order, each in its own transaction. Returns the new version."""
    current = schema_version(conn)
    for version, name, statements in MIGRATIONS:
        if version <= current:
            continue
        log.info("applying migration %03d_%s", version, name)
        with transaction(conn):
            for statement in statements:
                conn.execute(statement)
            # PRAGMA cannot take parameters; version is an int from our own table.
            conn.execute(f"PRAGMA user_version = {int(version)}")
        current = version
    return current


def init_db(path: Path | str) -> int:
    """Create the database file if needed and bring its schema up to date."""
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    conn = connect(path)
    try:
        return migrate(conn)
    finally:
        conn.close()
