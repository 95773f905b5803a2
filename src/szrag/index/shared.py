"""One index for the whole server, read by many questions at once while the watcher refreshes it.

An sqlite3 connection belongs to the thread that opened it, and a question reads the index with
many statements (file entries, chunk rows, chunk texts, code records); a refresh committing
between two of them would mix two versions of the index. :class:`SharedIndex` is an
:class:`~szrag.index.Index` whose ``conn`` depends on who asks:

* an asyncio task (every request and every answer runs as one) gets a connection of its own
  with a read transaction opened at its first query and ended when the task finishes: one
  question sees one snapshot of the index from start to end, whatever it awaits meanwhile;
* any other thread (worker threads, the watcher's refresh thread) gets one connection per
  thread in autocommit mode, as a plain Index has.

WAL mode lets these readers run while the watcher's thread writes; a snapshot held by a long
answer delays only the checkpoint, never the writer. Task connections return to a small pool.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import sqlite3
import threading
from pathlib import Path
from typing import cast

from szrag.base.config import RepoConfig
from szrag.base.errors import IndexStoreError
from szrag.index import Index, load_index, store
from szrag.index.build import rebuild_damaged

MAX_IDLE_CONNECTIONS = 8

log = logging.getLogger("szrag.index")


class SharedIndex(Index):
    """An Index whose connection is per asyncio task (one snapshot each) or per thread."""

    reads_from_any_thread = True

    def __init__(self, root: Path, config: RepoConfig) -> None:
        self._local = threading.local()
        self._lock = threading.Lock()
        self._connections: list[sqlite3.Connection] = []
        self._idle: list[sqlite3.Connection] = []
        self._by_task: dict[asyncio.Task[object], sqlite3.Connection] = {}
        # worker threads come and go (anyio's exit after idling): their connections are
        # closed once they are gone, so bursts of work cannot pile up open files
        self._by_thread: dict[threading.Thread, sqlite3.Connection] = {}
        self._closed = False
        # bumped when a damaged database is replaced: connections of an older epoch read the
        # file that was set aside, and are closed and reopened on their next use
        self._epoch = 0
        self._epoch_of: dict[int, int] = {}
        self._healing = threading.Lock()
        self.health = "ok"  # ok, damaged or rebuilding
        self.heals = 0
        self.last_damage: str | None = None
        self._files: tuple[str, list[store.StoredFile]] | None = None
        super().__init__(root, config, cast(sqlite3.Connection, None))
        # the file the connections of this epoch read: another process (the CLI) may set a
        # damaged one aside and build a new one in its place, which is then taken as it is
        self._file_id = _file_id(store.index_path(root))

    @property
    def conn(self) -> sqlite3.Connection:
        """The current task's snapshot connection, or this thread's connection."""
        if self._closed:
            raise IndexStoreError("the index is closed")
        task = _current_task()
        if task is not None:
            return self._task_connection(task)
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is not None and self._epoch_of.get(id(conn)) != self._epoch:
            self._discard(conn)  # this thread's own connection to the set-aside file
            conn = None
        if conn is None:
            self._close_departed()
            conn = self._open()
            self._local.conn = conn
            with self._lock:
                self._by_thread[threading.current_thread()] = conn
        return conn

    @conn.setter
    def conn(self, value: sqlite3.Connection) -> None:
        if value is not None:
            raise AttributeError("a SharedIndex opens its own connections")

    def files(self) -> list[store.StoredFile]:
        """Every indexed file with its code record, read once per index generation.

        A question reads the rows of the files it finds (their units, their records); a
        server answering many questions keeps every row, deflated, instead of reading them
        from SQLite every time.
        """
        generation = self.generation()
        cached = self._files
        if cached is not None and cached[0] == generation:
            return list(cached[1])
        # a refresh changes a few files: the others keep the tokens and records decoded for
        # the generation before (decoding every record again took seconds on a large index)
        earlier = {} if cached is None else {file.path: file for file in cached[1]}
        files = store.files_reusing(self.conn, earlier)
        self._files = (generation, files)
        return list(files)

    @property
    def connection_count(self) -> int:
        """How many connections are open (task pool and threads)."""
        with self._lock:
            return len(self._connections)

    @property
    def active_snapshots(self) -> int:
        """How many tasks hold a snapshot now."""
        with self._lock:
            return len(self._by_task)

    def close(self) -> None:
        """Close every connection; later use raises IndexStoreError.

        Call it once nothing reads or refreshes any more (the server closes it after the
        watcher and the requests have stopped): SQLite must not lose a connection mid-call.
        """
        with self._lock:
            self._closed = True
            connections, self._connections = self._connections, []
            self._idle.clear()
            self._by_task.clear()
            self._by_thread.clear()
        for conn in connections:
            conn.close()

    def __enter__(self) -> SharedIndex:
        return self

    # Connections ---------------------------------------------------------------------

    def heal(self, reason: str) -> bool:
        """Replace a damaged database: set it aside, rebuild, then move every connection to
        the new file. Readers keep the old file meanwhile. A healthy database another process
        (the CLI) already put in the damaged one's place is read as it is, not rebuilt again.
        False when a heal is running."""
        if not self._healing.acquire(blocking=False):
            return False
        try:
            path = store.index_path(self.root)
            replaced = _file_id(path) != self._file_id
            if replaced and _healthy(path):
                log.warning("the index was replaced by a healthy one; reading that instead")
            else:
                self.health, self.last_damage = "rebuilding", reason
                rebuild_damaged(self.root, self.config, reason)
                self.heals += 1
            self._file_id = _file_id(path)
            with self._lock:
                self._epoch += 1
                idle, self._idle = self._idle, []
            for conn in idle:
                self._discard(conn)
            self._files = None
            self.health = "ok"
            return True
        except Exception:
            self.health = "damaged"
            raise
        finally:
            self._healing.release()

    def mark_damaged(self, reason: str) -> None:
        """Note that a read found the database damaged (``/healthz`` reports it)."""
        if self.health == "ok":
            self.health, self.last_damage = "damaged", reason

    def _discard(self, conn: sqlite3.Connection) -> None:
        with self._lock:
            self._epoch_of.pop(id(conn), None)
            if conn in self._connections:
                self._connections.remove(conn)
            for thread, owned in list(self._by_thread.items()):
                if owned is conn:
                    del self._by_thread[thread]
        with contextlib.suppress(sqlite3.Error):
            conn.close()

    def _close_departed(self) -> None:
        """Close the connections of threads that have ended (nobody can use them again)."""
        with self._lock:
            departed = [thread for thread in self._by_thread if not thread.is_alive()]
            closing = [self._by_thread.pop(thread) for thread in departed]
            for conn in closing:
                self._connections.remove(conn)
                self._epoch_of.pop(id(conn), None)
        for conn in closing:
            with contextlib.suppress(sqlite3.Error):
                conn.close()

    def _task_connection(self, task: asyncio.Task[object]) -> sqlite3.Connection:
        with self._lock:
            conn = self._by_task.get(task)
            if conn is not None:
                return conn
            conn = self._idle.pop() if self._idle else None
        if conn is None:
            conn = self._open()
        conn.execute("BEGIN")  # deferred: the snapshot is taken by the first read
        with self._lock:
            self._by_task[task] = conn
        task.add_done_callback(self._task_done)
        return conn

    def _task_done(self, task: asyncio.Task[object]) -> None:
        with self._lock:
            conn = self._by_task.pop(task, None)
            if conn is None or self._closed:
                return
        with contextlib.suppress(sqlite3.Error):
            if conn.in_transaction:
                conn.execute("COMMIT")
        with self._lock:
            current = self._epoch_of.get(id(conn)) == self._epoch
            if current and len(self._idle) < MAX_IDLE_CONNECTIONS and not self._closed:
                self._idle.append(conn)
                return
            self._epoch_of.pop(id(conn), None)
            if conn in self._connections:
                self._connections.remove(conn)
        conn.close()

    def _open(self) -> sqlite3.Connection:
        with self._lock:
            if self._closed:
                raise IndexStoreError("the index is closed")
            # check_same_thread=False so close() can close them all and a pooled connection
            # can serve the next task; one connection is never used by two callers at once.
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
            self._epoch_of[id(conn)] = self._epoch
            return conn


def _file_id(path: Path) -> tuple[int, int] | None:
    """The device and inode of ``path``, or None when it is missing."""
    try:
        found = os.stat(path)
    except OSError:
        return None
    return found.st_dev, found.st_ino


def _healthy(path: Path) -> bool:
    """Whether ``path`` holds a usable index that passes SQLite's quick check."""
    try:
        conn = store.connect_read_only(path)
    except sqlite3.Error:
        return False
    try:
        return store.check(conn) is None and conn.execute("PRAGMA quick_check").fetchall() == [
            ("ok",)
        ]
    except sqlite3.Error:
        return False
    finally:
        conn.close()


def _current_task() -> asyncio.Task[object] | None:
    try:
        return asyncio.current_task()
    except RuntimeError:  # no running event loop in this thread
        return None


def open_shared_index(root: Path | str) -> SharedIndex:
    """Build or refresh the index of ``root`` now, then share it across tasks and threads."""
    with load_index(root) as index:
        resolved, config = index.root, index.config
    return SharedIndex(resolved, config)
