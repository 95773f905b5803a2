"""/auth: exchange a username and password for an API key; revoke keys."""

from __future__ import annotations

import logging
import sqlite3

from fastapi import APIRouter, Depends, status

from stockroom.auth import passwords
from stockroom.auth.api_keys import Principal, create_api_key, revoke_key
from stockroom.auth.dependencies import require_api_key
from stockroom.db import transaction
from stockroom.errors import AuthError, Forbidden
from stockroom.models import NewKeyRequest, NewKeyResponse
from stockroom.routers import get_db
from stockroom.settings import Settings, get_settings

log = logging.getLogger(__name__)
router = APIRouter(prefix="/auth", tags=["auth"])


def check_credentials(
    conn: sqlite3.Connection, username: str, password: str, settings: Settings
) -> sqlite3.Row:
    row = conn.execute("SELECT * FROM users WHERE username = ?", (username,)).fetchone()
    if row is None:
        passwords.verify_password(password, passwords.DUMMY_HASH)  # same timing as a real check
        raise AuthError("invalid username or password")
    if not passwords.verify_password(password, row["password_hash"]):
        raise AuthError("invalid username or password")
    # Upgrade old hashes transparently when the iteration count has been raised.
    if passwords.needs_rehash(row["password_hash"], settings.pbkdf2_iterations):
        with transaction(conn):
            conn.execute(
                "UPDATE users SET password_hash = ? WHERE id = ?",
                (passwords.hash_password(password, settings.pbkdf2_iterations), row["id"]),
            )
    return row


@router.post("/keys", response_model=NewKeyResponse, status_code=status.HTTP_201_CREATED)
def create_key(
    body: NewKeyRequest,
    conn: sqlite3.Connection = Depends(get_db),
    settings: Settings = Depends(get_settings),
) -> dict[str, object]:
    user = check_credentials(conn, body.username, body.password, settings)
    if "admin" in body.scopes and not user["is_admin"]:
        raise Forbidden("only admins can create admin keys")
    key, prefix = create_api_key(conn, user["id"], body.scopes, settings.api_key_pepper)
    log.info("API key %s created for %s", prefix, user["username"])
    return {"key": key, "prefix": prefix, "scopes": sorted(set(body.scopes))}


@router.delete("/keys/{prefix}", status_code=status.HTTP_204_NO_CONTENT)
def delete_key(
    prefix: str,
    conn: sqlite3.Connection = Depends(get_db),
    principal: Principal = Depends(require_api_key),
) -> None:
    owner = conn.execute("SELECT user_id FROM api_keys WHERE prefix = ?", (prefix,)).fetchone()
    if owner is not None and owner["user_id"] != principal.user_id and not principal.is_admin:
        raise Forbidden("you can only revoke your own keys")
    revoke_key(conn, prefix)
    log.info("API key %s revoked by %s", prefix, principal.username)
