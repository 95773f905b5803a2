"""The SQLite store under ``<root>/.rag/index.db``: schema, version, reads and writes.

The database is derived data. One that is missing, corrupt, foreign (not written by szrag)
or of another schema version is rebuilt, never trusted. Writers run in one transaction so a
reader (WAL mode) sees either the old index or the new one, never half of a refresh.
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
import zlib
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from szrag.base.errors import DamagedIndexError, IndexStoreError
from szrag.base.sqlite import is_busy
from szrag.base.text import (
    CODE_TYPES,
    Chunk,
    LineRanges,
    code_terms,
    lines_code_terms,
    stitch_lines,
)
from szrag.base.text import tokens as code_tokens
from szrag.index.protocol import ChunkRow, ChunkWords, NamedLine, TokenHolders, WordDefinition
from szrag.index.terms import TermFields, code_names, term_fields

if TYPE_CHECKING:
    from szrag.code.model import Definition
    from szrag.code.units import Unit

APPLICATION = "szrag"
# how ``code.units`` cuts a file, whose units the index keeps: bumped with any change to it
UNITS_VERSION = 2  # 2: callbacks are units; a long function's first lines join its first unit
SCHEMA_VERSION = 22  # 22: Swift's structure; 21: Kotlin's; 20: C and C++ read again with directives
# and macros blanked;
# 19: functions handed to a call under a name (routes, tests, events);
# 18: TypeScript types, Go receivers and Rust impls among the definitions;
# 17: each file's units; 16: definitions by word, code files by token
INDEX_DIRECTORY = ".rag"
INDEX_FILENAME = "index.db"
BUSY_TIMEOUT_MS = 60_000

TERMS_TOKENIZER = "porter unicode61"  # the full-text table's, which in-memory scoring asks too

SCHEMA = f"""
CREATE TABLE meta (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
CREATE TABLE files (
    id INTEGER PRIMARY KEY,
    path TEXT NOT NULL UNIQUE,
    size INTEGER NOT NULL,
    mtime_ns INTEGER NOT NULL,
    ctime_ns INTEGER NOT NULL,
    inode INTEGER NOT NULL,
    sha256 TEXT NOT NULL,
    type TEXT NOT NULL,
    tokens BLOB NOT NULL,  -- packed (see ``pack``): the file's distinct tokens, space-joined
    code BLOB,  -- packed JSON of the file's code record
    routes TEXT,  -- JSON of the record's routes alone (NULL: none), read without the record
    environment TEXT,  -- JSON [name, line] of its environment reads in order (NULL: none)
    units BLOB,  -- packed JSON of its units (``code.units``), cut once here, not per question
    decode_errors INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE chunks (
    id INTEGER PRIMARY KEY,
    file_id INTEGER NOT NULL REFERENCES files(id) ON DELETE CASCADE,
    seq INTEGER NOT NULL,
    start INTEGER NOT NULL,
    end INTEGER NOT NULL,
    type TEXT NOT NULL,
    heading TEXT,
    words BLOB NOT NULL  -- packed: the chunk's distinct words, space-joined
);
CREATE INDEX chunks_file ON chunks(file_id, seq);
CREATE TABLE chunk_texts (
    id INTEGER PRIMARY KEY REFERENCES chunks(id) ON DELETE CASCADE,
    text BLOB NOT NULL  -- packed
);
CREATE TABLE images (
    path TEXT PRIMARY KEY,
    size INTEGER NOT NULL,
    mtime_ns INTEGER NOT NULL
);
CREATE TABLE edges (
    source TEXT NOT NULL,
    target TEXT NOT NULL,
    kind TEXT NOT NULL,
    PRIMARY KEY (source, target, kind)
) WITHOUT ROWID;
CREATE INDEX edges_target ON edges(target);
CREATE VIRTUAL TABLE chunk_terms USING fts5(
    path, heading, symbols, body, content = '', tokenize = '{TERMS_TOKENIZER}'
);
-- clustered by name (the lookups' key), so no separate index on it is kept
CREATE TABLE names (
    name TEXT NOT NULL,
    kind TEXT NOT NULL,
    file_id INTEGER NOT NULL REFERENCES files(id) ON DELETE CASCADE,
    line INTEGER NOT NULL,
    PRIMARY KEY (name, kind, file_id, line)
) WITHOUT ROWID;
CREATE INDEX names_file ON names(file_id);
-- each code record's definitions in its order, so a symbol table is read without decoding
-- every record (``definition_rows``)
CREATE TABLE definitions (
    file_id INTEGER NOT NULL REFERENCES files(id) ON DELETE CASCADE,
    seq INTEGER NOT NULL,
    name TEXT NOT NULL,
    kind TEXT NOT NULL,
    line INTEGER NOT NULL,
    end_line INTEGER NOT NULL,
    container TEXT,
    PRIMARY KEY (file_id, seq)
) WITHOUT ROWID;
-- the words each definition's name is found by (``code.scoring.lookup_words``): a question
-- reads the definitions its words reach (``definitions_by_words``), not every one. No index
-- by file: ``delete_file`` works a file's words out again from its definitions' names
CREATE TABLE definition_words (
    word TEXT NOT NULL,
    file_id INTEGER NOT NULL,
    seq INTEGER NOT NULL,
    PRIMARY KEY (word, file_id, seq)
) WITHOUT ROWID;
-- each code file's tokens and its path's (``context.build.CodeFiles``), rowid the file's id:
-- a question counts the files holding its words without reading every file's tokens
CREATE VIRTUAL TABLE file_terms USING fts5(
    path, tokens, content = '', detail = column, tokenize = 'ascii'
);
-- the last walk's directory listings (collect.WalkSnapshot as JSON): one row
CREATE TABLE walk (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    snapshot TEXT NOT NULL
);
CREATE TABLE skipped (
    path TEXT PRIMARY KEY,
    reason TEXT NOT NULL,
    -- the stat of a file left out after it was read (binary, too large): not read again
    -- until it changes, and NULL for files the walk leaves out by name
    size INTEGER,
    mtime_ns INTEGER,
    ctime_ns INTEGER,
    inode INTEGER
);
"""


@dataclass(frozen=True, slots=True)
class StoredFile:
    """One indexed file's row, without its chunks; its token set and code record kept as
    the store keeps them (deflated) and decoded when read.

    A long-running reader keeps every file's row (``files_by_path``): decoded, the token sets
    and records of the benchmarks' 25,000-file corpus took about 270 MiB of Python objects,
    deflated about 10 MB. The few readers of a decoded set or record (a view's build, a
    found file's units) decode the files they read."""

    id: int
    path: str
    size: int
    mtime_ns: int
    ctime_ns: int
    inode: int
    sha256: str
    type: str
    packed_tokens: bytes = field(repr=False)  # ``pack`` of the distinct tokens, space-joined
    packed_code: bytes | None = field(repr=False)  # ``pack`` of the code record's JSON

    @property
    def tokens(self) -> frozenset[str]:
        """The file's distinct tokens (decoded at each read: a reader keeps what it needs)."""
        return frozenset(unpack(self.packed_tokens).split())

    @property
    def joined_tokens(self) -> str:
        """The file's distinct tokens space-joined, as stored (cheaper than ``tokens`` to test
        a few terms against)."""
        return unpack(self.packed_tokens)

    @property
    def code(self) -> dict[str, Any] | None:
        """The file's code record as stored (a new dict at each read), or None."""
        record: dict[str, Any] | None = unpack_json(self.packed_code)
        return record

    @classmethod
    def of(
        cls,
        row: tuple[int, str, int, int, int, int, str, str],
        tokens: Iterable[str],
        code: dict[str, Any] | None = None,
    ) -> StoredFile:
        """A file row (id, path, size, mtime_ns, ctime_ns, inode, sha256, type) with its
        tokens and code record packed as the store packs them."""
        packed = pack(json.dumps(code, separators=(",", ":"))) if code is not None else None
        return cls(*row, pack(" ".join(sorted(set(tokens)))), packed)


@dataclass(frozen=True, slots=True)
class StoredChunk:
    """One chunk row with the path of its file."""

    id: int
    path: str
    start: int
    end: int
    type: str
    heading: str | None
    text: str


# Texts are kept deflated: chunk texts, code records and token sets were three quarters of an
# index, and a question inflates only the few it reads (about 15 microseconds a chunk).
_PACK_LEVEL = 6


def pack(text: str) -> bytes:
    """``text`` as the store keeps it (any str, lone surrogates included, round-trips)."""
    return zlib.compress(text.encode("utf-8", "surrogatepass"), _PACK_LEVEL)


def unpack(data: bytes) -> str:
    """The text ``pack`` kept; DamagedIndexError when it is not what ``pack`` writes."""
    try:
        return zlib.decompress(data).decode("utf-8", "surrogatepass")
    except (zlib.error, TypeError, UnicodeDecodeError) as error:
        raise _damaged(error) from error


def unpack_json(data: bytes | None) -> Any:
    """The JSON value ``pack`` kept, or None for NULL."""
    if data is None:
        return None
    try:
        return json.loads(zlib.decompress(data))
    except (zlib.error, TypeError, ValueError) as error:
        raise _damaged(error) from error


def _damaged(error: Exception) -> DamagedIndexError:
    return DamagedIndexError(
        f"a packed text in the index is damaged ({error}); `szrag index --rebuild` replaces it"
    )


def index_path(root: Path) -> Path:
    """Where the index of ``root`` lives."""
    return root / INDEX_DIRECTORY / INDEX_FILENAME


def connect(path: Path) -> sqlite3.Connection:
    """Open the database with the settings every szrag connection uses."""
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None)
    try:
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        conn.execute("PRAGMA foreign_keys = ON")
        conn.execute("PRAGMA synchronous = NORMAL")
    except sqlite3.DatabaseError:
        conn.close()
        raise
    return conn


def connect_read_only(path: Path, *, timeout: float = 5.0) -> sqlite3.Connection:
    """A read-only connection to the database file ``path`` (named by a URI, so a space,
    ``?`` or ``#`` in the path is quoted)."""
    return sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, timeout=timeout)


@contextlib.contextmanager
def open_read_only(root: Path) -> Iterator[sqlite3.Connection]:
    """A read-only connection to the index of ``root``; IndexStoreError when it is unusable."""
    path = index_path(root)
    if not path.is_file():
        raise IndexStoreError(f"no index at {path}; run `szrag index` first")
    try:
        conn = connect_read_only(path, timeout=2.0)
    except sqlite3.Error as error:
        raise IndexStoreError(f"index {path}: {error}") from error
    try:
        problem = check(conn)
        if problem is not None:
            raise IndexStoreError(f"index {path} is not usable: {problem}")
        yield conn
    except sqlite3.Error as error:
        raise IndexStoreError(f"index {path}: {error}") from error
    finally:
        conn.close()


def check(conn: sqlite3.Connection) -> str | None:
    """Why this database cannot be used as is, or None when it can."""
    try:
        tables = {
            row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")
        }
        if not tables:
            return "empty"
        if "meta" not in tables:
            return "not a szrag index"
        meta = dict(conn.execute("SELECT key, value FROM meta").fetchall())
    except sqlite3.DatabaseError as error:
        if is_busy(error):
            raise  # held by another process past the busy timeout: no reason to rebuild it
        return f"unreadable ({error})"
    if meta.get("application") != APPLICATION:
        return "not a szrag index"
    if meta.get("schema_version") != str(SCHEMA_VERSION):
        return f"schema version {meta.get('schema_version')} (expected {SCHEMA_VERSION})"
    if meta.get("units_version") != str(UNITS_VERSION):
        return f"units cut by version {meta.get('units_version')} (expected {UNITS_VERSION})"
    if meta.get("complete") != "1":
        return "an interrupted build"
    return None


def create_schema(conn: sqlite3.Connection, meta: dict[str, str]) -> None:
    """Replace whatever the database holds with an empty szrag schema (inside a transaction)."""
    while True:
        rows = conn.execute(
            "SELECT type, name, sql FROM sqlite_master"
            " WHERE name NOT LIKE 'sqlite_%' AND type IN ('table', 'view')"
        ).fetchall()
        if not rows:
            break
        # virtual tables first: dropping one removes its shadow tables
        virtual = [row for row in rows if (row[2] or "").upper().startswith("CREATE VIRTUAL")]
        kind, name, _ = (virtual or rows)[0]
        conn.execute(f'DROP {kind.upper()} IF EXISTS "{name}"')
    for statement in SCHEMA.split(";"):
        if statement.strip():
            conn.execute(statement)
    meta = {
        "application": APPLICATION,
        "schema_version": str(SCHEMA_VERSION),
        "units_version": str(UNITS_VERSION),
        **meta,
    }
    conn.executemany("INSERT INTO meta(key, value) VALUES (?, ?)", meta.items())


def set_meta(conn: sqlite3.Connection, values: dict[str, str]) -> None:
    """Insert or replace meta values."""
    conn.executemany("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", values.items())


def stored_units(conn: sqlite3.Connection, path: str) -> bytes | None:
    """The packed units kept for ``path`` (None: no such file, or none kept)."""
    row = conn.execute("SELECT units FROM files WHERE path = ?", (path,)).fetchone()
    return row[0] if row else None


def unpacked_units(packed: bytes, path: str) -> tuple[Unit, ...]:
    """The units ``packed`` keeps for ``path``; DamagedIndexError when they are not what a
    build writes."""
    from szrag.code.units import decoded_units  # a refresh alone reads none

    try:
        return decoded_units(unpack(packed))
    except (DamagedIndexError, ValueError, TypeError) as error:  # not what was written
        raise DamagedIndexError(
            f"the units kept for {path} are damaged ({error}); `szrag index --rebuild` replaces them"
        ) from error


def read_generation(conn: sqlite3.Connection) -> str:
    """The index's generation: it changes every time a writer commits."""
    row = conn.execute("SELECT value FROM meta WHERE key = 'generation'").fetchone()
    return str(row[0]) if row else "0"


def read_meta(conn: sqlite3.Connection) -> dict[str, str]:
    """All meta values."""
    return dict(conn.execute("SELECT key, value FROM meta").fetchall())


@dataclass(frozen=True, slots=True)
class FileRows:
    """What the store writes for one file, packed as it keeps it: made where the file is
    parsed (a worker process of a build), so the writer only inserts."""

    tokens: bytes
    code: bytes | None
    routes: str | None  # the code record's routes as JSON, None without any
    environment: str | None  # its environment reads as JSON [name, line] pairs, None without any
    units: bytes  # packed: its units (``code.units.encoded_units``)
    names: list[tuple[str, str, int]]  # (kind, name, line)
    definitions: list[tuple[str, str, int, int, str | None]]  # name, kind, line, end, container
    definition_words: list[tuple[str, int]]  # (lookup word, the definition's seq)
    file_terms: tuple[str, str] | None  # a code file's path tokens and tokens, space-joined
    chunks: list[tuple[int, int, str, str | None, bytes, bytes]]  # start, end, type, heading,
    terms: list[tuple[str, str, str, str]]  # packed words, packed text; full-text fields

    @classmethod
    def of(
        cls,
        *,
        path: str,
        kind: str,
        tokens: Iterable[str],
        code: dict[str, Any] | None,
        chunks: list[Chunk],
        chunk_words: list[str],
        chunk_terms: list[tuple[str, str, str, str]],
    ) -> FileRows:
        """The rows of the file ``path`` of type ``kind`` with these tokens, code record,
        chunks and their words and full-text fields."""
        from szrag.code.model import CodeRecord  # a refresh finding nothing changed needs none
        from szrag.code.scoring import lookup_words
        from szrag.code.units import PROSE_TYPES, encoded_units, file_units

        # the calls, two thirds of a record, are kept by name in ``names`` and read from there
        stored = {key: value for key, value in code.items() if key != "calls"} if code else code
        record = CodeRecord.from_dict(stored) if stored else None
        reads = [[item.name, item.line] for item in record.environment_variables] if record else []
        joined = " ".join(sorted(set(tokens)))  # distinct: readers split, not set
        # cut from the lines as a reader stitches them from the chunks
        units = file_units(
            stitch_lines(chunks),
            record.unit_definitions if record else (),
            prose=kind in PROSE_TYPES,
        )
        return cls(
            tokens=pack(joined),
            code=pack(json.dumps(stored, separators=(",", ":"))) if stored is not None else None,
            routes=json.dumps(code["routes"], separators=(",", ":"))
            if code and code.get("routes")
            else None,
            environment=json.dumps(reads, separators=(",", ":")) if reads else None,
            units=pack(encoded_units(units)),
            names=code_names(code),
            definitions=[
                (item.name, item.kind, item.line, item.end_line, item.container)
                for item in record.functions
            ]
            if record
            else [],
            definition_words=[
                (word, seq)
                for seq, item in enumerate(record.functions)
                for word in lookup_words(item.name)
            ]
            if record
            else [],
            chunks=[
                (chunk.start, chunk.end, chunk.type, chunk.heading, pack(words), pack(chunk.text))
                for chunk, words in zip(chunks, chunk_words, strict=True)
            ],
            terms=chunk_terms,
            file_terms=file_terms(path, joined) if kind in CODE_TYPES else None,
        )


def file_terms(path: str, joined_tokens: str) -> tuple[str, str]:
    """The values the file-terms table indexes for a code file with these tokens."""
    return " ".join(sorted(code_tokens(path))), joined_tokens


def insert_file(
    conn: sqlite3.Connection,
    *,
    path: str,
    stat: tuple[int, int, int, int],
    sha256: str,
    type: str,
    decode_errors: int,
    rows: FileRows,
) -> int:
    """Write one file and its chunks; returns the file id."""
    cursor = conn.execute(
        "INSERT INTO files(path, size, mtime_ns, ctime_ns, inode, sha256, type, tokens, code,"
        " routes, environment, units, decode_errors)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            path,
            *stat,
            sha256,
            type,
            rows.tokens,
            rows.code,
            rows.routes,
            rows.environment,
            rows.units,
            decode_errors,
        ),
    )
    file_id = cursor.lastrowid
    assert file_id is not None
    conn.executemany(
        "INSERT INTO names(file_id, kind, name, line) VALUES (?, ?, ?, ?)",
        ((file_id, kind, name, line) for kind, name, line in rows.names),
    )
    conn.executemany(
        "INSERT INTO definitions(file_id, seq, name, kind, line, end_line, container)"
        " VALUES (?, ?, ?, ?, ?, ?, ?)",
        ((file_id, seq, *row) for seq, row in enumerate(rows.definitions)),
    )
    conn.executemany(
        "INSERT OR IGNORE INTO definition_words(word, file_id, seq) VALUES (?, ?, ?)",
        ((word, file_id, seq) for word, seq in rows.definition_words),
    )
    if rows.file_terms is not None:
        conn.execute(
            "INSERT INTO file_terms(rowid, path, tokens) VALUES (?, ?, ?)",
            (file_id, *rows.file_terms),
        )
    # explicit ids let both tables be written in two batched statements
    first = conn.execute("SELECT coalesce(max(id), 0) + 1 FROM chunks").fetchone()[0]
    conn.executemany(
        "INSERT INTO chunks(id, file_id, seq, start, end, type, heading, words)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        (
            (first + seq, file_id, seq, start, end, kind, heading, words)
            for seq, (start, end, kind, heading, words, _) in enumerate(rows.chunks)
        ),
    )
    # texts live apart so that scans over chunk words never page through them
    conn.executemany(
        "INSERT INTO chunk_texts(id, text) VALUES (?, ?)",
        ((first + seq, chunk[5]) for seq, chunk in enumerate(rows.chunks)),
    )
    conn.executemany(
        "INSERT INTO chunk_terms(rowid, path, heading, symbols, body) VALUES (?, ?, ?, ?, ?)",
        ((first + seq, *fields) for seq, fields in enumerate(rows.terms)),
    )
    return file_id


