"""The ``bm25`` ranker: fielded BM25 over code-aware terms, judged file by file.

Each chunk is indexed (SQLite FTS5) with four fields: its file's path, its Markdown heading,
the names of the functions and classes defined in it, and its text, all rewritten by
``code_terms`` so identifiers match both whole and by their words. A question is reduced to its
content terms (``rank.words``). Then, step by step:

1. ``candidates``: the best chunks by BM25, grouped by file; a file scores its best chunk plus
   a decaying share of its other matching chunks, and up to a quarter more for the share of
   the question's words it holds anywhere;
2. ``adjust``: tests, release notes and licences are demoted unless asked about
   (``rank.kinds``), a file named by its stem is lifted, and files that define or call a named
   symbol, serve a named route or read a named environment variable get a bonus;
3. ``name_paths``: a file the question names by path comes first;
4. ``guard``: nothing is returned when most of the question's words are unknown to the index,
   or when no chunk or file holds a quarter of the weight of those it knows;
5. ``lift_neighbours``: the imports and importers of the leading files are lifted a little;
6. ``share_seats``: prose, data and tests hold at most half of the list while code waits.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field, replace

from szrag.base.text import near_spellings, own_paths
from szrag.index.protocol import ChunkRow, FullTextSearch, IndexStore
from szrag.rank import kinds
from szrag.rank.model import Query, RankedChunk, Window, named_path, path_lookup
from szrag.rank.words import (
    named_routes,
    named_symbols,
    named_variables,
    other_language_words,
    query_terms,
)

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
COVERAGE_FILES = 100  # the leading files whose coverage is read
NON_SOURCE_SEATS = 0.5  # share of the results prose and data may take while code matches
MIN_COVERAGE = 0.25  # share of the question's known term weight the best chunk or file holds
SCORE_SCALE = 10  # sources carry integer scores, like the spec ranker's


# --- the question ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Terms:
    """The question's content terms and what the index knows of each."""

    all: tuple[str, ...]
    present: tuple[str, ...]  # those the index holds at all
    selective: tuple[str, ...]  # those worth searching for
    weights: dict[str, float]  # idf of every present term
    frequencies: dict[str, int] = field(default_factory=dict)  # chunks holding each term
    # the function words of another language the question is written in: no topic
    foreign: frozenset[str] = frozenset()

    @property
    def unknown_words(self) -> list[str]:
        """Terms the index does not hold, numbers aside (an issue number or a version
        says nothing about the topic), the function words of another language it is written in,
        and identifiers whose words it holds (``CommonJS`` is ``common`` and ``js``: the
        whole is asked for beside its words, and unknown whole it is no unknown topic)."""
        known = self.weights.keys()
        return [
            term
            for term in self.all
            if term not in known
            and not term.isdigit()
            and term not in self.foreign
            and not _spelled_by(term, known)
        ]

    @property
    def mostly_unknown(self) -> bool:
        """Most of the words asked about occur nowhere in the repository (another
        language's function words it lacks are not asked about, as English ones are not)."""
        wordy = [
            term
            for term in self.all
            if not term.isdigit() and (term in self.weights or term not in self.foreign)
        ]
        return bool(wordy) and len(self.unknown_words) * 2 > len(wordy)

    def share_of(self, matched: AbstractSet[str] | str) -> float:
        """The share of the known term weight that ``matched`` holds (a set of terms, or a
        space-joined token string to test each term against)."""
        total = sum(self.weights.values())
        if not total:
            return 0.0
        if isinstance(matched, str):
            spaced = f" {matched} "
            found = sum(weight for term, weight in self.weights.items() if f" {term} " in spaced)
        else:
            found = sum(weight for term, weight in self.weights.items() if term in matched)
        return found / total


SPELLED_MOST = 64  # characters of a term read as words one after another: an identifier's


def _spelled_by(term: str, words: AbstractSet[str]) -> bool:
    """``term`` written as two or more of ``words`` one after another."""
    if len(term) > SPELLED_MOST or not words:
        return False
    longest = max(map(len, words))
    ends = {0: 0}  # where a run of words can end, with how many words it took
    for start in range(len(term)):
        if start not in ends:
            continue
        for end in range(start + 2, min(start + longest, len(term)) + 1):
            if term[start:end] in words:
                ends[end] = max(ends.get(end, 0), ends[start] + 1)
    return ends.get(len(term), 0) >= 2


def idf(total: int, frequency: int) -> float:
    """BM25's inverse document frequency of a term held by ``frequency`` of ``total`` chunks."""
    return math.log(1 + (total - frequency + 0.5) / (frequency + 0.5))


