"""The records every ranker shares: the prepared question, a ranked chunk, the protocol."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from szrag.base.text import (
    extract_file_references,
    extract_line_references,
    path_suffixes,
    tokens,
)

if TYPE_CHECKING:
    from szrag.index.protocol import IndexStore


Window = tuple[int, int, float]
"""A window of a file that the ranker found: its first and last line, and its score as a
share of the file's best window's."""


@dataclass(frozen=True, slots=True)
class RankedChunk:
    """A ranked chunk of one file, as every ranker returns it."""

    chunk_id: int
    path: str
    seq: int
    start: int
    end: int
    type: str
    heading: str | None
    score: int
    # the file's other windows that matched, for a ranker that scores windows (bm25): where
    # else in the file the question's words were found, and how well
    others: tuple[Window, ...] = ()

    @property
    def windows(self) -> tuple[Window, ...]:
        """This chunk (as the file's best) and the file's other matching windows."""
        return ((self.start, self.end, 1.0), *self.others)


@dataclass(frozen=True, slots=True)
class Query:
    """A question prepared once for scoring many chunks."""

    text: str
    lower: str
    tokens: frozenset[str]
    requested: tuple[str, ...]  # file paths it names, normalised to lowercase
    lines: tuple[tuple[str, int], ...] = ()  # (path, line) of each file line it names

    @classmethod
    def parse(cls, question: str, extensions: Iterable[str]) -> Query:
        """Clean, tokenise and extract explicit file references from ``question``."""
        clean = question.strip()
        known = frozenset(extensions)
        return cls(
            text=clean,
            lower=clean.lower(),
            tokens=frozenset(tokens(clean)),
            requested=tuple(extract_file_references(clean, known)),
            lines=tuple(extract_line_references(clean, known)),
        )

    def lines_of(self, path: str) -> frozenset[int]:
        """The lines of the indexed file ``path`` the question names."""
        lower = path.lower()
        return frozenset(line for named, line in self.lines if lower in path_suffixes(named))


class Ranker(Protocol):
    """Ranks an index's chunks for a question: at most ``limit``, one per file, best first.

    With ``fill`` every matching file up to ``limit`` is returned; without it, only files
    scoring near the best one (the original service's behaviour).
    """

    @property
    def name(self) -> str:
        """The name the registry and the configuration know it by."""
        ...

    def rank(self, index: IndexStore, query: Query, limit: int, *, fill: bool) -> list[RankedChunk]:
        """The ranked chunks for ``query``."""
        ...

    def warm(self, index: IndexStore) -> None:
        """Build whatever per-generation view the ranker reads, ahead of the next question."""
        ...
