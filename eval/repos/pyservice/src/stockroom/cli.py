"""The ``stockroom`` command: database set-up, users, API keys, jobs and the server.

stockroom init-db
stockroom create-user alice --admin
stockroom create-key alice --scope read --scope write
stockroom revoke-key 1a2b3c4d
stockroom run-jobs --once
stockroom serve --port 8080
"""

from __future__ import annotations

import argparse
import getpass
import sqlite3
import sys

from stockroom.auth import passwords
from stockroom.auth.api_keys import SCOPES, create_api_key, revoke_key
from stockroom.db import connect, init_db, transaction
from stockroom.errors import StockroomError
from stockroom.settings import Settings, SettingsError, get_settings


def _read_password() -> str:
    first = getpass.getpass("Password: ")
    if first != getpass.getpass("Repeat password: "):
        raise SystemExit("passwords do not match")
    passwords.check_strength(first)
    return first


def cmd_init_db(settings: Settings, _args: argparse.Namespace) -> int:
    version = init_db(settings.db_path)
    print(f"{settings.db_path}: schema version {version}")
    return 0


def cmd_create_user(settings: Settings, args: argparse.Namespace) -> int:
    password = _read_password()
    encoded = passwords.hash_password(password, settings.pbkdf2_iterations)
    conn = connect(settings.db_path)
    try:
        with transaction(conn):
            conn.execute(
                "INSERT INTO users (username, password_hash, is_admin) VALUES (?, ?, ?)",
                (args.username, encoded, int(args.admin)),
            )
    except sqlite3.IntegrityError:
        print(f"user {args.username} already exists", file=sys.stderr)
        return 1
    finally:
        conn.close()
    print(f"created {'admin ' if args.admin else ''}user {args.username}")
    return 0


def cmd_create_key(settings: Settings, args: argparse.Namespace) -> int:
    conn = connect(settings.db_path)
    try:
        user = conn.execute("SELECT id FROM users WHERE username = ?", (args.username,)).fetchone()
        if user is None:
            print(f"no user {args.username}", file=sys.stderr)
            return 1
        key, prefix = create_api_key(
            conn, user["id"], args.scope or ["read"], settings.api_key_pepper
        )
    finally:
        conn.close()
    print(f"prefix {prefix}\nkey    {key}\nStore the key now; it cannot be shown again.")
    return 0


def cmd_revoke_key(settings: Settings, args: argparse.Namespace) -> int:
    conn = connect(settings.db_path)
    try:
        revoke_key(conn, args.prefix)
    finally:
        conn.close()
    print(f"revoked {args.prefix}")
    return 0


def cmd_run_jobs(settings: Settings, args: argparse.Namespace) -> int:
    from stockroom.jobs import Scheduler, default_jobs
    from stockroom.logging_setup import configure_logging

    configure_logging(settings.log_level)
    scheduler = Scheduler(default_jobs(settings))
    if args.once:
        scheduler.run_pending()
        failed = [job for job in scheduler.status() if job["last_error"]]
        return 1 if failed else 0
    scheduler.run_forever()
    return 0


def cmd_serve(settings: Settings, args: argparse.Namespace) -> int:
    import uvicorn

    from stockroom.app import create_app

    uvicorn.run(create_app(settings), host=args.host, port=args.port, proxy_headers=True)
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="stockroom", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)

    sub.add_parser("init-db", help="create the database or apply pending migrations")

    user = sub.add_parser("create-user", help="create a user (prompts for the password)")
    user.add_argument("username")
    user.add_argument("--admin", action="store_true", help="may create admin keys")

    key = sub.add_parser("create-key", help="create an API key for a user")
    key.add_argument("username")
    key.add_argument("--scope", action="append", choices=sorted(SCOPES))

    revoke = sub.add_parser("revoke-key", help="revoke an API key by its prefix")
    revoke.add_argument("prefix")

    jobs = sub.add_parser("run-jobs", help="run the background jobs without the web server")
    jobs.add_argument("--once", action="store_true", help="run every job once and exit")

    serve = sub.add_parser("serve", help="run the HTTP API with uvicorn")
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=int, default=8080)
    return parser


COMMANDS = {
    "init-db": cmd_init_db,
    "create-user": cmd_create_user,
    "create-key": cmd_create_key,
    "revoke-key": cmd_revoke_key,
    "run-jobs": cmd_run_jobs,
    "serve": cmd_serve,
}


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        settings = get_settings()
        return COMMANDS[args.command](settings, args)
    except (SettingsError, StockroomError, passwords.WeakPasswordError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
