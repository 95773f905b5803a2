"""Release stock held by reservations whose time ran out."""

from __future__ import annotations

import logging

from stockroom import inventory
from stockroom.db import connect
from stockroom.settings import Settings

log = logging.getLogger(__name__)


def expire_reservations(settings: Settings) -> int:
    conn = connect(settings.db_path)
    try:
        expired = inventory.expire_due(conn)
    finally:
        conn.close()
    if expired:
        log.info("expired %d reservation(s)", expired)
    return expired
