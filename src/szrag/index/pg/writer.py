"""Publishing: one repository's SQLite index copied into PostgreSQL as its next generation.

The repository is parsed and indexed as always (``build_index`` / ``load_index`` into its
``.rag/``); its rows are then copied, from one snapshot of that index, into PostgreSQL in one
transaction under the repository's advisory lock: files, chunks and their texts (packed
values as they are), names, edges, images, skipped files, meta, and the full-text data FTS5
holds (each chunk's tokens as FTS5 indexed them, its column sizes, the vocabulary's document
counts and the table's totals). The last statement points the repository at the new
generation: a reader sees the previous generation whole until the commit (its snapshot keeps
the rows it started on), and the new one whole after it.

A generation records the SQLite index it came from (``lineage``, new with every full build).
When the store's latest generation came from the same index, a publish rewrites only the
files whose rows differ, and the vocabulary's counts by difference: a refresh after one edit
of a 9,000-file repository writes a few rows instead of every one. Otherwise, or when most
files changed, it replaces every row of the repository.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import psycopg
from psycopg.types.json import Jsonb

from szrag.base.errors import ConfigError, DamagedIndexError, IndexStoreError
from szrag.index import store
from szrag.index.fts5 import COLUMNS, varints
from szrag.index.handle import Index
from szrag.index.pg.schema import (
    INDEXER_LOCK_CLASS,
    REPOSITORY_TABLES,
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
# How the rows are written from the index's: a generation written another way is replaced
# whole, never built on.
ROWS_FORMAT = "1"
# Past this share of the files changed, replacing every row costs less than the differences.
MOST_CHANGED = 0.5
# The latest generations' records kept: a replica a few publishes behind carries its views
# over the files and chunks they changed.
KEPT_GENERATIONS = 16
_COLUMN_NUMBERS = {name: number for number, name in enumerate(COLUMNS)}


@dataclass(frozen=True, slots=True)
class _Copied:
    """A store table holding a SQLite table's rows: the columns both name (after the
    store's repository)."""

    table: str
    columns: str
    source: str

    @property
    def query(self) -> str:
        """The SQLite query of the rows' values."""
        return f"SELECT {self.columns} FROM {self.source}"


_FILES = _Copied(
    "szrag_files",
    "id, path, size, mtime_ns, ctime_ns, inode, sha256, type, tokens, code, routes,"
    " environment, units, decode_errors",
    "files",
)
_CHUNKS = _Copied("szrag_chunks", 'id, file_id, seq, start, "end", type, heading, words', "chunks")
_TEXTS = _Copied("szrag_chunk_texts", "id, text", "chunk_texts")
_NAMES = _Copied("szrag_names", "name, kind, file_id, line", "names")
_DEFINITIONS = _Copied(
    "szrag_definitions", "file_id, seq, name, kind, line, end_line, container", "definitions"
)
_META = _Copied("szrag_meta", "key, value", "meta")
_EDGES = _Copied("szrag_edges", "source, target, kind", "edges")
_SKIPPED = _Copied("szrag_skipped", "path, reason, size, mtime_ns, ctime_ns, inode", "skipped")
# a file's rows are unchanged when all of these are: the chunk ids tell a file written again
_FILE_FACTS = (
    "f.id, f.path, f.sha256, f.size, f.mtime_ns, f.ctime_ns, f.inode, f.type, f.decode_errors"
)
_FINGERPRINT = (
    f"SELECT {_FILE_FACTS}, min(c.id), count(c.id) FROM {{files}} f LEFT JOIN {{chunks}} c"
    f" ON {{joined}} c.file_id = f.id {{where}} GROUP BY {_FILE_FACTS}"
)


@dataclass(frozen=True, slots=True)
class Published:
    """What one publish wrote."""

    repository: str
    generation: int
    files: int
    chunks: int
    location: str
    elapsed: float
    rewritten: int | None = None  # files whose rows were written again; None: every row was


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
                generation, files, chunks, rewritten = _write(conn, index, repository)
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
        rewritten,
    )


