"""The PostgreSQL store's full-text search: candidates through the GIN index, FTS5's scores.

A question's terms are tokenized as the SQLite store's FTS5 table tokenizes them (the same
tokenizer, in an in-memory SQLite table), and each becomes a lexeme, or a phrase of lexemes
that must follow one another, of one ``tsquery``: the chunks it matches (``@@``, answered by
the GIN index) are exactly the chunks FTS5 would match. Their tokens' counts by column come
back with them, and ``index.fts5`` scores them with FTS5's own ``bm25`` arithmetic, so the
scores and their order, ties included, are the SQLite store's.

The tsquery is written as a literal of the lexemes themselves rather than through
``to_tsquery``: PostgreSQL's parser and dictionaries would split and fold again the tokens
FTS5 already made, and could then miss what FTS5 finds.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from szrag.index.fts5 import (
    Tokenizer,
    average_size,
    best_ranked,
    bm25_ranks,
    column_weighted,
)
from szrag.index.pg.vectors import (
    WEIGHTS,
    column_counts,
    lexeme,
    phrase_counts,
    positions_of,
    quoted,
)
from szrag.index.protocol import ChunkRow

if TYPE_CHECKING:
    from szrag.index.pg.reader import Changes, PostgresIndex

_TOKENIZER = Tokenizer()

Phrase = tuple[str, ...]  # the lexemes of one term, in order

# A replica keeps the postings of the lexemes it searched, per generation: reading a common
# word's matches from the store and counting them in Python took about a second a question
# over a 9,200-file repository, asked again or not. 24 bytes an entry, and a lexeme's own
# objects (its arrays, its record) about as much as 24 entries: 24 MB at most, as much as
# the SQLite store's read-ahead postings (3 million entries of 8 bytes).
KEPT_ENTRIES = 1_000_000
LEXEME_ENTRIES = 24


@dataclass(frozen=True, slots=True)
class LexemePostings:
    """The chunks holding one lexeme: their ids (ascending), sizes, and the lexeme's
    column-weighted frequency in each (``column_weighted``, for one set of weights)."""

    ids: npt.NDArray[np.int64]
    sizes: npt.NDArray[np.float64]
    weighted: npt.NDArray[np.float64]


class KeptPostings:
    """The postings a long-running reader keeps for one generation and one set of weights,
    the least recently searched dropped past ``KEPT_ENTRIES`` entries (thread-safe)."""

    def __init__(self, most_entries: int = KEPT_ENTRIES) -> None:
        self.most_entries = most_entries
        self._kept: OrderedDict[str, LexemePostings] = OrderedDict()
        self._entries = 0
        self._lock = threading.Lock()

    def get(self, name: str) -> LexemePostings | None:
        with self._lock:
            found = self._kept.get(name)
            if found is not None:
                self._kept.move_to_end(name)
            return found

    def put(self, name: str, postings: LexemePostings) -> None:
        size = _entries(postings)
        if size > self.most_entries:
            return  # used for the question that read it, not kept
        with self._lock:
            if name in self._kept:
                return
            self._kept[name] = postings
            self._entries += size
            while self._entries > self.most_entries:
                _, dropped = self._kept.popitem(last=False)
                self._entries -= _entries(dropped)

    def updated(
        self,
        changed: npt.NDArray[np.int64],
        read: Callable[[list[str], npt.NDArray[np.int64]], dict[str, LexemePostings]],
    ) -> KeptPostings:
        """These postings for a later generation, whose publishes rewrote the chunks
        ``changed`` (ascending): each lexeme's entries of other chunks kept, and its entries
        among ``changed`` read again (``read``: the lexemes' postings among those chunks)."""
        with self._lock:
            held = list(self._kept.items())  # least recently searched first
        fresh = read([name for name, _ in held], changed) if len(changed) and held else {}
        later = KeptPostings(self.most_entries)
        for name, postings in held:
            kept = ~np.isin(postings.ids, changed, assume_unique=True)
            new = fresh.get(name)
            if new is None and kept.all():
                later.put(name, postings)
                continue
            ids = postings.ids[kept]
            sizes = postings.sizes[kept]
            weighted = postings.weighted[kept]
            if new is not None:
                ids = np.concatenate([ids, new.ids])
                sizes = np.concatenate([sizes, new.sizes])
                weighted = np.concatenate([weighted, new.weighted])
                order = np.argsort(ids, kind="stable")
                ids, sizes, weighted = ids[order], sizes[order], weighted[order]
            later.put(name, LexemePostings(ids, sizes, weighted))
        return later


# a lexeme's instances in each column, counted by PostgreSQL from its positions' weights
_COUNTED = ", ".join(f"cardinality(array_positions(u.weights, '{weight}'))" for weight in WEIGHTS)
_NO_POSTINGS = LexemePostings(
    np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float64), np.zeros(0, dtype=np.float64)
)