def delete_file(conn: sqlite3.Connection, path: str) -> None:
    """Remove a file, its chunks, their terms and the edges it is the source of."""
    row = conn.execute(
        "SELECT id, code, type, tokens FROM files WHERE path = ?", (path,)
    ).fetchone()
    if row is None:
        return
    file_id, code, kind, packed_tokens = row
    if kind in CODE_TYPES:  # a contentless table forgets a row given the values it indexed
        conn.execute(
            "INSERT INTO file_terms(file_terms, rowid, path, tokens) VALUES ('delete', ?, ?, ?)",
            (file_id, *file_terms(path, unpack(packed_tokens))),
        )
    # a contentless full-text table forgets a row only when given the values it indexed
    conn.executemany(
        "INSERT INTO chunk_terms(chunk_terms, rowid, path, heading, symbols, body)"
        " VALUES ('delete', ?, ?, ?, ?, ?)",
        ((chunk_id, *field) for chunk_id, field in indexed_fields(conn, file_id, path, code)),
    )
    conn.executemany(
        "DELETE FROM definition_words WHERE word = ? AND file_id = ?",
        ((word, file_id) for word in _definition_words(conn, file_id)),
    )
    conn.execute("DELETE FROM files WHERE id = ?", (file_id,))
    conn.execute("DELETE FROM edges WHERE source = ?", (path,))


