"""The structure graph over an open index: symbols, routes, dependencies, environment variables.

Scores follow the original service, with three departures for symbols. A symbol earns 20
for each question word among the words of its name, and a prose word matches in any
inflection (``registered`` is ``register``, ``blueprints`` is ``Blueprint``); a word written as
code (``select_sources``) matches only as written. It earns 100 when the question names it,
but a one-word name such as ``blueprints`` is named only when written as code: as a plain word
of a sentence it is one matching word (5 more when the question holds the whole name). A
method also earns 10 for each further question word in its class's name, so one word of the
name and one of its class (``Blueprint.register``) outrank a name that is one word of the
question. A route earns 100 when the question contains its path and 20 for each question
token among its method and path tokens.
Dependencies and dependants come from the index's stored edges, never from a rescan.
"""

from __future__ import annotations

import difflib
import functools
import itertools
import posixpath
import re
import weakref
from collections.abc import Iterable, Iterator, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from szrag.code.model import (
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
from szrag.errors import PathError
from szrag.memo import TextMemo
from szrag.redact import redact
from szrag.text import is_test_path, stem, symbol_key, tokens

if TYPE_CHECKING:  # szrag.index imports szrag.code while it loads
    from szrag.index import Index

FULL_NAME = 100
NAME_TOKEN = 20
# A word of the definition's own name says more than a word of its class, and either says
# more than a name the question happens to cover whole: so one word of the name and one of
# its class outrank a name that is one word of the question, and two words of the name
# outrank one word of the name and one of its class.
CONTAINER_TOKEN = NAME_TOKEN // 2
WHOLE_NAME = NAME_TOKEN // 4
ROUTE_PATH = 100
ROUTE_TOKEN = 20

_ENV_NAME = re.compile(r"\b[A-Z][A-Z0-9_]{2,}\b")

# ---- scoring (pure) -----------------------------------------------------------------------


@functools.lru_cache(maxsize=65536)
def name_tokens(name: str) -> frozenset[str]:
    """The tokens of a symbol name or route, computed once per distinct name."""
    return frozenset(tokens(name))


def names_in(question_lower: str, name: str) -> bool:
    """True when ``name`` occurs in the question as a whole word (``get`` not in ``target``)."""
    lowered = name.lower()
    if lowered not in question_lower:  # cheap test first: most names are not there at all
        return False
    return re.search(rf"(?<![\w$]){re.escape(lowered)}(?![\w$])", question_lower) is not None


@functools.lru_cache(maxsize=65536)
def name_words(name: str) -> tuple[tuple[str, str], ...]:
    """Each token of a name with its stem (``register_blueprints``: register, blueprint)."""
    return tuple((token, stem(token)) for token in sorted(name_tokens(name)))


@functools.lru_cache(maxsize=65536)
def name_keys(name: str) -> frozenset[str]:
    """Every token and stem of a name: a question sharing none of them matches no word."""
    return frozenset(key for pair in name_words(name) for key in pair)


# A word of the question written as code: an identifier, a call, a path, a sigil, a number.
_CODE_WORD = re.compile(r"[_`#$/\\\d]|\(\)|\w\.\w|[a-z][A-Z]|::|->")


@dataclass(frozen=True, slots=True)
class SymbolQuestion:
    """A question as symbol scoring reads it: lowercased, the tokens of the words it writes as
    code (matched as written: ``select_sources`` is no ``source``), and the stems of its
    prose words (matched in any inflection: ``registered`` is ``register``)."""

    lowered: str
    exact: frozenset[str]
    stems: frozenset[str]
    keys: frozenset[str]  # both, to pass over the names that match no word at once
    # what each name gives this question: thousands of definitions share a few names
    _names: dict[str, tuple[int, frozenset[str]]] = field(
        default_factory=dict, compare=False, repr=False
    )
    _words: dict[str, frozenset[str]] = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def of(cls, question: str) -> SymbolQuestion:
        """The question read once, for scoring every definition against it."""
        exact: set[str] = set()
        stems: set[str] = set()
        for word in question.split():
            if _CODE_WORD.search(word):
                exact |= tokens(word)
            else:
                stems |= {stem(token) for token in tokens(word)}
        return cls(question.lower(), frozenset(exact), frozenset(stems), frozenset(exact | stems))

    def name_score(self, name: str) -> tuple[int, frozenset[str]]:
        """``symbol_score`` of ``name`` without its class, and the words it holds; worked out
        once per name for this question."""
        found = self._names.get(name)
        if found is None:
            found = self._names[name] = _name_score(self, name)
        return found

    def class_words(self, container: str) -> frozenset[str]:
        """The question's words an enclosing class's name holds, worked out once per class."""
        found = self._words.get(container)
        if found is None:
            found = self._words[container] = self.words_in(container)[0]
        return found

    def words_in(self, name: str) -> tuple[frozenset[str], bool]:
        """The question's words that ``name`` holds (each once, however many of the name's
        tokens it matches), and whether they cover every token of the name."""
        found: set[str] = set()
        whole = True
        for token, token_stem in name_words(name):
            if token in self.exact:
                found.add(token)
            elif token_stem in self.stems:
                found.add(token_stem)
            else:
                whole = False
        return frozenset(found), whole


def names_symbol(question_lower: str, name: str) -> bool:
    """True when the question names the definition itself: its whole name stands there as a
    word and could not be an ordinary word of the sentence, because it has several words
    (``register_blueprint``, ``createApp``) or characters no word has (``#flush``), or it is
    written as code (`` `blueprints` ``, ``blueprints()``, ``request.blueprints``)."""
    if not name or not names_in(question_lower, name):
        return False
    if len(name_tokens(name)) > 1 or not name.isalpha():
        return True
    lowered = re.escape(name.lower())
    as_code = rf"`{lowered}`|(?<![\w$]){lowered}\(|[\w)\]]\.{lowered}(?![\w$])"
    return re.search(as_code, question_lower) is not None


def symbol_score(asked: SymbolQuestion, name: str, container: str | None = None) -> int:
    """20 per question word in the name; 100 when the question names the definition, else 5
    when its words cover the whole name; and, once the name matches, 10 per further question
    word in the enclosing class's name."""
    score, own = asked.name_score(name)
    if container and own:
        score += CONTAINER_TOKEN * len(asked.class_words(container) - own)
    return score


def _name_score(asked: SymbolQuestion, name: str) -> tuple[int, frozenset[str]]:
    """The name's own part of ``symbol_score``, and the question's words it holds (only a
    name holding some lets its class's words count)."""
    if asked.keys.isdisjoint(name_keys(name)):  # most names: no word, and seldom named
        if name.lower() not in asked.lowered:
            return 0, frozenset()
        return (FULL_NAME if names_symbol(asked.lowered, name) else 0), frozenset()
    own, whole = asked.words_in(name)
    named = names_symbol(asked.lowered, name)
    if not own:
        return (FULL_NAME if named else 0), own
    score = NAME_TOKEN * len(own)
    if named:
        score += FULL_NAME
    elif whole:
        score += WHOLE_NAME
    return score, own


def path_in(question_lower: str, path: str) -> bool:
    """True when a route path stands in the question on its own (``/`` not in ``and/or``)."""
    lowered = path.lower()
    if not path or lowered not in question_lower:
        return False
    return re.search(rf"(?<![\w/]){re.escape(lowered)}(?![\w/-])", question_lower) is not None


def route_score(question_lower: str, question_tokens: set[str], method: str, path: str) -> int:
    """100 for the route path in the question plus 20 per question token in method and path."""
    return _route_score(question_lower, question_tokens, path, name_tokens(f"{method} {path}"))


def _route_score(
    question_lower: str, question_tokens: AbstractSet[str], path: str, route_tokens: frozenset[str]
) -> int:
    exact = ROUTE_PATH if path_in(question_lower, path) else 0
    return exact + ROUTE_TOKEN * len(route_tokens & question_tokens)


def extract_environment_variables(question: str) -> list[str]:
    """Names in the question that look like environment variables, first-seen order."""
    return list(dict.fromkeys(_ENV_NAME.findall(question)))


# ---- queries over the index ---------------------------------------------------------------


def code_records(index: Index) -> list[tuple[str, CodeRecord]]:
    """(path, record) of every parsed file, kept until the index changes."""
    return index.derived("code.records", lambda: _decoded_records(index))


def _decoded_records(index: Index) -> list[tuple[str, CodeRecord]]:
    if not index.in_memory:
        return [(path, CodeRecord.from_dict(code)) for path, code in index.code_records()]
    # a long-running face: a file whose content is as it was keeps the record made before
    earlier: dict[str, tuple[str, CodeRecord]] = index.carried("code.records", {})
    kept: dict[str, tuple[str, CodeRecord]] = {}
    records = []
    for path, file in index.files_by_path().items():
        if file.code is None:
            continue
        known = earlier.get(path)
        if known is not None and known[0] == file.sha256:
            record = known[1]
        else:
            record = CodeRecord.from_dict(file.code)
        kept[path] = (file.sha256, record)
        records.append((path, record))
    index.carry("code.records", kept)
    return records


def records_by_path(index: Index) -> dict[str, CodeRecord]:
    """The parsed code records by path, kept until the index changes."""
    return index.derived("code.records.by_path", lambda: dict(code_records(index)))


def find_symbols(question: str, index: Index) -> SymbolMatches:
    """Functions, classes and methods the question points at, best first."""
    asked = SymbolQuestion.of(question)
    if index.in_memory:  # a long-running face: every definition scored at once
        from szrag.code.symbol_table import SymbolTable  # numpy is no part of a one-shot

        table = index.derived("code.symbols.table", lambda: SymbolTable.of(code_records(index)))
        return table.matches(asked)
    lookup = _symbol_lookup(index)
    scored: dict[tuple[str, str | None], int] = {}  # many definitions share a name
    matches = []
    for number in lookup.candidates(asked):
        path, item = lookup.definitions[number]
        key = (item.name, item.container)
        score = scored.get(key)
        if score is None:
            score = scored[key] = symbol_score(asked, item.name, item.container)
        if score > 0:
            matches.append(
                SymbolMatch(
                    path, item.name, item.kind, item.line, item.end_line, score, item.container
                )
            )
    return SymbolMatches(sorted(matches, key=lambda match: (-match.score, match.file, match.line)))


_RUN = re.compile(r"[\w$]+")


@dataclass(frozen=True, slots=True)
class _SymbolLookup:
    """Every definition of one index generation, and where to find the few a question can
    score: a definition scores only when it shares a word (token or stem) with the question,
    or the question holds its whole name, which (for a name of word characters) is then one
    of the question's runs of word characters. Names with other characters are always tried.
    """

    definitions: tuple[tuple[str, Definition], ...]
    by_key: dict[str, tuple[int, ...]]
    by_name: dict[str, tuple[int, ...]]
    unusual: tuple[int, ...]

    @classmethod
    def of(cls, records: Iterable[tuple[str, CodeRecord]]) -> _SymbolLookup:
        definitions = tuple((path, item) for path, record in records for item in record.functions)
        by_key: dict[str, list[int]] = {}
        by_name: dict[str, list[int]] = {}
        unusual: list[int] = []
        for number, (_, item) in enumerate(definitions):
            for key in name_keys(item.name):
                by_key.setdefault(key, []).append(number)
            lowered = item.name.lower()
            if _RUN.fullmatch(lowered):
                by_name.setdefault(lowered, []).append(number)
            else:
                unusual.append(number)
        return cls(
            definitions,
            {key: tuple(numbers) for key, numbers in by_key.items()},
            {name: tuple(numbers) for name, numbers in by_name.items()},
            tuple(unusual),
        )

    def candidates(self, asked: SymbolQuestion) -> list[int]:
        """The definitions that may score, in index order (so ties sort as a full scan's)."""
        found: set[int] = set(self.unusual)
        for key in asked.keys:
            found.update(self.by_key.get(key, ()))
        for run in _RUN.findall(asked.lowered):
            found.update(self.by_name.get(run, ()))
        return sorted(found)


def _symbol_lookup(index: Index) -> _SymbolLookup:
    return index.derived("code.symbols.lookup", lambda: _SymbolLookup.of(code_records(index)))


def routes_by_path(index: Index) -> dict[str, tuple[Route, ...]]:
    """Each file's routes under the prefixes their routers are mounted at in other files
    (``code.mounts``), kept until the index changes."""
    return index.derived(
        "code.routes.mounted",
        lambda: mounted_routes(
            records_by_path(index), frozenset(entry.path for entry in index.file_entries())
        ),
    )


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


def find_routes(question: str, index: Index) -> list[RouteMatch]:
    """Routes the question points at, best first."""
    lowered, query = question.lower(), tokens(question)
    lookup = index.derived("code.routes.lookup", lambda: _RouteLookup.of(routes_by_path(index)))
    matches = []
    for number in lookup.candidates(lowered, query):
        path, item, route_tokens = lookup.routes[number]
        score = _route_score(lowered, query, item.path, route_tokens)
        if score > 0:
            matches.append(RouteMatch(path, item.method, item.path, item.line, item.handler, score))
    return sorted(
        matches, key=lambda match: (-match.score, is_test_path(match.file), match.file, match.line)
    )


def all_routes(index: Index) -> list[RouteMatch]:
    """Every route in the index (score 0), by file and line, the application's before those
    its tests serve (gin's tests register routes of their own, and sort first by name)."""
    return [
        RouteMatch(path, item.method, item.path, item.line, item.handler, 0)
        for path, routes in sorted(routes_by_path(index).items(), key=_tests_last)
        for item in routes
    ]


def _tests_last(entry: tuple[str, object]) -> tuple[bool, str]:
    return is_test_path(entry[0]), entry[0]


def find_environment_variable(name: str, index: Index) -> list[EnvReference]:
    """Every read of environment variable ``name`` (case-insensitive), by file and line."""
    wanted = name.strip().lower()
    return [
        EnvReference(path, item.name, item.line)
        for path, record in code_records(index)
        for item in record.environment_variables
        if item.name.lower() == wanted
    ]


def indexed_path(path: str | Path, index: Index) -> str:
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


def get_dependencies(path: str | Path, index: Index) -> list[str]:
    """Files that ``path`` imports or refers to, from the stored edges."""
    return index.dependencies(indexed_path(path, index))


MAX_REFERENCES = 200


def find_references(name: str, index: Index, limit: int = MAX_REFERENCES) -> list[Reference]:
    """The places that call ``name`` (any spelling of it: ``a.b.verify_sig`` and
    ``verifySig`` are the same lookup), by file and line, each with the definition it sits
    in and its line of code (secrets redacted)."""
    key = symbol_key(name.strip().rstrip("()"))
    if not key:
        return []
    found: list[Reference] = []
    for path, line in index.named(key, "call")[:limit]:
        stored = index.files_by_path().get(path) if index.in_memory else index.get_file(path)
        record = CodeRecord.from_dict(stored.code) if stored is not None and stored.code else None
        caller = _innermost(record.functions, line) if record is not None else None
        text = next(iter(index.lines(path, line, line)), "")
        shown = redact(bounded_line(text.strip()), path=path)
        found.append(Reference(path, line, name.strip(), caller, shown))
    return found


def _innermost(definitions: Sequence[Definition], line: int) -> str | None:
    around = [item for item in definitions if item.line <= line <= item.end_line]
    if not around:
        return None
    inner = min(around, key=lambda item: item.end_line - item.line)
    return f"{inner.container}.{inner.name}" if inner.container else inner.name


def get_dependants(path: str | Path, index: Index) -> list[str]:
    """Files that import ``path``, from the stored edges."""
    return index.dependants(indexed_path(path, index))


# ---- code context -------------------------------------------------------------------------


# A minified bundle is one line of a megabyte and thousands of functions: what a context
# shows of one file stays readable and cheap to redact and count.
MAX_LINE_CHARS = 2000
MAX_SECTION_ITEMS = 200


def _section(title: str, lines: Iterable[str]) -> str | None:
    items = list(dict.fromkeys(lines))
    if not items:
        return None
    shown = [f"- {item}" for item in items[:MAX_SECTION_ITEMS]]
    if len(items) > MAX_SECTION_ITEMS:
        shown.append(f"- … and {len(items) - MAX_SECTION_ITEMS} more")
    return f"{title}:\n" + "\n".join(shown)


def bounded_line(line: str) -> str:
    """``line`` itself, or its first ``MAX_LINE_CHARS`` and how much more there is."""
    if len(line) <= MAX_LINE_CHARS:
        return line
    return f"{line[:MAX_LINE_CHARS]} … [{len(line) - MAX_LINE_CHARS} more characters on this line]"


def _symbol_ranges(
    record: CodeRecord, path: str, symbol: str | SymbolMatch
) -> list[tuple[int, int]]:
    if isinstance(symbol, SymbolMatch):
        return [(symbol.line, symbol.end_line)] if symbol.file == path else []
    return [(item.line, item.end_line) for item in record.functions if item.name == symbol]


def splice(chunks: Iterable[tuple[int, str]]) -> list[tuple[int, int, str]]:
    """Join overlapping line windows ``(start, text)`` into runs of distinct lines.

    Returns ``(first, last, text)`` per run of consecutive lines, each line once (as the
    first window holding it gives it).
    """
    windows = list(chunks)
    if any(earlier[0] > later[0] for earlier, later in itertools.pairwise(windows)):
        return _splice_unordered(windows)
    # In start order, the lines a window adds are those past the last one taken: a window
    # starting no later than this one reaches that line, so everything before it is taken.
    runs: list[tuple[int, int, list[str]]] = []
    taken = None  # the last line number taken
    for start, text in windows:
        lines = text.split("\n")
        skip = 0 if taken is None else max(0, taken + 1 - start)
        if skip >= len(lines):
            continue
        added = lines[skip:]
        if max(map(len, added)) > MAX_LINE_CHARS:
            added = [bounded_line(line) for line in added]
        first = start + skip
        taken = first + len(added) - 1
        if runs and runs[-1][1] == first - 1:
            runs[-1][2].extend(added)
            runs[-1] = (runs[-1][0], taken, runs[-1][2])
        else:
            runs.append((first, taken, added))
    return [(first, last, "\n".join(lines)) for first, last, lines in runs]


def _splice_unordered(windows: list[tuple[int, str]]) -> list[tuple[int, int, str]]:
    lines: dict[int, str] = {}
    for start, text in windows:
        for offset, content in enumerate(text.split("\n")):
            if start + offset not in lines:
                lines[start + offset] = bounded_line(content)
    runs: list[tuple[int, int, list[str]]] = []  # joined at the end: a long run is not
    for number in sorted(lines):  # copied once per line
        if runs and runs[-1][1] == number - 1:
            first, _last, texts = runs[-1]
            texts.append(lines[number])
            runs[-1] = (first, number, texts)
        else:
            runs.append((number, number, [lines[number]]))
    return [(first, last, "\n".join(texts)) for first, last, texts in runs]


def _source_sections(index: Index, path: str, ranges: list[tuple[int, int]]) -> Iterator[str]:
    overlapping = [(chunk.start, chunk.text) for chunk in index.chunks(path, ranges)]
    for first, last, text in splice(overlapping):
        yield f"SOURCE ({first}-{last}):\n{text}"


def _structure(path: str, index: Index, record: CodeRecord) -> str:
    """The structure sections of one file's context (without its source)."""
    sections = [
        _section("IMPORTS", (item.source for item in record.imports)),
        _section(
            "FUNCTIONS", (f"{item.name} ({item.line}-{item.end_line})" for item in record.functions)
        ),
        _section(
            "ROUTES",
            (
                f"{item.method} {item.path} ({item.line})"
                for item in routes_by_path(index).get(path, record.routes)
            ),
        ),
        _section(
            "ENVIRONMENT VARIABLES",
            (f"{item.name} ({item.line})" for item in record.environment_variables),
        ),
    ]
    return "\n\n".join(section for section in sections if section)


STRUCTURE_MEMO_CHARS = 4_000_000  # one generation's structure texts kept by a server


def _structure_memo(index: Index) -> TextMemo[str]:
    """A memo of ``_structure`` by path for one generation of ``index`` (held weakly: the
    memo is one of the index's own views, and a cycle through it would outlive a closed
    index in a process whose views are frozen out of the collector)."""
    held = weakref.ref(index)

    def structure(path: str) -> str:
        owner = held()
        if owner is None:
            return ""
        record = records_by_path(owner).get(path)
        return _structure(path, owner, record) if record is not None else ""

    return TextMemo(structure, max_chars=STRUCTURE_MEMO_CHARS, size=len)


def get_code_context(
    path: str | Path, index: Index, symbol: str | SymbolMatch | None = None
) -> str:
    """A file's structure as text, and with ``symbol`` the source chunks around it.

    Sections (only those with content): IMPORTS, FUNCTIONS ``name (start-end)``, ROUTES
    ``METHOD path (line)``, ENVIRONMENT VARIABLES ``NAME (line)``, then SOURCE blocks of the
    chunks overlapping the symbol's lines, spliced so overlapping chunks repeat no line.
    Files without a code record give an empty string.
    """
    with index.reading():  # the record, its views and its chunks of one generation
        relative = indexed_path(path, index)
        record = records_by_path(index).get(relative)
        if record is None:
            return ""
        if index.in_memory:  # the same files come back question after question
            memo = index.derived("code.structure", lambda: _structure_memo(index))
            structure = memo(relative)
        else:
            structure = _structure(relative, index, record)
        sections = [structure]
        if symbol is not None:
            ranges = _symbol_ranges(record, relative, symbol)
            if ranges:
                sections.extend(_source_sections(index, relative, ranges))
        return "\n\n".join(section for section in sections if section)
