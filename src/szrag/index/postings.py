"""The SQLite store's full-text scores from memory, for processes that answer many questions.

SQLite's FTS5 computes ``bm25()`` row by row through its auxiliary-function interface: for a
question holding a common word that is about 2 µs for each of the thousands of chunks holding
it, most of a warm answer's retrieval. A long-running face instead keeps, per index generation,
the chunk sizes and the postings of each term it has searched for (the chunks holding it, with
the column-weighted count FTS5's ``bm25`` sums), read once from ``fts5vocab``, and computes the
same formula over all matching chunks with numpy. The floating-point operations are FTS5's, in
its order (``fts5Bm25Function``), so every score is the same to the last bit and the best chunks
are the same, ties in row order as SQLite's sorter keeps them (a test compares both paths).

Postings are kept by token, as the table's tokenizer stems a phrase ("documents" and
"document" share theirs), in 8 bytes a chunk (its place as 32 bits, its count as a 32-bit float
when that holds it exactly). Once a view is built, the tokens held by the most chunks are read
in the background up to ``COMMON_POSTINGS``: those are the ones SQLite takes longest to score,
so a question whose rarer words are new still scores from memory, reading those words now.

A phrase that is not exactly one token of the table's tokenizer, or a snapshot that moved on
while postings were read, gives None: the caller then asks SQLite.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
import weakref
from collections import OrderedDict, deque
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

from szrag.base.errors import DamagedIndexError
from szrag.index.fts5 import (
    COLUMNS,
    FloatArray,
    IntArray,
    Tokenizer,
    average_size,
    best_ranked,
    bm25_ranks,
    column_weighted,
    varints,
)
from szrag.index.handle import Index
from szrag.index.protocol import ChunkRow, IndexStore
from szrag.index.search import POSTINGS_VIEW, SEARCHED
from szrag.index.store import TERMS_TOKENIZER, connect_read_only, read_generation
from szrag.index.store import chunks_indexed_fields as store_fields

log = logging.getLogger("szrag.index")

MAX_POSTINGS = 4_000_000  # entries kept for all tokens (8 bytes each): about 32 MB
# read once a view is built: the tokens held by the most chunks, up to this many entries,
# none held by fewer than ``COMMON_MIN_CHUNKS`` (SQLite scores such a token in under half a
# millisecond, and reading it when a question first needs it costs about as much)
COMMON_POSTINGS = 3_000_000
COMMON_MIN_CHUNKS = 500
CARRIED_TERMS = 256  # the most recently searched tokens read again for the next generation
KNOWN_PHRASES = 4096  # phrases whose tokens a view remembers
_COLUMNS = {name: number for number, name in enumerate(COLUMNS)}


@dataclass(frozen=True, slots=True)
class TermPostings:
    """The chunks holding one token (by position in the view's chunk order, ascending) and
    its column-weighted count in each."""

    positions: npt.NDArray[np.int32]
    weighted: npt.NDArray[np.float32] | FloatArray  # float64 only when float32 would round

    @classmethod
    def of(cls, positions: IntArray, weighted: FloatArray) -> TermPostings:
        """Postings kept in 8 bytes an entry where the counts allow it."""
        narrow = weighted.astype(np.float32)
        exact = bool(np.array_equal(narrow.astype(np.float64), weighted))
        return cls(positions.astype(np.int32), narrow if exact else weighted)

    @property
    def size(self) -> int:
        return len(self.positions)


@dataclass(frozen=True, slots=True)
class ChunkRows:
    """Every chunk row of one generation, in columns: the ``ChunkRow`` of a chunk is made when
    it is asked for. A dict of a row tuple per chunk took 23 MiB on the benchmarks'
    25,000-file corpus, these columns a tenth of it; a question asks for 400 rows."""

    ids: npt.NDArray[np.int64]  # ascending
    files: npt.NDArray[np.int32]  # each chunk's file, a place in ``paths`` and ``types``
    places: npt.NDArray[np.int64]  # each chunk's seq, start and end, one row each
    paths: tuple[str, ...]
    types: tuple[str, ...]
    headings: dict[int, str]  # the chunks that have one
    # each file's content hash, hashed to 64 bits (the hex strings would take 2.8 MB on the
    # benchmarks' 25,000-file corpus): compared within one process only
    contents: npt.NDArray[np.int64]

    @classmethod
    def of(cls, conn: sqlite3.Connection) -> ChunkRows:
        files = conn.execute("SELECT id, path, type, sha256 FROM files ORDER BY id").fetchall()
        file_ids = np.array([row[0] for row in files], dtype=np.int64)
        table = np.array(
            conn.execute("SELECT id, file_id, seq, start, end FROM chunks ORDER BY id").fetchall(),
            dtype=np.int64,
        ).reshape(-1, 5)
        numbers = np.searchsorted(file_ids, table[:, 1]).astype(np.int32)
        if len(table) and (
            numbers.max() >= len(file_ids) or (file_ids[numbers] != table[:, 1]).any()
        ):
            raise DamagedIndexError(
                "a chunk of the index has no file; `szrag index --rebuild` replaces the index"
            )
        return cls(
            table[:, 0].copy(),
            numbers,
            table[:, 2:5].copy(),
            tuple(row[1] for row in files),
            tuple(row[2] for row in files),
            dict(conn.execute("SELECT id, heading FROM chunks WHERE heading IS NOT NULL")),
            np.array([hash(row[3]) for row in files], dtype=np.int64),
        )

    def kept_from(self, earlier: ChunkRows) -> npt.NDArray[np.int64]:
        """For each chunk of ``earlier`` (an older generation of the same index), its place
        among these chunks when it is still here as it was (the same id, file, content and
        lines), else -1."""
        if not len(self.ids) or not len(earlier.ids):
            return np.full(len(earlier.ids), -1, dtype=np.int64)
        now = {
            key: number
            for number, key in enumerate(
                zip(self.paths, self.types, self.contents.tolist(), strict=True)
            )
        }
        files = np.array(
            [
                now.get(key, -1)
                for key in zip(earlier.paths, earlier.types, earlier.contents.tolist(), strict=True)
            ],
            dtype=np.int64,
        )
        at = np.minimum(np.searchsorted(self.ids, earlier.ids), len(self.ids) - 1)
        kept = (
            (self.ids[at] == earlier.ids)
            & (self.files[at] == files[earlier.files])
            & (self.places[at] == earlier.places).all(axis=1)
        )
        return np.where(kept, at, -1)

    def rows(self, ids: Sequence[int]) -> dict[int, ChunkRow]:
        """The rows of those of ``ids`` this generation holds, by id, in the order given."""
        if not len(ids) or not len(self.ids):
            return {}
        wanted = np.asarray(ids, dtype=np.int64)
        at = np.minimum(np.searchsorted(self.ids, wanted), len(self.ids) - 1)
        held = self.ids[at] == wanted
        found: dict[int, ChunkRow] = {}
        for chunk_id, number, (seq, start, end) in zip(
            wanted[held].tolist(),
            self.files[at[held]].tolist(),
            self.places[at[held]].tolist(),
            strict=True,
        ):
            found[chunk_id] = ChunkRow(
                chunk_id,
                self.paths[number],
                seq,
                start,
                end,
                self.types[number],
                self.headings.get(chunk_id),
            )
        return found


class ChunkPostings:
    """One generation's chunks (their rows and full-text sizes) and a bounded cache of term
    postings (thread-safe)."""

    def __init__(
        self,
        conn: sqlite3.Connection,
        generation: str,
        weights: Sequence[float],
        *,
        max_postings: int = MAX_POSTINGS,
    ) -> None:
        self.generation = generation
        self.weights = tuple(weights)
        self._whole_weights = _whole_weights(self.weights)
        self.max_postings = max_postings
        try:
            row = conn.execute("SELECT block FROM chunk_terms_data WHERE id = 1").fetchone()
            totals = varints(row[0]) if row else [0]
            self.rows = totals[0]  # FTS5's averages record: the row count, then each column's
            self.average_size = average_size(self.rows, totals[1:])
            self._ids, self._sizes = _sizes(
                conn.execute("SELECT id, sz FROM chunk_terms_docsize ORDER BY id").fetchall()
            )
        except (TypeError, IndexError, ValueError) as error:  # a page overwritten, a NULL
            raise DamagedIndexError(
                f"the full-text index is damaged ({error}); `szrag index --rebuild` replaces it"
            ) from error
        self._chunks = ChunkRows.of(conn)
        self._terms: OrderedDict[str, TermPostings | None] = OrderedDict()  # by token
        self._held = 0
        self._lock = threading.Lock()
        self._pending: set[str] = set()  # tokens being read in the background
        self._tokenizer = Tokenizer()
        self._phrase_tokens: dict[str, str] = {}
        self._common_asked = False
        self._stopped = threading.Event()  # background reads end after their current token

    def chunks(self, ids: Sequence[int]) -> dict[int, ChunkRow]:
        """The chunks of ``ids`` that the index holds, by id."""
        return self._chunks.rows(ids)

    @property
    def chunk_count(self) -> int:
        """How many chunks the generation holds."""
        return len(self._chunks.ids)

    # --- postings --------------------------------------------------------------------------

    def token(self, phrase: str) -> str:
        """``phrase`` as the one token the full-text table's tokenizer makes of it, or ``""``
        for a phrase of several tokens or none (never read: SQLite scores it)."""
        known = self._phrase_tokens.get(phrase)
        if known is None:
            tokens = self._tokenizer.tokens(phrase)
            known = tokens[0] if len(tokens) == 1 else ""
            if len(self._phrase_tokens) >= KNOWN_PHRASES:
                self._phrase_tokens.clear()
            self._phrase_tokens[phrase] = known
        return known

    def cached(self, phrase: str) -> TermPostings | None:
        """The postings of ``phrase`` if read already (None also for a phrase of several
        tokens, which is never read)."""
        token = self.token(phrase)
        with self._lock:
            return self._terms.get(token) if token else None

    def frequency(self, phrase: str) -> int | None:
        """How many chunks hold ``phrase``, when its postings are in memory."""
        found = self.cached(phrase)
        return found.size if found is not None else None

    def held_tokens(self) -> list[str]:
        """The tokens held, the most recently searched first."""
        with self._lock:
            return [token for token in reversed(self._terms) if self._terms[token]]

    def postings(self, index: Index, phrase: str) -> TermPostings | None:
        """The postings of ``phrase``, read on first use; None unless it is one token, or
        when the index's snapshot is no longer this view's generation."""
        token = self.token(phrase)
        return self._token_postings(index, token) if token else None

    def _token_postings(self, index: Index, token: str) -> TermPostings | None:
        with self._lock:
            if token in self._terms:
                self._terms.move_to_end(token)
                return self._terms[token]
        with index.reading():  # outside the lock: other questions go on meanwhile
            if index.generation() != self.generation:
                return None  # a reader on another snapshot: nothing kept
            found = self._read(index.conn, token)
        with self._lock:
            self._keep(token, found)
        return found

    def _keep(self, token: str, found: TermPostings | None) -> None:
        """Remember ``found`` (under the lock), forgetting the least recently used beyond
        the bound."""
        if token in self._terms:
            return
        self._terms[token] = found
        self._held += found.size if found else 0
        while self._held > self.max_postings and len(self._terms) > 1:
            _, dropped = self._terms.popitem(last=False)
            self._held -= dropped.size if dropped else 0

    def read_later(self, database: Path, phrases: Sequence[str]) -> None:
        """Read the postings of ``phrases`` in a background thread, over a connection of its
        own to ``database``: reading a common word's postings costs about twice what SQLite
        takes to score it once, so a question meeting a new word is scored by SQLite and the
        next one finds it here. Nothing is kept if the database is at another generation."""
        wanted = self._claim([token for token in map(self.token, phrases) if token])
        if wanted:
            _reader().submit(self._read_apart, database, wanted)

    def _claim(self, tokens: Sequence[str]) -> list[str]:
        """Those of ``tokens`` neither held nor being read, marked as being read."""
        with self._lock:
            wanted = [
                t for t in dict.fromkeys(tokens) if t not in self._terms and t not in self._pending
            ]
            self._pending.update(wanted)
        return wanted

    def read_common_later(self, database: Path, most_chunks: float) -> None:
        """Read, in the background, the postings of the tokens held by the most chunks (but
        none held by more than ``most_chunks``, which no question searches for), up to
        ``COMMON_POSTINGS`` entries: what SQLite takes longest to score."""
        with self._lock:
            if self._common_asked:
                return  # a warm-up warms twice: the second finds them read or being read
            self._common_asked = True
        _reader().submit(self._read_common, database, most_chunks)

    def stop_reading(self) -> None:
        """End the reads asked for in the background after the token each is reading: a
        server stopping does not wait for every common token's postings."""
        self._stopped.set()

    def _read_common(self, database: Path, most_chunks: float) -> None:
        if self._stopped.is_set():
            return
        try:
            conn = connect_read_only(database)
            try:
                conn.execute(
                    "CREATE VIRTUAL TABLE IF NOT EXISTS temp.szrag_term_rows"
                    " USING fts5vocab(main, chunk_terms, row)"
                )
                rows = conn.execute(
                    "SELECT term, doc FROM temp.szrag_term_rows WHERE doc >= ? AND doc <= ?"
                    " ORDER BY doc DESC, term",
                    (COMMON_MIN_CHUNKS, most_chunks),
                ).fetchall()
            finally:
                conn.close()
        except sqlite3.Error as error:
            log.debug("common postings not read: %s", error)
            return
        room = min(COMMON_POSTINGS, self.max_postings)
        chosen: list[str] = []
        for token, chunks in rows:
            if chunks > room:
                break
            chosen.append(token)
            room -= chunks
        wanted = self._claim(chosen)
        if wanted:
            self._read_apart(database, wanted)  # already in the reader's thread

    def _read_apart(self, database: Path, tokens: list[str]) -> None:
        try:
            conn = connect_read_only(database)
            try:
                conn.execute("BEGIN")  # one snapshot for the check and the reads
                if read_generation(conn) != self.generation:
                    return
                for token in tokens:
                    if self._stopped.is_set():
                        break
                    found = self._read(conn, token)
                    with self._lock:
                        self._keep(token, found)
            finally:
                conn.close()
        except (sqlite3.Error, DamagedIndexError) as error:  # a question meets it anyway
            log.debug("postings of %s not read: %s", tokens, error)
        finally:
            with self._lock:
                self._pending.difference_update(tokens)

    def _read(self, conn: sqlite3.Connection, token: str) -> TermPostings | None:
        """The postings of one token of the full-text table, read from it."""
        conn.execute(
            "CREATE VIRTUAL TABLE IF NOT EXISTS temp.szrag_term_instances"
            " USING fts5vocab(main, chunk_terms, instance)"
        )
        if self._whole_weights is not None:  # the sums are whole numbers: SQLite adds them
            summed = conn.execute(
                f"SELECT doc, sum({self._whole_weights}) FROM temp.szrag_term_instances"
                " WHERE term = ? GROUP BY doc ORDER BY doc",
                (token,),
            ).fetchall()
            table = np.array(summed, dtype=np.int64).reshape(-1, 2)
            return self._postings(table[:, 0], table[:, 1].astype(np.float64))
        rows = conn.execute(
            "SELECT doc, col, count(*) FROM temp.szrag_term_instances WHERE term = ?"
            " GROUP BY doc, col ORDER BY doc, col",
            (token,),
        )
        return self._postings(*_weighted(rows, self.weights))

    def _postings(self, found: IntArray, weighted: FloatArray) -> TermPostings | None:
        """The postings of the chunks ``found`` (ascending ids) with their weighted counts;
        None when one of them has no size: not the table this view read."""
        positions = np.searchsorted(self._ids, found)
        if len(found) and (
            positions[-1] >= len(self._ids) or (self._ids[positions] != found).any()
        ):
            return None
        return TermPostings.of(positions, weighted)

    def carry(self, index: Index, earlier: ChunkPostings, tokens: Sequence[str]) -> list[str]:
        """Take the postings of ``tokens`` that ``earlier`` (the view of an older generation
        of the same index) holds, changed only where chunks changed: the entries of chunks
        still here as they were are kept, and the chunks written since are counted from the
        values they were indexed with, tokenized as the full-text table tokenizes them. A
        refresh changes a few files, and reading a common word's postings again costs tens
        of milliseconds. The tokens not carried are returned, to be read."""
        with earlier._lock:
            held = [(token, earlier._terms.get(token)) for token in tokens]
        carried = [(token, found) for token, found in held if found is not None]
        if not carried or earlier.weights != self.weights:
            return list(tokens)
        with index.reading():
            if index.generation() != self.generation:
                return list(tokens)
            changes = self._changes_since(index.conn, earlier)
            if changes is None:
                return list(tokens)
            places, written = changes
            counted = _counted(written, [token for token, _ in carried], self.weights)
        nothing = (np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float64))
        for token, found in carried:
            kept = places[found.positions]
            still = kept >= 0
            chunks, weighted = counted.get(token, nothing)
            if not len(chunks):  # no chunk written since holds it: the kept places ascend
                carried_over = TermPostings(kept[still].astype(np.int32), found.weighted[still])
                with self._lock:
                    self._keep(token, carried_over)
                continue
            positions = np.concatenate([kept[still], np.searchsorted(self._ids, chunks)])
            weights = np.concatenate([found.weighted[still].astype(np.float64), weighted])
            order = np.argsort(positions, kind="stable")
            with self._lock:
                self._keep(token, TermPostings.of(positions[order], weights[order]))
        return [token for token, found in held if found is None]

    def _changes_since(
        self, conn: sqlite3.Connection, earlier: ChunkPostings
    ) -> tuple[npt.NDArray[np.int64], dict[int, tuple[str, str, str, str]]] | None:
        """The place among these chunks of each of ``earlier``'s chunks still here as it was
        (-1 for the others), and the values every chunk written since was indexed with;
        None when more than ``CARRIED_CHANGE`` of the chunks changed (a rebuild)."""
        if not (
            np.array_equal(self._ids, self._chunks.ids)
            and np.array_equal(earlier._ids, earlier._chunks.ids)
        ):
            return None
        places = self._chunks.kept_from(earlier._chunks)
        fresh = np.ones(len(self._ids), dtype=np.bool_)
        fresh[places[places >= 0]] = False
        written = self._ids[fresh]
        if len(written) > CARRIED_CHANGE * max(len(self._ids), 1):
            return None
        return places, store_fields(conn, written.tolist())

    # --- scoring ---------------------------------------------------------------------------

    def best(
        self,
        index: Index,
        phrases: Sequence[str],
        limit: int,
        frequencies: Mapping[str, int] | None = None,
    ) -> list[tuple[int, float]] | None:
        """(chunk id, bm25) of the ``limit`` best chunks matching any phrase, as
        ``ORDER BY bm25(chunk_terms, *weights) LIMIT limit`` returns them; None when a
        phrase cannot be scored from memory.

        In a server a new phrase is read now only when that costs less than the SQLite
        scoring it saves (``frequencies``: how many chunks hold each phrase), else in the
        background while SQLite scores this question."""
        tokens = [self.token(phrase) for phrase in phrases]
        if not all(tokens):
            return None  # a phrase of several tokens: SQLite matches it as a phrase
        if index.reads_from_any_thread:
            with self._lock:
                missing = [
                    phrase
                    for phrase, token in zip(phrases, tokens, strict=True)
                    if token not in self._terms
                ]
            if missing and not _cheaper_to_read(missing, phrases, frequencies or {}):
                self.read_later(index.path, missing)
                return None
        found = [self._token_postings(index, token) for token in tokens]
        postings = [item for item in found if item is not None]
        if len(postings) < len(found) or not self.rows:
            return None
        if not postings or not any(item.size for item in postings):
            return []
        held = np.zeros(len(self._ids), dtype=np.bool_)
        for item in postings:
            held[item.positions] = True
        matching = np.flatnonzero(held)
        phrases_found: list[tuple[int, FloatArray]] = []
        counts = np.zeros(len(self._ids), dtype=np.float64)
        for item in postings:
            counts[item.positions] = item.weighted
            phrases_found.append((item.size, counts[matching]))
            counts[item.positions] = 0.0
        rank = bm25_ranks(self.rows, self.average_size, self._sizes[matching], phrases_found)
        return best_ranked(self._ids[matching], rank, limit)


