"""HTTP routers and the dependencies they share."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator

from fastapi import Depends

from stockroom.db import connect
from stockroom.settings import Settings, get_settings


def get_db(settings: Settings = Depends(get_settings)) -> Iterator[sqlite3.Connection]:
    """One SQLite connection per request, closed when the response is sent."""
    conn = connect(settings.db_path)
    try:
        yield conn
    finally:
        conn.close()