def _write(
    conn: psycopg.Connection[Any], index: Index, repository: str
) -> tuple[int, int, int, int | None]:
    """``index`` as the next generation; (generation, files, chunks, files rewritten or None
    when every row was)."""
    source = index.conn
    row = conn.execute(
        "SELECT r.generation, g.lineage FROM szrag_repositories r LEFT JOIN szrag_generations g"
        " ON g.repository = r.name AND g.generation = r.generation WHERE r.name = %s",
        (repository,),
    ).fetchone()
    generation = int(row[0]) + 1 if row else 1
    meta = store.read_meta(source)
    lineage = f"{meta['lineage']}/{ROWS_FORMAT}" if meta.get("lineage") else None
    averages = source.execute("SELECT block FROM chunk_terms_data WHERE id = 1").fetchone()
    totals = varints(averages[0]) if averages else [0]
    chunks = int(source.execute("SELECT count(*) FROM chunks").fetchone()[0])
    conn.execute(
        "INSERT INTO szrag_generations (repository, generation, root, index_schema, config,"
        " chunks, full_text_rows, column_totals, lineage)"
        " VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)",
        (
            repository,
            generation,
            str(index.root),
            int(meta.get("schema_version", store.SCHEMA_VERSION)),
            Jsonb(config_record(index.config)),
            chunks,
            totals[0],
            list(totals[1:]) or [0] * len(COLUMNS),
            lineage,
        ),
    )
    changed = None
    if row is not None and lineage is not None and row[1] == lineage:
        changed = _write_differences(conn, index, repository)
    if changed is None:
        _write_everything(conn, index, repository)
    else:
        conn.execute(
            "UPDATE szrag_generations SET changed_files = %s, changed_chunks = %s"
            " WHERE repository = %s AND generation = %s",
            (changed.files, changed.chunks, repository, generation),
        )
    _replace(conn, source, repository, _META)
    _replace(conn, source, repository, _SKIPPED)
    conn.execute(
        "INSERT INTO szrag_repositories (name, generation, published_at) VALUES (%s, %s, now())"
        " ON CONFLICT (name) DO UPDATE SET generation = excluded.generation,"
        " published_at = excluded.published_at",
        (repository, generation),
    )
    conn.execute(  # the records no reader starts on, nor carries its views over, any more
        "DELETE FROM szrag_generations WHERE repository = %s AND generation <= %s",
        (repository, generation - KEPT_GENERATIONS),
    )
    files = int(source.execute("SELECT count(*) FROM files").fetchone()[0])
    return generation, files, chunks, None if changed is None else changed.written


def _write_everything(conn: psycopg.Connection[Any], index: Index, repository: str) -> None:
    """Every row of ``index`` in place of the repository's rows."""
    source = index.conn
    for table in REPOSITORY_TABLES:
        conn.execute(f"DELETE FROM {table} WHERE repository = %s", (repository,))
    for copied in (_FILES, _CHUNKS, _TEXTS, _NAMES, _DEFINITIONS, _EDGES):
        _copy(conn, repository, copied, source.execute(copied.query))
    _copy_images(conn, index, repository)
    _copy_full_text(conn, source, repository)
    # Statistics of the new rows, committed with them. Without these, the planner takes a
    # table it has not analysed yet (a new store, a new repository) for a row or two, and
    # one file's chunks were read by a nested loop over every file: 28 s a read on the
    # 9.2k-file corpus until autovacuum came by. A tenth of the usual sample tells it how
    # many rows a repository holds (0.08 s against 0.46 s on that corpus); autovacuum's own
    # pass refines them later. A publish of the differences changes too few rows to matter.
    conn.execute("SET LOCAL default_statistics_target = 10")
    for table in ("szrag_generations", *REPOSITORY_TABLES):
        conn.execute(f"ANALYZE {table}")


def _copy(
    conn: psycopg.Connection[Any],
    repository: str,
    copied: _Copied,
    rows: Iterable[Sequence[Any]],
) -> None:
    with conn.cursor().copy(
        f"COPY {copied.table} (repository, {copied.columns}) FROM STDIN"
    ) as copy:
        for values in rows:
            copy.write_row((repository, *values))


def _replace(
    conn: psycopg.Connection[Any],
    source: sqlite3.Connection,
    repository: str,
    copied: _Copied,
) -> None:
    """The repository's rows of a small table, all written again."""
    conn.execute(f"DELETE FROM {copied.table} WHERE repository = %s", (repository,))
    _copy(conn, repository, copied, source.execute(copied.query))