# Reading a phrase's postings costs about this many times what SQLite takes to score the
# chunks holding it once (measured on the benchmarks' corpus, for common and rare words).
READ_COST = 2


def _cheaper_to_read(
    missing: Sequence[str], phrases: Sequence[str], frequencies: Mapping[str, int]
) -> bool:
    """Whether reading the ``missing`` phrases' postings costs less than SQLite scoring the
    chunks holding any of ``phrases`` (a cost that grows with the chunks of each)."""
    if any(phrase not in frequencies for phrase in phrases):
        return False
    scored = sum(frequencies[phrase] for phrase in phrases)
    return READ_COST * sum(frequencies[phrase] for phrase in missing) < scored


_READER: ThreadPoolExecutor | None = None
_READER_LOCK = threading.Lock()


def _reader() -> ThreadPoolExecutor:
    """The one background thread that reads postings for every view."""
    global _READER
    with _READER_LOCK:
        if _READER is None:
            _READER = ThreadPoolExecutor(max_workers=1, thread_name_prefix="szrag-postings")
        return _READER


def stop_reads(index: IndexStore) -> None:
    """End the background reads of the index's latest view (see ``stop_reading``), and
    read no common tokens ahead for it from now on."""
    if not isinstance(index, Index):
        return
    _STOPPED.add(index)
    view = _LATEST.get(index)
    if view is not None:
        view.stop_reading()


