"""build_codebase_context: the files, symbols, routes and variables a question is about.

Retrieved files and the code files whose path or tokens match the question are the direct
files; symbol and route matches add theirs. The best direct files are relationship roots
whose dependencies and dependants join with lower scores. Each selected file then gives a
code entry: its structure, plus the source lines of the symbols that matched.
"""

from __future__ import annotations

import bisect
import functools
import heapq
from array import array
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, TypeVar

from szrag.base.text import CODE_TYPES, LineRanges, path_tokens, tokens
from szrag.code.model import CodeRecord, EnvReference, SymbolMatch
from szrag.code.scoring import extract_environment_variables
from szrag.context.model import DEPENDANT, DEPENDENCY, DIRECT, CodebaseContext, CodeEntry
from szrag.index.protocol import IndexStore
from szrag.index.records import records_by_path
from szrag.index.store import StoredChunk, StoredFile, unpack
from szrag.rank.retrieve import Source, definition_units, more_sources, require_question
from szrag.rank.units import kept_lines
from szrag.structure.context import get_code_context, splice
from szrag.structure.queries import (
    bounded_line,
    environment_by_file,
    find_environment_variable,
    find_routes,
    find_symbols,
    get_dependants,
    get_dependencies,
)

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

T = TypeVar("T")

RETRIEVED_BASE_SCORE = 1000
PATH_TOKEN_SCORE = 30
FILE_TOKEN_SCORE = 2
PATH_MENTION_SCORE = 150
MAX_CANDIDATES = 12
MAX_RELATIONSHIP_ROOTS = 8
DEPENDENCY_PENALTY = 120
MIN_DEPENDENCY_SCORE = 100
DEPENDANT_PENALTY = 150
MIN_DEPENDANT_SCORE = 90
MAX_CODE_CONTEXTS = 20
MAX_CONNECTING_NAMES = 6

_RELATION_RANK = {DIRECT: 0, DEPENDENCY: 1, DEPENDANT: 2}


# --- scoring: small pure functions --------------------------------------------------------


def retrieved_score(source: Source) -> int:
    """A retrieved file is a direct root well above any structural match: 1000 + its score."""
    return RETRIEVED_BASE_SCORE + source.score


def mentions_path(question: str, path: str) -> bool:
    """True when the question names the file's repository path (any case, either slash)."""
    return path.lower() in _as_paths(question)


@functools.lru_cache(maxsize=64)
def _as_paths(question: str) -> str:
    return question.lower().replace("\\", "/")


def candidate_score(
    question: str, query_tokens: frozenset[str], path: str, file_tokens: frozenset[str]
) -> int:
    """30 per question token in the path, 2 per token in the file, 150 for naming the path."""
    score = PATH_TOKEN_SCORE * len(query_tokens & path_tokens(path))
    score += FILE_TOKEN_SCORE * len(query_tokens & file_tokens)
    if mentions_path(question, path):
        score += PATH_MENTION_SCORE
    return score


def dependency_score(root_score: int) -> int:
    """A root's dependency: the root's score minus 120, at least 100."""
    return max(root_score - DEPENDENCY_PENALTY, MIN_DEPENDENCY_SCORE)


def dependant_score(root_score: int) -> int:
    """A root's dependant: the root's score minus 150, at least 90."""
    return max(root_score - DEPENDANT_PENALTY, MIN_DEPENDANT_SCORE)


def best_first(scores: dict[str, int]) -> list[str]:
    """Paths by descending score, ties by path, so the order never depends on dict order.
    Two sorts without a Python key function: a common word offers thousands of files
    (2.5 times faster than one sort by a (score, path) key over 6,000)."""
    paths = sorted(scores)
    paths.sort(key=scores.__getitem__, reverse=True)  # stable: ties keep the path order
    return paths


# --- selection ----------------------------------------------------------------------------


@dataclass
class _Selection:
    """Files chosen so far: the best score and the closest relation each was reached by."""

    scores: dict[str, int] = field(default_factory=dict)
    relations: dict[str, str] = field(default_factory=dict)
    via: dict[str, str] = field(default_factory=dict)  # related file -> the root it came from

    def offer(self, path: str, score: int, relation: str, via: str | None = None) -> None:
        if path not in self.scores or score > self.scores[path]:
            self.scores[path] = score
        current = self.relations.get(path)
        if current is None or _RELATION_RANK[relation] < _RELATION_RANK[current]:
            self.relations[path] = relation
            if via is not None:
                self.via[path] = via

    def with_relation(self, relation: str) -> dict[str, int]:
        return {
            path: score for path, score in self.scores.items() if self.relations[path] == relation
        }


