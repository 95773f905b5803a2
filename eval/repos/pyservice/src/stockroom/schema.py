"""Schema migrations, applied in order by ``db.migrate``. Never edit a released migration;
add a new one."""

from __future__ import annotations

Migration = tuple[int, str, tuple[str, ...]]

MIGRATIONS: tuple[Migration, ...] = (
    (
        1,
        "initial",
        (
            """CREATE TABLE items (
                id INTEGER PRIMARY KEY,
                sku TEXT NOT NULL UNIQUE,
                name TEXT NOT NULL,
                quantity INTEGER NOT NULL DEFAULT 0 CHECK (quantity >= 0),
                reserved INTEGER NOT NULL DEFAULT 0 CHECK (reserved >= 0),
                location TEXT,
                created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now')),
                updated_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now'))
            )""",
            """CREATE TABLE users (
                id INTEGER PRIMARY KEY,
                username TEXT NOT NULL UNIQUE,
                password_hash TEXT NOT NULL,
                is_admin INTEGER NOT NULL DEFAULT 0,
                created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now'))
            )""",
            """CREATE TABLE api_keys (
                id INTEGER PRIMARY KEY,
                user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                prefix TEXT NOT NULL UNIQUE,
                key_hash TEXT NOT NULL,
                scopes TEXT NOT NULL,
                created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now')),
                last_used_at TEXT,
                revoked_at TEXT
            )""",
        ),
    ),
    (
        2,
        "reservations",
        (
            """CREATE TABLE reservations (
                id INTEGER PRIMARY KEY,
                item_id INTEGER NOT NULL REFERENCES items(id),
                quantity INTEGER NOT NULL CHECK (quantity > 0),
                holder TEXT NOT NULL,
                status TEXT NOT NULL DEFAULT 'held'
                    CHECK (status IN ('held', 'confirmed', 'released', 'expired')),
                expires_at TEXT NOT NULL,
                created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now'))
            )""",
            "CREATE INDEX reservations_due ON reservations(status, expires_at)",
        ),
    ),
    (
        3,
        "stock_alerts",
        (
            """CREATE TABLE stock_alerts (
                item_id INTEGER PRIMARY KEY REFERENCES items(id) ON DELETE CASCADE,
                last_sent_at TEXT NOT NULL,
                available_then INTEGER NOT NULL
            )""",
        ),
    ),
)