def indexed_fields(
    conn: sqlite3.Connection, file_id: int, path: str, code: bytes | None
) -> list[tuple[int, TermFields]]:
    """Each chunk of the stored file ``file_id`` (at ``path``, its packed code record
    ``code``) with the full-text values it was indexed with, worked out again from what the
    store keeps: the full-text table is contentless."""
    rows = conn.execute(
        "SELECT c.id, c.start, c.end, c.type, c.heading, t.text, c.words FROM chunks c"
        " JOIN chunk_texts t ON t.id = c.id WHERE c.file_id = ? ORDER BY c.seq",
        (file_id,),
    ).fetchall()
    chunks = [
        Chunk(start, end, kind, heading, unpack(text))
        for _, start, end, kind, heading, text, _ in rows
    ]
    fields = term_fields(path, chunks, unpack_json(code), _indexed_bodies(chunks, rows))
    return [(row[0], values) for row, values in zip(rows, fields, strict=True)]


def chunks_indexed_fields(
    conn: sqlite3.Connection, chunk_ids: Sequence[int]
) -> dict[int, TermFields]:
    """The full-text values each of ``chunk_ids`` was indexed with (``indexed_fields``)."""
    wanted = set(chunk_ids)
    files: set[tuple[int, str, bytes | None]] = set()
    for batch, marks in in_batches(sorted(wanted)):
        files.update(
            conn.execute(
                "SELECT DISTINCT f.id, f.path, f.code FROM chunks c JOIN files f"
                f" ON f.id = c.file_id WHERE c.id IN ({marks})",
                batch,
            )
        )
    found: dict[int, TermFields] = {}
    for file_id, path, code in sorted(files):
        for chunk_id, values in indexed_fields(conn, file_id, path, code):
            if chunk_id in wanted:
                found[chunk_id] = values
    return found