def _entries(postings: LexemePostings) -> int:
    """What one lexeme's postings count against the bound: its entries and its own objects."""
    return len(postings.ids) + LEXEME_ENTRIES


def phrase_of(term: str) -> Phrase:
    """The lexemes FTS5 would search for ``term``: one, a phrase of several, or none (a term
    of no token, which FTS5 leaves out of the query)."""
    return tuple(lexeme(token) for token in _TOKENIZER.tokens(term))


def tsquery(phrases: Sequence[Phrase]) -> str:
    """A tsquery literal matching any of ``phrases``."""
    return " | ".join(
        quoted(phrase[0]) if len(phrase) == 1 else "(" + " <-> ".join(map(quoted, phrase)) + ")"
        for phrase in phrases
    )


class PostgresFullText:
    """The ``FullTextSearch`` of one PostgreSQL index with these column weights."""

    def __init__(self, index: PostgresIndex, weights: Sequence[float]) -> None:
        self._index = index
        self.weights = tuple(weights)

    def chunk_count(self) -> int:
        """How many chunks the index holds."""
        return self._index.record().chunks

    def frequency(self, term: str) -> int:
        """How many chunks hold ``term``."""
        phrase = phrase_of(term)
        if not phrase:
            return 0
        if len(phrase) == 1:
            return self._documents(phrase).get(phrase[0], 0)
        return len(self._matches([phrase]))

    def best(
        self, terms: Sequence[str], limit: int, frequencies: Mapping[str, int]
    ) -> list[tuple[int, float]]:
        """(chunk id, bm25 rank) of the ``limit`` best chunks holding any of ``terms``, best
        first, as FTS5's ``ORDER BY bm25(...) LIMIT`` gives them (``frequencies`` unused:
        the store reads FTS5's own document counts)."""
        phrases = [phrase for phrase in map(phrase_of, terms) if phrase]
        if not phrases:
            return []
        if all(len(phrase) == 1 for phrase in phrases):
            with self._index.reading():  # the kept postings and their reads of one generation
                kept = self._kept()
                if kept is not None:
                    return self._best_kept(kept, [phrase[0] for phrase in phrases], limit)
        found = self._matches(phrases)
        if not found:
            return []
        documents = self._documents([phrase[0] for phrase in phrases if len(phrase) == 1])
        ids = sorted(found)
        scored: list[tuple[int, Any]] = []
        for number, phrase in enumerate(phrases):
            hits = (
                documents.get(phrase[0], 0)
                if len(phrase) == 1
                else sum(1 for chunk in found.values() if any(chunk[1][number]))
            )
            weighted = [column_weighted(found[chunk][1][number], self.weights) for chunk in ids]
            scored.append((hits, np.array(weighted, dtype=np.float64)))
        sizes = np.array([found[chunk][0] for chunk in ids], dtype=np.float64)
        return self._ranked(np.array(ids, dtype=np.int64), sizes, scored, limit)

    def _ranked(
        self,
        ids: npt.NDArray[np.int64],
        sizes: npt.NDArray[np.float64],
        scored: Sequence[tuple[int, Any]],
        limit: int,
    ) -> list[tuple[int, float]]:
        """The ``limit`` best of the chunks ``ids`` (ascending) by FTS5's ``bm25``: their
        sizes, and each phrase's hits and column-weighted frequencies in them."""
        record = self._index.record()
        average = average_size(record.full_text_rows, record.column_totals)
        ranks = bm25_ranks(record.full_text_rows, average, sizes, scored)
        return best_ranked(ids, ranks, limit)

    def _kept(self) -> KeptPostings | None:
        """The postings kept for this generation and these weights, when the index keeps
        views in memory (a long-running face): a new generation's are the last one's, the
        chunks the publishes since rewrote read again."""
        if not self._index.in_memory:
            return None
        key = f"pg.postings.{self.weights}"

        def updated(kept: KeptPostings, changes: Changes) -> KeptPostings:
            return kept.updated(changes.chunks, self._postings_among)

        return self._index.derived(
            key, lambda: self._index.carried_view(key, KeptPostings, updated)
        )

    def _best_kept(
        self, kept: KeptPostings, lexemes: Sequence[str], limit: int
    ) -> list[tuple[int, float]]:
        """``best`` for lexemes alone, from their kept postings (each read once): the same
        arithmetic on the same values, so the same scores to the last bit."""
        postings: list[LexemePostings] = []
        for name in lexemes:
            found = kept.get(name)
            if found is None:
                found = self._postings(name)
                kept.put(name, found)
            postings.append(found)
        ids = np.unique(np.concatenate([item.ids for item in postings]))
        if not len(ids):
            return []
        documents = self._documents(lexemes)
        sizes = np.zeros(len(ids), dtype=np.float64)
        scored: list[tuple[int, Any]] = []
        for name, item in zip(lexemes, postings, strict=True):
            places = np.searchsorted(ids, item.ids)
            sizes[places] = item.sizes
            weighted = np.zeros(len(ids), dtype=np.float64)
            weighted[places] = item.weighted
            scored.append((documents.get(name, 0), weighted))
        return self._ranked(ids, sizes, scored, limit)

    def _postings(self, name: str) -> LexemePostings:
        """The postings of one lexeme, read from the store: its instances in each column
        counted by PostgreSQL (a chunk's exact counts when it keeps them), not its positions
        and weights sent as arrays for Python to count."""
        with self._index.snapshot() as (conn, _):
            rows = conn.execute(
                f"SELECT %(lexeme)s, t.chunk_id, t.size, t.counts -> %(lexeme)s, {_COUNTED}"
                " FROM szrag_chunk_terms t"
                " LEFT JOIN LATERAL unnest(t.terms) u ON u.lexeme = %(lexeme)s"
                " WHERE t.repository = %(repository)s"
                " AND t.terms @@ %(query)s::tsquery ORDER BY t.chunk_id",
                {
                    "lexeme": name,
                    "repository": self._index.repository,
                    "query": tsquery([(name,)]),
                },
            ).fetchall()
        return self._counted(rows).get(name, _NO_POSTINGS)

    def _postings_among(
        self, names: list[str], chunk_ids: npt.NDArray[np.int64]
    ) -> dict[str, LexemePostings]:
        """The postings of each of ``names`` among the chunks ``chunk_ids``, counted as
        ``_postings`` counts them (lexemes holding none are left out)."""
        with self._index.snapshot() as (conn, _):
            rows = conn.execute(
                f"SELECT u.lexeme, t.chunk_id, t.size, t.counts -> u.lexeme, {_COUNTED}"
                " FROM szrag_chunk_terms t, unnest(t.terms) u"
                " WHERE t.repository = %(repository)s AND t.chunk_id = ANY(%(ids)s)"
                " AND u.lexeme = ANY(%(names)s) ORDER BY u.lexeme, t.chunk_id",
                {"repository": self._index.repository, "ids": chunk_ids.tolist(), "names": names},
            ).fetchall()
        return self._counted(rows)

    def _counted(self, rows: Sequence[Sequence[Any]]) -> dict[str, LexemePostings]:
        """Each lexeme's postings from rows of (lexeme, chunk id, size, exact counts or
        NULL, instances in each column), by lexeme and chunk id: the chunks where it counts."""
        grouped: dict[str, tuple[list[int], list[float], list[float]]] = {}
        for name, chunk_id, size, exact, *columns in rows:
            counts = list(exact) if exact is not None else [count or 0 for count in columns]
            if any(counts):
                ids, sizes, weighted = grouped.setdefault(name, ([], [], []))
                ids.append(int(chunk_id))
                sizes.append(float(size))
                weighted.append(column_weighted(counts, self.weights))
        return {
            name: LexemePostings(
                np.array(ids, dtype=np.int64),
                np.array(sizes, dtype=np.float64),
                np.array(weighted, dtype=np.float64),
            )
            for name, (ids, sizes, weighted) in grouped.items()
        }

    def chunk_rows(self, ids: Sequence[int]) -> dict[int, ChunkRow]:
        """The chunks of ``ids`` that the index holds, by id."""
        return self._index.chunk_rows(ids)

    def holds(self, term: str, chunk_id: int) -> bool:
        """Whether chunk ``chunk_id`` holds ``term``."""
        phrase = phrase_of(term)
        return bool(phrase) and chunk_id in self._matches([phrase], chunk_id)

    def warm(self, most_chunks: float | None = None) -> None:
        """Nothing is kept in memory but the generation's record."""
        self._index.record()

    # --- reads -------------------------------------------------------------------------------

    def _documents(self, lexemes: Sequence[str]) -> dict[str, int]:
        """How many chunks hold each of ``lexemes`` (FTS5's own counts)."""
        if not lexemes:
            return {}
        with self._index.snapshot() as (conn, _):
            rows = conn.execute(
                "SELECT term, documents FROM szrag_vocabulary"
                " WHERE repository = %s AND term = ANY(%s)",
                (self._index.repository, list(lexemes)),
            ).fetchall()
        return {term: int(documents) for term, documents in rows}

    def _matches(
        self, phrases: Sequence[Phrase], chunk_id: int | None = None
    ) -> dict[int, tuple[int, list[list[int]]]]:
        """Each chunk holding any of ``phrases`` (only ``chunk_id``, when given): its size
        and how often it holds each phrase in each column."""
        lexemes = sorted({name for phrase in phrases for name in phrase})
        only = "" if chunk_id is None else " AND t.chunk_id = %(chunk)s"
        with self._index.snapshot() as (conn, _):
            rows = conn.execute(
                "SELECT t.chunk_id, t.size, t.counts, u.lexeme, u.positions, u.weights"
                " FROM szrag_chunk_terms t"
                " LEFT JOIN LATERAL unnest(t.terms) u ON u.lexeme = ANY(%(lexemes)s)"
                " WHERE t.repository = %(repository)s"
                f" AND t.terms @@ %(query)s::tsquery{only}",
                {
                    "lexemes": lexemes,
                    "repository": self._index.repository,
                    "query": tsquery(phrases),
                    "chunk": chunk_id,
                },
            ).fetchall()
        chunks: dict[int, tuple[int, dict[str, Any] | None, dict[str, tuple[Any, Any]]]] = {}
        for found_id, size, counts, name, positions, weights in rows:
            held = chunks.setdefault(int(found_id), (int(size), counts, {}))[2]
            if name is not None:
                held[name] = (positions or [], weights or [])
        found: dict[int, tuple[int, list[list[int]]]] = {}
        for found_id, (size, counts, held) in chunks.items():
            each = [_counts(phrase, counts, held) for phrase in phrases]
            if any(any(columns) for columns in each):
                found[found_id] = (size, each)
        return found


def _counts(
    phrase: Phrase, exact: dict[str, Any] | None, held: dict[str, tuple[Any, Any]]
) -> list[int]:
    """How often ``phrase`` occurs in each column of one chunk: its exact counts when the
    chunk keeps them, else from its lexemes' positions and weights."""
    if len(phrase) == 1:
        if exact is not None:
            return list(exact.get(phrase[0], [0] * len(WEIGHTS)))
        return column_counts(held[phrase[0]][1]) if phrase[0] in held else [0] * len(WEIGHTS)
    if any(name not in held for name in phrase):
        return [0] * len(WEIGHTS)
    return phrase_counts([positions_of(*held[name]) for name in phrase])