def settle_reads() -> None:
    """Wait until the postings asked to be read in the background so far are read (a
    server's warm-up ends when the common tokens are in memory)."""
    with _READER_LOCK:
        reader = _READER
    if reader is not None:
        reader.submit(lambda: None).result()


def _sizes(rows: Sequence[tuple[int, bytes]]) -> tuple[IntArray, FloatArray]:
    """The ids and sizes (tokens in all columns) of ``chunk_terms_docsize`` rows."""
    ids = np.array([chunk_id for chunk_id, _ in rows], dtype=np.int64)
    blobs = [blob for _, blob in rows]
    summed = _summed_varints(blobs)
    if summed is not None:
        return ids, summed
    return ids, np.array([sum(varints(blob)) for blob in blobs], dtype=np.float64)


def _summed_varints(blobs: Sequence[bytes]) -> FloatArray | None:
    """The sum of each blob's varints, decoded all at once (a loop in Python over every
    chunk's sizes took a third of a view's making); None for what only ``varints`` reads
    (an empty blob, one ending mid-varint, a varint of more than eight bytes)."""
    lengths = np.array([len(blob) for blob in blobs], dtype=np.int64)
    if not len(blobs) or lengths.min() == 0:
        return None if len(blobs) else np.zeros(0, dtype=np.float64)
    data = np.frombuffer(b"".join(blobs), dtype=np.uint8)
    ends = np.flatnonzero(data < 0x80)  # each varint's last byte
    starts = np.concatenate([[0], np.cumsum(lengths)[:-1]])
    if data[starts + lengths - 1].max() >= 0x80:
        return None
    at = np.arange(len(data))
    # a byte's group of seven bits is shifted by the bytes after it in its varint
    after = ends[np.searchsorted(ends, at)] - at
    if after.max() > 8:
        return None
    groups = (data & 0x7F).astype(np.int64) << (7 * after)
    return np.add.reduceat(groups, starts).astype(np.float64)