def _definition_words(conn: sqlite3.Connection, file_id: int) -> set[str]:
    """The lookup words of a file's definitions, as ``FileRows.of`` wrote them."""
    from szrag.code.scoring import lookup_words

    names = conn.execute("SELECT DISTINCT name FROM definitions WHERE file_id = ?", (file_id,))
    return {word for (name,) in names for word in lookup_words(name)}


def _indexed_bodies(chunks: list[Chunk], rows: list[tuple[Any, ...]]) -> list[str]:
    """The ``code_terms`` each chunk was indexed with (``rows`` end with its packed words)."""
    joined = [unpack(row[-1]) for row in rows]
    # overlapping windows: the file's lines are split once, not once per window holding them
    lines: list[str] = []
    for chunk in chunks:
        window = chunk.text.split("\n")
        overlap = len(lines) - (chunk.start - 1)
        if overlap < 0 or chunk.end - chunk.start + 1 != len(window):  # not a run of windows
            return [
                code_terms(chunk.text, words.split())
                for chunk, words in zip(chunks, joined, strict=True)
            ]
        lines.extend(window[overlap:])
    return lines_code_terms(lines, chunks, joined)


def update_stat(conn: sqlite3.Connection, path: str, stat: tuple[int, int, int, int]) -> None:
    """Record a new stat for a file whose content did not change."""
    conn.execute(
        "UPDATE files SET size = ?, mtime_ns = ?, ctime_ns = ?, inode = ? WHERE path = ?",
        (*stat, path),
    )


