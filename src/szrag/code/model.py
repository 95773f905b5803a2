"""Records of code structure: what one file contains, and what the structure graph finds.

A file's ``CodeRecord`` is stored in the index as JSON (``to_dict``) and read back with
``from_dict``, which tolerates records written by older versions (missing keys are empty).
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, overload

from szrag.base.public import public, public_dict

_PATH = public(name="path")  # a match's file is its public ``path``

IMPORT_KINDS = ("import", "require", "dynamic", "reexport", "from", "module")
DEFINITION_KINDS = ("function", "class", "method", "arrow")


@dataclass(frozen=True, slots=True)
class Import:
    """One imported module: specifier as written, line, names and statement kind.

    Names are those taken from the module (``from m import a as b`` gives ``a``); a default,
    namespace, ``require`` or whole-module import gives its local name instead.
    """

    source: str
    line: int
    names: tuple[str, ...] = ()
    kind: str = "import"


@dataclass(frozen=True, slots=True)
class Export:
    """One exported name and the line that exports it."""

    name: str
    line: int


@dataclass(frozen=True, slots=True)
class Definition:
    """A function, class, method or arrow function with its line range (1-based, inclusive)."""

    name: str
    kind: str
    line: int
    end_line: int
    container: str | None = None  # the enclosing class of a method or field


@dataclass(frozen=True, slots=True)
class Call:
    """A call in ``a.b.c`` form, its line, and the named function around it."""

    name: str
    line: int
    function: str | None = None


@dataclass(frozen=True, slots=True)
class Reference:
    """A place that calls a name: file, line, the definition around it and the line's text."""

    file: str = field(metadata=_PATH)
    line: int
    name: str
    caller: str | None
    text: str


@dataclass(frozen=True, slots=True)
class EnvironmentVariable:
    """A read of an environment variable: name and line, never the value."""

    name: str
    line: int


@dataclass(frozen=True, slots=True)
class Route:
    """An HTTP route: method (GET ... ALL, USE for mounts), path, line and handler name.

    A Python route also says which object it is declared on (``owner``: ``bp``, ``app``),
    which part of ``path`` that object's own prefix gave (``router_prefix``) and the line of
    the function it is declared in (``scope``, 0 at the top of the module: a test's local
    ``bp`` is not another test's); a mount says what it mounts (``target``: ``module:name``,
    the module empty for the file itself) and with which call (``mounted_with``), so that
    ``code.mounts`` can put a router's routes under the prefix it is mounted at elsewhere.
    """

    method: str
    path: str
    line: int
    handler: str | None = None
    owner: str | None = None
    router_prefix: str = ""
    target: str | None = None
    mounted_with: str | None = None
    scope: int = 0

    def to_dict(self) -> dict[str, Any]:
        """The stored form; what a mount knows is written only when known, so the routes of
        languages without mounts keep their shape."""
        stored: dict[str, Any] = {
            "method": self.method,
            "path": self.path,
            "line": self.line,
            "handler": self.handler,
        }
        if self.owner is not None:
            stored["owner"] = self.owner
        if self.router_prefix:
            stored["router_prefix"] = self.router_prefix
        if self.target is not None:
            stored["target"] = self.target
        if self.mounted_with is not None:
            stored["mounted_with"] = self.mounted_with
        if self.scope:
            stored["scope"] = self.scope
        return stored


@dataclass(frozen=True, slots=True)
class PathReference:
    """A literal file path built from the file's own location, relative to its directory."""

    path: str
    line: int


CALLBACK_KIND = "callback"  # the kind of a record's ``callbacks``


