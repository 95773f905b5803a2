"""The records every ranker shares: the prepared question, a ranked chunk, the protocol."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from szrag.base.text import (
    extract_file_references,
    extract_line_references,
    own_paths,
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


@dataclass(frozen=True, slots=True)
class PathLookup:
    """The indexed paths as a question's paths are looked up: each path, lowercase, to its
    spelling (the first of those alike), and each file name, lowercase, to its paths."""

    by_lower: dict[str, str]
    by_name: dict[str, tuple[str, ...]]


def path_lookup(index: IndexStore) -> PathLookup:
    """The index's ``PathLookup``, made once a generation."""

    def build() -> PathLookup:
        by_lower: dict[str, str] = {}
        for entry in index.file_entries():
            by_lower.setdefault(entry.path_lower, entry.path)
        by_name: dict[str, list[str]] = {}
        for lower, path in by_lower.items():
            by_name.setdefault(lower.rsplit("/", 1)[-1], []).append(path)
        return PathLookup(by_lower, {name: tuple(paths) for name, paths in by_name.items()})

    return index.derived("paths.lookup", build)


def named_path(requested: str, paths: PathLookup, question: str = "") -> str | None:
    """The indexed file a path the question writes names (``path_suffixes``: the longest
    indexed tail; else the one indexed path ending in it), if any; a file name alone
    (``webhook.js:20``) names the one file of that name, wherever it is, when there is one
    and ``question`` writes its name as the file does (``Node.js`` in a question is a
    runtime, not ``lib/node.js``)."""
    by_lower = paths.by_lower
    named = next((by_lower[tail] for tail in path_suffixes(requested) if tail in by_lower), None)
    if named is not None:
        return named
    folder, _, name = requested.rpartition("/")
    alike = paths.by_name.get(name, ())
    if folder:
        # written from a folder the build searches (``#include <fmt/format.h>``, a Java
        # package's path, a package under ``src/``): the one file whose path ends so
        ending = "/" + requested
        under = [path for path in alike if path.lower().endswith(ending)]
        return under[0] if len(under) == 1 else None
    if len(alike) == 1 and alike[0].rsplit("/", 1)[-1] in question:
        return alike[0]
    return None


def named_lines(index: IndexStore, query: Query) -> dict[str, frozenset[int]]:
    """Per indexed file, the lines of it the question names (the paths resolved as the
    ``bm25`` ranker resolves a named path; an installed dependency's frames left out when
    the question has others)."""
    if not query.lines:
        return {}
    paths = path_lookup(index)
    own = set(own_paths([path for path, _ in query.lines]))
    found: dict[str, set[int]] = {}
    for path, line in query.lines:
        named = named_path(path, paths, query.text) if path in own else None
        if named is not None:
            found.setdefault(named, set()).add(line)
    return {path: frozenset(lines) for path, lines in found.items()}


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