@dataclass(frozen=True, slots=True)
class _Changed:
    """What a publish of the differences rewrote: how many files it wrote, and the ids of
    the files and chunks it removed or wrote."""

    written: int
    files: list[int]
    chunks: list[int]


def _write_differences(
    conn: psycopg.Connection[Any], index: Index, repository: str
) -> _Changed | None:
    """Rewrite the rows of the files whose rows differ between the repository's latest
    generation and ``source`` (the index it was published from, since refreshed); how many
    files were written, or None (nothing written) when so many differ that replacing every
    row costs less."""
    source = index.conn
    stored = {
        row[0]: row
        for row in _stored_rows(
            conn,
            _FINGERPRINT.format(
                files="szrag_files",
                chunks="szrag_chunks",
                joined="c.repository = f.repository AND",
                where="WHERE f.repository = %s",
            ),
            repository,
        )
    }
    current = {
        row[0]: row
        for row in source.execute(
            _FINGERPRINT.format(files="files", chunks="chunks", joined="", where="")
        )
    }
    gone = sorted(file_id for file_id, row in stored.items() if current.get(file_id) != row)
    written = sorted(file_id for file_id, row in current.items() if stored.get(file_id) != row)
    if len({*gone, *written}) > MOST_CHANGED * max(len(current), len(stored)):
        return None
    removed = _forget_files(conn, repository, gone)
    added = _add_files(conn, source, repository, written)
    _write_edges(conn, source, repository)
    _write_images(conn, index, repository)
    return _Changed(len(written), sorted({*gone, *written}), sorted({*removed, *added}))


def _stored_rows(
    conn: psycopg.Connection[Any], query: str, repository: str
) -> list[tuple[Any, ...]]:
    """The rows of ``query`` as one JSON value: thousands of rows cost one value to decode,
    where each row's fields would cost a call each."""
    row = conn.execute(
        f"SELECT coalesce(json_agg(q), '[]')::text FROM ({query}) q", (repository,)
    ).fetchone()
    return [tuple(found.values()) for found in json.loads(row[0] if row else "[]")]


def _forget_files(conn: psycopg.Connection[Any], repository: str, file_ids: list[int]) -> list[int]:
    """Remove the files ``file_ids`` with every row of theirs, their chunks' documents taken
    off the vocabulary's counts; the ids of the chunks removed."""
    if not file_ids:
        return []
    chunk_ids = [
        row[0]
        for row in conn.execute(
            "SELECT id FROM szrag_chunks WHERE repository = %s AND file_id = ANY(%s)",
            (repository, file_ids),
        )
    ]
    _count_documents(conn, repository, chunk_ids, -1)
    for table, column, ids in (
        ("szrag_chunk_terms", "chunk_id", chunk_ids),
        ("szrag_chunk_texts", "id", chunk_ids),
        ("szrag_chunks", "file_id", file_ids),
        ("szrag_names", "file_id", file_ids),
        ("szrag_definitions", "file_id", file_ids),
        ("szrag_files", "id", file_ids),
    ):
        conn.execute(
            f"DELETE FROM {table} WHERE repository = %s AND {column} = ANY(%s)",
            (repository, ids),
        )
    return chunk_ids


def _count_documents(
    conn: psycopg.Connection[Any], repository: str, chunk_ids: list[int], sign: int
) -> None:
    """Add (``sign`` 1) or take off (-1) the chunks ``chunk_ids`` as documents of each
    lexeme they hold, and drop the lexemes no chunk holds any more."""
    if not chunk_ids:
        return
    conn.execute(
        "INSERT INTO szrag_vocabulary AS v (repository, term, documents)"
        " SELECT %(r)s, term, %(sign)s * count(*)"
        " FROM szrag_chunk_terms t, unnest(tsvector_to_array(t.terms)) AS term"
        " WHERE t.repository = %(r)s AND t.chunk_id = ANY(%(ids)s) GROUP BY term"
        " ON CONFLICT (repository, term)"
        " DO UPDATE SET documents = v.documents + excluded.documents",
        {"r": repository, "sign": sign, "ids": chunk_ids},
    )
    if sign < 0:
        conn.execute(
            "DELETE FROM szrag_vocabulary WHERE repository = %(r)s AND documents <= 0"
            " AND term IN (SELECT unnest(tsvector_to_array(terms)) FROM szrag_chunk_terms"
            " WHERE repository = %(r)s AND chunk_id = ANY(%(ids)s))",
            {"r": repository, "ids": chunk_ids},
        )


