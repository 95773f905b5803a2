"""FTS5's own arithmetic and tokens, for every store that must score as SQLite's FTS5 does.

The SQLite store's in-memory postings (``index.postings``) and the PostgreSQL store
(``index.pg``) both find the chunks holding a question's terms by other means than FTS5, then
compute FTS5's ``bm25()`` here: the floating-point operations are ``fts5Bm25Function``'s, in
its order, so every score is the same to the last bit, and the best chunks come in the order
``ORDER BY bm25(...) LIMIT n`` gives them, ties by row id as SQLite's sorter keeps them.
"""

from __future__ import annotations

import heapq
import math
import sqlite3
import threading
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from szrag.index.store import TERMS_TOKENIZER

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

K1 = 1.2  # FTS5's bm25 constants
B = 0.75
COLUMNS = ("path", "heading", "symbols", "body")  # chunk_terms, as created


def varints(blob: bytes) -> list[int]:
    """The SQLite varints of an FTS5 record (big-endian groups of seven bits)."""
    values: list[int] = []
    value = 0
    for byte in blob:
        value = (value << 7) | (byte & 0x7F)
        if not byte & 0x80:
            values.append(value)
            value = 0
    return values


def column_weighted(counts: Sequence[int], weights: Sequence[float]) -> float:
    """A phrase's frequency in one row as ``bm25`` sums it: the column weight of each of its
    instances (``counts``: how many in each column, in column order), one by one."""
    total = 0.0
    for number, count in enumerate(counts):
        weight = weights[number] if number < len(weights) else 1.0
        for _ in range(count):
            total += weight
    return total


def average_size(rows: int, column_totals: Sequence[int]) -> float:
    """``avgdl``: the tokens of every column of every row, over the rows."""
    return float(sum(column_totals)) / float(rows) if rows else 0.0


def bm25_ranks(
    rows: int,
    average: float,
    sizes: FloatArray,
    phrases: Sequence[tuple[int, FloatArray]],
) -> FloatArray:
    """``bm25()`` of each matching row: ``sizes`` are the rows' token counts (every column),
    ``phrases`` each query phrase in query order with the number of rows holding it and its
    column-weighted frequency in each matching row. Lower is better, as FTS5 ranks."""
    # fts5Bm25Function: k1 * (1 - b + b * D / avgdl), then each phrase in query order
    norm = K1 * ((1 - B) + B * sizes / average)
    score = np.zeros(len(sizes), dtype=np.float64)
    for hits, frequency in phrases:
        idf = math.log((rows - hits + 0.5) / (hits + 0.5))
        if idf <= 0.0:
            idf = 1e-6
        score = score + idf * ((frequency * (K1 + 1.0)) / (frequency + norm))
    ranked: FloatArray = -1.0 * score
    return ranked


def best_ranked(ids: IntArray, ranks: FloatArray, limit: int) -> list[tuple[int, float]]:
    """(row id, rank) of the ``limit`` best rows, best first, ties by row id."""
    if len(ids) > limit:  # the limit best, ties by row as SQLite keeps them
        keep = np.argpartition(ranks, limit - 1)[:limit]
        cut = ranks[keep].max()
        keep = np.flatnonzero(ranks <= cut)
    else:
        keep = np.arange(len(ids))
    best = heapq.nsmallest(limit, zip(ranks[keep].tolist(), ids[keep].tolist(), strict=True))
    return [(row_id, value) for value, row_id in best]


class Tokenizer:
    """Text as the full-text table's tokenizer splits and stems it (an in-memory FTS5 table
    with the same tokenizer; thread-safe)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = None

    def tokens(self, text: str) -> list[str]:
        """The tokens of ``text`` in order (a phrase of several, one, or none)."""
        with self._lock:
            if self._conn is None:
                self._conn = sqlite3.connect(":memory:", check_same_thread=False)
                self._conn.execute(
                    f"CREATE VIRTUAL TABLE probe USING fts5(text, tokenize = '{TERMS_TOKENIZER}')"
                )
                self._conn.execute(
                    "CREATE VIRTUAL TABLE probe_tokens USING fts5vocab(probe, instance)"
                )
            self._conn.execute("DELETE FROM probe")
            self._conn.execute("INSERT INTO probe(rowid, text) VALUES (1, ?)", (text,))
            found = self._conn.execute('SELECT term FROM probe_tokens ORDER BY "offset"').fetchall()
        return [term for (term,) in found]
