"""/items: the catalogue and stock levels."""

from __future__ import annotations

import logging
import sqlite3

from fastapi import APIRouter, Depends, Query, status

from stockroom import inventory
from stockroom.auth.api_keys import Principal
from stockroom.auth.dependencies import require_scope
from stockroom.db import transaction
from stockroom.models import ItemIn, ItemOut, ItemUpdate, StockAdjustment
from stockroom.routers import get_db

log = logging.getLogger(__name__)
router = APIRouter(prefix="/items", tags=["items"])


@router.get("", response_model=list[ItemOut])
def list_items(
    location: str | None = None,
    limit: int = Query(default=100, ge=1, le=500),
    offset: int = Query(default=0, ge=0),
    conn: sqlite3.Connection = Depends(get_db),
    _principal: Principal = Depends(require_scope("read")),
) -> list[dict[str, object]]:
    rows = inventory.list_items(conn, location=location, limit=limit, offset=offset)
    return [inventory.item_row_to_dict(row) for row in rows]


@router.get("/low-stock", response_model=list[ItemOut])
def low_stock(
    threshold: int = Query(default=5, ge=0),
    conn: sqlite3.Connection = Depends(get_db),
    _principal: Principal = Depends(require_scope("read")),
) -> list[dict[str, object]]:
    return [inventory.item_row_to_dict(row) for row in inventory.low_stock_items(conn, threshold)]


@router.get("/{sku}", response_model=ItemOut)
def get_item(
    sku: str,
    conn: sqlite3.Connection = Depends(get_db),
    _principal: Principal = Depends(require_scope("read")),
) -> dict[str, object]:
    return inventory.item_row_to_dict(inventory.get_item(conn, sku))


@router.post("", response_model=ItemOut, status_code=status.HTTP_201_CREATED)
def create_item(
    body: ItemIn,
    conn: sqlite3.Connection = Depends(get_db),
    principal: Principal = Depends(require_scope("write")),
) -> dict[str, object]:
    row = inventory.create_item(conn, body.sku, body.name, body.quantity, body.location)
    log.info("item %s created by %s", body.sku, principal.username)
    return inventory.item_row_to_dict(row)


@router.patch("/{sku}", response_model=ItemOut)
def update_item(
    sku: str,
    body: ItemUpdate,
    conn: sqlite3.Connection = Depends(get_db),
    _principal: Principal = Depends(require_scope("write")),
) -> dict[str, object]:
    changes = body.model_dump(exclude_unset=True)
    item = inventory.get_item(conn, sku)
    if changes:
        assignments = ", ".join(f"{column} = ?" for column in changes)
        with transaction(conn):
            conn.execute(
                f"UPDATE items SET {assignments} WHERE id = ?", [*changes.values(), item["id"]]
            )
    return inventory.item_row_to_dict(inventory.get_item(conn, sku))


@router.post("/{sku}/adjust", response_model=ItemOut)
def adjust_stock(
    sku: str,
    body: StockAdjustment,
    conn: sqlite3.Connection = Depends(get_db),
    principal: Principal = Depends(require_scope("write")),
) -> dict[str, object]:
    row = inventory.adjust_stock(conn, sku, body.delta)
    log.info(
        "stock of %s adjusted by %+d (%s) by %s", sku, body.delta, body.reason, principal.username
    )
    return inventory.item_row_to_dict(row)
