"""The structure graph over an open index: symbols, routes, references, dependencies and
environment variables, read from the code records and edges the index stores (never from a
rescan), scored by ``szrag.code.scoring``.
"""

from __future__ import annotations

import difflib
import posixpath
from collections.abc import Iterator, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, cast

from szrag.base.errors import PathError
from szrag.base.public import public
from szrag.base.redact import redact
from szrag.base.text import is_test_path, near_spellings, stem, symbol_key, tokens
from szrag.code.model import (
    CALLBACK_KIND,
    CodeRecord,
    Definition,
    EnvReference,
    Reference,
    Route,
    RouteMatch,
    SymbolMatch,
    SymbolMatches,
)
from szrag.code.mounts import mounted_routes
from szrag.code.scoring import (
    OTHER_CHARACTERS,
    WHOLE_NAME_MARK,
    WORD_RUN,
    SymbolQuestion,
    lookup_prefix,
    name_tokens,
    scored_route,
    symbol_score,
)
from szrag.index.protocol import IndexStore
from szrag.index.records import route_records

if TYPE_CHECKING:
    from szrag.code.symbol_table import SymbolTable


def find_symbols(question: str, index: IndexStore) -> SymbolMatches:
    """Functions, classes and methods the question points at, best first."""
    asked = SymbolQuestion.of(question)
    if index.in_memory:  # a long-running face: every definition scored at once
        from szrag.code.symbol_table import SymbolTable  # numpy is no part of a one-shot

        def built() -> SymbolTable:
            made = SymbolTable.of(index.definitions(), index.carried("code.symbols.table", None))
            index.carry("code.symbols.table", made)
            return made

        table = index.derived("code.symbols.table", built)
        return table.matches(asked)
    warmed = index.built("code.symbols.table")  # by a face's warm-up, its views not all built
    if warmed is not None:
        return cast("SymbolTable", warmed).matches(asked)
    scored: dict[tuple[str, str | None], int] = {}  # many definitions share a name
    matches = []
    for path, item, held in _reached(asked, index):
        key = (item.name, item.container)
        score = scored.get(key)
        if score is None:
            score = scored[key] = symbol_score(asked, item.name, item.container, held)
        if score > 0:
            matches.append(
                SymbolMatch(
                    path, item.name, item.kind, item.line, item.end_line, score, item.container
                )
            )
    return SymbolMatches(sorted(matches, key=lambda match: (-match.score, match.file, match.line)))


def _reached(
    asked: SymbolQuestion, index: IndexStore
) -> list[tuple[str, Definition, frozenset[str]]]:
    """The definitions that may score for ``asked``, in index order (so ties sort as a scan of
    every definition's would), each with the tokens of its name that are one of the
    question's words or stem to one, read by their names' lookup words: a definition scores
    only when it has such a token, or the question holds its whole name, which (for a name of
    word characters) is then one of the question's runs of word characters. Names with other
    characters are always tried."""
    always = {WHOLE_NAME_MARK + run for run in WORD_RUN.findall(asked.lowered)}
    always.add(OTHER_CHARACTERS)
    found = index.definitions_by_words(always, {lookup_prefix(key) for key in asked.keys})
    reached: dict[tuple[str, int], Definition] = {}
    held: dict[tuple[str, int], set[str]] = {}
    for word, path, seq, item in found:
        if word in always:
            reached.setdefault((path, seq), item)
        elif word in asked.keys or stem(word) in asked.keys:
            reached.setdefault((path, seq), item)
            held.setdefault((path, seq), set()).add(word)
    return [
        (path, item, frozenset(held.get((path, seq), ()))) for (path, seq), item in reached.items()
    ]


def routes_by_path(index: IndexStore) -> dict[str, tuple[Route, ...]]:
    """Each file's routes under the prefixes their routers are mounted at in other files
    (``code.mounts``), kept until the index changes."""
    return index.derived(
        "code.routes.mounted",
        lambda: mounted_routes(route_records(index.route_rows()), IndexedPaths(index)),
    )


class IndexedPaths(AbstractSet[str]):
    """The paths ``index`` holds, each looked up when asked: resolving a corpus's few mounts
    asks about a few paths, where a set of every path costs a row per file (a one-shot
    question's context paid for it)."""

    def __init__(self, index: IndexStore) -> None:
        self._index = index
        self._asked: dict[str, bool] = {}

    def __contains__(self, path: object) -> bool:
        if not isinstance(path, str):
            return False
        held = self._asked.get(path)
        if held is None:
            held = self._asked[path] = self._index.has_file(path)
        return held

    def __iter__(self) -> Iterator[str]:
        return (entry.path for entry in self._index.file_entries())

    def __len__(self) -> int:
        return len(self._index.file_entries())


