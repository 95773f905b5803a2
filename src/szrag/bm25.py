"""The ``bm25`` ranker: fielded BM25 over code-aware terms, plus structural evidence.

Each chunk is indexed (SQLite FTS5) with four fields: its file's path, its Markdown heading,
the names of the functions and classes defined in it, and its text, all rewritten by
``code_terms`` so identifiers match both whole and by their words. A question is reduced to its
content terms (common English and question words removed). On top of BM25:

* a file the question names by path always comes first;
* a file that defines a symbol, serves a route or reads an environment variable that the
  question names gets a bonus;
* files that the leading results import, or are imported by, are lifted a little (one step
  of a walk over the import graph from the matched files);
* when the best chunk covers too little of what the question asks (weighted by how rare each
  term is), nothing is returned rather than noise.
"""

from __future__ import annotations

import math
import re
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from szrag.index import Index
from szrag.index.terms import symbol_key
from szrag.text import code_terms

FIELD_WEIGHTS = (4.0, 2.0, 5.0, 1.0)  # path, heading, symbols, body
CANDIDATE_CHUNKS = 400
COMMON_SHARE = 0.5  # in a large index, a term in more than this share of chunks is
COMMON_MIN_CHUNKS = 2000  # left out of the search: it barely moves BM25 but costs a scan
PATH_MENTION_BONUS = 100.0
SYMBOL_BONUS = 8.0
CALL_BONUS = 4.0
STEM_FACTOR = 1.3  # the question names the file itself ("the bm25 ranker", "webhook.js")
TEST_FACTOR = 0.75  # tests and fixtures rarely answer a question unless it asks about tests
ROUTE_BONUS = 8.0
ENVIRONMENT_BONUS = 4.0
GRAPH_ROOTS = 3  # files whose imports and importers are lifted
GRAPH_SHARE = 0.1  # one step of a personalised walk: neighbours of the leading files
RELATIVE_CUT = 0.45  # keep files scoring at least this share of the best
MIN_COVERAGE = 0.34  # share of the question's term weight the best chunk must match
SCORE_SCALE = 10  # sources carry integer scores, like the spec ranker's

STOPWORDS = frozenset(
    [
        "a",
        "about",
        "above",
        "after",
        "again",
        "all",
        "also",
        "am",
        "an",
        "and",
        "any",
        "are",
        "as",
        "at",
        "be",
        "been",
        "before",
        "being",
        "below",
        "between",
        "both",
        "but",
        "by",
        "can",
        "could",
        "did",
        "do",
        "does",
        "doing",
        "done",
        "down",
        "during",
        "each",
        "few",
        "for",
        "from",
        "further",
        "get",
        "gets",
        "got",
        "had",
        "has",
        "have",
        "having",
        "he",
        "her",
        "here",
        "hers",
        "him",
        "his",
        "how",
        "i",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "itself",
        "just",
        "let",
        "lets",
        "me",
        "more",
        "most",
        "my",
        "no",
        "nor",
        "not",
        "now",
        "of",
        "off",
        "on",
        "once",
        "only",
        "or",
        "other",
        "our",
        "ours",
        "out",
        "over",
        "own",
        "same",
        "she",
        "should",
        "so",
        "some",
        "such",
        "than",
        "that",
        "the",
        "their",
        "theirs",
        "them",
        "then",
        "there",
        "these",
        "they",
        "this",
        "those",
        "through",
        "to",
        "too",
        "under",
        "until",
        "up",
        "very",
        "was",
        "we",
        "were",
        "what",
        "when",
        "where",
        "which",
        "while",
        "who",
        "whom",
        "why",
        "will",
        "with",
        "would",
        "you",
        "your",
        "yours",
        "explain",
        "tell",
        "show",
        "find",
        "happen",
        "happens",
        "happening",
        "work",
        "works",
        "working",
        "used",
        "use",
        "uses",
        "using",
        "file",
        "files",
        "code",
        "implemented",
        "implement",
        "implementation",
        "handled",
        "handle",
        "handles",
        "does",
        "done",
        "repository",
        "repo",
        "project",
        "please",
        "way",
        "ways",
    ]
)

_TERM = re.compile(r"[a-z0-9]+")
_TEST_PATH = re.compile(
    r"(^|/)(tests?|__tests__|spec|fixtures)/|(^|/)test_[^/]*$|[._-](test|spec)\.[a-z]+$"
)
_ASKS_ABOUT_TESTS = re.compile(r"\b(tests?|testing|tested|specs?|fixtures?)\b", re.IGNORECASE)
_ROUTE = re.compile(r"(?<![\w.])/[A-Za-z0-9_\-./:{}<>]*")
_ENVIRONMENT = re.compile(r"\b[A-Z][A-Z0-9_]{2,}\b")
_COMPOUND = re.compile(r"\b[A-Za-z][A-Za-z0-9]*(?:[a-z0-9][A-Z]|_[A-Za-z0-9])[A-Za-z0-9_]*\b")
_CODE_SPAN = re.compile(r"`([A-Za-z_][\w.]*)(?:\(\))?`")
_CALLED = re.compile(r"\b([A-Za-z_][\w.]*)\(\)")


