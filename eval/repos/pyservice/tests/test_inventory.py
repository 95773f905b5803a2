import sqlite3
from datetime import UTC, datetime, timedelta

import pytest

from stockroom import inventory
from stockroom.errors import InsufficientStock, InvalidTransition


@pytest.fixture
def widget(conn: sqlite3.Connection) -> str:
    inventory.create_item(conn, "WID-1", "Widget", 10, "A1")
    return "WID-1"


def available(conn: sqlite3.Connection, sku: str) -> int:
    return int(inventory.item_row_to_dict(inventory.get_item(conn, sku))["available"])


def test_reserve_reduces_available(conn: sqlite3.Connection, widget: str) -> None:
    inventory.reserve(conn, widget, 3, "order-1", timedelta(minutes=15))
    assert available(conn, widget) == 7


def test_cannot_reserve_more_than_available(conn: sqlite3.Connection, widget: str) -> None:
    inventory.reserve(conn, widget, 8, "order-1", timedelta(minutes=15))
    with pytest.raises(InsufficientStock):
        inventory.reserve(conn, widget, 3, "order-2", timedelta(minutes=15))


def test_confirm_ships_and_release_returns(conn: sqlite3.Connection, widget: str) -> None:
    first = inventory.reserve(conn, widget, 2, "order-1", timedelta(minutes=15))
    second = inventory.reserve(conn, widget, 3, "order-2", timedelta(minutes=15))
    inventory.confirm(conn, first)
    inventory.release(conn, second)
    item = inventory.get_item(conn, widget)
    assert (item["quantity"], item["reserved"]) == (8, 0)
    with pytest.raises(InvalidTransition):
        inventory.release(conn, first)


def test_expire_due_releases_only_overdue(conn: sqlite3.Connection, widget: str) -> None:
    now = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)
    inventory.reserve(conn, widget, 2, "old", timedelta(minutes=5), now=now - timedelta(hours=1))
    inventory.reserve(conn, widget, 3, "new", timedelta(minutes=15), now=now)
    assert inventory.expire_due(conn, now=now) == 1
    assert available(conn, widget) == 7


def test_stock_cannot_drop_below_reserved(conn: sqlite3.Connection, widget: str) -> None:
    inventory.reserve(conn, widget, 6, "order-1", timedelta(minutes=15))
    with pytest.raises(Exception, match="reserved"):
        inventory.adjust_stock(conn, widget, -5)