@dataclass(frozen=True, slots=True)
class _RouteLookup:
    """Every mounted route of one generation with its file and the tokens of its method and
    path, and the routes holding each token: a route scores only when it shares a token with
    the question or the question holds its path."""

    routes: tuple[tuple[str, Route, frozenset[str]], ...]
    lowered: tuple[str, ...]  # each route's path, lowercased
    by_token: dict[str, tuple[int, ...]]

    @classmethod
    def of(cls, mounted: dict[str, tuple[Route, ...]]) -> _RouteLookup:
        routes = tuple(
            (path, item, name_tokens(f"{item.method} {item.path}"))
            for path, items in mounted.items()
            for item in items
        )
        by_token: dict[str, list[int]] = {}
        for number, (_, _, route_tokens) in enumerate(routes):
            for token in route_tokens:
                by_token.setdefault(token, []).append(number)
        return cls(
            routes,
            tuple(item.path.lower() for _, item, _ in routes),
            {token: tuple(numbers) for token, numbers in by_token.items()},
        )

    def candidates(self, lowered: str, query: AbstractSet[str]) -> list[int]:
        """The routes that may score, in index order."""
        found = {number for token in query for number in self.by_token.get(token, ())}
        found.update(number for number, path in enumerate(self.lowered) if path and path in lowered)
        return sorted(found)


def find_routes(question: str, index: IndexStore) -> list[RouteMatch]:
    """Routes the question points at, best first."""
    lowered, query = question.lower(), tokens(question)
    lookup = index.derived("code.routes.lookup", lambda: _RouteLookup.of(routes_by_path(index)))
    matches = []
    for number in lookup.candidates(lowered, query):
        path, item, route_tokens = lookup.routes[number]
        score = scored_route(lowered, query, item.path, route_tokens)
        if score > 0:
            matches.append(RouteMatch(path, item.method, item.path, item.line, item.handler, score))
    return sorted(
        matches, key=lambda match: (-match.score, is_test_path(match.file), match.file, match.line)
    )


def all_routes(index: IndexStore) -> list[RouteMatch]:
    """Every route in the index (score 0), by file and line, the application's before those
    its tests serve (gin's tests register routes of their own, and sort first by name)."""
    return [
        RouteMatch(path, item.method, item.path, item.line, item.handler, 0)
        for path, routes in sorted(routes_by_path(index).items(), key=_tests_last)
        for item in routes
    ]


def _tests_last(entry: tuple[str, object]) -> tuple[bool, str]:
    return is_test_path(entry[0]), entry[0]


def find_environment_variable(name: str, index: IndexStore) -> list[EnvReference]:
    """Every read of environment variable ``name`` (case-insensitive), by file and line."""
    wanted = name.strip().lower()
    return [
        reference
        for references in environment_by_file(index).values()
        for reference in references
        if reference.name.lower() == wanted
    ]


def environment_by_file(index: IndexStore) -> dict[str, tuple[EnvReference, ...]]:
    """Each file's reads of environment variables, by path, each file's in its record's
    order (stored apart from the record: none is decoded), kept until the index changes."""

    def read() -> dict[str, tuple[EnvReference, ...]]:
        found: dict[str, list[EnvReference]] = {}
        for path, variable, line in index.environment_reads():
            found.setdefault(path, []).append(EnvReference(path, variable, line))
        return {path: tuple(references) for path, references in found.items()}

    return index.derived("code.environment", read)


def indexed_path(path: str | Path, index: IndexStore) -> str:
    """``path`` as the index stores it (relative, POSIX); PathError when it is not indexed."""
    raw = str(path).strip().replace("\\", "/")
    if not raw:
        raise PathError("no path given")
    if raw.startswith("/"):  # absolute (backslashes are slashes by now)
        try:
            raw = Path(raw).resolve().relative_to(index.root.resolve()).as_posix()
        except ValueError:
            raise PathError(f"{path} is outside the indexed root {index.root}") from None
    relative = posixpath.normpath(raw)
    if relative == ".." or relative.startswith("../"):
        raise PathError(f"{path} is outside the indexed root {index.root}")
    if not index.has_file(relative):
        close = closest_paths(relative, [entry.path for entry in index.file_entries()])
        hint = f"; did you mean {' or '.join(close)}?" if close else ""
        raise PathError(f"{relative} is not in the index of {index.root}{hint}")
    return relative


