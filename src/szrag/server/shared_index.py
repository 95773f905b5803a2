"""One index for the whole server, readable from any thread.

An sqlite3 connection belongs to the thread that opened it, while a server answers on its event
loop, in worker threads and in the watcher's refresh thread. :class:`SharedIndex` is an
:class:`~szrag.index.Index` whose ``conn`` is opened lazily once per thread, so every thread
reads through its own connection: WAL mode lets those readers run while the watcher's refresh
writes.

Retrieval reads with several statements (file entries, chunk rows, chunk texts); a refresh
committing between two of them would mix two versions of the index. On an event-loop thread
the first use of the connection in a loop step therefore opens a read transaction, released
by a callback that runs when the step ends: everything one step reads comes from one snapshot,
and no snapshot outlives the step that took it (so the writer is never held back for long).
"""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
import threading
from pathlib import Path
from typing import cast

from szrag.config import RepoConfig
from szrag.errors import IndexStoreError
from szrag.index import Index, load_index, store


class SharedIndex(Index):
    """An Index with one SQLite connection per thread, all closed together."""

    def __init__(self, root: Path, config: RepoConfig) -> None:
        self._local = threading.local()
        self._lock = threading.Lock()
        self._connections: list[sqlite3.Connection] = []
        self._closed = False
        self._files: tuple[str, list[store.StoredFile]] | None = None
        super().__init__(root, config, cast(sqlite3.Connection, None))

    @property
    def conn(self) -> sqlite3.Connection:
        """This thread's connection, opened on first use."""
        if self._closed:
            raise IndexStoreError("the index is closed")
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            conn = self._open()
            self._local.conn = conn
        _pin_snapshot(conn)
        return conn

    @conn.setter
    def conn(self, value: sqlite3.Connection) -> None:
        if value is not None:
            raise AttributeError("a SharedIndex opens its own connections")

    def files(self) -> list[store.StoredFile]:
        """Every indexed file with its code record, read once per index generation.

        The codebase context reads every file's record for each question; a server answering
        many questions keeps them instead of decoding them from SQLite every time.
        """
        generation = self.generation()
        cached = self._files
        if cached is not None and cached[0] == generation:
            return list(cached[1])
        files = super().files()
        self._files = (generation, files)
        return list(files)

    def _open(self) -> sqlite3.Connection:
        with self._lock:
            if self._closed:
                raise IndexStoreError("the index is closed")
            # check_same_thread=False only so close() can close every thread's connection;
            # each connection is still used by the thread that opened it alone.
            conn = sqlite3.connect(
                store.index_path(self.root),
                timeout=store.BUSY_TIMEOUT_MS / 1000,
                isolation_level=None,
                check_same_thread=False,
            )
            conn.execute(f"PRAGMA busy_timeout = {store.BUSY_TIMEOUT_MS}")
            conn.execute("PRAGMA foreign_keys = ON")
            conn.execute("PRAGMA synchronous = NORMAL")
            self._connections.append(conn)
            return conn

    def __enter__(self) -> SharedIndex:
        return self

    @property
    def connection_count(self) -> int:
        """How many threads have opened a connection."""
        with self._lock:
            return len(self._connections)

    def close(self) -> None:
        """Close every thread's connection; later use raises IndexStoreError.

        Call it once nothing reads or refreshes any more (the server closes it after the
        watcher and the requests have stopped): SQLite must not lose a connection mid-call.
        """
        with self._lock:
            self._closed = True
            connections, self._connections = self._connections, []
        for conn in connections:
            conn.close()


def _pin_snapshot(conn: sqlite3.Connection) -> None:
    """Read one snapshot until the current event-loop step ends (no loop: nothing to do)."""
    if conn.in_transaction:
        return
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        return
    conn.execute("BEGIN")  # deferred: the snapshot is taken by the first read
    loop.call_soon(_release_snapshot, conn)


def _release_snapshot(conn: sqlite3.Connection) -> None:
    with contextlib.suppress(sqlite3.Error):
        if conn.in_transaction:
            conn.execute("COMMIT")


def open_shared_index(root: Path | str) -> SharedIndex:
    """Build or refresh the index of ``root`` now, then share it across threads."""
    with load_index(root) as index:
        resolved, config = index.root, index.config
    return SharedIndex(resolved, config)