def data_version(conn: sqlite3.Connection) -> int:
    """A number that changes when another connection commits to the database."""
    return int(conn.execute("PRAGMA data_version").fetchone()[0])


StatRow = tuple[str, int, int, int, int]  # path, size, mtime_ns, ctime_ns, inode


def indexed_stats(conn: sqlite3.Connection) -> list[StatRow]:
    """(path, size, mtime_ns, ctime_ns, inode) of every indexed file, by path."""
    return conn.execute(
        "SELECT path, size, mtime_ns, ctime_ns, inode FROM files ORDER BY path"
    ).fetchall()


def remembered_stats(conn: sqlite3.Connection) -> list[StatRow]:
    """The same of every file left out after it was read, by path."""
    return conn.execute(
        "SELECT path, size, mtime_ns, ctime_ns, inode FROM skipped WHERE size IS NOT NULL"
        " ORDER BY path"
    ).fetchall()


def file_hashes(conn: sqlite3.Connection, paths: Sequence[str]) -> dict[str, str]:
    """Path -> sha256 of those of ``paths`` that are indexed."""
    found: dict[str, str] = {}
    for batch, marks in in_batches(paths):
        found.update(conn.execute(f"SELECT path, sha256 FROM files WHERE path IN ({marks})", batch))
    return found


def image_rows(conn: sqlite3.Connection) -> list[tuple[str, int, int]]:
    """(path, size, mtime_ns) of every image, by path."""
    return conn.execute("SELECT path, size, mtime_ns FROM images ORDER BY path").fetchall()


def _file_from_row(row: tuple[Any, ...]) -> StoredFile:
    return StoredFile(
        id=row[0],
        path=row[1],
        size=row[2],
        mtime_ns=row[3],
        ctime_ns=row[4],
        inode=row[5],
        sha256=row[6],
        type=row[7],
        packed_tokens=row[8],
        packed_code=row[9],
    )


_FILE_COLUMNS = "id, path, size, mtime_ns, ctime_ns, inode, sha256, type, tokens, code"


def iter_files(conn: sqlite3.Connection) -> Iterator[StoredFile]:
    """Every indexed file, by path."""
    for row in conn.execute(f"SELECT {_FILE_COLUMNS} FROM files ORDER BY path"):
        yield _file_from_row(row)


def files_reusing(conn: sqlite3.Connection, known: Mapping[str, StoredFile]) -> list[StoredFile]:
    """Every indexed file, by path, as ``iter_files`` reads them; a file whose path, type and
    content hash are those of its entry in ``known`` (an earlier read) keeps that entry's
    decoded tokens and record, so only the files that changed are inflated and decoded."""
    if not known:
        return list(iter_files(conn))
    snapshot = not conn.in_transaction  # both reads from one snapshot
    if snapshot:
        conn.execute("BEGIN")
    try:
        rows = conn.execute(
            "SELECT id, path, size, mtime_ns, ctime_ns, inode, sha256, type FROM files"
            " ORDER BY path"
        ).fetchall()
        files: list[StoredFile | None] = []
        unread: dict[int, int] = {}  # file id -> its place in ``files``
        for row in rows:
            earlier = known.get(row[1])
            if earlier is None or (earlier.sha256, earlier.type) != (row[6], row[7]):
                unread[row[0]] = len(files)
                files.append(None)
            elif (earlier.id, earlier.size, earlier.mtime_ns, earlier.ctime_ns, earlier.inode) == (
                row[0],
                *row[2:6],
            ):
                files.append(earlier)
            else:
                files.append(
                    replace(
                        earlier,
                        id=row[0],
                        size=row[2],
                        mtime_ns=row[3],
                        ctime_ns=row[4],
                        inode=row[5],
                    )
                )
        for batch, marks in in_batches(list(unread)):
            for row in conn.execute(
                f"SELECT {_FILE_COLUMNS} FROM files WHERE id IN ({marks})", batch
            ):
                files[unread[row[0]]] = _file_from_row(row)
    finally:
        if snapshot:
            conn.execute("COMMIT")
    return [file for file in files if file is not None]