def closest_paths(wanted: str, paths: Sequence[str], limit: int = 3) -> list[str]:
    """Indexed paths that end like ``wanted`` (``flask/app.py`` -> ``src/flask/app.py``), else
    the most similar ones."""
    suffix = [path for path in paths if path.endswith("/" + wanted)]
    if suffix:
        return sorted(suffix, key=len)[:limit]
    name = wanted.rsplit("/", 1)[-1]
    same_name = [path for path in paths if path.rsplit("/", 1)[-1] == name]
    if same_name:
        return sorted(same_name, key=len)[:limit]
    return difflib.get_close_matches(wanted, paths, n=limit, cutoff=0.6)


def get_dependencies(path: str | Path, index: IndexStore) -> list[str]:
    """Files that ``path`` imports or refers to, from the stored edges."""
    return index.dependencies(indexed_path(path, index))


# A minified bundle is one line of a megabyte: a line shown of it stays readable and cheap
# to redact and count.
MAX_LINE_CHARS = 2000


def bounded_line(line: str) -> str:
    """``line`` itself, or its first ``MAX_LINE_CHARS`` and how much more there is."""
    if len(line) <= MAX_LINE_CHARS:
        return line
    return f"{line[:MAX_LINE_CHARS]} … [{len(line) - MAX_LINE_CHARS} more characters on this line]"


MAX_REFERENCES = 200


def find_references(name: str, index: IndexStore, limit: int = MAX_REFERENCES) -> list[Reference]:
    """The places that call ``name`` (any spelling of it: ``a.b.verify_sig`` and
    ``verifySig`` are the same lookup), by file and line, each with the definition it sits
    in and its line of code (secrets redacted)."""
    key = _lookup_key(name)
    if not key:
        return []
    found: list[Reference] = []
    for path, line in index.named(key, "call")[:limit]:
        stored = index.get_file(path)
        code = stored.code if stored is not None else None  # decoded at each read: once
        record = CodeRecord.from_dict(code) if code else None
        caller = _innermost(record.unit_definitions, line) if record is not None else None
        if caller is not None:  # a callback is named by a string of the file's
            caller = redact(caller, path=path)
        text = next(iter(index.lines(path, line, line)), "")
        shown = redact(bounded_line(text.strip()), path=path)
        found.append(Reference(path, line, name.strip(), caller, shown))
    return found


def _lookup_key(name: str) -> str:
    """The names table's key of a name as written (``a.b.verify_sig()``: ``verifysig``)."""
    return symbol_key(name.strip().rstrip("()"))


@dataclass(frozen=True, slots=True)
class ReferenceReport:
    """Where a name is called; when nowhere, the defined names one slip of the hand from it."""

    name: str
    references: list[Reference]
    did_you_mean: list[str] = field(metadata=public(omit_empty=True))


MAX_SUGGESTIONS = 5


def references_report(name: str, index: IndexStore, limit: int = MAX_REFERENCES) -> ReferenceReport:
    """``find_references``, and when it finds none for a name defined nowhere, the names
    defined one letter away (``near_names``): what ``szrag refs restartServce`` should say."""
    found = find_references(name, index, limit)
    key = _lookup_key(name)
    defined = bool(found) or not key or bool(index.named(key, "definition"))
    return ReferenceReport(name.strip(), found, [] if defined else near_names(key, index))


def near_names(key: str, index: IndexStore, limit: int = MAX_SUGGESTIONS) -> list[str]:
    """The definitions whose names are one letter left out, added, changed, or two swapped,
    from the lookup key ``key``, as they are written (one file read for each); none for a
    short key."""
    names: dict[str, None] = {}
    near = near_spellings(key)
    for spelling in index.names_held(near, "definition")[:limit]:
        path, line = index.named(spelling, "definition")[0]
        stored = index.get_file(path)
        record = CodeRecord.from_dict(stored.code) if stored is not None and stored.code else None
        written = next(
            (
                item.name
                for item in (record.functions if record is not None else ())
                if item.line == line and symbol_key(item.name) == spelling
            ),
            None,
        )
        if written is not None:
            names[written] = None
    return list(names)


def _innermost(definitions: Sequence[Definition], line: int) -> str | None:
    # a callback's first line is the call it is handed to: that call is its caller's
    around = [
        item
        for item in definitions
        if item.line <= line <= item.end_line
        and not (item.kind == CALLBACK_KIND and item.line == line)
    ]
    if not around:
        return None
    inner = min(around, key=lambda item: item.end_line - item.line)
    return f"{inner.container}.{inner.name}" if inner.container else inner.name


def get_dependants(path: str | Path, index: IndexStore) -> list[str]:
    """Files that import ``path``, from the stored edges."""
    return index.dependants(indexed_path(path, index))