@dataclass(frozen=True, slots=True)
class CodeRecord:
    """Everything the parser found in one file."""

    language: str
    partial: bool = False
    imports: tuple[Import, ...] = ()
    exports: tuple[Export, ...] = ()
    functions: tuple[Definition, ...] = ()
    calls: tuple[Call, ...] = ()
    environment_variables: tuple[EnvironmentVariable, ...] = ()
    routes: tuple[Route, ...] = ()
    path_references: tuple[PathReference, ...] = ()
    # functions handed to a call that names them (``app.post("/api/report")``, a test's
    # ``it("...")``): units, and the callers ``refs`` names, but not symbols to look up (a
    # test's description does not answer for the code it tests) nor the owners of calls
    callbacks: tuple[Definition, ...] = ()

    @property
    def unit_definitions(self) -> tuple[Definition, ...]:
        """What the file's units follow: its definitions and its named callbacks."""
        return self.functions + self.callbacks if self.callbacks else self.functions

    @property
    def is_empty(self) -> bool:
        """True when nothing at all was found."""
        return not (
            self.imports
            or self.exports
            or self.functions
            or self.calls
            or self.environment_variables
            or self.routes
            or self.path_references
            or self.callbacks
        )

    def to_dict(self) -> dict[str, Any]:
        """The JSON-ready form stored in the index."""
        # Written out: dataclasses.asdict deep-copies every value and costs more than parsing.
        return {
            "language": self.language,
            "partial": self.partial,
            "imports": [
                {
                    "source": item.source,
                    "line": item.line,
                    "names": list(item.names),
                    "kind": item.kind,
                }
                for item in self.imports
            ],
            "exports": [{"name": item.name, "line": item.line} for item in self.exports],
            "functions": [
                {
                    "name": item.name,
                    "kind": item.kind,
                    "line": item.line,
                    "end_line": item.end_line,
                    "container": item.container,
                }
                for item in self.functions
            ],
            "calls": [
                {"name": item.name, "line": item.line, "function": item.function}
                for item in self.calls
            ],
            "environment_variables": [
                {"name": item.name, "line": item.line} for item in self.environment_variables
            ],
            "routes": [item.to_dict() for item in self.routes],
            "path_references": [
                {"path": item.path, "line": item.line} for item in self.path_references
            ],
            "callbacks": [
                {
                    "name": item.name,
                    "kind": item.kind,
                    "line": item.line,
                    "end_line": item.end_line,
                    "container": item.container,
                }
                for item in self.callbacks
            ],
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> CodeRecord:
        """A record from its stored JSON form; unknown keys are ignored."""

        def items(key: str, kind: type[Any]) -> tuple[Any, ...]:
            names = kind.__dataclass_fields__
            return tuple(
                kind(**{name: value for name, value in item.items() if name in names})
                for item in data.get(key) or ()
                if isinstance(item, dict)
            )

        def written(key: str, kind: type[Any], make: Callable[[dict[str, Any]], Any]) -> Any:
            # a record as ``to_dict`` wrote it holds every field and no other: made with the
            # fields in order (the records of every file a question shows are decoded)
            raw = data.get(key) or ()
            fields = _FIELD_SETS[kind]
            if all(isinstance(item, dict) and item.keys() == fields for item in raw):
                return tuple(map(make, raw))
            if kind is Import:
                return tuple(
                    Import(item.source, item.line, tuple(item.names), item.kind)
                    for item in items(key, kind)
                )
            return items(key, kind)

        imports = written("imports", Import, _written_import)
        return cls(
            language=str(data.get("language", "")),
            partial=bool(data.get("partial", False)),
            imports=imports,
            exports=written("exports", Export, _written_export),
            functions=written("functions", Definition, _written_definition),
            calls=items("calls", Call),
            environment_variables=items("environment_variables", EnvironmentVariable),
            routes=items("routes", Route),
            path_references=items("path_references", PathReference),
            callbacks=written("callbacks", Definition, _written_definition),
        )


_FIELD_SETS: dict[type[Any], frozenset[str]] = {
    kind: frozenset(kind.__dataclass_fields__) for kind in (Import, Export, Definition)
}


def _written_import(item: dict[str, Any]) -> Import:
    return Import(item["source"], item["line"], tuple(item["names"]), item["kind"])


def _written_export(item: dict[str, Any]) -> Export:
    return Export(item["name"], item["line"])


def _written_definition(item: dict[str, Any]) -> Definition:
    return Definition(item["name"], item["kind"], item["line"], item["end_line"], item["container"])


@dataclass(frozen=True, slots=True)
class SymbolMatch:
    """A definition that matches a question, with its score."""

    public_order: ClassVar[tuple[str, ...]] = ("file", "name", "kind", "container")

    file: str = field(metadata=_PATH)
    name: str
    kind: str
    line: int
    end_line: int
    score: int
    container: str | None = None  # the enclosing class of a method or field

    @property
    def qualified_name(self) -> str:
        """``Class.method`` for a method, the bare name otherwise."""
        return f"{self.container}.{self.name}" if self.container else self.name

    def to_dict(self) -> dict[str, Any]:
        """The public form: ``path`` is the file."""
        return public_dict(self)


class SymbolMatches(Sequence[SymbolMatch]):
    """A question's symbol matches, best first, ties by file and line.

    A question sharing a common word matches thousands of definitions, and a codebase context
    reads only their count, the first few, each file's best score and the matches of the files
    it shows: a server's matches (``symbol_table``) make their records only when read. Equal
    to any sequence of the same matches."""

    def __init__(self, matches: Iterable[SymbolMatch] = ()) -> None:
        self._matches = list(matches)
        self._by_file: dict[str, list[SymbolMatch]] | None = None

    def __len__(self) -> int:
        return len(self._matches)

    def _at(self, place: int) -> SymbolMatch:
        """The match at ``place`` (0 <= place < len): what a lazy kind makes on first read."""
        return self._matches[place]

    @overload
    def __getitem__(self, index: int) -> SymbolMatch: ...

    @overload
    def __getitem__(self, index: slice) -> list[SymbolMatch]: ...

    def __getitem__(self, index: int | slice) -> SymbolMatch | list[SymbolMatch]:
        if isinstance(index, slice):
            return [self._at(place) for place in range(*index.indices(len(self)))]
        place = index + len(self) if index < 0 else index
        if not 0 <= place < len(self):
            raise IndexError("symbol match index out of range")
        return self._at(place)

    def __iter__(self) -> Iterator[SymbolMatch]:
        return (self._at(place) for place in range(len(self)))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, SymbolMatches | list | tuple):
            return NotImplemented
        return len(self) == len(other) and all(
            mine == theirs for mine, theirs in zip(self, other, strict=True)
        )

    __hash__ = None  # type: ignore[assignment]  # equal to lists, so never hashed

    def __repr__(self) -> str:
        return f"{type(self).__name__}({list(self)!r})"

    def best_by_file(self) -> dict[str, int]:
        """Each file's best score (its first match), files in the order of their first."""
        best: dict[str, int] = {}
        for match in self:
            best.setdefault(match.file, match.score)
        return best

    def of_file(self, path: str) -> list[SymbolMatch]:
        """The matches in file ``path``, best first."""
        if self._by_file is None:
            grouped: dict[str, list[SymbolMatch]] = {}
            for match in self:
                grouped.setdefault(match.file, []).append(match)
            self._by_file = grouped
        return list(self._by_file.get(path, ()))


