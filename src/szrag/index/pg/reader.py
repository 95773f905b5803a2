"""``PostgresIndex``: one published repository read from PostgreSQL, as an ``IndexStore``.

Every read is of the repository's latest complete generation (the one ``szrag_repositories``
names), inside a snapshot: ``reading()`` holds one repeatable-read, read-only transaction on a
pooled connection of its thread for several reads, and a read outside one takes a snapshot of
its own. No checkout is needed: texts, lines, names and edges all come from the database. The
rows are the SQLite index's, copied, so every answer equals the SQLite store's on that tree.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar, cast

import numpy as np
import numpy.typing as npt
import psycopg
from psycopg_pool import ConnectionPool

from szrag.base.config import RepoConfig
from szrag.base.errors import IndexStoreError, StoreUnavailable
from szrag.base.text import CODE_TYPES, path_tokens
from szrag.code.model import Definition
from szrag.code.scoring import lookup_words
from szrag.code.units import Unit
from szrag.index import store
from szrag.index.collect import Skip
from szrag.index.handle import FileEntry, RefreshReport, stitched_lines
from szrag.index.memory import MemoryMode
from szrag.index.pg.schema import (
    check_schema,
    checked_url,
    config_of,
    connect,
    first_line,
    shown_url,
    unreachable,
)
from szrag.index.pg.search import PostgresFullText
from szrag.index.protocol import (
    ChunkRow,
    ChunkWords,
    FullTextSearch,
    NamedLine,
    TokenHolders,
    TokenSet,
    WordDefinition,
)

T = TypeVar("T")
POOL_SIZE = 4
# A replica must answer, or fail, within a bounded time whatever its database does: a read
# waits this long for a pooled connection (the pool reconnecting meanwhile), a statement runs
# this long at most, and a connection whose server stopped answering is given up after
# TCP_GIVE_UP_MS. Each pooled connection is checked as it is handed out, so one the server
# closed (a restart) is replaced rather than failing a question.
POOL_WAIT_SECONDS = 5.0
STATEMENT_TIMEOUT_MS = 30_000
TCP_GIVE_UP_MS = 10_000
RECONNECT_SECONDS = 10.0  # one reconnection attempt's span; the next read starts another
DERIVED_GENERATIONS = 2
_FILES = "id, path, size, mtime_ns, ctime_ns, inode, sha256, type, tokens, code"
_CHUNK_ROW = 'c.id, f.path, c.seq, c.start, c."end", f.type, c.heading'
_SAME = "f.repository = c.repository AND f.id = c.file_id AND c.repository = %(r)s"
_SAME_NAMES = "f.repository = n.repository AND f.id = n.file_id AND n.repository = %(r)s"


@dataclass(frozen=True, slots=True)
class GenerationRecord:
    """What a generation's row says of it."""

    generation: int
    root: str
    index_schema: int
    config: RepoConfig
    chunks: int
    full_text_rows: int
    column_totals: tuple[int, ...]


FileDefinitions = tuple[str, tuple[Definition, ...]]  # a file's path and its definitions


def _path_of(file: store.StoredFile) -> str:
    return file.path


def _first(held: FileDefinitions) -> str:
    return held[0]


@dataclass(frozen=True, slots=True)
class Changes:
    """What publishes rewrote between two generations: file ids, and chunk ids ascending."""

    files: frozenset[int]
    chunks: npt.NDArray[np.int64]


def published(url: str) -> list[str]:
    """The names of the repositories published to the store at ``url``, by name
    (IndexStoreError when it holds no szrag index, StoreUnavailable when it cannot be
    reached)."""
    with connect(url, autocommit=True) as conn:
        check_schema(conn, url, "NAME")
        rows = conn.execute("SELECT name FROM szrag_repositories ORDER BY name").fetchall()
    return [row[0] for row in rows]


class _Snapshot(threading.local):
    conn: psycopg.Connection[Any] | None = None
    generation: int | None = None


