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
from szrag.text import SOURCE_TYPES, code_terms

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
RELATIVE_CUT = 0.45  # without fill: keep files scoring at least this share of the best
RELEASE_NOTES_FACTOR = 0.5  # changelogs name every change; they answer only release questions
SPREAD_SHARE = 0.5  # each further matching chunk of a file adds half as much as the one before
SPREAD_CHUNKS = 4
FILE_COVERAGE_SHARE = 0.25  # a file holding all the question's terms scores up to 1.25x
NON_SOURCE_SEATS = 0.5  # share of the results prose and data may take while code matches
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
_ASKS_ABOUT_RELEASES = re.compile(
    r"\b(changelog|changes? ?log|releases?|released|release notes|what'?s ?new|news|history"
    r"|upgrad(e|ing) (to|from)|since (version|v?\d))\b",
    re.IGNORECASE,
)
_RELEASE_NOTES_FILE = re.compile(
    r"(^|/)(change[s_-]?log|changes|history|news|releases?|release[_-]?notes|whats_?new)"
    r"([._-][^/]*)?$",
    re.IGNORECASE,
)
_RELEASE_NOTES_FOLDER = re.compile(
    r"(^|/)(changelog\.d|changes|whatsnew|release[_-]?notes|releases|changelogs?)/", re.IGNORECASE
)
_PROSE_TYPES = frozenset({"markdown", "text"})
# Licences and community files: long prose that matches many words and answers little.
_BOILERPLATE_FILE = re.compile(
    r"(^|/)(licen[cs]e|copying|notice|authors|contributors|code[_-]of[_-]conduct|conduct)"
    r"([._-][^/]*)?$",
    re.IGNORECASE,
)
_ASKS_ABOUT_BOILERPLATE = re.compile(
    r"\b(licen[cs]e[sd]?|copyright|conduct|authors?|contributors?)\b", re.IGNORECASE
)
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


@dataclass(frozen=True, slots=True)
class _Terms:
    """The question's content terms and what the index knows of each."""

    all: tuple[str, ...]
    present: tuple[str, ...]  # those the index holds at all
    selective: tuple[str, ...]  # those worth searching for
    weights: dict[str, float]  # idf of every present term
    total_chunks: int

    @property
    def unknown_words(self) -> list[str]:
        """Terms the index does not hold, numbers aside (an issue number or a version
        says nothing about the topic)."""
        return [term for term in self.all if term not in self.weights and not term.isdigit()]

    def known_share(self) -> float:
        """The share of the question's weight the index can match at all: an unknown term
        counts as much as an average known one (a typo or a prefix such as ``feat:`` must
        not outweigh the words that do match, nor be ignored when it is the topic)."""
        if not self.weights:
            return 0.0
        known = sum(self.weights.values())
        average = known / len(self.weights)
        return known / (known + average * len(self.unknown_words))

    @property
    def mostly_unknown(self) -> bool:
        """Most of the words asked about occur nowhere in the repository (numbers aside:
        an issue number or a version says nothing about the topic)."""
        wordy = [term for term in self.all if not term.isdigit()]
        return bool(wordy) and len(self.unknown_words) * 2 > len(wordy)


def _terms_of(conn: sqlite3.Connection, question: str) -> _Terms:
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
    return _Terms(
        all=tuple(terms),
        present=tuple(present),
        selective=tuple(selective),
        weights={term: _idf(total, frequencies[term]) for term in present},
        total_chunks=total,
    )


@dataclass(slots=True)
class _FileHits:
    """One file's matching chunks from the full-text search, best first."""

    fact: tuple[Any, ...]  # the best chunk: id, path, seq, start, end, type, heading
    scores: list[float]

    def score(self) -> float:
        """The best chunk, plus a decaying share of the file's other matching chunks: a
        large file whose answer is spread over several chunks is judged by all of them."""
        ordered = sorted(self.scores, reverse=True)
        return ordered[0] + sum(
            value * SPREAD_SHARE**rank for rank, value in enumerate(ordered[1:SPREAD_CHUNKS], 1)
        )


def _search(conn: sqlite3.Connection, terms: _Terms) -> dict[str, _FileHits]:
    """Candidate files from the fielded BM25 search over chunks."""
    if not terms.present:
        return {}
    rows = conn.execute(
        "SELECT rowid, bm25(chunk_terms, ?, ?, ?, ?) AS rank FROM chunk_terms"
        " WHERE chunk_terms MATCH ? ORDER BY rank LIMIT ?",
        (*FIELD_WEIGHTS, _match_expression(terms.selective), CANDIDATE_CHUNKS),
    ).fetchall()
    facts = _chunk_facts(conn, [row[0] for row in rows])
    found: dict[str, _FileHits] = {}
    for chunk_id, bm25_rank in rows:
        fact = facts.get(chunk_id)
        if fact is None:
            continue
        hits = found.get(fact[1])
        if hits is None:
            found[fact[1]] = _FileHits(fact, [-bm25_rank])
        else:
            hits.scores.append(-bm25_rank)
    return found