@dataclass(frozen=True, slots=True)
class CodeFiles:
    """The code files of one index generation as candidate scoring reads them: the files
    holding each token, so a question only counts the files that hold its words."""

    paths: tuple[str, ...]
    lowered: tuple[str, ...]  # each path lowercased, for the question naming it
    by_token: dict[str, array[int]]  # token -> the numbers of the files holding it
    by_path_token: dict[str, array[int]]  # token -> the numbers of the files whose path has it
    by_path: array[int]  # each file's place in path order, for ties
    # each file's tokens as the store packs them, for ``updated`` (decoded sets of every
    # file took far more memory than this view's own tables)
    packed_tokens: tuple[bytes, ...]
    # the files by the first characters of their file name (``name_start``): a question that
    # names a path holds them, so only the files keyed by its own substrings are tried
    by_name_start: dict[str, tuple[int, ...]]

    @classmethod
    def of(cls, files: Iterable[StoredFile]) -> CodeFiles:
        """The code files among ``files``, in their order."""
        code = [file for file in files if file.type in CODE_TYPES]
        # defaultdict: setdefault would make an empty list for each of a million pairs
        by_token: defaultdict[str, list[int]] = defaultdict(list)
        by_path_token: defaultdict[str, list[int]] = defaultdict(list)
        for number, file in enumerate(code):
            for token in file.joined_tokens.split():  # distinct as stored: no set made
                by_token[token].append(number)
            for token in tokens(file.path):  # not remembered: each path is read once
                by_path_token[token].append(number)
        in_order = sorted(range(len(code)), key=lambda number: code[number].path)
        by_path = array("I", bytes(4 * len(code)))
        for place, number in enumerate(in_order):
            by_path[number] = place
        return cls(
            tuple(file.path for file in code),
            tuple(file.path.lower() for file in code),
            {token: array("I", numbers) for token, numbers in by_token.items()},
            {token: array("I", numbers) for token, numbers in by_path_token.items()},
            by_path,
            tuple(file.packed_tokens for file in code),
            _by_name_start(file.path.lower() for file in code),
        )

    def updated(self, files: Iterable[StoredFile]) -> CodeFiles:
        """``CodeFiles.of(files)`` made from these views of other files (a refresh changes a
        few): when the code files are the same paths in the same order, only the tokens a
        file gained or lost are moved; otherwise they are built afresh."""
        code = [file for file in files if file.type in CODE_TYPES]
        if len(code) != len(self.paths) or any(
            file.path != path for file, path in zip(code, self.paths, strict=True)
        ):
            return CodeFiles.of(code)
        by_token: dict[str, array[int]] | None = None
        for number, (file, packed) in enumerate(zip(code, self.packed_tokens, strict=True)):
            if file.packed_tokens is packed or file.packed_tokens == packed:
                continue
            if by_token is None:
                by_token = dict(self.by_token)  # the arrays of other tokens are shared
            earlier = frozenset(unpack(packed).split())
            now = file.tokens
            if now == earlier:
                continue
            for token in earlier - now:
                kept = array("I", (held for held in by_token[token] if held != number))
                if kept:
                    by_token[token] = kept
                else:
                    del by_token[token]
            for token in now - earlier:
                grown = array("I", by_token.get(token, ()))
                bisect.insort(grown, number)
                by_token[token] = grown
        if by_token is None:
            return self
        return replace(
            self, by_token=by_token, packed_tokens=tuple(file.packed_tokens for file in code)
        )

    def named(self, question: str) -> list[int]:
        """The numbers of the files whose path the question names (``mentions_path``), in
        order: only the files keyed by one of the question's substrings are tried."""
        asked = _as_paths(question)
        found = {
            number
            for number in self.by_name_start.get("", ())  # a path ending in a slash
            if self.lowered[number] in asked
        }
        for first in range(len(asked)):
            for width in range(1, NAME_START + 1):
                for number in self.by_name_start.get(asked[first : first + width], ()):
                    if self.lowered[number] in asked:
                        found.add(number)
        return sorted(found)

    def candidates(self, question: str) -> list[tuple[str, int]]:
        """The best 12 files with a positive candidate score (see ``candidate_score``), best
        first: the same scores, counted token by token instead of file by file."""
        query_tokens = frozenset(tokens(question))
        in_path: Counter[int] = Counter()
        in_file: Counter[int] = Counter()
        for token in query_tokens:
            in_path.update(self.by_path_token.get(token, ()))
            in_file.update(self.by_token.get(token, ()))
        return _best_candidates(self.paths, in_path, in_file, self.named(question))

    def counted(self, question: str) -> list[tuple[str, int]]:
        """``candidates``, counted with numpy: for a process that keeps views in memory."""
        import numpy as np  # no part of a one-shot

        query_tokens = frozenset(tokens(question))
        size = len(self.paths)

        def holding(table: dict[str, array[int]]) -> npt.NDArray[np.int64]:
            found = [
                np.frombuffer(table[token], dtype=np.uintc)
                for token in query_tokens
                if token in table
            ]
            if not found:
                return np.zeros(size, dtype=np.int64)
            return np.bincount(np.concatenate(found), minlength=size)

        scores = PATH_TOKEN_SCORE * holding(self.by_path_token) + FILE_TOKEN_SCORE * holding(
            self.by_token
        )
        scores[self.named(question)] += PATH_MENTION_SCORE
        positive = np.flatnonzero(scores > 0)
        order = np.frombuffer(self.by_path, dtype=np.uintc)[positive]
        best = positive[np.lexsort((order, -scores[positive]))][:MAX_CANDIDATES]
        return [(self.paths[number], int(scores[number])) for number in best.tolist()]