@dataclass(frozen=True, slots=True)
class RankedChunk:
    """A ranked chunk of one file, as either ranker returns it."""

    chunk_id: int
    path: str
    seq: int
    start: int
    end: int
    type: str
    heading: str | None
    score: int


def query_terms(question: str) -> list[str]:
    """The content terms of a question, code-aware, in first-seen order."""
    found = _TERM.findall(code_terms(question).lower())
    return list(dict.fromkeys(term for term in found if len(term) > 1 and term not in STOPWORDS))


def named_symbols(question: str) -> set[str]:
    """Identifiers the question names: compound ones (``restartService``, ``default_jobs``)
    and any written as code (in backticks or followed by parentheses), as lookup keys."""
    found = {match for match in _COMPOUND.findall(question)}
    found |= set(_CODE_SPAN.findall(question)) | set(_CALLED.findall(question))
    return {symbol_key(name) for name in found if len(name) > 2}


def _document_frequencies(conn: sqlite3.Connection, terms: Sequence[str]) -> dict[str, int]:
    """How many chunks contain each term (after the index's stemming)."""
    return {
        term: conn.execute(
            "SELECT count(*) FROM chunk_terms WHERE chunk_terms MATCH ?", (f'"{term}"',)
        ).fetchone()[0]
        for term in terms
    }


def _idf(total: int, frequency: int) -> float:
    return math.log(1 + (total - frequency + 0.5) / (frequency + 0.5))


def _match_expression(terms: Sequence[str]) -> str:
    return " OR ".join(f'"{term}"' for term in terms)


def _chunk_facts(conn: sqlite3.Connection, ids: Sequence[int]) -> dict[int, tuple[Any, ...]]:
    facts: dict[int, tuple[Any, ...]] = {}
    for offset in range(0, len(ids), 500):
        batch = list(ids[offset : offset + 500])
        marks = ",".join("?" * len(batch))
        rows = conn.execute(
            "SELECT c.id, f.path, c.seq, c.start, c.end, f.type, c.heading FROM chunks c"
            f" JOIN files f ON f.id = c.file_id WHERE c.id IN ({marks})",
            batch,
        )
        facts.update({row[0]: row for row in rows})
    return facts


def _matched_terms(conn: sqlite3.Connection, chunk_id: int, terms: Sequence[str]) -> set[str]:
    """Which of ``terms`` the chunk contains, as the full-text index sees them."""
    return {
        term
        for term in terms
        if conn.execute(
            "SELECT 1 FROM chunk_terms WHERE chunk_terms MATCH ? AND rowid = ?",
            (f'"{term}"', chunk_id),
        ).fetchone()
    }


def _first_chunk(conn: sqlite3.Connection, path: str) -> tuple[Any, ...] | None:
    row: tuple[Any, ...] | None = conn.execute(
        "SELECT c.id, f.path, c.seq, c.start, c.end, f.type, c.heading FROM chunks c"
        " JOIN files f ON f.id = c.file_id WHERE f.path = ? ORDER BY c.seq LIMIT 1",
        (path,),
    ).fetchone()
    return row


def _structural_evidence(
    conn: sqlite3.Connection, question: str, wanted: set[str]
) -> dict[str, tuple[float, int | None]]:
    """Per file: a bonus for defining or calling a named symbol, serving a named route or
    reading a named environment variable, and the line of the named definition or call."""
    lookups: list[tuple[str, str]] = [
        (name, kind) for name in wanted for kind in ("definition", "call")
    ]
    lookups += [(route.rstrip(".,?"), "route") for route in _ROUTE.findall(question)]
    lookups += [(name, "environment") for name in _ENVIRONMENT.findall(question)]
    if not lookups:
        return {}
    condition = " OR ".join("(n.name = ? AND n.kind = ?)" for _ in lookups)
    rows = conn.execute(
        f"SELECT f.path, n.kind, n.line FROM names n JOIN files f ON f.id = n.file_id WHERE {condition}"
        " ORDER BY f.path, n.line",
        [value for pair in lookups for value in pair],
    )
    symbol: dict[str, tuple[float, int]] = {}
    extra: dict[str, float] = {}
    for path, kind, line in rows:
        if kind == "definition":
            if symbol.get(path, (0.0, 0))[0] < SYMBOL_BONUS:
                symbol[path] = (SYMBOL_BONUS, line)
        elif kind == "call":
            symbol.setdefault(path, (CALL_BONUS, line))
        elif kind == "route":
            extra[path] = extra.get(path, 0.0) + ROUTE_BONUS
        else:
            extra[path] = max(extra.get(path, 0.0), ENVIRONMENT_BONUS)
    evidence: dict[str, tuple[float, int | None]] = {}
    for path in symbol.keys() | extra.keys():
        bonus, line = symbol.get(path, (0.0, None))
        evidence[path] = (bonus + extra.get(path, 0.0), line)
    return evidence


