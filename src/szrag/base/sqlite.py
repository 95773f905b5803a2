"""SQLite connections' shared rules: putting a database in WAL mode, and telling a busy
database from a damaged one."""

from __future__ import annotations

import sqlite3
import time

_BUSY_CODES = (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED)
_RETRY_SECONDS = 0.005


def is_busy(error: BaseException) -> bool:
    """Whether ``error`` says another connection holds the database (never damage)."""
    code = getattr(error, "sqlite_errorcode", None)
    return isinstance(error, sqlite3.Error) and code is not None and code & 0xFF in _BUSY_CODES


def into_wal(conn: sqlite3.Connection, wait_seconds: float) -> None:
    """Put ``conn``'s database in WAL mode. The switch needs the file to itself, and SQLite
    reports another connection's lock at once there instead of waiting: two processes opening
    a new database together met it about once in four. So it is tried again for as long as
    a busy database is waited for, then the error is raised."""
    deadline = time.monotonic() + wait_seconds
    while True:
        try:
            conn.execute("PRAGMA journal_mode = WAL")
            return
        except sqlite3.OperationalError as error:
            if not is_busy(error) or time.monotonic() > deadline:
                raise
            time.sleep(_RETRY_SECONDS)