def searched_most(total: int) -> float:
    """The most chunks of ``total`` a term searched for may be held by."""
    return total if total < COMMON_MIN_CHUNKS else total * COMMON_SHARE


def terms_of(search: FullTextSearch, question: str) -> Terms:
    """The question's terms with their document frequencies in the index."""
    terms = query_terms(question)
    total = search.chunk_count()
    frequencies = {term: search.frequency(term) for term in terms}
    present = [term for term in terms if frequencies.get(term)]
    # terms in most chunks barely move BM25 but make the query scan them all
    most = searched_most(total)
    selective = [term for term in present if frequencies[term] <= most]
    if present and not selective:
        selective = [min(present, key=lambda term: frequencies[term])]
    return Terms(
        all=tuple(terms),
        present=tuple(present),
        selective=tuple(selective),
        weights={term: idf(total, frequencies[term]) for term in present},
        frequencies=frequencies,
        foreign=other_language_words(question) & frozenset(terms),
    )


# --- candidates -------------------------------------------------------------------------------


@dataclass(slots=True)
class Candidate:
    """One file on its way through the steps: the chunk it would show, and its score."""

    chunk: RankedChunk  # the file's best chunk (its own score unused until the end)
    score: float
    coverage: float = 0.0  # the share of the question's known term weight the file holds
    spans: tuple[tuple[int, int, float], ...] = ()  # every matching chunk's lines and score

    @property
    def chunk_scores(self) -> tuple[float, ...]:
        """Every matching chunk's BM25 score, best first."""
        return tuple(sorted((score for _, _, score in self.spans), reverse=True))

    def windows(self) -> tuple[Window, ...]:
        """The file's matching chunks other than the one it shows, each scored as a share of
        its best chunk's score: where the second stage looks besides the chunk shown."""
        best = self.chunk_scores[0] if self.chunk_scores else 0.0
        if best <= 0:
            return ()
        shown = (self.chunk.start, self.chunk.end)
        return tuple(
            (start, end, score / best) for start, end, score in self.spans if (start, end) != shown
        )

    def spread_score(self) -> float:
        """The best chunk, plus a decaying share of the file's other matching chunks: a
        large file whose answer is spread over several chunks is judged by all of them."""
        ordered = self.chunk_scores
        return ordered[0] + sum(
            value * SPREAD_SHARE**rank for rank, value in enumerate(ordered[1:SPREAD_CHUNKS], 1)
        )


def chunk_of_row(row: ChunkRow) -> RankedChunk:
    """A stored chunk's place as a ranked chunk, its score to be set at the end."""
    return RankedChunk(row.id, row.path, row.seq, row.start, row.end, row.type, row.heading, 0)


def full_text(index: IndexStore) -> FullTextSearch:
    """The index's full-text search with this ranker's column weights."""
    return index.full_text(FIELD_WEIGHTS)


def best_chunks(search: FullTextSearch, terms: Terms) -> list[tuple[int, float]]:
    """(chunk id, bm25 rank) of the best chunks holding any selective term, best first."""
    return search.best(terms.selective, CANDIDATE_CHUNKS, terms.frequencies)


def candidates(index: IndexStore, search: FullTextSearch, terms: Terms) -> dict[str, Candidate]:
    """Step 1: files from the fielded BM25 search over chunks, each scored by all its
    matching chunks and by how much of the question it holds as a whole."""
    if not terms.present:
        return {}
    rows = best_chunks(search, terms)
    chunks = search.chunk_rows([row[0] for row in rows])
    spans: dict[str, list[tuple[int, int, float]]] = {}
    best: dict[str, ChunkRow] = {}  # made ranked chunks only for the files found
    for chunk_id, bm25_rank in rows:
        chunk = chunks.get(chunk_id)
        if chunk is None:
            continue
        best.setdefault(chunk.path, chunk)
        spans.setdefault(chunk.path, []).append((chunk.start, chunk.end, -bm25_rank))
    found = {
        path: Candidate(chunk_of_row(best[path]), 0.0, spans=tuple(matched))
        for path, matched in spans.items()
    }
    for candidate in found.values():
        candidate.score = candidate.spread_score()
    # a file holding more of the question gains at most a quarter: only the leading files
    # can move into the results by it, so only they are read
    leading = sorted(found, key=lambda path: -found[path].score)[:COVERAGE_FILES]
    for path, share in file_coverage(index, terms, leading).items():
        found[path].coverage = share
        found[path].score *= 1 + FILE_COVERAGE_SHARE * share
    return found