def get_file(conn: sqlite3.Connection, path: str) -> StoredFile | None:
    """One indexed file, or None."""
    row = conn.execute(f"SELECT {_FILE_COLUMNS} FROM files WHERE path = ?", (path,)).fetchone()
    return _file_from_row(row) if row else None


ChunkPlace = tuple[int, str, int, int, str, str | None]  # a chunk row without its text
ID_BATCH = 500  # ids bound to one statement, well under SQLite's variable limit
T = TypeVar("T")


def in_batches(values: Sequence[T]) -> Iterator[tuple[list[T], str]]:
    """``values`` in batches of ``ID_BATCH``, each with its ``?,?,...`` placeholders."""
    for offset in range(0, len(values), ID_BATCH):
        batch = list(values[offset : offset + ID_BATCH])
        yield batch, ",".join("?" * len(batch))


def file_chunks(
    conn: sqlite3.Connection, path: str, lines: Sequence[tuple[int, int]] | None = None
) -> list[StoredChunk]:
    """The chunks of one file in order; with ``lines``, only those overlapping one of these
    (first, last) ranges (the others are neither read nor inflated)."""
    places = overlapping(chunk_places(conn, path), lines)
    texts = chunk_texts(conn, [place[0] for place in places])
    return with_texts(places, texts)


def named(conn: sqlite3.Connection, name: str, kind: str) -> list[tuple[str, int]]:
    """(path, line) of every ``kind`` row of the names table for the lookup key ``name``."""
    rows = conn.execute(
        "SELECT f.path, n.line FROM names n JOIN files f ON f.id = n.file_id"
        " WHERE n.name = ? AND n.kind = ? ORDER BY f.path, n.line",
        (name, kind),
    )
    return [(path, line) for path, line in rows]


CHUNK_ROW_COLUMNS = "c.id, f.path, c.seq, c.start, c.end, f.type, c.heading"  # a ChunkRow


def chunk_rows(conn: sqlite3.Connection, ids: Sequence[int]) -> dict[int, ChunkRow]:
    """The chunks of ``ids`` that the index holds, by id."""
    found: dict[int, ChunkRow] = {}
    for batch, marks in in_batches(ids):
        rows = conn.execute(
            f"SELECT {CHUNK_ROW_COLUMNS} FROM chunks c JOIN files f ON f.id = c.file_id"
            f" WHERE c.id IN ({marks})",
            batch,
        )
        found.update({row[0]: ChunkRow(*row) for row in rows})
    return found


def chunk_at(conn: sqlite3.Connection, path: str, line: int | None = None) -> ChunkRow | None:
    """The first chunk of ``path`` holding ``line`` (without a line: its first chunk)."""
    condition, values = "f.path = ?", list[object]([path])
    if line is not None:
        condition, values = "f.path = ? AND c.start <= ? AND c.end >= ?", [path, line, line]
    row = conn.execute(
        f"SELECT {CHUNK_ROW_COLUMNS} FROM chunks c JOIN files f ON f.id = c.file_id"
        f" WHERE {condition} ORDER BY c.seq LIMIT 1",
        values,
    ).fetchone()
    return ChunkRow(*row) if row else None


def chunk_words(conn: sqlite3.Connection, *, by_path: bool = False) -> Iterator[ChunkWords]:
    """Every chunk with its words inflated (with ``by_path``: by file path, then position)."""
    if by_path:
        rows = conn.execute(
            "SELECT c.id, c.file_id, c.seq, c.start, c.end, c.heading, c.words FROM chunks c"
            " JOIN files f ON f.id = c.file_id ORDER BY f.path, c.seq"
        )
    else:
        rows = conn.execute("SELECT id, file_id, seq, start, end, heading, words FROM chunks")
    for chunk_id, file_id, seq, start, end, heading, packed in rows:
        yield ChunkWords(chunk_id, file_id, seq, start, end, heading, unpack(packed))


def first_chunks(conn: sqlite3.Connection, file_ids: Sequence[int]) -> list[ChunkWords]:
    """The first chunk of each file of ``file_ids``, its words left empty."""
    found: list[ChunkWords] = []
    for batch, marks in in_batches(file_ids):
        rows = conn.execute(
            "SELECT id, file_id, seq, start, end, heading FROM chunks"
            f" WHERE seq = 0 AND file_id IN ({marks})",
            batch,
        )
        found.extend(
            ChunkWords(id, file, seq, start, end, heading, "")
            for id, file, seq, start, end, heading in rows
        )
    return found


def file_tokens(conn: sqlite3.Connection, paths: Sequence[str]) -> dict[str, str]:
    """The space-joined distinct tokens of each of ``paths`` that is indexed."""
    found: dict[str, str] = {}
    for batch, marks in in_batches(paths):
        rows = conn.execute(f"SELECT path, tokens FROM files WHERE path IN ({marks})", batch)
        found.update((path, unpack(joined)) for path, joined in rows)
    return found


def named_any(conn: sqlite3.Connection, lookups: Sequence[tuple[str, str]]) -> list[NamedLine]:
    """Every names row for any of the (name, kind) ``lookups``, by path and line."""
    if not lookups:
        return []
    by_kind: dict[str, list[str]] = {}
    for name, kind in dict.fromkeys(lookups):
        by_kind.setdefault(kind, []).append(name)
    # one IN list a kind: a chain of ORs deeper than SQLite's 1,000 levels is refused, and
    # a misspelt name is looked up as its thousand near spellings
    condition = " OR ".join(
        f"(n.kind = ? AND n.name IN ({', '.join('?' * len(names))}))" for names in by_kind.values()
    )
    rows = conn.execute(
        "SELECT f.path, n.kind, n.line FROM names n JOIN files f ON f.id = n.file_id"
        f" WHERE {condition} ORDER BY f.path, n.line",
        [value for kind, names in by_kind.items() for value in (kind, *names)],
    )
    return [NamedLine(*row) for row in rows]