@dataclass(frozen=True, slots=True)
class RouteMatch:
    """A route that matches a question, with its score; in public ``route`` is the URL path,
    ``path`` the file that serves it."""

    public_order: ClassVar[tuple[str, ...]] = ("method", "path", "file")

    file: str = field(metadata=_PATH)
    method: str
    path: str = field(metadata=public(name="route"))
    line: int
    handler: str | None
    score: int


@dataclass(frozen=True, slots=True)
class EnvReference:
    """Where an environment variable is read."""

    file: str = field(metadata=_PATH)
    name: str
    line: int


@dataclass
class RecordBuilder:
    """Collects the parts of a CodeRecord while a tree is walked, dropping exact repeats."""

    language: str
    imports: list[Import] = field(default_factory=list)
    exports: list[Export] = field(default_factory=list)
    functions: list[Definition] = field(default_factory=list)
    calls: list[Call] = field(default_factory=list)
    environment_variables: list[EnvironmentVariable] = field(default_factory=list)
    routes: list[Route] = field(default_factory=list)
    path_references: list[PathReference] = field(default_factory=list)
    callbacks: list[Definition] = field(default_factory=list)

    def build(self, partial: bool) -> CodeRecord:
        """The finished record: each list in line order, repeats removed."""
        return CodeRecord(
            language=self.language,
            partial=partial,
            imports=_ordered(self.imports),
            exports=_first_per_name(self.exports),
            functions=_ordered(self.functions),
            calls=_ordered(self.calls),
            environment_variables=_ordered(self.environment_variables),
            routes=_ordered(self.routes),
            path_references=_ordered(self.path_references),
            callbacks=_ordered(self.callbacks),
        )


_line = operator.attrgetter("line")


def _ordered(items: list[Any]) -> tuple[Any, ...]:
    return tuple(sorted(dict.fromkeys(items), key=_line))


def _first_per_name(exports: list[Export]) -> tuple[Export, ...]:
    first: dict[str, Export] = {}
    for export in sorted(exports, key=_line):
        first.setdefault(export.name, export)
    return tuple(first.values())
