"""Ranking: the rankers by name, and the records they share.

``spec`` is the original service's scorer (``rank/spec.py``, with its in-memory path in
``rank/spec_memory.py``); ``bm25`` is the default (``rank/bm25.py``), with its question
analysis in ``rank/words.py`` and its file kinds in ``rank/kinds.py``.
"""

from __future__ import annotations

from szrag.config import RANKER_NAMES
from szrag.errors import ConfigError
from szrag.index import Index
from szrag.rank.bm25 import Bm25Ranker
from szrag.rank.model import Query, RankedChunk, Ranker
from szrag.rank.spec import SpecRanker

RANKERS: dict[str, Ranker] = {"spec": SpecRanker(), "bm25": Bm25Ranker()}
assert tuple(RANKERS) == RANKER_NAMES  # the configuration's vocabulary is the registry's


def ranker_named(name: str) -> Ranker:
    """The ranker registered as ``name``; an unknown name is a ConfigError."""
    ranker = RANKERS.get(name)
    if ranker is None:
        raise ConfigError(f"unknown ranker {name!r}: choose one of {', '.join(RANKERS)}")
    return ranker


def warm(index: Index) -> None:
    """Build every ranker's per-generation views (after a refresh, before the next question)."""
    for ranker in RANKERS.values():
        ranker.warm(index)


__all__ = ["RANKERS", "Query", "RankedChunk", "Ranker", "ranker_named", "warm"]