def rank(index: Index, question: str, requested: Sequence[str], limit: int) -> list[RankedChunk]:
    """At most ``limit`` chunks, one per file, best first; empty when nothing really matches."""
    conn = index.conn
    terms = query_terms(question)
    total = conn.execute("SELECT count(*) FROM chunks").fetchone()[0]
    frequencies = _document_frequencies(conn, terms) if terms else {}
    present = [term for term in terms if frequencies.get(term)]
    # terms in most chunks barely move BM25 but make the query scan them all
    selective = [
        term
        for term in present
        if total < COMMON_MIN_CHUNKS or frequencies[term] <= total * COMMON_SHARE
    ]
    if present and not selective:
        selective = [min(present, key=lambda term: frequencies[term])]
    best: dict[str, tuple[float, tuple[Any, ...]]] = {}
    if present:
        rows = conn.execute(
            "SELECT rowid, bm25(chunk_terms, ?, ?, ?, ?) AS rank FROM chunk_terms"
            " WHERE chunk_terms MATCH ? ORDER BY rank LIMIT ?",
            (*FIELD_WEIGHTS, _match_expression(selective), CANDIDATE_CHUNKS),
        ).fetchall()
        facts = _chunk_facts(conn, [row[0] for row in rows])
        for chunk_id, bm25_rank in rows:
            fact = facts.get(chunk_id)
            if fact and fact[1] not in best:
                best[fact[1]] = (-bm25_rank, fact)

    weights = {term: _idf(total, frequencies.get(term, 0)) for term in terms}
    coverage = 0.0
    if best and weights:
        top_path = max(best, key=lambda path: best[path][0])
        matched = _matched_terms(conn, best[top_path][1][0], present)
        coverage = sum(weight for term, weight in weights.items() if term in matched) / sum(
            weights.values()
        )

    wanted = named_symbols(question)
    demote_tests = not _ASKS_ABOUT_TESTS.search(question)
    scored: dict[str, tuple[float, tuple[Any, ...]]] = {}
    evidence = False
    evidence_by_path = _structural_evidence(conn, question, wanted)
    term_set = set(terms)
    for path, (score, fact) in best.items():
        if demote_tests and _TEST_PATH.search(path):
            score *= TEST_FACTOR
        if _file_stem(path) in term_set:
            score *= STEM_FACTOR
        bonus, line = evidence_by_path.get(path, (0.0, None))
        if bonus:
            evidence = True
            if line is not None and not (fact[3] <= line <= fact[4]):
                fact = _chunk_at(conn, path, line) or fact
        scored[path] = (score + bonus, fact)
    for requested_path in requested:  # normalised to lowercase: find the indexed spelling
        named = _path_match(index, requested_path)
        if named is None:
            continue
        entry = scored.get(named)
        if entry is None:
            first = _first_chunk(conn, named)
            if first is None:
                continue
            entry = (0.0, first)
        scored[named] = (entry[0] + PATH_MENTION_BONUS, entry[1])
        evidence = True

    if not scored or (coverage < MIN_COVERAGE and not evidence):
        return []
    ordered = sorted(scored.items(), key=lambda item: (-item[1][0], item[0]))
    lift = ordered[0][1][0] * GRAPH_SHARE
    neighbours: set[str] = set()
    for path, _ in ordered[:GRAPH_ROOTS]:
        neighbours |= set(index.dependencies(path)) | set(index.dependants(path))
    for path in neighbours:
        if path in scored:
            scored[path] = (scored[path][0] + lift, scored[path][1])
    ordered = sorted(scored.items(), key=lambda item: (-item[1][0], item[0]))
    cut = ordered[0][1][0] * RELATIVE_CUT
    return [
        RankedChunk(
            fact[0],
            fact[1],
            fact[2],
            fact[3],
            fact[4],
            fact[5],
            fact[6],
            round(score * SCORE_SCALE),
        )
        for _, (score, fact) in ordered[:limit]
        if score >= cut
    ]


def _file_stem(path: str) -> str:
    """The file name without extension, as a query term would spell it."""
    name = path.rsplit("/", 1)[-1]
    return name.split(".", 1)[0].replace("_", "").replace("-", "").lower()


def _path_match(index: Index, requested: str) -> str | None:
    for entry in index.file_entries():
        if entry.path_lower == requested:
            return entry.path
    return None


def _chunk_at(conn: sqlite3.Connection, path: str, line: int) -> tuple[Any, ...] | None:
    row: tuple[Any, ...] | None = conn.execute(
        "SELECT c.id, f.path, c.seq, c.start, c.end, f.type, c.heading FROM chunks c"
        " JOIN files f ON f.id = c.file_id WHERE f.path = ? AND c.start <= ? AND c.end >= ?"
        " ORDER BY c.seq LIMIT 1",
        (path, line, line),
    ).fetchone()
    return row
