from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from stockroom.app import create_app
from stockroom.auth import passwords
from stockroom.auth.api_keys import create_api_key
from stockroom.db import connect, init_db
from stockroom.settings import Settings

TEST_PEPPER = "test-pepper"


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return Settings(
        env="test",
        db_path=tmp_path / "stockroom.db",
        api_key_pepper=TEST_PEPPER,
        pbkdf2_iterations=10_000,  # fast tests; production uses 600k
        reservation_ttl_minutes=15,
        low_stock_threshold=5,
        jobs_enabled=False,
        smtp_host=None,
        smtp_port=25,
        alert_email=None,
        log_level="WARNING",
    )


@pytest.fixture
def conn(settings: Settings) -> Iterator[sqlite3.Connection]:
    init_db(settings.db_path)
    connection = connect(settings.db_path)
    yield connection
    connection.close()


@pytest.fixture
def user_id(conn: sqlite3.Connection, settings: Settings) -> int:
    cursor = conn.execute(
        "INSERT INTO users (username, password_hash, is_admin) VALUES (?, ?, 0)",
        ("alice", passwords.hash_password("correct horse battery", settings.pbkdf2_iterations)),
    )
    return int(cursor.lastrowid or 0)


@pytest.fixture
def api_key(conn: sqlite3.Connection, user_id: int) -> str:
    key, _prefix = create_api_key(conn, user_id, ["read", "write"], TEST_PEPPER)
    return key


@pytest.fixture
def client(settings: Settings, conn: sqlite3.Connection) -> Iterator[TestClient]:
    with TestClient(create_app(settings)) as test_client:
        yield test_client