def _whole_weights(weights: Sequence[float]) -> str | None:
    """An SQL expression of the column weight of one instance row of ``fts5vocab``, when
    every weight is a whole number: a sum of them is then exact in any order, as
    ``column_weighted`` adds them one by one (None otherwise)."""
    chosen = [weights[number] if number < len(weights) else 1.0 for number in range(len(COLUMNS))]
    if not all(float(weight).is_integer() and abs(weight) < 1 << 20 for weight in chosen):
        return None
    cases = " ".join(
        f"WHEN '{name}' THEN {int(weight)}" for name, weight in zip(COLUMNS, chosen, strict=True)
    )
    return f"CASE col {cases} ELSE 0 END"


CARRIED_CHANGE = 0.1  # of the chunks: past this share a view's postings are read again


def _weighted(
    rows: Iterable[tuple[int, str, int]], weights: Sequence[float]
) -> tuple[IntArray, FloatArray]:
    """Rows of ``fts5vocab``'s instance table grouped by chunk and column, in that order
    (chunk id, column, instances): each chunk's id and its column-weighted count, as
    ``bm25`` sums it."""
    chunks: list[int] = []
    columns: list[list[int]] = []  # instances in each column, per chunk
    for chunk_id, column, count in rows:
        if not chunks or chunks[-1] != chunk_id:
            chunks.append(chunk_id)
            columns.append([0] * len(COLUMNS))
        columns[-1][_COLUMNS[column]] = count
    # most chunks share a handful of count patterns: each pattern is summed once
    known: dict[tuple[int, ...], float] = {}
    weighted: list[float] = []
    for counts in columns:
        key = tuple(counts)
        value = known.get(key)
        if value is None:
            value = known[key] = column_weighted(key, weights)
        weighted.append(value)
    return np.array(chunks, dtype=np.int64), np.array(weighted, dtype=np.float64)