def _add_files(
    conn: psycopg.Connection[Any], source: sqlite3.Connection, repository: str, file_ids: list[int]
) -> list[int]:
    """Write the files ``file_ids`` of ``source`` with every row of theirs, their chunks
    counted as documents of the vocabulary; the ids of the chunks written."""
    chunk_ids: list[int] = []
    for batch, marks in store.in_batches(file_ids):
        _copy(
            conn, repository, _FILES, source.execute(f"{_FILES.query} WHERE id IN ({marks})", batch)
        )
        chunk_rows = source.execute(f"{_CHUNKS.query} WHERE file_id IN ({marks})", batch).fetchall()
        _copy(conn, repository, _CHUNKS, chunk_rows)
        chunk_ids.extend(row[0] for row in chunk_rows)
        for copied in (_NAMES, _DEFINITIONS):
            _copy(
                conn,
                repository,
                copied,
                source.execute(f"{copied.query} WHERE file_id IN ({marks})", batch),
            )
    for batch, marks in store.in_batches(chunk_ids):
        _copy(
            conn, repository, _TEXTS, source.execute(f"{_TEXTS.query} WHERE id IN ({marks})", batch)
        )
    _copy_chunk_terms(conn, repository, _terms_of(source, chunk_ids))
    _count_documents(conn, repository, chunk_ids, 1)
    return chunk_ids


def _terms_of(
    source: sqlite3.Connection, chunk_ids: list[int]
) -> Iterator[tuple[int, list[int], list[tuple[str, int, int]]]]:
    """(chunk id, column sizes, token instances) of each of ``chunk_ids``, as FTS5 indexed
    them: their full-text values indexed again, by the same tokenizer, in a table of their
    own, a few thousand chunks a pass (the index's instance table is read whole whatever
    the chunks asked for)."""
    for first in range(0, len(chunk_ids), CHUNKS_PER_PASS):
        fields = store.chunks_indexed_fields(source, chunk_ids[first : first + CHUNKS_PER_PASS])
        scratch = sqlite3.connect(":memory:")
        try:
            scratch.execute(
                "CREATE VIRTUAL TABLE terms USING fts5(path, heading, symbols, body,"
                f" content = '', tokenize = '{store.TERMS_TOKENIZER}')"
            )
            scratch.executemany(
                "INSERT INTO terms(rowid, path, heading, symbols, body) VALUES (?, ?, ?, ?, ?)",
                ((chunk_id, *values) for chunk_id, values in sorted(fields.items())),
            )
            scratch.execute("CREATE VIRTUAL TABLE instances USING fts5vocab(terms, instance)")
            sizes = [
                (int(chunk_id), varints(blob))
                for chunk_id, blob in scratch.execute(
                    "SELECT id, sz FROM terms_docsize ORDER BY id"
                )
            ]
            found: dict[int, list[tuple[str, int, int]]] = {}
            for term, doc, column, offset in scratch.execute(
                'SELECT term, doc, col, "offset" FROM instances'
            ):
                found.setdefault(doc, []).append((term, _COLUMN_NUMBERS[column], offset))
        finally:
            scratch.close()
        for chunk_id, chunk_sizes in sizes:
            yield chunk_id, chunk_sizes, found.get(chunk_id, [])


def _write_edges(
    conn: psycopg.Connection[Any], source: sqlite3.Connection, repository: str
) -> None:
    """The edges that differ: a refresh works out again those of the files around a change."""
    stored = set(
        _stored_rows(
            conn, f"SELECT {_EDGES.columns} FROM {_EDGES.table} WHERE repository = %s", repository
        )
    )
    current = set(source.execute(_EDGES.query))
    gone = sorted(stored - current)
    if gone:
        conn.execute(
            f"DELETE FROM {_EDGES.table} AS e USING unnest(%s::text[], %s::text[], %s::text[])"
            " AS g(source, target, kind) WHERE e.repository = %s AND e.source = g.source"
            " AND e.target = g.target AND e.kind = g.kind",
            (
                [row[0] for row in gone],
                [row[1] for row in gone],
                [row[2] for row in gone],
                repository,
            ),
        )
    _copy(conn, repository, _EDGES, sorted(current - stored))


