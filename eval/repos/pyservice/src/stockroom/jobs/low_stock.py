"""Email the warehouse when items run low, at most once a day per item.

An alert is sent again earlier than that only if the item got even lower since the last one.
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime, timedelta

from stockroom import inventory
from stockroom.db import connect, transaction
from stockroom.notify import send_email
from stockroom.settings import Settings

log = logging.getLogger(__name__)
REPEAT_AFTER = timedelta(hours=24)
TIME_FORMAT = "%Y-%m-%dT%H:%M:%SZ"


def _should_alert(previous: dict[str, object] | None, available: int, now: datetime) -> bool:
    if previous is None:
        return True
    last = datetime.strptime(str(previous["last_sent_at"]), TIME_FORMAT).replace(tzinfo=UTC)
    return now - last >= REPEAT_AFTER or available < int(str(previous["available_then"]))


def send_low_stock_alerts(settings: Settings, now: datetime | None = None) -> int:
    moment = now or datetime.now(UTC)
    conn = connect(settings.db_path)
    try:
        rows = inventory.low_stock_items(conn, settings.low_stock_threshold)
        previous = {row["item_id"]: dict(row) for row in conn.execute("SELECT * FROM stock_alerts")}
        due = [
            row for row in rows if _should_alert(previous.get(row["id"]), row["available"], moment)
        ]
        if not due:
            return 0
        lines = [f"{row['sku']:<16} {row['name']:<40} available {row['available']}" for row in due]
        send_email(
            settings,
            subject=f"[stockroom] {len(due)} item(s) low on stock",
            body="These items are at or below the alert threshold"
            f" ({settings.low_stock_threshold}):\n\n" + "\n".join(lines),
        )
        with transaction(conn):
            conn.executemany(
                "INSERT OR REPLACE INTO stock_alerts (item_id, last_sent_at, available_then)"
                " VALUES (?, ?, ?)",
                [(row["id"], moment.strftime(TIME_FORMAT), row["available"]) for row in due],
            )
        log.info("low-stock alert sent for %d item(s)", len(due))
        return len(due)
    finally:
        conn.close()
