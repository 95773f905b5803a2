"""The ``spec`` ranker: the original service's scorer, signal by signal.

The score of a chunk is the sum of small named signals (see the README's table). Under the
``slackzilla`` profile every signal applies as the original applies it; elsewhere the topic
and type bonuses only lift chunks that matched the question in some way, so a question with
no real match returns nothing instead of documentation noise.

Two paths give identical rankings (a test holds them together): a one-shot process scans the
chunks' word lists in SQLite (``rank_chunks``); a long-running process keeps numpy arrays per
index generation (``spec_memory.MemorySearch``) and scores every chunk at once.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from szrag.base.config import Profile
from szrag.base.text import SOURCE_TYPES, tokens
from szrag.index.protocol import IndexStore
from szrag.rank.model import Query, RankedChunk
from szrag.rank.spec_memory import MemorySearch

THRESHOLD_RATIO = 0.85

EXACT_PATH = 1000
DOCS_PATH = 25
PATH_TOKEN = 20
HEADING_TOKEN = 15
TEXT_TOKEN = 5
QUESTION_TYPE = 8
TOPIC_PATH = 30


_HOW_PHRASES = ("how does", "how do", "how is")
_WHERE_PHRASES = ("where", "which file", "implemented")
_TOPICS: tuple[tuple[tuple[str, ...], tuple[str, ...]], ...] = (
    (("architecture", "design", "flow"), ("architecture", "arch", "diagram")),
    (("security", "csrf", "authentication", "auth"), ("security", "auth")),
    (("webhook", "github", "deploy"), ("webhook", "deploy")),
)
_SPEC_WHERE_TYPES = frozenset({"javascript", "json"})
_CODE_WHERE_TYPES = SOURCE_TYPES | {"json"}


@dataclass(frozen=True, slots=True)
class ScoreRules:
    """The profile-dependent parts of scoring."""

    bonuses_need_match: bool
    where_types: frozenset[str]

    @classmethod
    def of(cls, profile: Profile) -> ScoreRules:
        """The rules a profile asks for."""
        if profile.name == "slackzilla":
            return cls(bonuses_need_match=False, where_types=_SPEC_WHERE_TYPES)
        return cls(bonuses_need_match=profile.bonuses_need_match, where_types=_CODE_WHERE_TYPES)


SPEC_RULES = ScoreRules(bonuses_need_match=False, where_types=_SPEC_WHERE_TYPES)


def exact_path_score(query: Query, path_lower: str) -> int:
    """+1000 when the question names this file's path exactly."""
    return EXACT_PATH if path_lower in query.requested else 0


def path_token_score(query: Query, path_tokens: frozenset[str]) -> int:
    """+20 for each question token among the path's tokens."""
    return PATH_TOKEN * len(query.tokens & path_tokens)


def heading_score(query: Query, heading: str | None) -> int:
    """+15 for each question token among the Markdown heading's tokens."""
    return HEADING_TOKEN * len(query.tokens & tokens(heading)) if heading else 0


def text_score(query: Query, text_lower: str) -> int:
    """+5 for each question token occurring anywhere in the chunk text."""
    return TEXT_TOKEN * sum(1 for token in query.tokens if token in text_lower)


@dataclass(frozen=True, slots=True)
class Intents:
    """What kind of question this is, as far as the type and topic bonuses care."""

    how: bool
    where: bool
    topic_paths: tuple[tuple[str, ...], ...]  # path words of each topic the question is about

    @classmethod
    def of(cls, query: Query) -> Intents:
        """Read the intents off the lowercased question."""
        return cls(
            how=any(phrase in query.lower for phrase in _HOW_PHRASES),
            where=any(phrase in query.lower for phrase in _WHERE_PHRASES),
            topic_paths=tuple(
                path_words
                for question_words, path_words in _TOPICS
                if any(word in query.lower for word in question_words)
            ),
        )


TOPIC_PATH_WORDS = tuple(sorted({word for _, path_words in _TOPICS for word in path_words}))


def topic_score(
    query: Query, path_lower: str, file_type: str, rules: ScoreRules = SPEC_RULES
) -> int:
    """Bonuses from the kind of question and the kind of file."""
    intents = Intents.of(query)
    score = DOCS_PATH if path_lower.startswith("docs/") else 0
    if intents.how and file_type == "markdown":
        score += QUESTION_TYPE
    if intents.where and file_type in rules.where_types:
        score += QUESTION_TYPE
    for path_words in intents.topic_paths:
        if any(word in path_lower for word in path_words):
            score += TOPIC_PATH
    return score


def calculate_score(
    question: str,
    *,
    path: str,
    file_type: str,
    text: str,
    heading: str | None = None,
    extensions: Iterable[str] = (),
    rules: ScoreRules = SPEC_RULES,
) -> int:
    """The score of one chunk for one question: the sum of every signal."""
    query = Query.parse(question, extensions or (Path(path).suffix.lower(),))
    path_lower = path.lower()
    matched = (
        exact_path_score(query, path_lower)
        + path_token_score(query, frozenset(tokens(path)))
        + heading_score(query, heading)
        + text_score(query, text.lower())
    )
    if matched == 0 and rules.bonuses_need_match:
        return 0
    return matched + topic_score(query, path_lower, file_type, rules)


# SQLite's lower(), which headings were matched with: ASCII letters only
_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


def _chunk_rows(index: IndexStore, query: Query, file_ids: Sequence[int]) -> list[tuple[Any, ...]]:
    """Chunks containing a question token or a heading that may match, and the first chunk
    of each file in ``file_ids`` (files that score on their path alone)."""
    ordered = sorted(query.tokens)
    rows: list[tuple[Any, ...]] = []
    if ordered:
        # word lists are kept packed, so they are matched here rather than in SQL
        for chunk_id, file_id, seq, start, end, heading, words in index.chunk_words():
            hits = sum(1 for token in ordered if token in words)
            if hits or (
                heading is not None
                and any(token in heading.translate(_ASCII_LOWER) for token in ordered)
            ):
                rows.append((chunk_id, file_id, seq, start, end, heading, hits))
    rows.extend((*first[:6], 0) for first in index.first_chunks(file_ids))
    return rows


