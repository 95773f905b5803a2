"""Stock levels and reservations: the rules, independent of HTTP.

``quantity`` is what is physically on the shelf; ``reserved`` is the part promised to
open reservations. ``available = quantity - reserved`` is what can still be reserved.

A reservation is ``held`` until it is confirmed (the goods leave: quantity and reserved both
drop), released (the customer gave up: reserved drops) or expired by the background job.
"""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime, timedelta
from typing import Any

from stockroom.db import transaction
from stockroom.errors import Conflict, InsufficientStock, InvalidTransition, NotFound

TIME_FORMAT = "%Y-%m-%dT%H:%M:%SZ"


def utcnow() -> datetime:
    return datetime.now(UTC)


def _stamp(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime(TIME_FORMAT)


def item_row_to_dict(row: sqlite3.Row) -> dict[str, Any]:
    data = dict(row)
    data["available"] = data["quantity"] - data["reserved"]
    return data


def get_item(conn: sqlite3.Connection, sku: str) -> sqlite3.Row:
    row = conn.execute("SELECT * FROM items WHERE sku = ?", (sku,)).fetchone()
    if row is None:
        raise NotFound(f"no item with SKU {sku}")
    return row


def list_items(
    conn: sqlite3.Connection, *, location: str | None = None, limit: int = 100, offset: int = 0
) -> list[sqlite3.Row]:
    sql = "SELECT * FROM items"
    params: list[Any] = []
    if location:
        sql += " WHERE location = ?"
        params.append(location)
    sql += " ORDER BY sku LIMIT ? OFFSET ?"
    params += [limit, offset]
    return conn.execute(sql, params).fetchall()


def create_item(
    conn: sqlite3.Connection, sku: str, name: str, quantity: int, location: str | None
) -> sqlite3.Row:
    try:
        with transaction(conn):
            conn.execute(
                "INSERT INTO items (sku, name, quantity, location) VALUES (?, ?, ?, ?)",
                (sku, name, quantity, location),
            )
    except sqlite3.IntegrityError as exc:
        raise Conflict(f"SKU {sku} already exists") from exc
    return get_item(conn, sku)


def adjust_stock(conn: sqlite3.Connection, sku: str, delta: int) -> sqlite3.Row:
    """Receive (+) or write off (-) stock. Cannot go below what is reserved."""
    with transaction(conn):
        item = get_item(conn, sku)
        new_quantity = item["quantity"] + delta
        if new_quantity < item["reserved"]:
            raise Conflict(
                f"cannot reduce {sku} to {new_quantity}: {item['reserved']} are reserved"
            )
        conn.execute(
            "UPDATE items SET quantity = ?, updated_at = ? WHERE id = ?",
            (new_quantity, _stamp(utcnow()), item["id"]),
        )
    return get_item(conn, sku)


def reserve(
    conn: sqlite3.Connection,
    sku: str,
    quantity: int,
    holder: str,
    ttl: timedelta,
    now: datetime | None = None,
) -> int:
    """Hold ``quantity`` units of ``sku`` for ``holder`` until ``now + ttl``. Returns the id."""
    moment = now or utcnow()
    with transaction(conn):
        item = get_item(conn, sku)
        available = item["quantity"] - item["reserved"]
        if quantity > available:
            raise InsufficientStock(sku, quantity, available)
        conn.execute(
            "UPDATE items SET reserved = reserved + ?, updated_at = ? WHERE id = ?",
            (quantity, _stamp(moment), item["id"]),
        )
        cursor = conn.execute(
            "INSERT INTO reservations (item_id, quantity, holder, expires_at) VALUES (?, ?, ?, ?)",
            (item["id"], quantity, holder, _stamp(moment + ttl)),
        )
    return int(cursor.lastrowid or 0)


def get_reservation(conn: sqlite3.Connection, reservation_id: int) -> sqlite3.Row:
    row = conn.execute(
        "SELECT r.*, i.sku FROM reservations r JOIN items i ON i.id = r.item_id WHERE r.id = ?",
        (reservation_id,),
    ).fetchone()
    if row is None:
        raise NotFound(f"no reservation {reservation_id}")
    return row


def _finish(conn: sqlite3.Connection, reservation_id: int, status: str) -> sqlite3.Row:
    with transaction(conn):
        row = get_reservation(conn, reservation_id)
        if row["status"] != "held":
            raise InvalidTransition(f"reservation {reservation_id} is already {row['status']}")
        shipped = row["quantity"] if status == "confirmed" else 0
        conn.execute(
            "UPDATE items SET reserved = reserved - ?, quantity = quantity - ?, updated_at = ?"
            " WHERE id = ?",
            (row["quantity"], shipped, _stamp(utcnow()), row["item_id"]),
        )
        conn.execute("UPDATE reservations SET status = ? WHERE id = ?", (status, reservation_id))
    return get_reservation(conn, reservation_id)


def confirm(conn: sqlite3.Connection, reservation_id: int) -> sqlite3.Row:
    """The goods were picked: take them out of stock."""
    return _finish(conn, reservation_id, "confirmed")


def release(conn: sqlite3.Connection, reservation_id: int) -> sqlite3.Row:
    """The holder no longer needs the goods: make them available again."""
    return _finish(conn, reservation_id, "released")


def expire_due(conn: sqlite3.Connection, now: datetime | None = None) -> int:
    """Expire every held reservation past its deadline. Returns how many were expired."""
    cutoff = _stamp(now or utcnow())
    with transaction(conn):
        due = conn.execute(
            "SELECT id, item_id, quantity FROM reservations"
            " WHERE status = 'held' AND expires_at <= ?",
            (cutoff,),
        ).fetchall()
        for row in due:
            conn.execute(
                "UPDATE items SET reserved = reserved - ? WHERE id = ?",
                (row["quantity"], row["item_id"]),
            )
        conn.executemany(
            "UPDATE reservations SET status = 'expired' WHERE id = ?", [(row["id"],) for row in due]
        )
    return len(due)


def low_stock_items(conn: sqlite3.Connection, threshold: int) -> list[sqlite3.Row]:
    """Items whose available quantity is at or below ``threshold``."""
    return conn.execute(
        "SELECT *, quantity - reserved AS available FROM items"
        " WHERE quantity - reserved <= ? ORDER BY available, sku",
        (threshold,),
    ).fetchall()