def _coverage(conn: sqlite3.Connection, terms: _Terms, chunk_id: int) -> float:
    """The share of the question's known term weight that one chunk matches."""
    total = sum(terms.weights.values())
    if not total:
        return 0.0
    matched = _matched_terms(conn, chunk_id, terms.present)
    return sum(weight for term, weight in terms.weights.items() if term in matched) / total


def _file_coverage(
    conn: sqlite3.Connection, terms: _Terms, paths: Sequence[str]
) -> dict[str, float]:
    """Per file, the share of the question's known term weight found anywhere in it."""
    total = sum(terms.weights.values())
    if not total or not paths:
        return {}
    coverage: dict[str, float] = {}
    for offset in range(0, len(paths), 500):
        batch = list(paths[offset : offset + 500])
        marks = ",".join("?" * len(batch))
        for path, joined in conn.execute(
            f"SELECT path, tokens FROM files WHERE path IN ({marks})", batch
        ):
            spaced = f" {joined} "  # tokens are stored space-joined: test membership in place
            coverage[path] = (
                sum(weight for term, weight in terms.weights.items() if f" {term} " in spaced)
                / total
            )
    return coverage


def rank(
    index: Index, question: str, requested: Sequence[str], limit: int, *, fill: bool = True
) -> list[RankedChunk]:
    """At most ``limit`` chunks, one per file, best first; empty when nothing really matches.

    With ``fill`` every matching file up to ``limit`` is returned; without it, only files
    scoring near the best one.
    """
    conn = index.conn
    terms = _terms_of(conn, question)
    hits = _search(conn, terms)
    coverage = 0.0
    spread = _file_coverage(conn, terms, list(hits))
    if hits:
        top = max(hits.values(), key=lambda item: item.scores[0])
        # the best chunk, or a whole file, must hold enough of what the question asks
        best = max(_coverage(conn, terms, top.fact[0]), max(spread.values(), default=0.0))
        coverage = best * terms.known_share()

    wanted = named_symbols(question)
    demote_tests = not _ASKS_ABOUT_TESTS.search(question)
    demote_notes = not _ASKS_ABOUT_RELEASES.search(question)
    demote_boilerplate = not _ASKS_ABOUT_BOILERPLATE.search(question)
    scored: dict[str, tuple[float, tuple[Any, ...]]] = {}
    evidence = False
    evidence_by_path = _structural_evidence(conn, question, wanted)
    term_set = set(terms.all)
    for path, found in hits.items():
        fact = found.fact
        score = found.score() * (1 + FILE_COVERAGE_SHARE * spread.get(path, 0.0))
        if demote_tests and _TEST_PATH.search(path):
            score *= TEST_FACTOR
        if demote_notes and is_release_notes(path, fact[5]):
            score *= RELEASE_NOTES_FACTOR
        if demote_boilerplate and _BOILERPLATE_FILE.search(path):
            score *= RELEASE_NOTES_FACTOR
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

    off_topic = terms.mostly_unknown or coverage < MIN_COVERAGE
    if not scored or (off_topic and not evidence):
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
    cut = 0.0 if fill else ordered[0][1][0] * RELATIVE_CUT
    if fill:
        ordered = _share_seats(ordered, limit, tests_wait=demote_tests)
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


def _share_seats(
    ordered: list[tuple[str, tuple[float, tuple[Any, ...]]]], limit: int, *, tests_wait: bool
) -> list[tuple[str, tuple[float, tuple[Any, ...]]]]:
    """Files that are not source code (and, with ``tests_wait``, tests) hold at most half of
    the list at every point while matching source files wait: prose, data and test
    fixtures repeat every word of a topic, and would otherwise push out the code that
    answers. The best file keeps its place; the files that waited follow the code."""
    quota = max(1, int(limit * NON_SOURCE_SEATS))
    seated: list[tuple[str, tuple[float, tuple[Any, ...]]]] = []
    waiting: list[tuple[str, tuple[float, tuple[Any, ...]]]] = []
    others = 0
    for number, item in enumerate(ordered):
        if len(seated) >= limit:
            break
        is_source = item[1][1][5] in SOURCE_TYPES and not (
            tests_wait and _TEST_PATH.search(item[0])
        )
        # a file that is not code takes a seat only while such files hold at most half
        # of the list so far; the others wait until the matching code is listed
        if number == 0 or is_source or others < min(quota, (len(seated) + 2) // 2):
            seated.append(item)
            others += 0 if is_source else 1
        else:
            waiting.append(item)
    return seated + waiting


def is_release_notes(path: str, file_type: str) -> bool:
    """A changelog, release notes or history file: it names every change, so it matches
    questions about the code better than the code does."""
    if _RELEASE_NOTES_FOLDER.search(path):
        return True
    return file_type in _PROSE_TYPES and bool(_RELEASE_NOTES_FILE.search(path))


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