def _best_candidates(
    paths: Sequence[str], in_path: Counter[int], in_file: Counter[int], named: Iterable[int]
) -> list[tuple[str, int]]:
    """The best 12 of ``paths`` by candidate score, given how many question tokens each
    file's path and tokens hold (by number) and the numbers of the files the question names."""
    scores = {
        paths[number]: PATH_TOKEN_SCORE * in_path[number] + FILE_TOKEN_SCORE * in_file[number]
        for number in in_path.keys() | in_file.keys()
    }
    for number in named:
        path = paths[number]
        scores[path] = scores.get(path, 0) + PATH_MENTION_SCORE
    best = heapq.nsmallest(MAX_CANDIDATES, scores, key=lambda path: (-scores[path], path))
    return [(path, scores[path]) for path in best if scores[path] > 0]


def stored_candidates(question: str, index: IndexStore) -> list[tuple[str, int]]:
    """``CodeFiles.candidates`` read from the store, for a process that keeps no views: only
    the files holding the question's tokens are counted, and no file's tokens are read."""
    holders = index.code_files_holding(tokens(question))
    in_path = Counter(number for numbers in holders.in_path.values() for number in numbers)
    in_file = Counter(number for numbers in holders.in_tokens.values() for number in numbers)
    asked = _as_paths(question)
    named = [number for number, path in enumerate(holders.paths) if path.lower() in asked]
    return _best_candidates(holders.paths, in_path, in_file, named)


NAME_START = 6  # the characters of a file name that key it for ``CodeFiles.named``


def name_start(lowered_path: str) -> str:
    """The first ``NAME_START`` characters of a path's file name (all of a shorter one)."""
    return lowered_path.rsplit("/", 1)[-1][:NAME_START]


def _by_name_start(lowered: Iterable[str]) -> dict[str, tuple[int, ...]]:
    keyed: defaultdict[str, list[int]] = defaultdict(list)
    for number, path in enumerate(lowered):
        keyed[name_start(path)].append(number)
    return {key: tuple(numbers) for key, numbers in keyed.items()}


def code_candidates(question: str, files: Iterable[StoredFile]) -> list[tuple[str, int]]:
    """The best 12 code files with a positive candidate score, best first."""
    return CodeFiles.of(files).candidates(question)