def file_coverage(index: IndexStore, terms: Terms, paths: Sequence[str]) -> dict[str, float]:
    """Per file, the share of the question's known term weight found anywhere in it."""
    coverage: dict[str, float] = dict.fromkeys(paths, 0.0)
    for path, held in index.file_tokens(paths).items():
        coverage[path] = terms.share_of(held)
    return coverage


def chunk_coverage(search: FullTextSearch, terms: Terms, chunk_id: int) -> float:
    """The share of the question's known term weight one chunk matches."""
    return terms.share_of({term for term in terms.present if search.holds(term, chunk_id)})


# --- adjustments ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Evidence:
    """What the code structure says of one file: a bonus, and the line it points at."""

    bonus: float
    line: int | None = None


def structural_evidence(index: IndexStore, question: str) -> dict[str, Evidence]:
    """Per file: a bonus for defining or calling a named symbol, serving a named route or
    reading a named environment variable, and the line of the named definition or call."""
    named = named_symbols(question)
    lookups = [(name, kind) for name in named for kind in ("definition", "call")]
    lookups += [(route, "route") for route in named_routes(question)]
    lookups += [(name, "environment") for name in named_variables(question)]
    if not lookups:
        return {}
    rows = index.named_any(lookups)
    if not any(row.kind == "definition" for row in rows):
        # no name the question writes is defined: perhaps one is misspelt
        near = {key: None for name in named for key in sorted(near_spellings(name))}
        rows += index.named_any((key, "definition") for key in near)
    symbol: dict[str, tuple[float, int]] = {}
    extra: dict[str, float] = {}
    for path, kind, at in rows:
        if kind == "definition":
            if symbol.get(path, (0.0, 0))[0] < SYMBOL_BONUS:
                symbol[path] = (SYMBOL_BONUS, at)
        elif kind == "call":
            symbol.setdefault(path, (CALL_BONUS, at))
        elif kind == "route":
            extra[path] = extra.get(path, 0.0) + ROUTE_BONUS
        else:
            extra[path] = max(extra.get(path, 0.0), ENVIRONMENT_BONUS)
    evidence: dict[str, Evidence] = {}
    for path in symbol.keys() | extra.keys():
        bonus, line = symbol.get(path, (0.0, None))
        evidence[path] = Evidence(bonus + extra.get(path, 0.0), line)
    return evidence


@functools.lru_cache(maxsize=1 << 16)
def file_stem(path: str) -> str:
    """The file name without extension, as a query term would spell it."""
    name = path.rsplit("/", 1)[-1]
    return name.split(".", 1)[0].replace("_", "").replace("-", "").lower()


def adjust(index: IndexStore, question: str, terms: Terms, found: dict[str, Candidate]) -> bool:
    """Step 2: demote what rarely answers, leave out the licence and community files unless
    asked about them, lift a file named by its stem, add structural evidence (moving to the
    chunk that holds the named line). True when evidence was found."""
    demote_tests = not kinds.asks_about_tests(question)
    demote_notes = not kinds.asks_about_releases(question)
    if not kinds.asks_about_boilerplate(question):
        # "is the service healthy?" matches a code of conduct's "healthy community" better
        # than any code; such files answer only questions about themselves
        for path in [
            path
            for path, candidate in found.items()
            # copying.py or authors.py is code, whatever its name
            if kinds.is_boilerplate(path) and not kinds.is_code(candidate.chunk.type)
        ]:
            del found[path]
    evidence = structural_evidence(index, question)
    asked = set(terms.all)
    for path, candidate in found.items():
        if demote_tests and kinds.is_test(path):
            candidate.score *= TEST_FACTOR
        if demote_notes and kinds.is_release_notes(path, candidate.chunk.type):
            candidate.score *= RELEASE_NOTES_FACTOR
        if file_stem(path) in asked:
            candidate.score *= STEM_FACTOR
        found_here = evidence.get(path)
        if found_here is not None and found_here.bonus:
            line = found_here.line
            if line is not None and not (candidate.chunk.start <= line <= candidate.chunk.end):
                moved = index.chunk_at(path, line)
                candidate.chunk = chunk_of_row(moved) if moved else candidate.chunk
            candidate.score += found_here.bonus
    return any(item.bonus for path, item in evidence.items() if path in found)


def name_paths(
    index: IndexStore, requested: Sequence[str], found: dict[str, Candidate], question: str = ""
) -> bool:
    """Step 3: a file the question names by path comes first. True when one was named."""
    named_any = False
    if not requested:
        return False
    paths = path_lookup(index)
    for requested_path in own_paths(requested):  # lowercase: find the indexed spelling
        named = named_path(requested_path, paths, question)
        if named is None:
            continue
        candidate = found.get(named)
        if candidate is None:
            first = index.chunk_at(named)
            if first is None:
                continue
            candidate = found[named] = Candidate(chunk_of_row(first), 0.0)
        candidate.score += PATH_MENTION_BONUS
        named_any = True
    return named_any