class PostgresIndex:
    """One repository's index in a PostgreSQL store."""

    reads_from_any_thread = True  # a pool: each thread reads over a connection of its own
    read_errors: tuple[type[Exception], ...] = (psycopg.Error,)

    def __init__(self, url: str, repository: str, *, pool_size: int = POOL_SIZE) -> None:
        self.url = checked_url(url)
        self.repository = repository
        self.last_report = RefreshReport()
        self.read_only = True  # written only by publishing
        with connect(url, autocommit=True) as probe:  # a clear error before any pool starts
            check_schema(probe, url, repository)
        self._pool: ConnectionPool[psycopg.Connection[Any]] = ConnectionPool(
            url,
            min_size=1,
            max_size=pool_size,
            kwargs={
                "autocommit": True,
                "connect_timeout": max(1, round(POOL_WAIT_SECONDS)),
                "options": f"-c statement_timeout={STATEMENT_TIMEOUT_MS}",
                "keepalives": 1,
                "keepalives_idle": 5,
                "keepalives_interval": 2,
                "keepalives_count": 3,
                "tcp_user_timeout": TCP_GIVE_UP_MS,
            },
            open=False,
            name=f"szrag-{repository}",
            timeout=POOL_WAIT_SECONDS,
            reconnect_timeout=RECONNECT_SECONDS,
            check=ConnectionPool.check_connection,
        )
        try:
            self._pool.open(wait=True, timeout=30)
        except psycopg.Error as error:
            raise unreachable(url, error) from error
        self._local = _Snapshot()
        self._memory = MemoryMode()
        self._views_lock = threading.Lock()
        self._derived: dict[int, dict[str, object]] = {}
        self._carried: dict[str, object] = {}
        self._entries: tuple[int, list[FileEntry]] | None = None
        try:
            first = self.record()
        except BaseException:
            self.close()
            raise
        self.root = Path(first.root)
        self.config = first.config

    # --- the store's place and snapshots ------------------------------------------------------

    @property
    def location(self) -> str:
        """The store's URL (without its password) and the repository's name."""
        return f"{shown_url(self.url)} (repository {self.repository})"

    @property
    def in_memory(self) -> bool:
        """Whether readers may keep in-memory views of this index."""
        return self._memory.active()

    def keep_in_memory(self, enabled: bool = True) -> None:
        """Let readers serve from in-memory views (rebuilt when a new generation is read)."""
        self._memory.enabled = enabled

    def warming(self) -> AbstractContextManager[None]:
        """Keep views in memory in the calling thread alone while it builds a long-running
        face's first views; the other threads read from the store until ``keep_in_memory``."""
        return self._memory.warming()

    def drop_views(self) -> None:
        """Forget every view kept in memory; they are built again on next use."""
        with self._views_lock:
            self._derived.clear()
            self._carried.clear()
        self._entries = None

    @contextmanager
    def reading(self) -> Iterator[PostgresIndex]:
        """One consistent snapshot for several reads (per thread; nests): every read in it
        is of the generation the first one found, however many publishes commit meanwhile.
        A server that cannot be reached, or drops the connection, or takes too long, is
        StoreUnavailable (the pool reconnects by itself for the next snapshot)."""
        local = self._local
        if local.conn is not None:
            yield self
            return
        try:
            with self._memory.reader(), self._pool.connection() as conn, conn.transaction():
                conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
                local.conn, local.generation = conn, None
                try:
                    yield self
                finally:
                    local.conn, local.generation = None, None
        except psycopg.OperationalError as error:  # a pool timeout, a lost server, a timeout
            raise StoreUnavailable(
                f"the PostgreSQL store at {shown_url(self.url)} cannot be read now"
                f" ({first_line(error)}); ask again when it is back"
            ) from error

    @contextmanager
    def snapshot(self) -> Iterator[tuple[psycopg.Connection[Any], int]]:
        """The connection and generation of this thread's snapshot (one of its own when
        none is open)."""
        with self.reading():
            local = self._local
            assert local.conn is not None
            if local.generation is None:
                local.generation = self._latest(local.conn)
            yield local.conn, local.generation

    def _latest(self, conn: psycopg.Connection[Any]) -> int:
        row = conn.execute(
            "SELECT generation FROM szrag_repositories WHERE name = %s", (self.repository,)
        ).fetchone()
        if row is None:
            raise IndexStoreError(
                f"no repository {self.repository!r} is published in {shown_url(self.url)};"
                f" publish it with `szrag index --store URL --repo {self.repository}=PATH`"
            )
        return int(row[0])

    def generation(self) -> str:
        """The generation read: it changes every time a publish commits."""
        with self.snapshot() as (_, generation):
            return str(generation)

    def record(self) -> GenerationRecord:
        """The current generation's row (its configuration, root and full-text totals)."""
        with self.snapshot() as (conn, generation):

            def read() -> GenerationRecord:
                row = conn.execute(
                    "SELECT root, index_schema, config, chunks, full_text_rows, column_totals"
                    " FROM szrag_generations WHERE repository = %s AND generation = %s",
                    (self.repository, generation),
                ).fetchone()
                if row is None:
                    raise IndexStoreError(f"generation {generation} of {self.location} is gone")
                if row[1] != store.SCHEMA_VERSION:
                    raise IndexStoreError(
                        f"{self.location} was published by a szrag of index schema {row[1]}"
                        f" (this one reads {store.SCHEMA_VERSION}); publish it again"
                    )
                return GenerationRecord(
                    generation, row[0], row[1], config_of(row[2]), row[3], row[4], tuple(row[5])
                )

            found = self.derived("pg.generation", read)
        self.config = found.config
        return found

    def changes_since(self, generation: int) -> Changes | None:
        """The files and chunks the publishes since ``generation`` rewrote (removed or
        wrote), up to the generation read; None when one of them wrote every row or its
        record is gone (a view is then built again, not carried)."""
        with self.snapshot() as (_, current):
            if generation >= current:
                return (
                    Changes(frozenset(), np.zeros(0, dtype=np.int64))
                    if generation == current
                    else None
                )
            rows = self._rows(
                "SELECT generation, changed_files, changed_chunks FROM szrag_generations"
                " WHERE repository = %(r)s AND generation > %(since)s AND generation <= %(g)s",
                {"since": generation},
            )
        if len(rows) != current - generation or any(row[1] is None for row in rows):
            return None
        files = frozenset(file_id for row in rows for file_id in row[1])
        chunks = np.unique(np.array([chunk for row in rows for chunk in row[2]], dtype=np.int64))
        return Changes(files, chunks)

    def carried_view(
        self, key: str, whole: Callable[[], T], updated: Callable[[T, Changes], T]
    ) -> T:
        """The view ``key`` of this generation: the one a last generation kept (``carry``)
        brought up to date over the files and chunks rewritten since (``updated``), or
        ``whole()`` when the records do not say what they were."""
        with self.snapshot() as (_, generation):
            earlier: tuple[int, T] | None = self.carried(key, None)
            if earlier is not None and earlier[0] == generation:
                return earlier[1]
            changes = self.changes_since(earlier[0]) if earlier is not None else None
            value = whole() if earlier is None or changes is None else updated(earlier[1], changes)
            self.carry(key, (generation, value))
            return value

    def derived(self, key: str, compute: Callable[[], T]) -> T:
        """``compute()``, remembered until a new generation is read."""
        with self.snapshot() as (_, generation):
            with self._views_lock:
                views = self._derived.setdefault(generation, {})
                while len(self._derived) > DERIVED_GENERATIONS:
                    self._derived.pop(min(self._derived))
                if key in views:
                    return cast(T, views[key])
            with self._memory.building():
                value = compute()
            with self._views_lock:
                return cast(T, views.setdefault(key, value))

    def built(self, key: str) -> object | None:
        """The view ``key`` of the current generation when a thread has built it already
        (``derived``), else None: what a question read from the store may still use."""
        with self.snapshot() as (_, generation), self._views_lock:
            return self._derived.get(generation, {}).get(key)

    def carry(self, key: str, value: object) -> None:
        """Keep ``value`` for the next build of a view."""
        self._carried[key] = value

    def carried(self, key: str, default: T) -> T:
        """What the last build of a view kept with ``carry``, or ``default``."""
        return cast(T, self._carried.get(key, default))

    def _rows(self, sql: str, values: dict[str, Any] | None = None) -> list[tuple[Any, ...]]:
        """The rows of ``sql`` in this thread's snapshot; ``%(r)s`` is the repository (and
        ``%(g)s`` the generation read, which a repository's rows no longer carry)."""
        with self.snapshot() as (conn, generation):
            bound = {"r": self.repository, "g": generation, **(values or {})}
            return conn.execute(sql, bound).fetchall()

    # --- files ---------------------------------------------------------------------------------

    def meta(self) -> dict[str, str]:
        """The SQLite index's meta values, as published."""
        rows = self._rows("SELECT key, value FROM szrag_meta WHERE repository = %(r)s")
        return {key: value for key, value in rows}

    def counts(self) -> dict[str, int]:
        """Row counts of files, chunks, images, edges and skipped files."""
        found: dict[str, int] = {}
        for table in ("files", "chunks", "images", "edges", "skipped"):
            row = self._rows(f"SELECT count(*) FROM szrag_{table} WHERE repository = %(r)s")
            found[table] = int(row[0][0])
        return found

    def file_entries(self) -> list[FileEntry]:
        """Every indexed file's path facts, by path (kept until the generation changes)."""
        with self.snapshot() as (_, generation):
            if self._entries is not None and self._entries[0] == generation:
                return self._entries[1]
            entries = [
                FileEntry(file_id, path, path.lower(), kind)
                for file_id, path, kind in self._rows(
                    "SELECT id, path, type FROM szrag_files WHERE repository = %(r)s ORDER BY path"
                )
            ]
            self._entries = (generation, entries)
            return entries

    def files(self) -> list[store.StoredFile]:
        """Every indexed file with its token set and code record, by path."""
        return [
            store._file_from_row(row)
            for row in self._rows(
                f"SELECT {_FILES} FROM szrag_files WHERE repository = %(r)s ORDER BY path"
            )
        ]

    def files_by_path(self) -> dict[str, store.StoredFile]:
        """Every indexed file by path (a view: not to be changed by its readers); a new
        generation's made from the last one's and the files the publishes since rewrote."""
        return self.derived("files.by_path", self._files_by_path)

    def _files_by_path(self) -> dict[str, store.StoredFile]:
        def updated(
            earlier: dict[str, store.StoredFile], changes: Changes
        ) -> dict[str, store.StoredFile]:
            kept = [file for file in earlier.values() if file.id not in changes.files]
            rewritten = [
                store._file_from_row(row)
                for row in self._rows(
                    f"SELECT {_FILES} FROM szrag_files"
                    " WHERE repository = %(r)s AND id = ANY(%(ids)s)",
                    {"ids": sorted(changes.files)},
                )
            ]
            return {file.path: file for file in sorted([*kept, *rewritten], key=_path_of)}

        return self.carried_view(
            "pg.files", lambda: {file.path: file for file in self.files()}, updated
        )

    def get_file(self, path: str) -> store.StoredFile | None:
        """One indexed file by relative path (from ``files_by_path`` when kept in memory)."""
        if self.in_memory:
            return self.files_by_path().get(path)
        rows = self._rows(
            f"SELECT {_FILES} FROM szrag_files WHERE repository = %(r)s AND path = %(path)s",
            {"path": path},
        )
        return store._file_from_row(rows[0]) if rows else None

    def has_file(self, path: str) -> bool:
        """Whether ``path`` is indexed."""
        if self.in_memory:
            return path in self.files_by_path()
        return bool(
            self._rows(
                "SELECT 1 FROM szrag_files WHERE repository = %(r)s AND path = %(path)s",
                {"path": path},
            )
        )

    def file_tokens(self, paths: Sequence[str]) -> dict[str, TokenSet]:
        """The distinct tokens of each of ``paths`` that is indexed."""
        if self.in_memory:
            from szrag.index.memory import TokenMemory  # a one-shot command keeps no views

            recent = self.derived("files.tokens.recent", TokenMemory)
            return dict(recent.joined(self.files_by_path(), paths))
        rows = self._rows(
            "SELECT path, tokens FROM szrag_files"
            " WHERE repository = %(r)s AND path = ANY(%(paths)s)",
            {"paths": list(paths)},
        )
        return {path: store.unpack(joined) for path, joined in rows}

    def code_records(self) -> list[tuple[str, dict[str, Any]]]:
        """(path, code record) of every file that has one, by path."""
        rows = self._rows(
            "SELECT path, code FROM szrag_files WHERE repository = %(r)s"
            " AND code IS NOT NULL ORDER BY path"
        )
        return [(path, store.unpack_json(code)) for path, code in rows]

    def definitions(self) -> list[tuple[str, Definition]]:
        """(path, definition) of every code record's definitions, by path, each record's
        in its order. Kept in memory, a new generation's are the last one's but for the
        files the publishes since rewrote."""
        if not self.in_memory:
            return [
                (path, item)
                for path, items in self._definitions_by_file(None).values()
                for item in items
            ]

        def updated(
            earlier: dict[int, FileDefinitions], changes: Changes
        ) -> dict[int, FileDefinitions]:
            found = {
                file_id: held for file_id, held in earlier.items() if file_id not in changes.files
            }
            found.update(self._definitions_by_file(changes.files))
            return found

        by_file = self.carried_view(
            "pg.definitions", lambda: self._definitions_by_file(None), updated
        )
        return [
            (path, item) for path, items in sorted(by_file.values(), key=_first) for item in items
        ]

    def _definitions_by_file(self, file_ids: frozenset[int] | None) -> dict[int, FileDefinitions]:
        """The definitions of each file of ``file_ids`` (None: every file) that has any, by
        file id, in path order, each record's in its order."""
        only = "" if file_ids is None else " AND d.file_id = ANY(%(ids)s)"
        rows = self._rows(
            "SELECT d.file_id, f.path, d.name, d.kind, d.line, d.end_line, d.container"
            " FROM szrag_definitions d, szrag_files f"
            " WHERE f.repository = d.repository AND f.id = d.file_id AND d.repository = %(r)s"
            f"{only} ORDER BY f.path, d.seq",
            {"ids": sorted(file_ids or ())},
        )
        grouped: dict[int, tuple[str, list[Definition]]] = {}
        for (file_id, path), item in store.definitions_of(
            ((row[0], row[1]), row[2:]) for row in rows
        ):
            grouped.setdefault(file_id, (path, []))[1].append(item)
        return {file_id: (path, tuple(items)) for file_id, (path, items) in grouped.items()}

    def definitions_by_words(
        self, words: Iterable[str], prefixes: Iterable[str]
    ) -> list[WordDefinition]:
        """The definitions whose name has a lookup word among ``words`` or beginning with one
        of ``prefixes``, a row for each such word, by path, record order and word (worked out from
        every definition: a replica answers from views it keeps in memory)."""
        wanted = frozenset(words)
        starts = tuple(prefixes)
        found: list[WordDefinition] = []
        seq = 0
        last = None
        for path, item in self.definitions():
            seq = seq + 1 if path == last else 0
            last = path
            for word in sorted(lookup_words(item.name)):
                if word in wanted or (starts and word.startswith(starts)):
                    found.append(WordDefinition(word, path, seq, item))
        return found

    def code_files_holding(self, tokens: Iterable[str]) -> TokenHolders:
        """Every code file's path and, per token of ``tokens``, the files holding it in their
        tokens and in their path's (worked out from every file's tokens: a replica answers
        from views it keeps in memory)."""
        wanted = frozenset(tokens)
        code = [file for file in self.files() if file.type in CODE_TYPES]
        in_tokens: dict[str, list[int]] = {}
        in_path: dict[str, list[int]] = {}
        for number, file in enumerate(code):
            for token in wanted & file.tokens:
                in_tokens.setdefault(token, []).append(number)
            for token in wanted & path_tokens(file.path):
                in_path.setdefault(token, []).append(number)
        return TokenHolders(
            tuple(file.path for file in code),
            {token: tuple(numbers) for token, numbers in in_tokens.items()},
            {token: tuple(numbers) for token, numbers in in_path.items()},
        )

    def route_rows(self) -> list[tuple[str, str]]:
        """(path, routes as JSON) of every file whose code record has routes, by path."""
        rows = self._rows(
            "SELECT path, routes FROM szrag_files WHERE repository = %(r)s"
            " AND routes IS NOT NULL ORDER BY path"
        )
        return [(path, routes) for path, routes in rows]

    def environment_reads(self) -> list[tuple[str, str, int]]:
        """(path, name, line) of every read of an environment variable, by path, each file's
        in its record's order."""
        rows = self._rows(
            "SELECT path, environment FROM szrag_files WHERE repository = %(r)s"
            " AND environment IS NOT NULL ORDER BY path"
        )
        return store.environment_reads((path, found) for path, found in rows)

    def image_paths(self) -> list[str]:
        """Every collected image's relative path."""
        return [
            row[0]
            for row in self._rows(
                "SELECT path FROM szrag_images WHERE repository = %(r)s ORDER BY path"
            )
        ]

    def image_data(self, path: str) -> bytes | None:
        """The bytes of the image at ``path`` as it was published (no checkout is read)."""
        rows = self._rows(
            "SELECT data FROM szrag_images WHERE repository = %(r)s AND path = %(path)s",
            {"path": path},
        )
        return bytes(rows[0][0]) if rows and rows[0][0] is not None else None

    def skipped(self) -> list[Skip]:
        """Files left out of the index on purpose, with the reason."""
        return [
            Skip(path, reason)
            for path, reason in self._rows(
                "SELECT path, reason FROM szrag_skipped WHERE repository = %(r)s ORDER BY path"
            )
        ]

    def dependencies(self, path: str) -> list[str]:
        """Files that ``path`` imports or refers to."""
        return [
            row[0]
            for row in self._rows(
                "SELECT DISTINCT target FROM szrag_edges WHERE repository = %(r)s"
                " AND source = %(path)s ORDER BY target",
                {"path": path},
            )
        ]

    def dependants(self, path: str) -> list[str]:
        """Files that import ``path``."""
        return [
            row[0]
            for row in self._rows(
                "SELECT DISTINCT source FROM szrag_edges WHERE repository = %(r)s"
                " AND target = %(path)s AND kind = 'import'"
                " ORDER BY source",
                {"path": path},
            )
        ]

    # --- chunks and names ---------------------------------------------------------------------

    def chunk_rows(self, ids: Sequence[int]) -> dict[int, ChunkRow]:
        """The chunks of ``ids`` that the index holds, by id."""
        rows = self._rows(
            f"SELECT {_CHUNK_ROW} FROM szrag_chunks c, szrag_files f"
            f" WHERE {_SAME} AND c.id = ANY(%(ids)s)",
            {"ids": list(ids)},
        )
        return {row[0]: ChunkRow(*row) for row in rows}

    def _places(self, path: str) -> list[store.ChunkPlace]:
        rows = self._rows(
            'SELECT c.id, f.path, c.start, c."end", c.type, c.heading'
            f" FROM szrag_chunks c, szrag_files f WHERE {_SAME} AND f.path = %(path)s"
            " ORDER BY c.seq",
            {"path": path},
        )
        return [cast(store.ChunkPlace, tuple(row)) for row in rows]

    def chunks(
        self, path: str, lines: Sequence[tuple[int, int]] | None = None
    ) -> list[store.StoredChunk]:
        """The chunks of one file in order, with their texts; with ``lines``, only those
        overlapping one of these (first, last) ranges."""
        with self.reading():
            places = store.overlapping(self._places(path), lines)
            texts = self.chunk_texts([place[0] for place in places])
            return store.with_texts(places, texts)

    def chunk_texts(self, ids: Sequence[int]) -> dict[int, str]:
        """The text of each chunk id that has one."""
        rows = self._rows(
            "SELECT id, text FROM szrag_chunk_texts WHERE repository = %(r)s AND id = ANY(%(ids)s)",
            {"ids": list(ids)},
        )
        return {chunk_id: store.unpack(text) for chunk_id, text in rows}

    def chunk_at(self, path: str, line: int | None = None) -> ChunkRow | None:
        """The first chunk of ``path`` holding ``line`` (without a line: its first chunk)."""
        at = "" if line is None else ' AND c.start <= %(line)s AND c."end" >= %(line)s'
        rows = self._rows(
            f"SELECT {_CHUNK_ROW} FROM szrag_chunks c, szrag_files f"
            f" WHERE {_SAME} AND f.path = %(path)s{at} ORDER BY c.seq LIMIT 1",
            {"path": path, "line": line},
        )
        return ChunkRow(*rows[0]) if rows else None

    def chunk_words(self, *, by_path: bool = False) -> Iterator[ChunkWords]:
        """Every chunk with its words (with ``by_path``: by file path, then position)."""
        order = "f.path, c.seq" if by_path else "c.id"
        rows = self._rows(
            'SELECT c.id, c.file_id, c.seq, c.start, c."end", c.heading, c.words'
            f" FROM szrag_chunks c, szrag_files f WHERE {_SAME} ORDER BY {order}"
        )
        for chunk_id, file_id, seq, start, end, heading, packed in rows:
            yield ChunkWords(chunk_id, file_id, seq, start, end, heading, store.unpack(packed))

    def first_chunks(self, file_ids: Sequence[int]) -> list[ChunkWords]:
        """The first chunk of each file of ``file_ids`` (its words left empty)."""
        found: list[ChunkWords] = []
        for batch, _ in store.in_batches(file_ids):
            rows = self._rows(
                'SELECT id, file_id, seq, start, "end", heading FROM szrag_chunks'
                " WHERE repository = %(r)s AND seq = 0"
                " AND file_id = ANY(%(ids)s) ORDER BY file_id",
                {"ids": batch},
            )
            found.extend(
                ChunkWords(chunk_id, file_id, seq, start, end, heading, "")
                for chunk_id, file_id, seq, start, end, heading in rows
            )
        return found

    def lines(self, path: str, first: int = 1, last: int | None = None) -> list[str]:
        """The indexed lines ``first``-``last`` (1-based, inclusive) of one file."""
        return stitched_lines(self, path, first, last)

    def stored_units(self, path: str) -> tuple[Unit, ...] | None:
        """The units the file was cut into when it was indexed. None when the generation
        keeps none (published before units were) or cut them another way than this reader
        would (``store.UNITS_VERSION``): the reader then cuts the file itself."""
        rows = self._rows(
            "SELECT f.units FROM szrag_files f, szrag_meta m"
            " WHERE f.repository = %(r)s AND f.path = %(path)s AND m.repository = f.repository"
            " AND m.key = 'units_version' AND m.value = %(version)s",
            {"path": path, "version": str(store.UNITS_VERSION)},
        )
        packed = rows[0][0] if rows else None
        return None if packed is None else store.unpacked_units(bytes(packed), path)

    def named(self, name: str, kind: str) -> list[tuple[str, int]]:
        """(path, line) of each ``kind`` stored for the lookup key ``name``."""
        rows = self._rows(
            f"SELECT f.path, n.line FROM szrag_names n, szrag_files f WHERE {_SAME_NAMES}"
            " AND n.name = %(name)s AND n.kind = %(kind)s ORDER BY f.path, n.line",
            {"name": name, "kind": kind},
        )
        return [(path, line) for path, line in rows]

    def named_any(self, lookups: Iterable[tuple[str, str]]) -> list[NamedLine]:
        """Every row for any of the (name, kind) ``lookups``, by path and line."""
        wanted = list(dict.fromkeys(lookups))  # a row matching twice is one row, as in SQLite
        if not wanted:
            return []
        rows = self._rows(
            "SELECT f.path, n.kind, n.line FROM szrag_names n, szrag_files f,"
            " unnest(%(names)s::text[], %(kinds)s::text[]) AS w(name, kind)"
            f" WHERE {_SAME_NAMES} AND n.name = w.name AND n.kind = w.kind"
            " ORDER BY f.path, n.line, n.kind, n.name",
            {"names": [name for name, _ in wanted], "kinds": [kind for _, kind in wanted]},
        )
        return [NamedLine(*row) for row in rows]

    def names_held(self, names: Iterable[str], kind: str) -> list[str]:
        """Those of the lookup keys ``names`` that a ``kind`` row holds, sorted."""
        wanted = list(dict.fromkeys(names))
        if not wanted:
            return []
        rows = self._rows(
            "SELECT DISTINCT n.name FROM szrag_names n WHERE n.repository = %(r)s"
            " AND n.kind = %(kind)s AND n.name = ANY(%(names)s)",
            {"names": wanted, "kind": kind},
        )
        return sorted(name for (name,) in rows)  # in code points, as SQLite sorts

    def term_counts(self, terms: Sequence[str]) -> tuple[int, dict[str, int]]:
        """How many chunks the generation holds, and how many hold each of ``terms``."""
        search = PostgresFullText(self, (1.0, 1.0, 1.0, 1.0))  # counts do not weigh columns
        with self.reading():
            return search.chunk_count(), {term: search.frequency(term) for term in terms}

    def full_text(self, weights: Sequence[float]) -> FullTextSearch:
        """The full-text search over chunks with these column weights."""
        return PostgresFullText(self, weights)

    # --- closing -------------------------------------------------------------------------------

    def close(self) -> None:
        """Close the pool's connections."""
        self._pool.close()

    def __enter__(self) -> PostgresIndex:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
