"""/reservations: hold stock for an order, then confirm or release it."""

from __future__ import annotations

import sqlite3
from datetime import timedelta

from fastapi import APIRouter, Depends, status

from stockroom import inventory
from stockroom.auth.api_keys import Principal
from stockroom.auth.dependencies import require_scope
from stockroom.models import ReservationIn, ReservationOut
from stockroom.routers import get_db
from stockroom.settings import Settings, get_settings

router = APIRouter(prefix="/reservations", tags=["reservations"])


def _out(row: sqlite3.Row) -> dict[str, object]:
    return {key: row[key] for key in ("id", "sku", "quantity", "holder", "status", "expires_at")}


@router.post("", response_model=ReservationOut, status_code=status.HTTP_201_CREATED)
def create_reservation(
    body: ReservationIn,
    conn: sqlite3.Connection = Depends(get_db),
    settings: Settings = Depends(get_settings),
    _principal: Principal = Depends(require_scope("write")),
) -> dict[str, object]:
    """Hold stock. Answers 409 ``insufficient_stock`` when not enough is available."""
    ttl = timedelta(minutes=body.ttl_minutes or settings.reservation_ttl_minutes)
    reservation_id = inventory.reserve(conn, body.sku, body.quantity, body.holder, ttl)
    return _out(inventory.get_reservation(conn, reservation_id))


@router.get("/{reservation_id}", response_model=ReservationOut)
def get_reservation(
    reservation_id: int,
    conn: sqlite3.Connection = Depends(get_db),
    _principal: Principal = Depends(require_scope("read")),
) -> dict[str, object]:
    return _out(inventory.get_reservation(conn, reservation_id))


@router.post("/{reservation_id}/confirm", response_model=ReservationOut)
def confirm_reservation(
    reservation_id: int,
    conn: sqlite3.Connection = Depends(get_db),
    _principal: Principal = Depends(require_scope("write")),
) -> dict[str, object]:
    return _out(inventory.confirm(conn, reservation_id))


@router.post("/{reservation_id}/release", response_model=ReservationOut)
def release_reservation(
    reservation_id: int,
    conn: sqlite3.Connection = Depends(get_db),
    _principal: Principal = Depends(require_scope("write")),
) -> dict[str, object]:
    return _out(inventory.release(conn, reservation_id))
