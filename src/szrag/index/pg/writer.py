"""Publishing: one repository's SQLite index copied into PostgreSQL as a new generation.

The repository is parsed and indexed as always (``build_index`` / ``load_index`` into its
``.rag/``); its rows are then copied, from one snapshot of that index, into PostgreSQL in one
transaction under the repository's advisory lock: files, chunks and their texts (packed
values as they are), names, edges, images, skipped files, meta, and the full-text data FTS5
holds (each chunk's tokens as FTS5 indexed them, read from an ``fts5vocab`` instance table, its
column sizes, the vocabulary's document counts and the table's totals). The last statement
points the repository at the new generation, and older generations are removed: a reader
sees the previous generation whole until the commit, and the new one whole after it.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import psycopg
from psycopg.types.json import Jsonb

from szrag.base.errors import ConfigError, DamagedIndexError, IndexStoreError
from szrag.index import store
from szrag.index.fts5 import COLUMNS, varints
from szrag.index.handle import Index
from szrag.index.pg.schema import (
    GENERATION_TABLES,
    INDEXER_LOCK_CLASS,
    config_record,
    connect,
    migrate,
    repository_lock,
    shown_url,
    unreachable,
)
from szrag.index.pg.vectors import chunk_vector, lexeme

CHUNKS_PER_PASS = 4000  # chunks whose token instances are held in memory at once
MAX_NAME = 200
_COLUMN_NUMBERS = {name: number for number, name in enumerate(COLUMNS)}


@dataclass(frozen=True, slots=True)
class Published:
    """What one publish wrote."""

    repository: str
    generation: int
    files: int
    chunks: int
    location: str
    elapsed: float


def checked_name(repository: str) -> str:
    """``repository`` when it can name a repository in the store; ConfigError otherwise."""
    if not repository or len(repository) > MAX_NAME or not repository.isprintable():
        raise ConfigError(
            f"repository name {repository!r} must be 1 to {MAX_NAME} printable characters"
        )
    return repository


def publish(
    index: Index, url: str, repository: str, *, lock_wait: float | None = None
) -> Published:
    """Copy ``index`` into the store at ``url`` as the next generation of ``repository``, in
    one transaction; ``lock_wait``: seconds to wait for another publisher of the same
    repository (None: as long as it takes), then IndexStoreError."""
    checked_name(repository)
    started = time.monotonic()
    with connect(url) as conn:
        try:
            migrate(conn)
            with (
                conn.transaction(),
                index.reading(),
                repository_lock(conn, url, repository, lock_wait),
            ):
                generation, files, chunks = _write(conn, index, repository)
        except psycopg.Error as error:
            raise IndexStoreError(
                f"publishing {repository!r} to {shown_url(url)} failed: {error}"
            ) from error
        except sqlite3.Error as error:
            raise DamagedIndexError(
                f"the index at {index.location} could not be read ({error});"
                " `szrag index --rebuild` replaces it"
            ) from error
    return Published(
        repository,
        generation,
        files,
        chunks,
        f"{shown_url(url)} (repository {repository})",
        time.monotonic() - started,
    )


def _write(conn: psycopg.Connection[Any], index: Index, repository: str) -> tuple[int, int, int]:
    """Every row of ``index`` as the next generation; (generation, files, chunks)."""
    source = index.conn
    row = conn.execute(
        "SELECT coalesce(max(generation), 0) + 1 FROM szrag_generations WHERE repository = %s",
        (repository,),
    ).fetchone()
    generation = int(row[0]) if row else 1
    key = (repository, generation)
    averages = source.execute("SELECT block FROM chunk_terms_data WHERE id = 1").fetchone()
    totals = varints(averages[0]) if averages else [0]
    chunks = int(source.execute("SELECT count(*) FROM chunks").fetchone()[0])
    meta = store.read_meta(source)
    conn.execute(
        "INSERT INTO szrag_generations (repository, generation, root, index_schema, config,"
        " chunks, full_text_rows, column_totals) VALUES (%s, %s, %s, %s, %s, %s, %s, %s)",
        (
            *key,
            str(index.root),
            int(meta.get("schema_version", store.SCHEMA_VERSION)),
            Jsonb(config_record(index.config)),
            chunks,
            totals[0],
            list(totals[1:]) or [0] * len(COLUMNS),
        ),
    )
    copies: Sequence[tuple[str, str, str]] = (
        ("szrag_meta", "key, value", "SELECT key, value FROM meta"),
        (
            "szrag_files",
            "id, path, size, mtime_ns, ctime_ns, inode, sha256, type, tokens, code, routes,"
            " environment, units, decode_errors",
            "SELECT id, path, size, mtime_ns, ctime_ns, inode, sha256, type, tokens, code,"
            " routes, environment, units, decode_errors FROM files",
        ),
        (
            "szrag_chunks",
            'id, file_id, seq, start, "end", type, heading, words',
            "SELECT id, file_id, seq, start, end, type, heading, words FROM chunks",
        ),
        ("szrag_chunk_texts", "id, text", "SELECT id, text FROM chunk_texts"),
        ("szrag_names", "name, kind, file_id, line", "SELECT name, kind, file_id, line FROM names"),
        (
            "szrag_definitions",
            "file_id, seq, name, kind, line, end_line, container",
            "SELECT file_id, seq, name, kind, line, end_line, container FROM definitions",
        ),
        ("szrag_edges", "source, target, kind", "SELECT source, target, kind FROM edges"),
        (
            "szrag_skipped",
            "path, reason, size, mtime_ns, ctime_ns, inode",
            "SELECT path, reason, size, mtime_ns, ctime_ns, inode FROM skipped",
        ),
    )
    files = 0
    for table, columns, query in copies:
        with conn.cursor().copy(
            f"COPY {table} (repository, generation, {columns}) FROM STDIN"
        ) as copy:
            for values in source.execute(query):
                copy.write_row((*key, *values))
                files += table == "szrag_files"
    _copy_images(conn, index, key)
    _copy_full_text(conn, source, key)
    conn.execute(
        "INSERT INTO szrag_repositories (name, generation, published_at) VALUES (%s, %s, now())"
        " ON CONFLICT (name) DO UPDATE SET generation = excluded.generation,"
        " published_at = excluded.published_at",
        key,
    )
    for table in GENERATION_TABLES:  # the earlier generations, which no reader starts on now
        conn.execute(
            f"DELETE FROM {table} WHERE repository = %s AND generation < %s",
            key,
        )
    # Statistics of the new rows, committed with them. Without these, the planner takes a
    # table it has not analysed yet (a new store, a new generation's key) for a row or two,
    # and one file's chunks were read by a nested loop over every file: 28 s a read on the
    # 9.2k-file corpus until autovacuum came by. A tenth of the usual sample tells it how
    # many rows a repository's generation holds (0.08 s against 0.46 s on that corpus);
    # autovacuum's own pass refines them later.
    conn.execute("SET LOCAL default_statistics_target = 10")
    for table in GENERATION_TABLES:
        conn.execute(f"ANALYZE {table}")
    return generation, files, chunks


def _copy_images(conn: psycopg.Connection[Any], index: Index, key: tuple[str, int]) -> None:
    """Each collected image's row with its bytes as the checkout holds them now (NULL for one
    gone or too large: a replica then answers 404 for it, as the checkout would)."""
    with conn.cursor().copy(
        "COPY szrag_images (repository, generation, path, size, mtime_ns, data) FROM STDIN"
    ) as copy:
        for path, size, mtime_ns in index.conn.execute(
            "SELECT path, size, mtime_ns FROM images ORDER BY path"
        ).fetchall():
            copy.write_row((*key, path, size, mtime_ns, index.image_data(path)))


def _copy_full_text(
    conn: psycopg.Connection[Any], source: sqlite3.Connection, key: tuple[str, int]
) -> None:
    """The vocabulary's document counts and each chunk's tokens, sizes and tsvector."""
    source.execute(
        "CREATE VIRTUAL TABLE IF NOT EXISTS temp.szrag_publish_rows"
        " USING fts5vocab(main, chunk_terms, row)"
    )
    source.execute(
        "CREATE VIRTUAL TABLE IF NOT EXISTS temp.szrag_publish_instances"
        " USING fts5vocab(main, chunk_terms, instance)"
    )
    with conn.cursor().copy(
        "COPY szrag_vocabulary (repository, generation, term, documents) FROM STDIN"
    ) as copy:
        for term, documents in source.execute("SELECT term, doc FROM temp.szrag_publish_rows"):
            copy.write_row((*key, lexeme(term), documents))
    sizes: dict[int, list[int]] = {}
    for chunk_id, blob in source.execute("SELECT id, sz FROM chunk_terms_docsize ORDER BY id"):
        sizes[int(chunk_id)] = varints(blob)
    ids = list(sizes)
    with conn.cursor().copy(
        "COPY szrag_chunk_terms (repository, generation, chunk_id, terms, sizes, size, counts)"
        " FROM STDIN"
    ) as copy:
        for first in range(0, len(ids), CHUNKS_PER_PASS):
            batch = ids[first : first + CHUNKS_PER_PASS]
            instances = _instances(source, batch[0], batch[-1])
            for chunk_id in batch:
                vector = chunk_vector(sizes[chunk_id], instances.get(chunk_id, ()))
                copy.write_row(
                    (
                        *key,
                        chunk_id,
                        vector.text,
                        sizes[chunk_id],
                        sum(sizes[chunk_id]),
                        None if vector.counts is None else Jsonb(vector.counts),
                    )
                )


def _instances(
    source: sqlite3.Connection, first: int, last: int
) -> dict[int, list[tuple[str, int, int]]]:
    """(token, column number, offset) of every instance FTS5 indexed in the chunks
    ``first``-``last``, by chunk."""
    found: dict[int, list[tuple[str, int, int]]] = {}
    rows: Iterator[tuple[str, int, str, int]] = source.execute(
        'SELECT term, doc, col, "offset" FROM temp.szrag_publish_instances'
        " WHERE doc BETWEEN ? AND ?",
        (first, last),
    )
    for term, doc, column, offset in rows:
        found.setdefault(doc, []).append((term, _COLUMN_NUMBERS[column], offset))
    return found


class IndexerLease:
    """The one indexer of a repository: a session advisory lock held, over a connection of its
    own, for as long as the indexer runs (``szrag index --store URL --watch``). A second
    indexer of the same repository fails at once, naming the store and the repository; each
    publish still takes the repository's transaction lock, so nothing ever interleaves.

    The lock goes with its connection: an indexer killed (SIGKILL) frees it when the server
    sees the connection close, and one whose server restarted takes it again before its next
    publish (``hold``), or stops when another indexer took it meanwhile."""

    def __init__(self, url: str, repository: str) -> None:
        self.url = url
        self.repository = checked_name(repository)
        self._conn: psycopg.Connection[Any] | None = None

    def hold(self) -> None:
        """Take the lock, or make sure it is still held; IndexStoreError when another indexer
        holds it, StoreUnavailable when the server cannot be reached."""
        if self._conn is not None:
            try:
                self._conn.execute("SELECT 1")
                return
            except psycopg.Error:  # the server restarted: the lock went with the connection
                self._drop()
        conn = connect(self.url, autocommit=True)
        try:
            row = conn.execute(
                "SELECT pg_try_advisory_lock(%s, hashtext(%s))",
                (INDEXER_LOCK_CLASS, self.repository),
            ).fetchone()
        except psycopg.Error as error:
            conn.close()
            raise unreachable(self.url, error) from error
        if not row or not row[0]:
            conn.close()
            raise IndexStoreError(
                f"another indexer is publishing repository {self.repository!r} to"
                f" {shown_url(self.url)}: one indexer per repository (stop the other first)"
            )
        self._conn = conn

    def _drop(self) -> None:
        if self._conn is not None:
            try:
                self._conn.close()
            finally:
                self._conn = None

    def release(self) -> None:
        """Let go of the lock (closing its connection)."""
        self._drop()

    def __enter__(self) -> IndexerLease:
        self.hold()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()