def _counted(
    written: Mapping[int, Sequence[str]], tokens: Sequence[str], weights: Sequence[float]
) -> dict[str, tuple[IntArray, FloatArray]]:
    """For each of ``tokens``, the chunks of ``written`` (id: indexed values) holding it, in
    id order, with its column-weighted count in each: the chunks tokenized as the full-text
    table tokenizes them, in a table of their own."""
    wanted = sorted({token for token in tokens if token})
    if not written or not wanted:
        return {}
    conn = sqlite3.connect(":memory:")
    try:
        columns = ", ".join(COLUMNS)
        conn.execute(
            f"CREATE VIRTUAL TABLE written USING fts5({columns}, tokenize = '{TERMS_TOKENIZER}')"
        )
        conn.execute("CREATE VIRTUAL TABLE written_instances USING fts5vocab(written, instance)")
        marks = ", ".join("?" * len(COLUMNS))
        conn.executemany(
            f"INSERT INTO written(rowid, {columns}) VALUES (?, {marks})",
            ((chunk_id, *values) for chunk_id, values in sorted(written.items())),
        )
        return {
            token: _weighted(
                conn.execute(
                    "SELECT doc, col, count(*) FROM written_instances WHERE term = ?"
                    " GROUP BY doc, col ORDER BY doc, col",
                    (token,),
                ),
                weights,
            )
            for token in wanted
        }
    finally:
        conn.close()