def names_held(conn: sqlite3.Connection, names: Sequence[str], kind: str) -> list[str]:
    """Those of the lookup keys ``names`` that a ``kind`` row holds, sorted."""
    if not names:
        return []
    rows = conn.execute(
        f"SELECT DISTINCT name FROM names WHERE kind = ? AND name IN ({', '.join('?' * len(names))})"
        " ORDER BY name",
        [kind, *names],
    )
    return [name for (name,) in rows]


def chunk_count(conn: sqlite3.Connection) -> int:
    """How many chunks the index holds."""
    return int(conn.execute("SELECT count(*) FROM chunks").fetchone()[0])


def term_frequency(conn: sqlite3.Connection, term: str) -> int:
    """How many chunks the full-text table says hold ``term``."""
    return int(
        conn.execute(
            "SELECT count(*) FROM chunk_terms WHERE chunk_terms MATCH ?", (f'"{term}"',)
        ).fetchone()[0]
    )


def file_paths(conn: sqlite3.Connection) -> list[str]:
    """Every indexed file's path."""
    return [row[0] for row in conn.execute("SELECT path FROM files")]


def definition_rows(
    conn: sqlite3.Connection, known: Mapping[tuple[int, str, str], tuple[Definition, ...]]
) -> dict[tuple[int, str, str], tuple[Definition, ...]]:
    """Each code file's definitions in its record's order, by (id, path, content hash) in
    path order: those of ``known`` (an earlier read) as they were, the others read. A refresh
    rewrites a few files, so a later generation reads only theirs."""
    files = conn.execute(
        "SELECT id, path, sha256 FROM files WHERE code IS NOT NULL ORDER BY path"
    ).fetchall()
    missing = [file_id for file_id, path, sha256 in files if (file_id, path, sha256) not in known]
    sql = "SELECT file_id, name, kind, line, end_line, container FROM definitions"
    order = " ORDER BY file_id, seq"
    if len(missing) > len(files) // 2:  # most files new: one read of every row
        rows: Iterable[tuple[Any, ...]] = conn.execute(sql + order)
    else:
        rows = (
            row
            for batch, marks in in_batches(missing)
            for row in conn.execute(f"{sql} WHERE file_id IN ({marks}){order}", batch)
        )
    read: dict[int, list[Definition]] = {}
    for file_id, definition in definitions_of((row[0], row[1:]) for row in rows):
        read.setdefault(file_id, []).append(definition)
    return {
        (file_id, path, sha256): known.get((file_id, path, sha256)) or tuple(read.get(file_id, ()))
        for file_id, path, sha256 in files
    }


def definitions_by_words(
    conn: sqlite3.Connection, words: Iterable[str], prefixes: Iterable[str]
) -> list[WordDefinition]:
    """The definitions with a lookup word among ``words`` or beginning with one of
    ``prefixes``, a row for each such word, by path, record order and word."""
    select = (
        "SELECT w.word, f.path, d.seq, d.name, d.kind, d.line, d.end_line, d.container"
        " FROM definition_words w JOIN definitions d ON d.file_id = w.file_id AND d.seq = w.seq"
        " JOIN files f ON f.id = w.file_id"
    )
    found: list[tuple[Any, ...]] = []
    for batch, marks in in_batches(sorted(set(words))):
        found.extend(conn.execute(f"{select} WHERE w.word IN ({marks})", batch))
    for prefix in sorted(set(prefixes)):  # a range of the key each, where ORs scan every row
        found.extend(
            conn.execute(f"{select} WHERE w.word >= ? AND w.word < ?", (prefix, prefix + _LAST))
        )
    rows = sorted(set(found), key=lambda row: (row[1], row[2], row[0]))  # a word in a range too
    return [
        WordDefinition(word, path, seq, definition)
        for (word, path, seq), definition in definitions_of(
            ((row[0], row[1], row[2]), row[3:]) for row in rows
        )
    ]


def code_files_holding(conn: sqlite3.Connection, tokens: Iterable[str]) -> TokenHolders:
    """Every code file's path, by path, and the files holding each of ``tokens`` in their
    tokens and in their path's (ascending places), from the file-terms table."""
    files = conn.execute(
        f"SELECT id, path FROM files WHERE type IN ({','.join('?' * len(CODE_TYPES))})"
        " ORDER BY path",
        sorted(CODE_TYPES),
    ).fetchall()
    place = {file_id: number for number, (file_id, _) in enumerate(files)}
    held: dict[str, dict[str, tuple[int, ...]]] = {"tokens": {}, "path": {}}
    for token in sorted(set(tokens)):
        for column, found in held.items():
            rows = conn.execute(
                "SELECT rowid FROM file_terms WHERE file_terms MATCH ?",
                (f'{{{column}}}: "{token}"',),
            )
            numbers = tuple(sorted(place[file_id] for (file_id,) in rows if file_id in place))
            if numbers:
                found[token] = numbers
    return TokenHolders(tuple(path for _, path in files), held["tokens"], held["path"])


_LAST = "\U0010ffff"  # after every other character: a prefix and it bound the prefix's words