def guard(search: FullTextSearch, terms: Terms, found: dict[str, Candidate]) -> bool:
    """Step 4: True when the question is off-topic for this repository: most of its words
    are unknown here, or neither the best chunk nor any file holds a quarter of the weight
    of those known. Unknown words are judged once, by their number: weighed again here,
    a few casual words made an on-topic question off topic."""
    if terms.mostly_unknown or not found:
        return True
    top = max(found.values(), key=lambda item: item.chunk_scores[0] if item.chunk_scores else 0)
    best = chunk_coverage(search, terms, top.chunk.chunk_id) if top.chunk_scores else 0.0
    best = max([best, *(candidate.coverage for candidate in found.values())])
    return best < MIN_COVERAGE


def _ordered(found: dict[str, Candidate]) -> list[Candidate]:
    return sorted(found.values(), key=lambda item: (-item.score, item.chunk.path))


def lift_neighbours(index: IndexStore, found: dict[str, Candidate]) -> list[Candidate]:
    """Step 5: the imports and importers of the leading files are lifted a little (one step
    of a personalised walk over the import graph); the files best first."""
    ordered = _ordered(found)
    lift = ordered[0].score * GRAPH_SHARE
    neighbours: set[str] = set()
    for candidate in ordered[:GRAPH_ROOTS]:
        path = candidate.chunk.path
        neighbours |= set(index.dependencies(path)) | set(index.dependants(path))
    for path in neighbours:
        if path in found:
            found[path].score += lift
    return _ordered(found)


def share_seats(ordered: list[Candidate], limit: int, *, tests_wait: bool) -> list[Candidate]:
    """Step 6: files that are not source code (and, with ``tests_wait``, tests) hold at most
    half of the list at every point while matching source files wait: prose, data and test
    fixtures repeat every word of a topic, and would otherwise push out the code that
    answers. The best file keeps its place; the files that waited follow the code."""
    quota = max(1, int(limit * NON_SOURCE_SEATS))
    seated: list[Candidate] = []
    waiting: list[Candidate] = []
    others = 0
    for number, candidate in enumerate(ordered):
        if len(seated) >= limit:
            break
        path = candidate.chunk.path
        is_source = kinds.is_code(candidate.chunk.type) and not (tests_wait and kinds.is_test(path))
        # a file that is not code takes a seat only while such files hold at most half
        # of the list so far; the others wait until the matching code is listed
        if number == 0 or is_source or others < min(quota, (len(seated) + 2) // 2):
            seated.append(candidate)
            others += 0 if is_source else 1
        else:
            waiting.append(candidate)
    return seated + waiting


# --- the ranker -------------------------------------------------------------------------------


def rank(
    index: IndexStore, question: str, requested: Sequence[str], limit: int, *, fill: bool = True
) -> list[RankedChunk]:
    """At most ``limit`` chunks, one per file, best first; empty when nothing really matches.

    With ``fill`` every matching file up to ``limit`` is returned; without it, only files
    scoring near the best one.
    """
    search = full_text(index)
    terms = terms_of(search, question)
    found = candidates(index, search, terms)
    evidence = adjust(index, question, terms, found)
    evidence = name_paths(index, requested, found, question) or evidence
    if not found or (guard(search, terms, found) and not evidence):
        return []
    ordered = lift_neighbours(index, found)
    if fill:
        ordered = share_seats(ordered, limit, tests_wait=not kinds.asks_about_tests(question))
    cut = 0.0 if fill else ordered[0].score * RELATIVE_CUT
    return [
        replace(
            candidate.chunk,
            score=round(candidate.score * SCORE_SCALE),
            others=candidate.windows(),
        )
        for candidate in ordered[:limit]
        if candidate.score >= cut
    ]


@dataclass(frozen=True, slots=True)
class Bm25Ranker:
    """The default ranker (see the module)."""

    name: str = "bm25"

    def rank(self, index: IndexStore, query: Query, limit: int, *, fill: bool) -> list[RankedChunk]:
        """At most ``limit`` chunks, one per file, best first."""
        return rank(index, query.text, query.requested, limit, fill=fill)

    def warm(self, index: IndexStore) -> None:
        """Build the full-text view of the current generation (when kept in memory), with
        the terms last searched for read again and the common ones read ahead (none held by
        more chunks than a question searches)."""
        search = full_text(index)
        search.warm(searched_most(search.chunk_count()))