VIEW = POSTINGS_VIEW
# per index: the view last warmed, whose recent terms the next generation reads again
_LATEST: weakref.WeakKeyDictionary[Index, ChunkPostings] = weakref.WeakKeyDictionary()
_STOPPED: weakref.WeakSet[Index] = weakref.WeakSet()  # indexes whose reads were stopped


def memory_postings(index: Index, weights: Sequence[float]) -> ChunkPostings | None:
    """The postings view of the index's current generation, when it is kept in memory."""
    if not index.in_memory:
        return None
    with index.reading():
        generation = index.generation()
        return index.derived(VIEW, lambda: ChunkPostings(index.conn, generation, weights))


def warm_postings(index: Index, weights: Sequence[float], most_chunks: float | None = None) -> None:
    """Build the current generation's view with the tokens the previous one held (carried,
    or the last searched read again), so the first questions after a change find them in
    memory; with ``most_chunks`` (the most chunks a searched token is held by), read the
    common tokens in the background."""
    view = memory_postings(index, weights)
    if view is None:
        return
    previous = _LATEST.get(index)
    _LATEST[index] = view
    earlier = previous if previous is not view else None
    # every token the last view held is carried (a numpy merge, not a read); only the most
    # recently searched of those it could not carry are read again now
    tokens = list(reversed(earlier.held_tokens())) if earlier is not None else []
    searched: deque[str] = index.carried(SEARCHED, deque())
    while searched:  # those a face's first questions searched before this view
        token = view.token(searched.popleft())
        if token:
            tokens.append(token)
    tokens = list(dict.fromkeys(tokens))
    wanted = len(tokens)
    if earlier is not None:
        tokens = view.carry(index, earlier, tokens)
    for token in tokens[-CARRIED_TERMS:]:
        view._token_postings(index, token)
    # the common tokens once a process has a view, or again when none could be carried (a
    # rebuild): after an edit they came with the rest
    if index in _STOPPED:
        view.stop_reading()  # a view made as its server stops reads nothing ahead
    elif most_chunks is not None and (earlier is None or not wanted or len(tokens) == wanted):
        view.read_common_later(index.path, most_chunks)