def _write_images(conn: psycopg.Connection[Any], index: Index, repository: str) -> None:
    """The images whose bytes differ from the stored ones, as the checkout holds them now:
    every image is read again, as a whole publish reads it (its size and time may stay
    when its bytes change, and a read that failed once is tried again)."""
    stored = {
        row[0]: tuple(row[1:])
        for row in _stored_rows(
            conn,
            "SELECT path, size, mtime_ns, md5(data) FROM szrag_images WHERE repository = %s",
            repository,
        )
    }
    current = index.conn.execute("SELECT path, size, mtime_ns FROM images ORDER BY path").fetchall()
    changed: list[tuple[str, int, int, bytes | None]] = []
    for path, size, mtime_ns in current:
        data = index.image_data(path)
        digest = hashlib.md5(data, usedforsecurity=False).hexdigest() if data is not None else None
        if stored.get(path) != (size, mtime_ns, digest):
            changed.append((path, size, mtime_ns, data))
    gone = sorted(set(stored) - {row[0] for row in current} | {row[0] for row in changed})
    if gone:
        conn.execute(
            "DELETE FROM szrag_images WHERE repository = %s AND path = ANY(%s)", (repository, gone)
        )
    _copy_image_rows(conn, repository, changed)


def _copy_images(conn: psycopg.Connection[Any], index: Index, repository: str) -> None:
    """Each collected image's row with its bytes as the checkout holds them now (NULL for one
    gone or too large: a replica then answers 404 for it, as the checkout would)."""
    rows = index.conn.execute("SELECT path, size, mtime_ns FROM images ORDER BY path").fetchall()
    _copy_image_rows(
        conn,
        repository,
        [(path, size, mtime, index.image_data(path)) for path, size, mtime in rows],
    )


def _copy_image_rows(
    conn: psycopg.Connection[Any],
    repository: str,
    rows: Iterable[tuple[str, int, int, bytes | None]],
) -> None:
    with conn.cursor().copy(
        "COPY szrag_images (repository, path, size, mtime_ns, data) FROM STDIN"
    ) as copy:
        for row in rows:
            copy.write_row((repository, *row))


def _copy_full_text(
    conn: psycopg.Connection[Any], source: sqlite3.Connection, repository: str
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
        "COPY szrag_vocabulary (repository, term, documents) FROM STDIN"
    ) as copy:
        for term, documents in source.execute("SELECT term, doc FROM temp.szrag_publish_rows"):
            copy.write_row((repository, lexeme(term), documents))
    sizes: dict[int, list[int]] = {}
    for chunk_id, blob in source.execute("SELECT id, sz FROM chunk_terms_docsize ORDER BY id"):
        sizes[int(chunk_id)] = varints(blob)
    _copy_chunk_terms(conn, repository, _every_chunks_terms(source, sizes))


def _every_chunks_terms(
    source: sqlite3.Connection, sizes: dict[int, list[int]]
) -> Iterator[tuple[int, list[int], list[tuple[str, int, int]]]]:
    """(chunk id, column sizes, token instances) of every chunk, from the index's own
    instance table, a few thousand chunks a pass."""
    ids = list(sizes)
    for first in range(0, len(ids), CHUNKS_PER_PASS):
        batch = ids[first : first + CHUNKS_PER_PASS]
        instances = _instances(source, batch[0], batch[-1])
        for chunk_id in batch:
            yield chunk_id, sizes[chunk_id], instances.get(chunk_id, [])


def _copy_chunk_terms(
    conn: psycopg.Connection[Any],
    repository: str,
    terms: Iterable[tuple[int, list[int], list[tuple[str, int, int]]]],
) -> None:
    """Each chunk's tsvector, column sizes and, where the tsvector cannot hold them, counts."""
    with conn.cursor().copy(
        "COPY szrag_chunk_terms (repository, chunk_id, terms, sizes, size, counts) FROM STDIN"
    ) as copy:
        for chunk_id, sizes, instances in terms:
            vector = chunk_vector(sizes, instances)
            copy.write_row(
                (
                    repository,
                    chunk_id,
                    vector.text,
                    sizes,
                    sum(sizes),
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
