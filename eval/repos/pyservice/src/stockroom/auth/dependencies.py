"""FastAPI dependencies that authenticate requests and check scopes.

Clients send the key as ``X-API-Key: sr_...`` or ``Authorization: Bearer sr_...``.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable

from fastapi import Depends, Header

from stockroom.auth.api_keys import Principal, authenticate_key
from stockroom.errors import AuthError, Forbidden
from stockroom.routers import get_db
from stockroom.settings import Settings, get_settings


def _presented_key(x_api_key: str | None, authorization: str | None) -> str:
    if x_api_key:
        return x_api_key.strip()
    if authorization and authorization.lower().startswith("bearer "):
        return authorization[7:].strip()
    raise AuthError("missing API key")


def require_api_key(
    x_api_key: str | None = Header(default=None),
    authorization: str | None = Header(default=None),
    conn: sqlite3.Connection = Depends(get_db),
    settings: Settings = Depends(get_settings),
) -> Principal:
    return authenticate_key(conn, _presented_key(x_api_key, authorization), settings.api_key_pepper)


def require_scope(scope: str) -> Callable[[Principal], Principal]:
    """A dependency that also insists on ``scope`` (``admin`` implies every scope)."""

    def checker(principal: Principal = Depends(require_api_key)) -> Principal:
        if not principal.can(scope):
            raise Forbidden(f"this API key lacks the {scope!r} scope")
        return principal

    return checker
