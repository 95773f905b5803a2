"""Liveness and readiness probes for the load balancer and systemd watchdog."""

from __future__ import annotations

import sqlite3

from fastapi import APIRouter, Depends
from fastapi.responses import JSONResponse

from stockroom import __version__
from stockroom.db import schema_version
from stockroom.routers import get_db
from stockroom.schema import MIGRATIONS

router = APIRouter(tags=["health"])


@router.get("/healthz")
def healthz() -> dict[str, str]:
    """The process is up. Does not touch the database."""
    return {"status": "ok", "version": __version__}


@router.get("/readyz")
def readyz(conn: sqlite3.Connection = Depends(get_db)) -> JSONResponse:
    """Ready to serve: the database answers and its schema is current."""
    expected = MIGRATIONS[-1][0]
    try:
        current = schema_version(conn)
    except sqlite3.Error as exc:
        return JSONResponse({"status": "unavailable", "error": str(exc)}, status_code=503)
    if current != expected:
        return JSONResponse(
            {"status": "migrations pending", "schema": current, "expected": expected},
            status_code=503,
        )
    return JSONResponse({"status": "ready", "schema": current})