def rank_chunks(index: IndexStore, query: Query, rules: ScoreRules) -> list[RankedChunk]:
    """Every chunk with a positive score, best first (ties: path, then position in file)."""
    entries = {entry.id: entry for entry in index.file_entries()}
    file_level: dict[int, tuple[int, int]] = {}
    path_only: list[int] = []
    for entry in entries.values():
        matched = exact_path_score(query, entry.path_lower) + path_token_score(
            query, entry.path_tokens
        )
        topic = topic_score(query, entry.path_lower, entry.type, rules)
        file_level[entry.id] = (matched, topic)
        if matched or (topic and not rules.bonuses_need_match):
            path_only.append(entry.id)
    seen: set[int] = set()
    ranked: list[RankedChunk] = []
    for chunk_id, file_id, seq, start, end, heading, hits in _chunk_rows(index, query, path_only):
        if chunk_id in seen:
            continue
        seen.add(chunk_id)
        entry = entries[file_id]
        matched, topic = file_level[file_id]
        matched += heading_score(query, heading) + TEXT_TOKEN * hits
        if matched == 0 and rules.bonuses_need_match:
            continue
        score = matched + topic
        if score > 0:
            ranked.append(
                RankedChunk(chunk_id, entry.path, seq, start, end, entry.type, heading, score)
            )
    ranked.sort(key=lambda item: (-item.score, item.path, item.seq))
    return ranked


def select_sources(
    ranked: Iterable[RankedChunk], limit: int, threshold: float = THRESHOLD_RATIO
) -> list[RankedChunk]:
    """Chunks within ``threshold`` (85%) of the best score, one per file, at most ``limit``."""
    chosen: list[RankedChunk] = []
    if limit <= 0:
        return chosen
    paths: set[str] = set()
    minimum = 0
    for candidate in ranked:
        if not chosen and not paths:
            minimum = max(1, math.ceil(candidate.score * threshold))
        if candidate.score < minimum or len(chosen) >= limit:
            break
        if candidate.path in paths:
            continue
        paths.add(candidate.path)
        chosen.append(candidate)
    return chosen


def _rank_in_memory(search: MemorySearch, query: Query, rules: ScoreRules) -> Iterator[RankedChunk]:
    """The same ranking as rank_chunks, computed over in-memory arrays."""
    intents = Intents.of(query)
    flags = search.flags
    file_count = len(search.file_paths)
    file_matched = np.zeros(file_count, dtype=np.int64)
    for requested in query.requested:
        number = search.file_by_lower.get(requested)
        if number is not None:
            file_matched[number] += EXACT_PATH
    for token in query.tokens:
        files = search.path_token_files.get(token)
        if files is not None:
            file_matched[files] += PATH_TOKEN
    topic = DOCS_PATH * flags.docs.astype(np.int64)
    if intents.how:
        topic += QUESTION_TYPE * flags.markdown
    if intents.where:
        for kind in rules.where_types:
            if kind in flags.types:
                topic += QUESTION_TYPE * flags.types[kind]
    for path_words in intents.topic_paths:
        topic += TOPIC_PATH * np.logical_or.reduce(
            [flags.path_contains[word] for word in path_words]
        )
    hits = np.zeros(search.chunk_count, dtype=np.int64)
    heading = np.zeros(search.chunk_count, dtype=np.int64)
    for token in query.tokens:
        hits += search.chunks_containing(token)
        chunks = search.heading_chunks.get(token)
        if chunks is not None:
            heading[chunks] += 1
    matched = file_matched[search.chunk_files] + HEADING_TOKEN * heading + TEXT_TOKEN * hits
    chunk_topic = topic[search.chunk_files]
    if rules.bonuses_need_match:
        chunk_topic = np.where(matched > 0, chunk_topic, 0)
    score = matched + chunk_topic
    positive = np.flatnonzero(score > 0)
    for number in positive[np.argsort(-score[positive], kind="stable")]:
        file_number = int(search.chunk_files[number])
        seq, start, end, chunk_heading = search.chunk_rows[number]
        yield RankedChunk(
            int(search.chunk_ids[number]),
            search.file_paths[file_number],
            seq,
            start,
            end,
            search.file_types[file_number],
            chunk_heading,
            int(score[number]),
        )


MEMORY_VIEW = "rank.spec.memory"


def memory_search(index: IndexStore) -> MemorySearch | None:
    """The in-memory arrays of the index's current generation, when it is kept in memory."""
    if not index.in_memory:
        return None
    generation = index.generation()
    return index.derived(MEMORY_VIEW, lambda: MemorySearch(index, generation, TOPIC_PATH_WORDS))


@dataclass(frozen=True, slots=True)
class SpecRanker:
    """The original's scorer; ``fill`` drops its 85% threshold."""

    name: str = "spec"

    def rank(self, index: IndexStore, query: Query, limit: int, *, fill: bool) -> list[RankedChunk]:
        """At most ``limit`` chunks, one per file, best first."""
        rules = ScoreRules.of(index.config.profile)
        search = memory_search(index)
        ranked = (
            _rank_in_memory(search, query, rules) if search else rank_chunks(index, query, rules)
        )
        return select_sources(ranked, limit, 0.0 if fill else THRESHOLD_RATIO)

    def warm(self, index: IndexStore) -> None:
        """Build the in-memory arrays of the current generation (when kept in memory)."""
        memory_search(index)
