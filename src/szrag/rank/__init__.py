"""Ranking: the rankers by name, and the records they share.

``spec`` is the original service's scorer (``rank/spec.py``, with its in-memory path in
``rank/spec_memory.py``); ``bm25`` is the default (``rank/bm25.py``), with its question
analysis in ``rank/words.py`` and its file kinds in ``rank/kinds.py``.
"""

from __future__ import annotations

import importlib

from szrag.base.config import RANKER_NAMES
from szrag.base.errors import ConfigError
from szrag.index.protocol import IndexStore
from szrag.rank.model import Query, RankedChunk, Ranker

# Each ranker's module and class, imported when first named: the spec ranker brings numpy,
# which a one-shot question ranked by bm25 does not need.
_HOMES: dict[str, tuple[str, str]] = {
    "spec": ("szrag.rank.spec", "SpecRanker"),
    "bm25": ("szrag.rank.bm25", "Bm25Ranker"),
}
assert tuple(_HOMES) == RANKER_NAMES  # the configuration's vocabulary is the registry's
RANKERS = RANKER_NAMES
_made: dict[str, Ranker] = {}


def ranker_named(name: str) -> Ranker:
    """The ranker registered as ``name``; an unknown name is a ConfigError."""
    ranker = _made.get(name)
    if ranker is None:
        home = _HOMES.get(name)
        if home is None:
            raise ConfigError(f"unknown ranker {name!r}: choose one of {', '.join(RANKERS)}")
        module, cls = home
        ranker = _made.setdefault(name, getattr(importlib.import_module(module), cls)())
    return ranker


def warm(index: IndexStore) -> None:
    """Build the per-generation views of the ranker the index's profile asks with (after a
    refresh, before the next question); another ranker builds its views when first named,
    so a bm25 server never spends seconds and memory on the spec ranker's arrays."""
    ranker_named(index.config.profile.ranker).warm(index)


__all__ = ["RANKERS", "Query", "RankedChunk", "Ranker", "ranker_named", "warm"]