def definitions_of(rows: Iterable[tuple[T, Sequence[Any]]]) -> Iterator[tuple[T, Definition]]:
    """Each row's key with its definition made of (name, kind, line, end_line, container),
    one object for each distinct name, kind and class: a server keeps them all."""
    from szrag.code.model import Definition

    texts: dict[str, str] = {}
    for key, (name, kind, line, end_line, container) in rows:
        yield (
            key,
            Definition(
                texts.setdefault(name, name),
                texts.setdefault(kind, kind),
                line,
                end_line,
                None if container is None else texts.setdefault(container, container),
            ),
        )


def environment_rows(conn: sqlite3.Connection) -> list[tuple[str, str, int]]:
    """(path, name, line) of every read of an environment variable, by path, each file's in
    its record's order."""
    rows = conn.execute(
        "SELECT path, environment FROM files WHERE environment IS NOT NULL ORDER BY path"
    )
    return environment_reads(rows)


def environment_reads(rows: Iterable[tuple[str, str]]) -> list[tuple[str, str, int]]:
    """(path, name, line) of each read in ``rows`` of (path, environment reads as stored);
    DamagedIndexError when a value is not what ``FileRows.of`` writes."""
    try:
        return [
            (path, str(name), int(line)) for path, found in rows for name, line in json.loads(found)
        ]
    except (TypeError, ValueError) as error:
        raise _damaged(error) from error


def stored_json(text: str) -> Any:
    """A JSON column's value (a record's routes); DamagedIndexError when it is not JSON."""
    try:
        return json.loads(text)
    except (TypeError, ValueError) as error:
        raise _damaged(error) from error


def route_rows(conn: sqlite3.Connection) -> list[tuple[str, str]]:
    """(path, routes as JSON) of every file whose code record has routes."""
    return conn.execute(
        "SELECT path, routes FROM files WHERE routes IS NOT NULL ORDER BY path"
    ).fetchall()


def chunk_places(conn: sqlite3.Connection, path: str) -> list[ChunkPlace]:
    """Each chunk of one file in order, without its text: id, path, start, end, type, heading."""
    rows = conn.execute(
        "SELECT c.id, f.path, c.start, c.end, c.type, c.heading FROM chunks c"
        " JOIN files f ON f.id = c.file_id WHERE f.path = ? ORDER BY c.seq",
        (path,),
    )
    return rows.fetchall()


def overlapping(
    places: Sequence[ChunkPlace], lines: Sequence[tuple[int, int]] | None
) -> list[ChunkPlace]:
    """The chunks among ``places`` overlapping one of the (first, last) ``lines``; all of
    them when ``lines`` is None."""
    if lines is None:
        return list(places)
    wanted = LineRanges(lines)
    return [place for place in places if wanted.overlap(place[2], place[3])]


def chunk_texts(conn: sqlite3.Connection, ids: Sequence[int]) -> dict[int, str]:
    """The inflated text of each chunk id that has one."""
    found: dict[int, str] = {}
    for batch, marks in in_batches(ids):
        rows = conn.execute(f"SELECT id, text FROM chunk_texts WHERE id IN ({marks})", batch)
        found.update((chunk_id, unpack(text)) for chunk_id, text in rows)
    return found


def with_texts(places: Sequence[ChunkPlace], texts: dict[int, str]) -> list[StoredChunk]:
    """The chunks of ``places`` with their texts (one whose text is missing left out)."""
    return [
        StoredChunk(chunk_id, path, start, end, kind, heading, texts[chunk_id])
        for chunk_id, path, start, end, kind, heading in places
        if chunk_id in texts
    ]


def replace_images(conn: sqlite3.Connection, images: Iterable[tuple[str, int, int]]) -> None:
    """Replace the image list."""
    conn.execute("DELETE FROM images")
    conn.executemany("INSERT INTO images(path, size, mtime_ns) VALUES (?, ?, ?)", images)


def remembered_skips(conn: sqlite3.Connection) -> dict[str, tuple[tuple[int, int, int, int], str]]:
    """Path -> (stat, reason) of every file left out after it was read."""
    return {
        row[0]: ((row[2], row[3], row[4], row[5]), row[1])
        for row in conn.execute(
            "SELECT path, reason, size, mtime_ns, ctime_ns, inode FROM skipped"
            " WHERE size IS NOT NULL"
        )
    }


def replace_skipped(
    conn: sqlite3.Connection,
    skipped: Iterable[tuple[str, str]],
    stats: dict[str, tuple[int, int, int, int]] | None = None,
) -> None:
    """Replace the record of files left out and why; ``stats`` holds the stat of those left
    out after reading, so an unchanged one is not read again."""
    known = stats or {}
    conn.execute("DELETE FROM skipped")
    conn.executemany(
        "INSERT OR REPLACE INTO skipped(path, reason, size, mtime_ns, ctime_ns, inode)"
        " VALUES (?, ?, ?, ?, ?, ?)",
        ((path, reason, *known.get(path, (None, None, None, None))) for path, reason in skipped),
    )


def read_walk(conn: sqlite3.Connection) -> str | None:
    """The kept walk snapshot's JSON, if any."""
    row = conn.execute("SELECT snapshot FROM walk WHERE id = 1").fetchone()
    return None if row is None else str(row[0])


def save_walk(conn: sqlite3.Connection, snapshot: str) -> None:
    """Keep ``snapshot`` as the last walk's (inside a transaction)."""
    conn.execute("INSERT OR REPLACE INTO walk(id, snapshot) VALUES (1, ?)", (snapshot,))


def counts(conn: sqlite3.Connection) -> dict[str, int]:
    """Row counts for files, chunks, images, edges and skipped files."""
    result: dict[str, int] = {}
    for table in ("files", "chunks", "images", "edges", "skipped"):
        result[table] = conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
    return result


def raise_store_error(path: Path, error: Exception) -> IndexStoreError:
    """An IndexStoreError that names the database and the cause."""
    return IndexStoreError(f"index {path}: {error}")