def _unique(items: Iterable[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(items))


def _variables(index: IndexStore, files: Sequence[str]) -> list[EnvReference]:
    """Every environment variable read in ``files``, file by file in line order (a
    question's files, thousands when its words name many definitions, are looked up in a
    view by file, not their records decoded)."""
    by_file = environment_by_file(index)
    return [reference for path in files for reference in by_file.get(path, ())]


# --- code entries -------------------------------------------------------------------------


def symbol_source(chunks: Sequence[StoredChunk], symbols: Sequence[SymbolMatch]) -> str:
    """The lines of every chunk overlapping a symbol's range, each line once, in runs.

    Chunks overlap by design (60 lines every 40), and two symbols may share a chunk; the
    chunks of all the file's symbols are spliced together so no line is repeated.
    """
    ranges = LineRanges([(symbol.line, max(symbol.end_line, symbol.line)) for symbol in symbols])
    overlapping = [
        (chunk.start, chunk.text) for chunk in chunks if ranges.overlap(chunk.start, chunk.end)
    ]
    return "\n\n".join(
        f"SOURCE ({first}-{last}):\n{text}" for first, last, text in splice(overlapping)
    )


DEFINITIONS_SHOWN = 3  # a file's best matching definitions whose own lines a context shows
DEFINITION_LINES = 80  # of a long one, its first lines


def definition_spans(symbols: Sequence[SymbolMatch]) -> list[tuple[int, int]]:
    """The lines of the file's best matching definitions (a long one's first
    ``DEFINITION_LINES``), in order, touching spans merged."""
    spans = sorted(
        (symbol.line, min(max(symbol.end_line, symbol.line), symbol.line + DEFINITION_LINES - 1))
        for symbol in list(symbols)[:DEFINITIONS_SHOWN]
    )
    merged: list[tuple[int, int]] = []
    for first, last in spans:
        if merged and first <= merged[-1][1] + 1:
            merged[-1] = (merged[-1][0], max(merged[-1][1], last))
        else:
            merged.append((first, last))
    return merged


def definition_source(index: IndexStore, path: str, spans: Sequence[tuple[int, int]]) -> str:
    """The lines ``spans`` of the file's best matching definitions (``definition_spans``),
    each line once: the definition itself, not the windows around it."""
    parts = []
    for first, last in spans:
        # a found file's cut holds its lines: its windows are not inflated again
        kept = kept_lines(index, path, first, last)
        lines = kept if kept is not None else index.lines(path, first, last)
        if lines:
            text = "\n".join(bounded_line(line) for line in lines)
            parts.append(f"SOURCE ({first}-{first + len(lines) - 1}):\n{text}")
    return "\n\n".join(parts)


_PACKAGE_FILES = frozenset({"index", "__init__", "mod"})
_FILE_SUFFIXES = frozenset({"js", "mjs", "cjs", "jsx", "ts", "tsx", "mts", "cts", "py", "json"})


@functools.lru_cache(maxsize=1 << 14)
def _stem(path_or_module: str) -> str:
    """The module name a path or import specifier ends in: ``lib/db/index.js`` and ``./db``
    give ``db``, ``szrag.context.build`` gives ``build``."""
    value = path_or_module.replace("\\", "/").rstrip("/")
    if "/" not in value and "." in value:
        head, _, suffix = value.rpartition(".")
        if value.startswith(".") or suffix.lower() not in _FILE_SUFFIXES or not head:
            value = value.strip(".").replace(".", "/")  # a dotted module name
    parts = [part for part in value.split("/") if part not in ("", ".", "..")]
    if not parts:
        return ""
    stem = parts[-1].split(".", 1)[0]
    if stem in _PACKAGE_FILES and len(parts) > 1:
        return parts[-2]
    return stem


def connecting_names(
    importer: CodeRecord | None, imported: str, imported_record: CodeRecord | None
) -> tuple[str, ...]:
    """The names ``importer`` takes from the file ``imported``, else a few of the names
    ``imported`` defines: what ties two files together, in a few words."""
    names: list[str] = []
    if importer is not None:
        target = _stem(imported)
        for item in importer.imports:
            if _stem(item.source) == target:
                names.extend(item.names)
    if not names and imported_record is not None:
        names = [item.name for item in imported_record.functions if item.container is None]
    return _unique(names)[:MAX_CONNECTING_NAMES]


def code_entry(
    index: IndexStore,
    path: str,
    score: int,
    relation: str,
    symbols: Sequence[SymbolMatch],
    *,
    via: str | None = None,
    records: Mapping[str, CodeRecord] | None = None,
    retrieved: bool = False,
) -> CodeEntry | None:
    """One file's structural context plus its matching symbols' source, or None if empty.

    The symbols of a ``retrieved`` file, whose units a context packs, are also given as the
    units holding them, so that no line is packed twice (its units are cut already)."""
    structure = get_code_context(path, index)
    units: tuple[Source, ...] = ()
    if not symbols:
        source = ""
    elif index.config.profile.units:
        spans = definition_spans(symbols)
        source = definition_source(index, path, spans)
        if retrieved:
            units = tuple(definition_units(index, path, spans, score))
    else:
        ranges = [(symbol.line, max(symbol.end_line, symbol.line)) for symbol in symbols]
        source = symbol_source(index.chunks(path, ranges), symbols)
    body = "\n\n".join(part for part in (structure, source) if part)
    if not body:
        return None
    connects: tuple[str, ...] = ()
    if via is not None and records is not None:
        if relation == DEPENDENCY:
            connects = connecting_names(records.get(via), path, records.get(path))
        else:
            connects = connecting_names(records.get(path), via, records.get(via))
    return CodeEntry(
        path=path,
        score=score,
        relation=relation,
        symbols=_unique(symbol.name for symbol in symbols),
        text=f"CODE: {path} ({relation})\n{body}",
        symbol_source=source,
        symbol_units=units,
        structure=structure,
        via=via,
        connects=connects,
    )


# --- the whole --------------------------------------------------------------------------


def _code_files(index: IndexStore, stored: dict[str, StoredFile]) -> CodeFiles:
    """The code-file views of this generation, from the last ones built (``carry``)."""
    earlier: CodeFiles | None = index.carried("context.code_files", None)
    built = CodeFiles.of(stored.values()) if earlier is None else earlier.updated(stored.values())
    index.carry("context.code_files", built)
    return built


def _built(index: IndexStore, key: str, kind: type[T]) -> T | None:
    """The view ``key`` when a thread has built it already, else None."""
    found = index.built(key)
    return found if isinstance(found, kind) else None


def build_codebase_context(
    question: str, index: IndexStore, retrieved_sources: Sequence[Source] = ()
) -> CodebaseContext:
    """The codebase context of ``question`` around the files retrieval already found."""
    clean = require_question(question)
    # a long-running face keeps the file views until the index changes, so a question only
    # pays for its own work; a one-shot reads the few files a question reaches (and a face
    # whose warm-up is under way, whatever views it has built already)
    stored: dict[str, StoredFile] | None
    code_files: CodeFiles | None
    if index.in_memory:
        kept = stored = index.files_by_path()
        code_files = index.derived("context.code_files", lambda: _code_files(index, kept))
    else:
        stored = _built(index, "files.by_path", dict)
        code_files = _built(index, "context.code_files", CodeFiles)
    records = records_by_path(index)
    selection = _Selection()
    retrieved = {source.path for source in retrieved_sources}
    for source in retrieved_sources:
        selection.offer(source.path, retrieved_score(source), DIRECT)
    best = stored_candidates(clean, index) if code_files is None else code_files.counted(clean)

    def indexed(path: str) -> bool:
        return path in stored if stored is not None else index.has_file(path)

    for path, score in best:
        selection.offer(path, score, DIRECT)
    symbols = find_symbols(clean, index)
    routes = tuple(find_routes(clean, index))
    for path, score in symbols.best_by_file().items():
        selection.offer(path, score, DIRECT)
    for route in routes:
        selection.offer(route.file, route.score, DIRECT)

    direct = best_first(selection.with_relation(DIRECT))
    dependencies: list[str] = []
    dependants: list[str] = []
    for root in direct[:MAX_RELATIONSHIP_ROOTS]:
        if not indexed(root):
            continue  # a retrieved path that is no longer indexed has no edges
        root_score = selection.scores[root]
        for path in get_dependencies(root, index):
            dependencies.append(path)
            selection.offer(path, dependency_score(root_score), DEPENDENCY, via=root)
        for path in get_dependants(root, index):
            dependants.append(path)
            selection.offer(path, dependant_score(root_score), DEPENDANT, via=root)

    files = best_first(selection.scores)
    named = [
        ref
        for name in extract_environment_variables(clean)
        for ref in find_environment_variable(name, index)
    ]
    variables = tuple(dict.fromkeys([*named, *_variables(index, files)]))

    entries: list[CodeEntry] = []
    for path in files:
        if len(entries) >= MAX_CODE_CONTEXTS:
            break
        if not indexed(path):
            continue  # a retrieved path that is no longer indexed
        own = symbols.of_file(path)
        entry = code_entry(
            index,
            path,
            selection.scores[path],
            selection.relations[path],
            own,
            via=selection.via.get(path),
            records=records,
            retrieved=path in retrieved,
        )
        if entry is not None:
            entries.append(entry)

    return CodebaseContext(
        symbols=symbols,
        routes=routes,
        files=tuple(files),
        dependencies=_unique(dependencies),
        dependants=_unique(dependants),
        environment_variables=variables,
        code=tuple(entries),
        direct_files=tuple(path for path in files if selection.relations[path] == DIRECT),
        related_files=tuple(path for path in files if selection.relations[path] != DIRECT),
        scores={path: selection.scores[path] for path in files},
        more_sources=tuple(more_sources(index, clean, retrieved_sources)),
    )
