"""API keys: generation, storage as peppered hashes, lookup and revocation.

A key looks like ``sr_<prefix>_<secret>``. Only the prefix is stored in clear (to find the
row and to show users which key is which); the whole key is stored as
HMAC-SHA256(pepper, key), so a leaked database does not leak usable keys.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import sqlite3
from dataclasses import dataclass
from datetime import UTC, datetime

from stockroom.db import transaction
from stockroom.errors import AuthError, NotFound

KEY_PREFIX = "sr"
SCOPES = frozenset({"read", "write", "admin"})


@dataclass(frozen=True)
class Principal:
    """Who is calling: the user behind an API key and what the key may do."""

    user_id: int
    username: str
    is_admin: bool
    key_prefix: str
    scopes: frozenset[str]

    def can(self, scope: str) -> bool:
        return scope in self.scopes or "admin" in self.scopes


def hash_key(key: str, pepper: str) -> str:
    return hmac.new(pepper.encode("utf-8"), key.encode("utf-8"), hashlib.sha256).hexdigest()


def generate_key() -> tuple[str, str]:
    """A new random key and its public prefix."""
    prefix = secrets.token_hex(4)
    return f"{KEY_PREFIX}_{prefix}_{secrets.token_urlsafe(32)}", prefix


def create_api_key(
    conn: sqlite3.Connection, user_id: int, scopes: list[str], pepper: str
) -> tuple[str, str]:
    unknown = set(scopes) - SCOPES
    if unknown:
        raise ValueError(f"unknown scopes: {', '.join(sorted(unknown))}")
    key, prefix = generate_key()
    with transaction(conn):
        conn.execute(
            "INSERT INTO api_keys (user_id, prefix, key_hash, scopes) VALUES (?, ?, ?, ?)",
            (user_id, prefix, hash_key(key, pepper), " ".join(sorted(set(scopes)))),
        )
    return key, prefix


def authenticate_key(conn: sqlite3.Connection, key: str, pepper: str) -> Principal:
    """The principal for a presented key, or AuthError."""
    parts = key.split("_", 2)
    if len(parts) != 3 or parts[0] != KEY_PREFIX:
        raise AuthError("malformed API key")
    row = conn.execute(
        "SELECT k.id, k.prefix, k.key_hash, k.scopes, k.revoked_at, u.id AS user_id,"
        " u.username, u.is_admin FROM api_keys k JOIN users u ON u.id = k.user_id"
        " WHERE k.prefix = ?",
        (parts[1],),
    ).fetchone()
    # Compare even when the row is missing so timing does not reveal valid prefixes.
    expected = row["key_hash"] if row else hash_key("missing", pepper)
    if not hmac.compare_digest(expected, hash_key(key, pepper)) or row is None:
        raise AuthError("invalid API key")
    if row["revoked_at"]:
        raise AuthError("API key has been revoked")
    conn.execute(
        "UPDATE api_keys SET last_used_at = ? WHERE id = ?",
        (datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"), row["id"]),
    )
    return Principal(
        user_id=row["user_id"],
        username=row["username"],
        is_admin=bool(row["is_admin"]),
        key_prefix=row["prefix"],
        scopes=frozenset(row["scopes"].split()),
    )


def revoke_key(conn: sqlite3.Connection, prefix: str) -> None:
    with transaction(conn):
        cursor = conn.execute(
            "UPDATE api_keys SET revoked_at = ? WHERE prefix = ? AND revoked_at IS NULL",
            (datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"), prefix),
        )
    if cursor.rowcount == 0:
        raise NotFound(f"no active key with prefix {prefix}")
