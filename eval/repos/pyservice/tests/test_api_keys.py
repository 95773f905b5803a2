import sqlite3

import pytest

from stockroom.auth.api_keys import authenticate_key, create_api_key, revoke_key
from stockroom.errors import AuthError

from .conftest import TEST_PEPPER


def test_created_key_authenticates(conn: sqlite3.Connection, user_id: int) -> None:
    key, prefix = create_api_key(conn, user_id, ["read"], TEST_PEPPER)
    principal = authenticate_key(conn, key, TEST_PEPPER)
    assert principal.username == "alice"
    assert principal.key_prefix == prefix
    assert principal.can("read") and not principal.can("write")


def test_key_is_not_stored_in_clear(conn: sqlite3.Connection, user_id: int) -> None:
    key, prefix = create_api_key(conn, user_id, ["read"], TEST_PEPPER)
    stored = conn.execute("SELECT key_hash FROM api_keys WHERE prefix = ?", (prefix,)).fetchone()
    assert key not in stored["key_hash"]


def test_wrong_pepper_rejects(conn: sqlite3.Connection, user_id: int) -> None:
    key, _ = create_api_key(conn, user_id, ["read"], TEST_PEPPER)
    with pytest.raises(AuthError):
        authenticate_key(conn, key, "other-pepper")


def test_revoked_key_rejected(conn: sqlite3.Connection, user_id: int) -> None:
    key, prefix = create_api_key(conn, user_id, ["read"], TEST_PEPPER)
    revoke_key(conn, prefix)
    with pytest.raises(AuthError, match="revoked"):
        authenticate_key(conn, key, TEST_PEPPER)


def test_unknown_scope_rejected(conn: sqlite3.Connection, user_id: int) -> None:
    with pytest.raises(ValueError):
        create_api_key(conn, user_id, ["superuser"], TEST_PEPPER)
