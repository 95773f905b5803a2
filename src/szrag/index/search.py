"""The SQLite store's full-text search over chunks: FTS5's ``bm25()`` in a one-shot command, the
same scores from in-memory postings (``index.postings``) in a process that keeps views.

Which of the two answers is the store's business: a ranker asks for the best chunks and
gets the same ids and scores either way (a test compares both paths).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, cast

from szrag.index import store
from szrag.index.protocol import ChunkRow

if TYPE_CHECKING:
    from szrag.index.handle import Index
    from szrag.index.postings import ChunkPostings


# the words searched without postings in memory (a one-shot, or a face before its views are
# built), latest last: a face's postings view reads them as it is built
SEARCHED = "index.search.searched"
POSTINGS_VIEW = "rank.bm25.postings"  # the postings view of a generation (``index.postings``)
SEARCHED_TERMS = 64


class SqliteFullText:
    """The ``FullTextSearch`` of one SQLite index with these column weights."""

    def __init__(self, index: Index, weights: Sequence[float]) -> None:
        self._index = index
        self.weights = tuple(weights)
        # a long-running reader's postings of the current generation; None in a one-shot,
        # which never imports numpy
        self._memory: ChunkPostings | None = None
        if index.in_memory:
            from szrag.index.postings import memory_postings

            self._memory = memory_postings(index, self.weights)
        else:  # a face whose warm-up is under way may have read them already
            self._memory = cast("ChunkPostings | None", index.built(POSTINGS_VIEW))

    def chunk_count(self) -> int:
        """How many chunks the index holds (counting them took 1.2 ms a question over
        54,000 files: a view kept in memory knows)."""
        if self._memory is not None:
            return self._memory.chunk_count
        return store.chunk_count(self._index.conn)

    def frequency(self, term: str) -> int:
        """How many chunks hold ``term`` (from memory when its postings were read)."""
        known = self._memory.frequency(term) if self._memory is not None else None
        if known is not None:
            return known
        return store.term_frequency(self._index.conn, term)

    def best(
        self, terms: Sequence[str], limit: int, frequencies: Mapping[str, int]
    ) -> list[tuple[int, float]]:
        """(chunk id, bm25 rank) of the best chunks holding any of ``terms``, best first:
        from memory when it can score every term, else from FTS5."""
        if self._memory is not None:
            found = self._memory.best(self._index, terms, limit, frequencies)
            if found is not None:
                return found
        else:  # a face's first questions, before its views: their words are read with them
            searched: deque[str] | None = self._index.carried(SEARCHED, None)
            if searched is None:
                searched = deque(maxlen=SEARCHED_TERMS)
                self._index.carry(SEARCHED, searched)
            searched.extend(terms)
        rows = self._index.conn.execute(
            "SELECT rowid, bm25(chunk_terms, ?, ?, ?, ?) AS rank FROM chunk_terms"
            " WHERE chunk_terms MATCH ? ORDER BY rank LIMIT ?",
            (*self.weights, " OR ".join(f'"{term}"' for term in terms), limit),
        ).fetchall()
        return [(int(chunk_id), float(rank)) for chunk_id, rank in rows]

    def chunk_rows(self, ids: Sequence[int]) -> dict[int, ChunkRow]:
        """The chunks of ``ids`` that the index holds, by id."""
        if self._memory is not None:
            return self._memory.chunks(ids)
        return store.chunk_rows(self._index.conn, ids)

    def holds(self, term: str, chunk_id: int) -> bool:
        """Whether chunk ``chunk_id`` holds ``term``."""
        row = self._index.conn.execute(
            "SELECT 1 FROM chunk_terms WHERE chunk_terms MATCH ? AND rowid = ?",
            (f'"{term}"', chunk_id),
        ).fetchone()
        return row is not None

    def warm(self, most_chunks: float | None = None) -> None:
        """Build the postings of the current generation (when kept in memory), with the terms
        last searched for read again; with ``most_chunks`` (the most chunks a searched term
        is held by), the common terms read in the background."""
        if self._index.in_memory:
            from szrag.index.postings import warm_postings

            warm_postings(self._index, self.weights, most_chunks)
